//! Opaque `list_sessions` cursors: the position after the last
//! `(created_ms, address)` returned, bound to the core_id that produced it
//! and sealed with an HMAC under a key made at start-up, so a forged or
//! edited cursor is refused instead of silently resuming somewhere else.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// Longest cursor accepted; real ones are far shorter.
const MAX_CURSOR_CHARS: usize = 1024;

/// Where a page ended, and on which core.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Position {
    pub core_id: String,
    pub created_ms: i64,
    pub address: String,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CursorError {
    #[error(
        "cursor is not valid (malformed, edited, or issued before this adapter restarted): list again without a cursor"
    )]
    Invalid,
    #[error(
        "cursor belongs to core {cursor_core}, but hc is now core {current_core} (hc restarted): list again without a cursor"
    )]
    OtherCore {
        cursor_core: String,
        current_core: String,
    },
}

/// The per-process secret that seals cursors.
pub(crate) struct CursorKey([u8; 32]);

impl CursorKey {
    pub(crate) fn random() -> CursorKey {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source is available");
        CursorKey(key)
    }

    pub(crate) fn seal(&self, position: &Position) -> String {
        let payload = serde_json::to_vec(position).expect("a position always encodes");
        let tag = self.mac(&payload).finalize().into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// Opens a cursor and checks it was issued for `current_core`.
    pub(crate) fn open(&self, cursor: &str, current_core: &str) -> Result<Position, CursorError> {
        if cursor.len() > MAX_CURSOR_CHARS {
            return Err(CursorError::Invalid);
        }
        let (payload, tag) = cursor.split_once('.').ok_or(CursorError::Invalid)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| CursorError::Invalid)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| CursorError::Invalid)?;
        self.mac(&payload)
            .verify_slice(&tag)
            .map_err(|_| CursorError::Invalid)?;
        let position: Position =
            serde_json::from_slice(&payload).map_err(|_| CursorError::Invalid)?;
        if position.core_id != current_core {
            return Err(CursorError::OtherCore {
                cursor_core: position.core_id,
                current_core: current_core.to_owned(),
            });
        }
        Ok(position)
    }

    fn mac(&self, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(payload);
        mac
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(core: &str) -> Position {
        Position {
            core_id: core.into(),
            created_ms: 42,
            address: "t1".into(),
        }
    }

    #[test]
    fn a_sealed_cursor_opens_on_its_own_core_only() {
        let key = CursorKey::random();
        let cursor = key.seal(&position("c1"));
        assert_eq!(key.open(&cursor, "c1"), Ok(position("c1")));
        assert!(matches!(
            key.open(&cursor, "c2"),
            Err(CursorError::OtherCore { .. })
        ));
    }

    #[test]
    fn forged_edited_and_foreign_key_cursors_are_refused() {
        let key = CursorKey::random();
        let cursor = key.seal(&position("c1"));
        let (payload, tag) = cursor.split_once('.').unwrap();
        let forged_payload = URL_SAFE_NO_PAD.encode(
            serde_json::to_vec(&Position {
                created_ms: 0,
                ..position("c1")
            })
            .unwrap(),
        );
        for bad in [
            String::new(),
            "garbage".into(),
            format!("{forged_payload}.{tag}"),
            format!("{payload}.AAAA"),
            payload.to_string(),
            CursorKey::random().seal(&position("c1")),
            "x".repeat(5000),
        ] {
            assert_eq!(key.open(&bad, "c1"), Err(CursorError::Invalid), "{bad}");
        }
    }
}
