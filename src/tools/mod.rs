//! The MCP surface: the tools, the state only they use, and the server that
//! routes to them. A tool never sees JSON-RPC; it calls the typed core
//! client through [`App`].
//!
//! Below the tools sit `app` (client and config), `config`, `hc`, `audit`
//! and `escape`; nothing below imports from here.

pub(crate) mod access;
mod arguments;
pub(crate) mod completion;
pub(crate) mod cursor;
pub(crate) mod error;
mod handler;
pub(crate) mod list_sessions;
pub(crate) mod prompts;
pub(crate) mod read_output;
pub(crate) mod resources;
pub(crate) mod schema;
pub(crate) mod send_locks;
pub(crate) mod send_prompt;
mod server;
pub(crate) mod text;
mod wait;
pub mod wait_for_output;
pub(crate) mod wait_for_status;
pub(crate) mod watcher;

use std::sync::Arc;

use crate::app::App;
use crate::config::TerminalLifetime;
use crate::hc::CoreError;
use crate::hc::wire::TerminalRecord;
use cursor::CursorKey;
use send_locks::SendLocks;
use send_prompt::confirm::Confirmations;
pub use server::{HerdrServer, PROTOCOL_VERSIONS};
use wait::WaitPermits;
use wait_for_output::Matchers;
use watcher::Watcher;

/// What the tools share: the app below them, and state of their own (the
/// key that seals cursors, the waits' share of the pool, the thread that
/// matches wait patterns, the per-terminal send locks). One per process.
pub struct Tools {
    app: Arc<App>,
    cursors: CursorKey,
    wait_permits: WaitPermits,
    matchers: Matchers,
    send_locks: Arc<SendLocks>,
    confirmations: Confirmations,
    watcher: Watcher,
}

impl Tools {
    /// The tools over `app`, with a new random cursor key: cursors of another
    /// process do not open.
    pub fn new(app: Arc<App>) -> Tools {
        Tools {
            app,
            cursors: CursorKey::random(),
            wait_permits: WaitPermits::default(),
            matchers: Matchers::default(),
            send_locks: Arc::default(),
            confirmations: Confirmations::default(),
            watcher: Watcher::default(),
        }
    }

    /// The app below the tools: core client, audit record and config.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The key that seals `list_sessions` cursors.
    pub fn cursors(&self) -> &CursorKey {
        &self.cursors
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
    pub fn send_locks(&self) -> &Arc<SendLocks> {
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
