//! The server's clock, handed in as the app is: how often the watcher
//! lists hc, the least gap between two notifications about one terminal,
//! how often progress goes out while a call waits, and how long an HTTP
//! client gets for its request head and its body. `serve` runs at
//! [`Pace::default`]; an in-process test hands in a faster one.
//!
//! A test that spawns the binary asks for a faster clock through
//! [`TEST_PACE_ENV`] (a divisor: `10` makes every period a tenth). Only a
//! debug build reads it: the release build, and every build a user runs,
//! keeps the real pace whatever the environment says.

use std::time::Duration;

/// The test-only variable a debug build reads its pace from.
pub const TEST_PACE_ENV: &str = "HERDR_MCP_TEST_PACE";
/// The largest divisor [`TEST_PACE_ENV`] takes.
const MAX_DIVISOR: u32 = 100;

/// The server's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// How often hc is listed while someone is subscribed or waits on the
    /// fleet.
    pub poll: Duration,
    /// The least time between two notifications about one terminal.
    pub min_gap: Duration,
    /// A progress notification goes out at least this often while a wait,
    /// a held send or a human's answer goes on (when the request asked).
    pub progress: Duration,
    /// An HTTP client gets this long for its request head (slowloris
    /// guard), and a kept-alive connection is closed after this long idle.
    pub header_read: Duration,
    /// An HTTP client gets this long to send its whole body.
    pub body_read: Duration,
}

impl Default for Pace {
    fn default() -> Pace {
        Pace {
            poll: Duration::from_millis(250),
            min_gap: Duration::from_secs(1),
            progress: Duration::from_secs(5),
            header_read: Duration::from_secs(5),
            body_read: Duration::from_secs(10),
        }
    }
}

impl Pace {
    /// Every period of the default pace divided by `divisor` (1 to 100).
    pub fn divided(divisor: u32) -> Pace {
        let divisor = divisor.clamp(1, MAX_DIVISOR);
        let real = Pace::default();
        Pace {
            poll: real.poll / divisor,
            min_gap: real.min_gap / divisor,
            progress: real.progress / divisor,
            header_read: real.header_read / divisor,
            body_read: real.body_read / divisor,
        }
    }

    /// The pace `serve` runs at: the default; in a debug build, divided by
    /// [`TEST_PACE_ENV`] when that is set to a number.
    pub fn of_this_build() -> Pace {
        #[cfg(debug_assertions)]
        if let Some(divisor) = std::env::var(TEST_PACE_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
        {
            return Pace::divided(divisor);
        }
        Pace::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_divisor_shortens_every_period_within_its_bounds() {
        let fast = Pace::divided(10);
        assert_eq!(fast.poll, Duration::from_millis(25));
        assert_eq!(fast.header_read, Duration::from_millis(500));
        assert_eq!(Pace::divided(0), Pace::default());
        assert_eq!(Pace::divided(1_000), Pace::divided(MAX_DIVISOR));
    }
}
