//! The server's surface: one per process, held by the server, the handler
//! and the prompts, and by nothing else. It holds the app below it and
//! what the surface keeps across calls (the key that seals cursors and
//! `since` tokens, the one shared look at hc and the subscriptions'
//! watcher, the matching threads, the send tool and its state, the stop
//! signal), and hands each tool, resource and completion the parts it
//! uses, as mini-redis's commands take `&Db` and a connection.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::resources::watcher::Watcher;
use super::seal::SealKey;
use super::state::Matchers;
use super::tools::send_prompt::SendPrompt;
use super::tracking::ticker::Ticker;
use crate::app::App;
use crate::pace::Pace;

/// What the server's calls share; one per process.
pub(crate) struct Surface {
    pub(super) app: Arc<App>,
    pub(super) seal: SealKey,
    pub(super) ticker: Ticker,
    pub(super) matchers: Matchers,
    pub(super) send: Arc<SendPrompt>,
    pub(super) watcher: Watcher,
    /// Cancelled when `serve` begins to stop: calls still running answer
    /// at once (a send whose outcome hc has not told says so).
    pub(super) stopping: CancellationToken,
    /// How often progress goes out while a call waits.
    pub(super) progress: std::time::Duration,
}

impl Surface {
    /// The surface over `app`, at `pace`, with a new random seal key:
    /// cursors and `since` tokens of another process do not open.
    pub(crate) fn new(app: Arc<App>, pace: Pace) -> Surface {
        let ticker = Ticker::new(pace.poll);
        let stopping = CancellationToken::new();
        Surface {
            seal: SealKey::random(),
            watcher: Watcher::new(ticker.clone(), pace.min_gap),
            ticker,
            matchers: Matchers::default(),
            send: Arc::new(SendPrompt::new(Arc::clone(&app), stopping.clone())),
            app,
            stopping,
            progress: pace.progress,
        }
    }
}
