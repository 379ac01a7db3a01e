//! `inspect-core --check-contract --accept`: after a check that found
//! nothing that would make a call fail, and saw the core's `if` guard (in
//! its own document, or refusing the live check), the core's version is
//! written to `hcVersions` with its document's SHA-256 (null when the core
//! does not describe itself), how the guard was shown, when it was
//! checked, and `params_omitted: ["force"]` when that document does not
//! declare `force` (sends to the core then leave it out). Never on the
//! model's word. Written like `allow` writes:
//! under the config's lock, to the file as it is by then, every other key
//! kept; an entry for the same version is replaced, so re-checking an
//! upgraded core binds the new document.

use std::path::Path;

use serde_json::{Value, json};

use super::approve::{self, ApproveError};
use super::contract::{CheckReport, Discovery, Guard};
use super::edit::{self, Editing};
use crate::config::{self, GuardShown, OmittedParam};
use crate::hc::wire::PINNED_VERSION;

const VERSIONS_KEY: &str = "hcVersions";

/// Records the checked core's version in the config at `config_path`, or
/// says why nothing was recorded.
pub(crate) async fn accept(
    config_path: &Path,
    report: &CheckReport,
    config_flag: Option<&Path>,
) -> Result<String, ApproveError> {
    let refuse = |why: String| Err(ApproveError::NotAccepted(why));
    if report.breaking > 0 {
        let rules: Vec<String> = report
            .breaking_rules
            .iter()
            .map(|rule| {
                let row = rule.row();
                format!("{} ({}: {})", row.id, row.side.name(), row.case)
            })
            .collect();
        return refuse(format!(
            "accepted nothing: {} difference(s) above (marked !) would make calls fail or an idle-only send unguarded, by the rule(s) {}; the config is unchanged",
            report.breaking,
            rules.join("; ")
        ));
    }
    let Some(version) = report.version.as_deref() else {
        return refuse(
            "accepted nothing: the core's version could not be read (see above); the config is unchanged".to_owned(),
        );
    };
    if version == PINNED_VERSION {
        return Ok(format!(
            "nothing to accept: hc {PINNED_VERSION} is built in; the config is unchanged\n"
        ));
    }
    if !config::is_acceptable_version(version) {
        return refuse(format!(
            "accepted nothing: the core reports the version {}, which is not 1 to 64 printable ASCII characters; the config is unchanged",
            crate::escape::bounded(&format!("{version:?}"), 80)
        ));
    }
    let guard = match &report.guard {
        Guard::Document => GuardShown::Document,
        Guard::LiveCheck(_) => GuardShown::LiveCheck,
        Guard::NotShown => {
            let flag = config_flag.map_or(String::new(), |p| {
                format!(" --config {}", approve::shown(p))
            });
            let how = match &report.discovery {
                Discovery::Described { .. } => {
                    "its own document (rpc.discover) does not declare it"
                }
                _ => "it does not describe itself (no rpc.discover document)",
            };
            return refuse(format!(
                "accepted nothing: this core has not shown the `if` guard idle-only sends rest on: {how}, and no live guard check saw it refuse. Run the live check on a terminal of this core (it types nothing: empty text, no Enter, an `if` the terminal does not match): herdr-core-mcp inspect-core --check-contract --guard-check ADDRESS --accept{flag}; the config is unchanged"
            ));
        }
    };
    let sha256 = match &report.discovery {
        Discovery::Described { sha256 } => Some(sha256.clone()),
        Discovery::NotOffered(_) => None,
        Discovery::NotAsked => {
            return refuse(
                "accepted nothing: the check stopped before the core's document could be asked for; the config is unchanged".to_owned(),
            );
        }
    };
    let mut entry = json!({
        "version": version,
        "document_sha256": sha256,
        "checked_ms": crate::audit::now_ms(),
        "guard": guard,
    });
    // Only a document can say `force` is not declared, and the entry is
    // bound to that document.
    let omits_force = report.omits_force && sha256.is_some();
    if omits_force {
        entry["params_omitted"] = json!([OmittedParam::Force]);
    }
    let resolved = edit::load(config_path)?.resolved;
    let _locked = config::lock(&resolved).await?;
    // Read again under the lock: what is edited is the file as it is now.
    let Editing { mut doc, .. } = edit::load(config_path)?;
    let object = doc.as_object_mut().expect("a parsed config is an object");
    let list = edit::array_at(object, VERSIONS_KEY);
    let replaced = list
        .iter()
        .position(|e| e.get("version").and_then(Value::as_str) == Some(version));
    let previous = replaced.map(|i| list.remove(i));
    list.push(entry);
    edit::write_atomically(&resolved, &doc)?;
    let bound = match &sha256 {
        Some(sha) => format!(
            "bound to its rpc.discover document, SHA-256 {sha}: a core of this version serving another document is refused"
        ),
        None => "without a document (the core does not describe itself)".to_owned(),
    };
    let shown = match guard {
        GuardShown::Document => "its `if` guard declared by that document",
        GuardShown::LiveCheck => "its `if` guard shown by the live check",
    };
    let was = match previous {
        Some(_) => " (replacing the entry checked before)",
        None => "",
    };
    let force = if omits_force {
        "; its sends leave out `force`, which that document does not declare (false is hc's default)"
    } else {
        ""
    };
    Ok(format!(
        "accepted hc {version}{was}, {bound}, {shown}{force}\nwritten to {} (hcVersions); serve, allow and the tools now speak to this core; {}\n",
        approve::shown(&resolved),
        approve::apply_hint(config_flag)
    ))
}
