//! A core's identity, validated in one place: wherever a core_id comes from
//! (hc's handshake, the operator's `coreId`), an invalid one cannot exist.

use serde::{Deserialize, Serialize};

/// Longest core_id hc documents; longer ones are a protocol violation.
pub const MAX_CORE_ID_CHARS: usize = 128;

/// One hc process incarnation: 1-128 printable ASCII characters, new at
/// every hc start. Checked here, once, wherever a core_id comes from (hc's
/// handshake, the operator's `coreId`), so an invalid one cannot exist.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(try_from = "String", into = "String")]
pub struct CoreId(String);

/// Why a string is not a core_id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be 1-{MAX_CORE_ID_CHARS} printable ASCII characters, as inspect-core prints it")]
pub struct InvalidCoreId;

impl TryFrom<String> for CoreId {
    type Error = InvalidCoreId;

    fn try_from(id: String) -> Result<CoreId, InvalidCoreId> {
        let printable = id.bytes().all(|b| (0x20..0x7f).contains(&b));
        if id.is_empty() || id.len() > MAX_CORE_ID_CHARS || !printable {
            return Err(InvalidCoreId);
        }
        Ok(CoreId(id))
    }
}

impl From<CoreId> for String {
    fn from(id: CoreId) -> String {
        id.0
    }
}

impl CoreId {
    /// The core_id's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for CoreId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::hc::wire::Hello;

    #[test]
    fn a_core_id_is_one_to_128_printable_ascii_characters() {
        assert!(CoreId::try_from("c8d1f0a2-5b1e".to_owned()).is_ok());
        assert!(CoreId::try_from("x".repeat(128)).is_ok());
        for bad in [
            String::new(),
            "x".repeat(129),
            "tab\there".into(),
            "é".into(),
        ] {
            assert_eq!(CoreId::try_from(bad.clone()), Err(InvalidCoreId), "{bad:?}");
        }
        let hello: Result<Hello, _> = serde_json::from_value(json!({
            "core_id": "", "version": "0.1.15", "generation": 1,
            "framing": "plain", "pid": 1, "started_ms": 1
        }));
        assert!(hello.is_err(), "an empty core_id decoded");
    }
}
