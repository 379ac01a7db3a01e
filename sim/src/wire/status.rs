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

    /// A state a program may report over OSC 7501 (`unknown` is not one).
    pub fn from_report(state: &str) -> Option<Status> {
        match state {
            "idle" => Some(Status::Idle),
            "working" => Some(Status::Working),
            "done" => Some(Status::Done),
            "blocked" => Some(Status::Blocked),
            "error" => Some(Status::Error),
            _ => None,
        }
    }
}

/// The statuses an `if` guard can name: only `idle` and `working`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Guard {
    Idle,
    Working,
}

impl Guard {
    pub fn status(self) -> Status {
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
