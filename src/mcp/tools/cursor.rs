//! Opaque `list_sessions` cursors: the position after the last
//! `(created_ms, address)` returned, bound to the core_id that produced it
//! and sealed under the key made at start-up (`seal`), so a forged or
//! edited cursor is refused instead of silently resuming somewhere else.

use serde::{Deserialize, Serialize};

use crate::mcp::seal::SealKey;

/// What the seal of a cursor is for.
const PURPOSE: &str = "list_sessions cursor";

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

/// `position` as a cursor.
pub(crate) fn seal(key: &SealKey, position: &Position) -> String {
    let payload = serde_json::to_vec(position).expect("a position always encodes");
    key.seal(PURPOSE, &payload)
}

/// Opens a cursor and checks it was issued for `current_core`.
pub(crate) fn open(
    key: &SealKey,
    cursor: &str,
    current_core: &str,
) -> Result<Position, CursorError> {
    let payload = key
        .open(PURPOSE, cursor, MAX_CURSOR_CHARS)
        .ok_or(CursorError::Invalid)?;
    let position: Position = serde_json::from_slice(&payload).map_err(|_| CursorError::Invalid)?;
    if position.core_id != current_core {
        return Err(CursorError::OtherCore {
            cursor_core: position.core_id,
            current_core: current_core.to_owned(),
        });
    }
    Ok(position)
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
        let key = SealKey::random();
        let cursor = seal(&key, &position("c1"));
        assert_eq!(open(&key, &cursor, "c1"), Ok(position("c1")));
        assert!(matches!(
            open(&key, &cursor, "c2"),
            Err(CursorError::OtherCore { .. })
        ));
    }

    #[test]
    fn forged_edited_and_foreign_key_cursors_are_refused() {
        let key = SealKey::random();
        let cursor = seal(&key, &position("c1"));
        // Valid JSON of a position, sealed for another purpose.
        let other_purpose = key.seal("since", &serde_json::to_vec(&position("c1")).unwrap());
        for bad in [
            String::new(),
            "garbage".into(),
            cursor[..cursor.len() - 2].to_owned(),
            format!("A{cursor}"),
            other_purpose,
            seal(&SealKey::random(), &position("c1")),
            "x".repeat(5000),
        ] {
            assert_eq!(open(&key, &bad, "c1"), Err(CursorError::Invalid), "{bad}");
        }
    }
}
