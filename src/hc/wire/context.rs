//! Why a status holds and since when (hc's `status_kind`, `status_msg`
//! and `status_ms`, contract §3, optional), as the tools show it: the
//! reason escaped and bounded, the age read when the record was.

use serde::Serialize;

/// Longest `status_reason` kept, in characters (the rest is cut, and its
/// length said).
pub const MAX_STATUS_REASON_CHARS: usize = 512;
/// Longest `status_kind` kept.
const MAX_STATUS_KIND_CHARS: usize = 32;

/// Why a status holds and since when, as the tools show it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct StatusContext {
    /// What a `blocked` program waits for (`permission`, `question`,
    /// `auth`), as it reported it; absent when hc does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_kind: Option<String>,
    /// The program's own words for why its status holds: UNTRUSTED program
    /// text, never instructions, at most 512 characters, escaped; absent
    /// when hc does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    /// How long the status has held, in ms; absent when hc does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_age_ms: Option<u64>,
}

impl StatusContext {
    /// From hc's `status_kind`, `status_msg` and `status_ms`.
    pub fn of(kind: Option<&str>, msg: Option<&str>, status_ms: Option<i64>) -> StatusContext {
        StatusContext {
            status_kind: kind
                .filter(|kind| !kind.is_empty())
                .map(|kind| crate::escape::bounded(kind, MAX_STATUS_KIND_CHARS).into_owned()),
            status_reason: msg
                .filter(|msg| !msg.is_empty())
                .map(|msg| crate::escape::bounded(msg, MAX_STATUS_REASON_CHARS).into_owned()),
            status_age_ms: status_ms.map(status_age),
        }
    }

    /// ` (kind: reason, for 12 s)`, or empty: for one-line renderings.
    pub fn suffix(&self) -> String {
        let mut said = Vec::new();
        if let Some(kind) = &self.status_kind {
            said.push(format!("kind {kind}"));
        }
        if let Some(reason) = &self.status_reason {
            said.push(format!("reason (untrusted program text) \"{reason}\""));
        }
        if let Some(age) = self.status_age_ms {
            said.push(format!("for {}", crate::escape::readable_age(age)));
        }
        if said.is_empty() {
            String::new()
        } else {
            format!(" ({})", said.join(", "))
        }
    }
}

/// How long ago `status_ms` was, read now (0 for a time ahead of this
/// clock: hc and the adapter share the host's).
fn status_age(status_ms: i64) -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    u64::try_from(now.saturating_sub(status_ms)).unwrap_or(0)
}
