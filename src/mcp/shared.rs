//! What the MCP surface shares, one per process: the app below it, and
//! state of its own (the key that seals cursors and `since` tokens, the
//! thread that matches wait patterns, the
//! per-terminal send locks, the open confirmations, the one shared look at
//! hc and the subscriptions' watcher).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::fleet::ticker::Ticker;
use super::resources::watcher::{Seat, WatchPace, Watcher};
use super::seal::SealKey;
use super::tools::send_locks::SendLocks;
use super::tools::send_prompt::confirm::Confirmations;
use super::tools::wait_for_output::Matchers;
use crate::app::App;
use crate::caller::Caller;
use crate::config::TerminalLifetime;
use crate::hc::CoreError;
use crate::hc::wire::TerminalRecord;

/// The 2026-07-28 request that opens a subscription stream.
const LISTEN_METHOD: &str = "subscriptions/listen";

/// What the tools share: the app below them, and state of their own (see
/// the module). One per process.
pub(crate) struct Tools {
    app: Arc<App>,
    seal: SealKey,
    ticker: Ticker,
    matchers: Matchers,
    send_locks: Arc<SendLocks>,
    confirmations: Confirmations,
    watcher: Watcher,
    /// Cancelled when `serve` begins to stop: calls still running answer
    /// at once (a send whose outcome hc has not told says so).
    stopping: CancellationToken,
}

impl Tools {
    /// The tools over `app`, with a new random seal key: cursors and
    /// `since` tokens of another process do not open.
    pub(crate) fn new(app: Arc<App>, pace: WatchPace) -> Tools {
        let ticker = Ticker::new(pace.poll);
        Tools {
            app,
            seal: SealKey::random(),
            watcher: Watcher::new(ticker.clone(), pace.min_gap),
            ticker,
            matchers: Matchers::default(),
            send_locks: Arc::default(),
            confirmations: Confirmations::default(),
            stopping: CancellationToken::new(),
        }
    }

    /// The app below the tools: core client, audit record and config.
    pub(crate) fn app(&self) -> &App {
        &self.app
    }

    /// The key that seals `list_sessions` cursors and `since` tokens.
    pub(crate) fn seal(&self) -> &SealKey {
        &self.seal
    }

    /// The one shared look at hc per tick.
    pub(crate) fn ticker(&self) -> &Ticker {
        &self.ticker
    }

    /// The app, shared (for the subscriptions' watcher, which outlives a
    /// request).
    pub(crate) fn shared_app(&self) -> &Arc<App> {
        &self.app
    }

    /// The resource subscriptions and their one watcher.
    pub(crate) fn watcher(&self) -> &Watcher {
        &self.watcher
    }

    /// The key that seals confirmations, and those not yet redeemed.
    pub(crate) fn confirmations(&self) -> &Confirmations {
        &self.confirmations
    }

    pub(crate) fn matchers(&self) -> &Matchers {
        &self.matchers
    }

    /// Cancelled when `serve` begins to stop.
    pub(crate) fn stopping(&self) -> &CancellationToken {
        &self.stopping
    }

    /// The per-terminal send locks.
    pub(crate) fn send_locks(&self) -> &Arc<SendLocks> {
        &self.send_locks
    }

    /// What a request takes before rmcp sees it, asked by both transports
    /// at their edge: a `subscriptions/listen` takes its place among the
    /// subscribers there, so that a listen past its caller's share (or
    /// past all of them) is refused before rmcp acknowledges it. `None`
    /// for every other method; `Err` says why the request is refused.
    pub(crate) fn admit(&self, method: &str, caller: &Caller) -> Result<Option<Arc<Seat>>, String> {
        if method != LISTEN_METHOD {
            return Ok(None);
        }
        match self.watcher.seat(caller) {
            Ok(seat) => Ok(Some(Arc::new(seat))),
            Err(refused) => Err(refused.message.into_owned()),
        }
    }

    /// The live terminals approved now (an entry for their core and
    /// lifetime in the config in force), in hc's order; `None` when the
    /// config in force is invalid, so that nothing counts as approved.
    pub(crate) async fn approved_live(&self) -> Result<Option<Vec<TerminalRecord>>, CoreError> {
        let loaded = self.app.loaded();
        let Ok(config) = loaded.approvals() else {
            return Ok(None);
        };
        let listed = self.app.client().list(false).await?;
        let core = listed.core.core_id.clone();
        Ok(Some(
            listed
                .value
                .terminals
                .into_iter()
                .filter(|t| !t.is_finished())
                .filter(|t| {
                    config.is_send_approved(
                        &core,
                        &TerminalLifetime {
                            address: t.address.clone(),
                            created_ms: t.created_ms,
                        },
                    )
                })
                .collect(),
        ))
    }
}
