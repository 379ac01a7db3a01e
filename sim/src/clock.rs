//! Wall-clock time since the Unix epoch: milliseconds, the unit of every
//! `*_ms` field on the wire, and microseconds for the control `emit` stamp.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn unix_ms() -> u64 {
    saturating(since_epoch().as_millis())
}

/// Microseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn unix_us() -> u64 {
    saturating(since_epoch().as_micros())
}

fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

fn saturating(value: u128) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}
