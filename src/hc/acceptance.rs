//! Which hc versions the adapter speaks: the built-in one
//! ([`wire::PINNED_VERSION`]), and those the operator accepted after
//! `inspect-core --check-contract --accept` found nothing that would make
//! a call fail (`hcVersions` in the config). An accepted version may be
//! bound to the SHA-256 of the core's own OpenRPC document
//! (`rpc.discover`): a core of that version whose document hashes
//! otherwise was upgraded or changed since it was checked, and is refused
//! like an unaccepted one. Generation and framing stay pinned.

use crate::lock::held;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::core_id::CoreId;
use super::wire;

/// One version the operator accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedVersion {
    /// hc's `version`, exactly as its hello reports it.
    pub version: String,
    /// SHA-256 (hex) of the core's `rpc.discover` document in canonical
    /// JSON ([`document_sha256`]), or none when the core did not describe
    /// itself.
    pub document_sha256: Option<String>,
    /// The core showed its `if` guard when it was checked: its document
    /// declared it (then `document_sha256` binds that document), or a live
    /// guard check saw it refuse. A version accepted without either is
    /// refused: an idle-only send rests on that guard.
    pub guard_shown: bool,
    /// The core's document does not declare `force`: sends to it leave
    /// the param out (false is hc's default) rather than send one it does
    /// not name. Only an entry bound to a document says so.
    pub omits_force: bool,
}

/// The versions a client speaks beyond the built-in one, and the
/// `--config` flag the refusals name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acceptance {
    /// What `hcVersions` lists.
    pub versions: Vec<AcceptedVersion>,
    /// ` --config PATH` for the command a refusal names, empty for the
    /// default config.
    pub operator_flag: String,
}

/// What the acceptance says of a core reporting some version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing<'a> {
    /// The built-in version, or one accepted without a document.
    Accepted,
    /// Accepted, provided the core's document still hashes to this.
    IfDocumentIs(&'a str),
    /// Listed, but accepted without its guard being seen (an entry written
    /// before guards had to be shown): refused until checked again.
    Unguarded,
    /// Neither built in nor listed.
    Unaccepted,
}

impl Acceptance {
    /// Whether a send to a core reporting `version` carries `force: false`
    /// (the model's), or leaves it out because that core's accepted
    /// document does not declare it.
    pub fn sends_force(&self, version: &str) -> bool {
        version == wire::PINNED_VERSION
            || !self
                .versions
                .iter()
                .any(|v| v.version == version && v.omits_force)
    }

    /// What a core reporting `version` is.
    pub fn standing(&self, version: &str) -> Standing<'_> {
        if version == wire::PINNED_VERSION {
            return Standing::Accepted;
        }
        match self.versions.iter().find(|v| v.version == version) {
            Some(AcceptedVersion {
                guard_shown: false, ..
            }) => Standing::Unguarded,
            Some(AcceptedVersion {
                document_sha256: Some(sha),
                ..
            }) => Standing::IfDocumentIs(sha),
            Some(_) => Standing::Accepted,
            None => Standing::Unaccepted,
        }
    }
}

/// What a pool's connections are admitted by: the acceptance in force
/// (replaced on reload), and the last core whose document was found to
/// hash as accepted, so one core's document is asked for once, not on
/// every connection.
#[derive(Debug, Default)]
pub struct Admission {
    acceptance: RwLock<Arc<Acceptance>>,
    verified: Mutex<Option<(CoreId, String)>>,
}

impl Admission {
    pub(crate) fn new(acceptance: Acceptance) -> Admission {
        Admission {
            acceptance: RwLock::new(Arc::new(acceptance)),
            verified: Mutex::new(None),
        }
    }

    pub(crate) fn current(&self) -> Arc<Acceptance> {
        Arc::clone(&crate::lock::read(&self.acceptance))
    }

    /// Puts `acceptance` in force; true when it differs from the one before.
    pub(crate) fn replace(&self, acceptance: Acceptance) -> bool {
        let mut current = crate::lock::write(&self.acceptance);
        if **current == acceptance {
            return false;
        }
        *current = Arc::new(acceptance);
        *held(&self.verified) = None;
        true
    }

    pub(crate) fn is_verified(&self, core_id: &CoreId, sha: &str) -> bool {
        held(&self.verified)
            .as_ref()
            .is_some_and(|(id, s)| id == core_id && s == sha)
    }

    pub(crate) fn mark_verified(&self, core_id: &CoreId, sha: &str) {
        *held(&self.verified) = Some((core_id.clone(), sha.to_owned()));
    }
}

/// SHA-256 (lowercase hex) of `document` written as canonical JSON: object
/// keys sorted by their UTF-8 bytes, no whitespace, strings and numbers as
/// `serde_json` writes them. The same document always hashes the same,
/// whatever order or spacing the core sends it in.
pub fn document_sha256(document: &Value) -> String {
    let mut text = String::new();
    canonical(document, &mut text);
    let digest = Sha256::digest(text.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn order_and_spacing_do_not_change_the_hash() {
        let a: Value =
            serde_json::from_str(r#"{"b": [1, {"y": 2, "x": "é"}], "a": null}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":null,"b":[1,{"x":"é","y":2}]}"#).unwrap();
        assert_eq!(document_sha256(&a), document_sha256(&b));
        assert_ne!(
            document_sha256(&a),
            document_sha256(&json!({"a": null, "b": [1]}))
        );
    }

    #[test]
    fn the_built_in_version_needs_nothing_and_others_need_listing() {
        let acceptance = Acceptance {
            versions: vec![
                AcceptedVersion {
                    version: "0.1.20".into(),
                    document_sha256: Some("ab".into()),
                    guard_shown: true,
                    omits_force: true,
                },
                AcceptedVersion {
                    version: "0.1.17".into(),
                    document_sha256: None,
                    guard_shown: true,
                    omits_force: false,
                },
                AcceptedVersion {
                    version: "0.1.16".into(),
                    document_sha256: None,
                    guard_shown: false,
                    omits_force: false,
                },
            ],
            operator_flag: String::new(),
        };
        assert_eq!(
            acceptance.standing(wire::PINNED_VERSION),
            Standing::Accepted
        );
        assert_eq!(acceptance.standing("0.1.17"), Standing::Accepted);
        assert_eq!(acceptance.standing("0.1.16"), Standing::Unguarded);
        assert_eq!(acceptance.standing("0.1.20"), Standing::IfDocumentIs("ab"));
        assert_eq!(acceptance.standing("0.1.2"), Standing::Unaccepted);
        assert!(!acceptance.sends_force("0.1.20"));
        assert!(acceptance.sends_force("0.1.17") && acceptance.sends_force(wire::PINNED_VERSION));
        assert_eq!(
            Acceptance::default().standing("0.1.20"),
            Standing::Unaccepted
        );
    }
}
