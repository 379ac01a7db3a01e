//! The config's numbers, in one place: each numeric key's range and what
//! it means, for the range checks of validation and for the message a
//! value of the wrong type gets (`"15000"`, `null`, `1.5`, `-1`), so no
//! message about a number ever shows a Rust type.

use std::ops::RangeInclusive;

use super::error::{Invalid, invalid};

/// One numeric key of the config.
pub(super) struct Number {
    /// The key as the config spells it, `[]` standing for any index:
    /// `sendAllowlist[].created_ms`.
    pub key: &'static str,
    /// The values it takes.
    pub range: RangeInclusive<i128>,
    /// The unit a value counts in, as a message says it (`milliseconds`),
    /// or empty.
    pub unit: &'static str,
    /// What the key sets, as a message says it.
    pub meaning: &'static str,
}

impl Number {
    /// What the key takes and means, worded to follow its name: "must be
    /// a whole number of milliseconds from 100 to 60000 (…)".
    pub(super) fn wants(&self) -> String {
        let (low, high) = (*self.range.start(), *self.range.end());
        let range = match (low, high) {
            (low, high) if low <= i128::from(i64::MIN) && high >= i128::from(i64::MAX) => {
                String::new()
            }
            (low, high) if high >= i128::from(i64::MAX) => format!(" of at least {low}"),
            (low, high) => format!(" from {low} to {high}"),
        };
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" of {}", self.unit)
        };
        format!("must be a whole number{unit}{range} ({})", self.meaning)
    }

    /// Whether `value` is in range.
    pub(super) fn takes(&self, value: impl Into<i128>) -> bool {
        self.range.contains(&value.into())
    }
}

/// `timeoutMs`: below 100 ms a busy core looks dead; above a minute a
/// stuck core holds a tool call hostage.
pub(super) const TIMEOUT_MS: Number = Number {
    key: "timeoutMs",
    range: 100..=60_000,
    unit: "milliseconds",
    meaning: "the bound of each call to hc other than a send, and of a send's wait for a connection",
};
/// `sendTimeoutMs`: at least a second; at most five minutes, past hc's
/// 60 s draft protection with room for slow submission checks.
pub(super) const SEND_TIMEOUT_MS: Number = Number {
    key: "sendTimeoutMs",
    range: 1_000..=300_000,
    unit: "milliseconds",
    meaning: "the bound of one terminal.send, which hc holds while a user's draft sits in the terminal",
};
/// `waitMaxMs`: the longest one wait call may wait.
pub(super) const WAIT_MAX_MS: Number = Number {
    key: "waitMaxMs",
    range: 100..=600_000,
    unit: "milliseconds",
    meaning: "the longest one wait call, or a send's follow, may wait",
};
/// `confirmTimeoutMs`: long enough for a human to read a prompt, short
/// enough that an unanswered question does not hold a send forever.
pub(super) const CONFIRM_TIMEOUT_MS: Number = Number {
    key: "confirmTimeoutMs",
    range: 1_000..=600_000,
    unit: "milliseconds",
    meaning: "how long a confirmation question of the 2026-07-28 protocol stays open",
};
/// `confirmCallTimeoutMs`: as `confirmTimeoutMs`, for a question asked
/// inside the tool call.
pub(super) const CONFIRM_CALL_TIMEOUT_MS: Number = Number {
    key: "confirmCallTimeoutMs",
    range: 1_000..=600_000,
    unit: "milliseconds",
    meaning: "how long a confirmation question asked inside the tool call waits for the human",
};
/// `http.port`: a TCP port on 127.0.0.1.
pub(super) const HTTP_PORT: Number = Number {
    key: "http.port",
    range: 1..=65_535,
    unit: "",
    meaning: "the port on 127.0.0.1 the HTTP transport listens on",
};
/// `http.auth.clockSkewS`: tolerance of token times.
pub(super) const CLOCK_SKEW_S: Number = Number {
    key: "http.auth.clockSkewS",
    range: 0..=300,
    unit: "seconds",
    meaning: "how far the identity provider's clock may be from this one when token times are checked",
};

/// Every numeric key.
const ALL: [Number; 9] = [
    TIMEOUT_MS,
    SEND_TIMEOUT_MS,
    WAIT_MAX_MS,
    CONFIRM_TIMEOUT_MS,
    CONFIRM_CALL_TIMEOUT_MS,
    HTTP_PORT,
    CLOCK_SKEW_S,
    Number {
        key: "sendAllowlist[].created_ms",
        range: i64::MIN as i128..=i64::MAX as i128,
        unit: "milliseconds since the Unix epoch",
        meaning: "hc's created_ms of the approved terminal lifetime, as inspect-core shows it; let allow write it",
    },
    Number {
        key: "hcVersions[].checked_ms",
        range: 0..=i64::MAX as i128,
        unit: "milliseconds since the Unix epoch",
        meaning: "when the core was checked; let inspect-core --check-contract --accept write it",
    },
];

/// `value` is in `number`'s range, or the message that says what the key
/// takes and means.
pub(super) fn in_range(number: &Number, value: u64) -> Result<(), Invalid> {
    if number.takes(value) {
        Ok(())
    } else {
        Err(invalid(
            number.key,
            format!("{}, got {value}", number.wants()),
        ))
    }
}

/// The numeric key at `key` (`sendAllowlist[3].created_ms` finds
/// `sendAllowlist[].created_ms`).
pub(super) fn at(key: &str) -> Option<&'static Number> {
    let general = without_indexes(key);
    ALL.iter().find(|n| n.key == general)
}

/// `a[3].b` as `a[].b`.
fn without_indexes(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut in_index = false;
    for c in key.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push_str("[]");
            }
            ']' => in_index = false,
            _ if in_index => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_keys_find_their_number_and_others_find_none() {
        assert_eq!(
            at("sendAllowlist[12].created_ms").map(|n| n.key),
            Some("sendAllowlist[].created_ms")
        );
        assert_eq!(at("timeoutMs").map(|n| n.key), Some("timeoutMs"));
        assert!(at("socketPath").is_none());
        assert!(at("sendAllowlist[0].address").is_none());
    }

    #[test]
    fn a_number_says_its_range_unit_and_meaning() {
        let wants = SEND_TIMEOUT_MS.wants();
        assert!(wants.contains("from 1000 to 300000"), "{wants}");
        assert!(wants.contains("milliseconds"), "{wants}");
        assert!(wants.contains("terminal.send"), "{wants}");
        assert!(SEND_TIMEOUT_MS.takes(90_000_u64));
        assert!(!SEND_TIMEOUT_MS.takes(999_u64));
    }
}
