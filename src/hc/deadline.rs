//! The deadline of every hc call, without a wake-up of the runtime per call.
//!
//! tokio's timer wakes the thread parked in its driver whenever a new
//! deadline is earlier than the earliest one the driver knows of, to re-arm
//! its timeout (a write to an eventfd). With no other timer pending, that is
//! every call: its deadline is registered, the call finishes, the deadline
//! is dropped, and the next call's deadline is again the earliest. A
//! [`Pacer`] keeps one timer pending at half the call timeout, always
//! earlier than a new call's deadline, so registering that deadline never
//! wakes anyone. Idle, it costs one wake-up per half timeout (7.5 s by
//! default).

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

/// Shortest period the pacer sleeps, so a tiny timeout cannot make it spin.
const MIN_PERIOD: Duration = Duration::from_millis(10);

/// The pending timer of one client, started by its first call (on the
/// runtime that makes it) and stopped within one period of the client's
/// drop.
pub(crate) struct Pacer {
    period: Duration,
    started: OnceLock<()>,
    alive: Arc<()>,
}

impl Pacer {
    /// A pacer for calls bounded by `timeout`; nothing runs yet.
    pub(crate) fn new(timeout: Duration) -> Pacer {
        Pacer {
            period: (timeout / 2).max(MIN_PERIOD),
            started: OnceLock::new(),
            alive: Arc::new(()),
        }
    }

    /// Starts the pending timer on the current runtime, once.
    pub(crate) fn start(&self) {
        self.started.get_or_init(|| {
            let alive: Weak<()> = Arc::downgrade(&self.alive);
            let period = self.period;
            tokio::spawn(async move {
                while alive.strong_count() > 0 {
                    tokio::time::sleep(period).await;
                }
            });
        });
    }
}
