//! Counters of the hc socket for the control `stats` method: connections
//! open, peak, total and closed, and calls per method name. The control
//! socket's own traffic is never counted.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;

#[derive(Debug, Default)]
pub struct Stats {
    inner: Mutex<Snapshot>,
}

/// The counters as the control socket reports them.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct Snapshot {
    pub connections_open: u64,
    pub connections_peak: u64,
    pub connections_total: u64,
    pub connections_closed: u64,
    /// Calls per method name, as the peer spelled it (unknown ones too).
    pub calls: BTreeMap<String, u64>,
}

/// Counts one open connection; closing is counted when it drops.
pub struct ConnectionGuard {
    stats: Arc<Stats>,
}

impl Stats {
    fn inner(&self) -> MutexGuard<'_, Snapshot> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn connection_opened(self: &Arc<Self>) -> ConnectionGuard {
        let mut inner = self.inner();
        inner.connections_open += 1;
        inner.connections_total += 1;
        inner.connections_peak = inner.connections_peak.max(inner.connections_open);
        ConnectionGuard {
            stats: Arc::clone(self),
        }
    }

    pub fn record_call(&self, method: &str) {
        *self.inner().calls.entry(method.to_string()).or_default() += 1;
    }

    pub fn snapshot(&self) -> Snapshot {
        self.inner().clone()
    }

    /// Starts counting afresh; connections still open stay counted as open
    /// (and so as total and peak).
    pub fn reset(&self) {
        let mut inner = self.inner();
        let open = inner.connections_open;
        *inner = Snapshot {
            connections_open: open,
            connections_peak: open,
            connections_total: open,
            ..Snapshot::default()
        };
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        let mut inner = self.stats.inner();
        inner.connections_open = inner.connections_open.saturating_sub(1);
        inner.connections_closed += 1;
    }
}
