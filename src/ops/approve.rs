//! `allow` and `revoke`: approving terminal lifetimes without hand-editing
//! JSON. The config is validated first (an unparseable or invalid file is
//! refused and left untouched), edited as a JSON document so every other
//! key keeps its value and place, and replaced atomically: a temp file in
//! the same directory with the original's mode, synced, then renamed over.
//! The allowlist is the product's authority, so every read-modify-write
//! holds the config's exclusive lock (`config::lock`) and reads the file
//! again under it: two `allow`s both land, and a `revoke` is never undone
//! by a writer that read the file before it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::edit::{self, Editing};
use crate::config::{self, Config, ConfigError, RawLifetime, SendMode};
use crate::escape::{self, printable, readable_ms};
use crate::hc::wire::{ErrorKind, TerminalRecord, TerminalStatus, check_address};
use crate::hc::{CoreError, CoreId};

const CORE_ID_KEY: &str = "coreId";

/// Why `allow` or `revoke` changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum ApproveError {
    /// The config could not be read or is not valid; it was left untouched.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The core could not be probed.
    #[error(transparent)]
    Core(CoreError),
    /// The address is not one a terminal can have.
    #[error(
        "{address} is not a terminal address: it {why}; use the ADDRESS column of inspect-core"
    )]
    BadAddress { address: String, why: String },
    /// hc has no terminal at the address.
    #[error("hc has no terminal at {address}: check the address with inspect-core")]
    NoSuchTerminal { address: String },
    /// The terminal is on a machine the config's `machines` does not show.
    #[error(
        "{address} is on a machine this adapter does not show (machines: {scope}): add the machine to machines in the config first"
    )]
    HiddenMachine { address: String, scope: String },
    /// The terminal's machine is not listed, or not connected.
    #[error("{0}")]
    MachineUnavailable(String),
    /// The terminal's program has exited.
    #[error("the program in {address} has exited; there is nothing to approve")]
    Finished { address: String },
    /// The config's lock could not be taken (another writer held it too
    /// long, or the lock file cannot be used).
    #[error(transparent)]
    Lock(#[from] config::LockError),
    /// The config moved to another file, socket or core while `allow`
    /// probed the core.
    #[error(
        "{path} changed (its socketPath, coreId or file) while the core was probed: run this again; the config is unchanged",
        path = path.display()
    )]
    ChangedMeanwhile { path: PathBuf },
    /// `--accept` recorded nothing (the message says why).
    #[error("{0}")]
    NotAccepted(String),
    /// Writing the new file failed; the old one is unchanged.
    #[error(transparent)]
    Write(#[from] super::edit::WriteError),
}

/// What `allow` is asked to approve.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request<'a> {
    pub address: &'a str,
    /// Also allow TAB and LF for this lifetime.
    pub multiline: bool,
    /// How this lifetime may be prompted (written as the entry's
    /// `sendMode`); none: the top-level `sendMode`.
    pub mode: Option<SendMode>,
    /// Each prompt waits for a human's confirmation through the client.
    pub confirm: bool,
    /// Drop a confirmation the earlier approval asked for.
    pub no_confirm: bool,
    /// Show what would be written and write nothing.
    pub dry_run: bool,
    /// The `--config` the operator gave, repeated in the hints it is shown.
    pub config_flag: Option<&'a Path>,
}

/// How a running serve is told, with the `--config` the operator gave.
pub(super) fn apply_hint(config_flag: Option<&Path>) -> String {
    format!(
        "apply it to a running serve with herdr-core-mcp reload{} (or kill -HUP <pid>)",
        config_flag.map_or(String::new(), |p| format!(" --config {}", shown(p)))
    )
}

/// Approves the live terminal at `request.address` on the core behind
/// `socketPath`. The core is probed first, with no lock held (it may take
/// up to `timeoutMs`); the change is then made under the config's lock, to
/// the file as it is by then, so a `revoke` or another `allow` that ran
/// meanwhile is kept, never undone.
pub(crate) async fn allow(
    config_path: &Path,
    request: &Request<'_>,
) -> Result<String, ApproveError> {
    check_address(request.address).map_err(|why| ApproveError::BadAddress {
        address: request.address.to_owned(),
        why,
    })?;
    let probed_with = edit::load(config_path)?;
    if !probed_with.config.machines().shows_address(request.address) {
        return Err(ApproveError::HiddenMachine {
            address: request.address.to_owned(),
            scope: probed_with.config.machines().describe(),
        });
    }
    let (core_id, record) = probe(&probed_with.config, request.address).await?;
    let machine = match &record.machine {
        Some(name) => Some(
            super::machines::machine_core(&probed_with.config, name)
                .await
                .map_err(|e| match e {
                    super::machines::Unavailable::Core(e) => ApproveError::Core(e),
                    super::machines::Unavailable::Machine(why) => {
                        ApproveError::MachineUnavailable(why)
                    }
                })?,
        ),
        None => None,
    };
    let _locked = config::lock(&probed_with.resolved).await?;
    let Editing {
        mut doc,
        config,
        resolved,
    } = edit::load(config_path)?;
    // Another writer changed what this probe was for: another file or
    // socket, or another core than the one probed (an allow after hc
    // restarted). Writing this probe's core back would drop that writer's
    // approvals.
    if resolved != probed_with.resolved
        || config.socket_path() != probed_with.config.socket_path()
        || (config.core_id() != probed_with.config.core_id() && config.core_id() != Some(&core_id))
    {
        return Err(ApproveError::ChangedMeanwhile {
            path: config_path.to_path_buf(),
        });
    }
    let mut report = describe(&core_id, &record);
    let object = doc.as_object_mut().expect("a parsed config is an object");
    let mut entries = edit::approvals(object);
    if let Some(previous) = config.core_id().filter(|c| **c != core_id) {
        report.push_str(&format!(
            "coreId was {previous} (an earlier hc); its {} approval(s) are removed\n",
            entries.len()
        ));
        entries.clear();
    }
    object.insert(CORE_ID_KEY.into(), json!(core_id.as_str()));
    let mut entry = RawLifetime {
        address: record.address.clone(),
        created_ms: record.created_ms,
        multiline: request.multiline,
        send_mode: request.mode,
        confirm: request.confirm,
        machine_core_id: machine
            .as_ref()
            .and_then(|m| m.core_id.as_ref())
            .map(|id| id.as_str().to_owned()),
    };
    if let Some(machine) = &machine {
        report.push_str(&super::machines::machine_line(machine));
    }
    if request.multiline {
        report.push_str(
            "multi-line prompts (TAB, LF) allowed: only for a program that reads a paste as one input, never a shell\n",
        );
    }
    if request.confirm {
        report.push_str(
            "confirmation required: each prompt waits for a human to confirm it in the MCP client (a client that cannot ask sends nothing)\n",
        );
    }
    let mode = request.mode.unwrap_or(config.send_mode());
    report.push_str(&match mode {
        SendMode::IdleOnly => "send mode idle-only: prompts only while it is idle (an agent that reports done after each task then takes one prompt; approve it with --mode normal for follow-ups)\n".to_owned(),
        SendMode::Normal => "send mode normal: prompts while it is idle or done (follow-ups after each task)\n".to_owned(),
    });
    if record.status == TerminalStatus::Unknown {
        report.push_str(&format!(
            "warning: {} has never reported a status (a shell, for instance): nothing can be sent to it until its program reports idle{}\n",
            printable(&record.address),
            if mode == SendMode::Normal { " or done" } else { "" }
        ));
    }
    report.push_str(&super::reapproval::carry_over(
        &entries,
        &mut entry,
        request.no_confirm,
    ));
    let same_address = |e: &RawLifetime| e.address == entry.address;
    if entries.iter().filter(|e| same_address(e)).eq([&entry]) {
        report.push_str("already approved; config unchanged\n");
        return Ok(report);
    }
    // Earlier lifetimes at this address have ended (the live one is this
    // one): their approvals can never match again, so they go.
    for stale in entries
        .iter()
        .filter(|e| same_address(e) && e.created_ms != entry.created_ms)
    {
        report.push_str(&format!(
            "replaces the approval of an earlier lifetime at {} (created_ms {}), which has ended\n",
            printable(&record.address),
            stale.created_ms
        ));
    }
    entries.retain(|e| !same_address(e));
    entries.push(entry);
    edit::set_approvals(object, &entries);
    write_back(
        &resolved,
        &doc,
        request.dry_run,
        report,
        request.config_flag,
    )
}

/// The live, unfinished terminal at `address`, and its core.
async fn probe(config: &Config, address: &str) -> Result<(CoreId, TerminalRecord), ApproveError> {
    let client = config.hc_client();
    let probed = client.get(address).await;
    client.close();
    let probed = probed.map_err(|e| match e.hc_kind() {
        Some(ErrorKind::NotFound) => ApproveError::NoSuchTerminal {
            address: address.to_owned(),
        },
        _ => ApproveError::Core(e),
    })?;
    if probed.value.is_finished() {
        return Err(ApproveError::Finished {
            address: address.to_owned(),
        });
    }
    Ok((probed.core.core_id.clone(), probed.value))
}

/// What the operator is shown of the terminal being approved.
fn describe(core_id: &CoreId, record: &TerminalRecord) -> String {
    format!(
        "approving on core {core_id}:\n  address     {}\n  created_ms  {} ({})\n  program     {}\n  title       {}\n  cwd         {}\n  status      {}\n",
        printable(&record.address),
        record.created_ms,
        readable_ms(record.created_ms),
        printable(record.program.as_deref().unwrap_or("-")),
        printable(record.title.as_deref().unwrap_or("-")),
        printable(record.cwd.as_deref().unwrap_or("-")),
        record.status,
    )
}

/// Writes `doc` to `resolved`, or with `dry_run` shows it instead.
fn write_back(
    resolved: &Path,
    doc: &Value,
    dry_run: bool,
    mut report: String,
    config_flag: Option<&Path>,
) -> Result<String, ApproveError> {
    if dry_run {
        report.push_str(&format!(
            "dry run: {} is unchanged; it would read:\n{}",
            shown(resolved),
            escape::printable_lines(&edit::document(doc))
        ));
        return Ok(report);
    }
    edit::write_atomically(resolved, doc)?;
    report.push_str(&format!(
        "written to {}; {}\n",
        shown(resolved),
        apply_hint(config_flag)
    ));
    Ok(report)
}

/// What `revoke` is asked to remove.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Revocation<'a> {
    /// Every approval at this address; none: every approval (`--all`).
    pub address: Option<&'a str>,
    /// Only the lifetime with this created_ms.
    pub created_ms: Option<i64>,
    /// Show what would be removed, and write nothing.
    pub dry_run: bool,
    pub config_flag: Option<&'a Path>,
}

/// Removes every approval of `address` (or only the lifetime `created_ms`,
/// or every approval at all). Nothing to remove is not an error, so
/// scripts can run it again.
pub(crate) async fn revoke(
    config_path: &Path,
    request: &Revocation<'_>,
) -> Result<String, ApproveError> {
    let locked_path = edit::load(config_path)?.resolved;
    let _locked = config::lock(&locked_path).await?;
    // Read again under the lock: what is edited is the file as it is now,
    // and the one locked.
    let Editing {
        mut doc, resolved, ..
    } = edit::load(config_path)?;
    if resolved != locked_path {
        return Err(ApproveError::ChangedMeanwhile {
            path: config_path.to_path_buf(),
        });
    }
    let object = doc.as_object_mut().expect("a parsed config is an object");
    let mut entries = edit::approvals(object);
    let before = entries.len();
    let doomed = |e: &RawLifetime| {
        request.address.is_none_or(|a| e.address == a)
            && request.created_ms.is_none_or(|c| e.created_ms == c)
    };
    let mut report = String::new();
    for entry in entries.iter().filter(|e| doomed(e)) {
        report.push_str(&format!(
            "{} {} (created_ms {})\n",
            if request.dry_run {
                "would revoke"
            } else {
                "revoking"
            },
            printable(&entry.address),
            entry.created_ms
        ));
    }
    entries.retain(|e| !doomed(e));
    let removed = before - entries.len();
    edit::set_approvals(object, &entries);
    let target = match request.address {
        Some(address) => format!(
            "{}{}",
            printable(address),
            request
                .created_ms
                .map_or(String::new(), |c| format!(" with created_ms {c}"))
        ),
        None => "any terminal".to_owned(),
    };
    if removed == 0 {
        return Ok(format!(
            "{} approves nothing at {target}; nothing to revoke\n",
            shown(&resolved),
        ));
    }
    if request.dry_run {
        report.push_str(&format!("dry run: {} is unchanged\n", shown(&resolved)));
        return Ok(report);
    }
    edit::write_atomically(&resolved, &doc)?;
    report.push_str(&format!(
        "revoked {removed} approval(s) of {target}; {}\n",
        apply_hint(request.config_flag)
    ));
    Ok(report)
}

/// A path as the operator is shown it: a directory name can carry ESC,
/// C1 or bidi characters too.
pub(super) fn shown(path: &Path) -> String {
    printable(&path.display().to_string()).into_owned()
}
