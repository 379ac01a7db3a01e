//! How long a question may wait for its answer, and the progress sent
//! while a human reads one asked inside the call, or while hc holds a send:
//! hosts that reset their call timeout on progress keep the call open.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;

/// How long a question may wait for its answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    /// A 2026-07-28 request state's lifetime (`confirmTimeoutMs`): it
    /// holds no call open.
    pub state: Duration,
    /// A question asked inside the call (`confirmCallTimeoutMs`).
    pub call: Duration,
}

/// Progress notifications every `every` while `what` goes on (at most
/// `timeout`), when the request asked for them; never ends (dropped with
/// what it reports on).
pub(super) async fn keep_informed(
    peer: &Peer<RoleServer>,
    token: Option<&ProgressToken>,
    every: Duration,
    timeout: Duration,
    what: &str,
) {
    let Some(token) = token else {
        return std::future::pending().await;
    };
    let started = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval_at(started + every, every);
    loop {
        ticks.tick().await;
        let waited = started.elapsed();
        let param = ProgressNotificationParam::new(token.clone(), waited.as_millis() as f64)
            .with_total(timeout.as_millis() as f64)
            .with_message(format!(
                "{what} ({} of {} s)",
                waited.as_secs(),
                timeout.as_secs()
            ));
        if let Err(e) = peer.notify_progress(param).await {
            tracing::debug!("progress notification not delivered: {e}");
        }
    }
}
