//! A terminal's self-reported status (contract §3), as served and as
//! reported over OSC 7501, and the statuses an `if` guard may name.

use serde::{Deserialize, Serialize};

/// A terminal's self-reported state (contract §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Idle,
    Working,
    Done,
    Blocked,
    Error,
    Unknown,
}

impl Status {
    /// Every status, in the contract's order.
    pub const ALL: [Status; 6] = [
        Status::Idle,
        Status::Working,
        Status::Done,
        Status::Blocked,
        Status::Error,
        Status::Unknown,
    ];

    /// The status's wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::Working => "working",
            Status::Done => "done",
            Status::Blocked => "blocked",
            Status::Error => "error",
            Status::Unknown => "unknown",
        }
    }

    /// The status an OSC 7501 state reports (`unknown` is not one a
    /// program can report: it is what hc shows before the first report).
    pub fn from_state(state: termstate_core::State) -> Status {
        match state {
            termstate_core::State::Idle => Status::Idle,
            termstate_core::State::Working => Status::Working,
            termstate_core::State::Done => Status::Done,
            termstate_core::State::Blocked => Status::Blocked,
            termstate_core::State::Error => Status::Error,
        }
    }

    /// The OSC 7501 state a program reports for this status; none for
    /// `unknown`.
    pub fn to_state(self) -> Option<termstate_core::State> {
        Some(match self {
            Status::Idle => termstate_core::State::Idle,
            Status::Working => termstate_core::State::Working,
            Status::Done => termstate_core::State::Done,
            Status::Blocked => termstate_core::State::Blocked,
            Status::Error => termstate_core::State::Error,
            Status::Unknown => return None,
        })
    }
}

/// The statuses an `if` guard can name: only `idle` and `working`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Guard {
    Idle,
    Working,
}

impl Guard {
    /// Every status an `if` guard can name.
    pub(crate) const ALL: [Guard; 2] = [Guard::Idle, Guard::Working];

    pub(crate) fn status(self) -> Status {
        match self {
            Guard::Idle => Status::Idle,
            Guard::Working => Status::Working,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn guards_accept_only_idle_and_working() {
        assert!(serde_json::from_value::<Guard>(json!("idle")).is_ok());
        assert!(serde_json::from_value::<Guard>(json!("working")).is_ok());
        assert!(serde_json::from_value::<Guard>(json!("done")).is_err());
    }
}
