//! The wait engine behind the bounded wait tools: one call that polls hc
//! instead of the client polling the adapter. It owns what every wait
//! shares (the deadline, the backing-off poll interval, progress
//! notifications, cancellation, and the share of the pool that waits may
//! use) and asks a [`Watch`] what one round of polling found.
//!
//! No pooled connection is held between polls, and every poll is made
//! within the waits' share of the pool (`HcClient::polls`), so waits never
//! starve reads and sends.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use tokio::time::Instant;

use crate::hc::HcClient;
use crate::hc::client::Polls;
use crate::mcp::error::ToolError;

/// First poll interval; it grows by a quarter each quiet round up to
/// [`MAX_POLL`] (so a change a fifth of a second in is seen within about
/// 80 ms, and any change within half a second), and drops back when
/// something changes.
const FIRST_POLL: Duration = Duration::from_millis(25);
const MAX_POLL: Duration = Duration::from_millis(500);

/// What one round of polling concluded.
pub(super) enum Poll<T> {
    /// The wait is over.
    Done(T),
    /// Not yet; `changed` when anything differs from the previous round
    /// (which resets the poll interval and sends progress).
    Pending { changed: bool },
}

/// What a wait watches: one round of hc calls per poll.
pub(super) trait Watch {
    type Done;

    /// One round of calls, each within the waits' share of the pool.
    async fn poll(&mut self, client: Polls<'_>) -> Result<Poll<Self::Done>, ToolError>;

    /// Judges what a pending round read, with no connection held and no hc
    /// call: where work that takes CPU time belongs.
    async fn judge(&mut self) -> Option<Self::Done> {
        None
    }

    /// What a progress notification says about the state so far.
    fn progress(&self) -> String;
}

/// How a wait ended.
pub(super) enum Ended<T> {
    Done(T),
    /// Nothing ended it within the timeout; the watch holds the last state.
    Timeout,
}

/// Bounds of one wait.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub timeout: Duration,
    /// A progress notification goes out at least this often.
    pub progress: Duration,
    /// The poll interval never backs off past this.
    pub max_interval: Duration,
}

impl Limits {
    pub(super) fn new(timeout: Duration, progress: Duration) -> Limits {
        Limits {
            timeout,
            progress,
            max_interval: MAX_POLL,
        }
    }
}

/// Polls `watch` until it is done, the timeout passes (a round still
/// running then is abandoned), or the request is cancelled.
pub(super) async fn run<W: Watch>(
    client: &HcClient,
    watch: &mut W,
    limits: Limits,
    context: &RequestContext<RoleServer>,
) -> Result<Ended<W::Done>, ToolError> {
    let started = Instant::now();
    let deadline = started + limits.timeout;
    let max_interval = limits.max_interval.clamp(FIRST_POLL, MAX_POLL);
    let progress_token = context.meta.get_progress_token();
    let mut interval = FIRST_POLL;
    let mut last_progress = started;
    loop {
        let round = async {
            let polled = watch.poll(client.polls()).await?;
            Ok::<_, ToolError>(match polled {
                Poll::Pending { changed } => match watch.judge().await {
                    Some(done) => Poll::Done(done),
                    None => Poll::Pending { changed },
                },
                done => done,
            })
        };
        let changed = tokio::select! {
            biased;
            () = context.ct.cancelled() => return Err(ToolError::Cancelled),
            () = tokio::time::sleep_until(deadline) => return Ok(Ended::Timeout),
            polled = round => match polled? {
                Poll::Done(done) => return Ok(Ended::Done(done)),
                Poll::Pending { changed } => changed,
            },
        };
        let now = Instant::now();
        if now >= deadline {
            return Ok(Ended::Timeout);
        }
        if let Some(token) = &progress_token
            && (changed || now - last_progress >= limits.progress)
        {
            notify(
                context,
                token,
                now - started,
                limits.timeout,
                watch.progress(),
            )
            .await;
            last_progress = now;
        }
        interval = if changed {
            FIRST_POLL
        } else {
            (interval * 5 / 4).min(max_interval)
        };
        tokio::select! {
            biased;
            () = context.ct.cancelled() => return Err(ToolError::Cancelled),
            () = tokio::time::sleep_until((now + interval).min(deadline)) => {}
        }
    }
}

pub(super) async fn notify(
    context: &RequestContext<RoleServer>,
    token: &ProgressToken,
    elapsed: Duration,
    timeout: Duration,
    message: String,
) {
    let param = ProgressNotificationParam::new(token.clone(), elapsed.as_millis() as f64)
        .with_total(timeout.as_millis() as f64)
        .with_message(message);
    if let Err(e) = context.peer.notify_progress(param).await {
        tracing::debug!("progress notification not delivered: {e}");
    }
}

/// Milliseconds as the tools report them.
pub(super) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
