//! What the MCP surface shares, one per process: the app below it, and
//! state of its own (the key that seals cursors and `since` tokens, the
//! waits' share of the pool, the thread that matches wait patterns, the
//! per-terminal send locks, the open confirmations, the one shared look at
//! hc and the subscriptions' watcher).

use std::sync::Arc;

use super::fleet::ticker::Ticker;
use super::resources::watcher::{WatchPace, Watcher};
use super::seal::SealKey;
use super::tools::send_locks::SendLocks;
use super::tools::send_prompt::confirm::Confirmations;
use super::tools::wait::WaitPermits;
use super::tools::wait_for_output::Matchers;
use crate::app::App;
use crate::config::TerminalLifetime;
use crate::hc::CoreError;
use crate::hc::wire::TerminalRecord;

/// What the tools share: the app below them, and state of their own (see
/// the module). One per process.
pub(crate) struct Tools {
    app: Arc<App>,
    seal: SealKey,
    ticker: Ticker,
    wait_permits: WaitPermits,
    matchers: Matchers,
    send_locks: Arc<SendLocks>,
    confirmations: Confirmations,
    watcher: Watcher,
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
            wait_permits: WaitPermits::default(),
            matchers: Matchers::default(),
            send_locks: Arc::default(),
            confirmations: Confirmations::default(),
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

    pub(crate) fn wait_permits(&self) -> &WaitPermits {
        &self.wait_permits
    }

    pub(crate) fn matchers(&self) -> &Matchers {
        &self.matchers
    }

    /// The per-terminal send locks.
    pub(crate) fn send_locks(&self) -> &Arc<SendLocks> {
        &self.send_locks
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
