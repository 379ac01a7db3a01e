//! What every tool call shares: the core client, the current config (swapped
//! whole on reload, so a call sees one consistent config), the cursor key and
//! the per-terminal send locks.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::OwnedMutexGuard;

use crate::config::Config;
use crate::hc::HcClient;
use crate::tools::cursor::CursorKey;

pub struct App {
    pub client: HcClient,
    config: RwLock<Arc<Config>>,
    /// Set while the last reload found an invalid config: sends are refused
    /// (reads go on) until a valid file is loaded.
    reload_error: RwLock<Option<String>>,
    pub cursor_key: CursorKey,
    pub send_locks: Arc<SendLocks>,
    /// Shares of the pool that `wait_for_status` polls may use at once.
    pub wait_permits: tokio::sync::Semaphore,
}

impl App {
    pub fn new(config: Config) -> App {
        App {
            client: HcClient::new(&config.socket_path, config.timeout),
            config: RwLock::new(Arc::new(config)),
            reload_error: RwLock::new(None),
            cursor_key: CursorKey::random(),
            send_locks: Arc::default(),
            wait_permits: tokio::sync::Semaphore::new(
                crate::tools::wait_for_status::POLL_CONNECTIONS,
            ),
        }
    }

    /// The config in force for a call that starts now.
    pub fn config(&self) -> Arc<Config> {
        Arc::clone(&self.config.read().expect("config lock"))
    }

    /// Makes `config` the one in force for calls that start after this,
    /// and lifts any reload refusal.
    pub fn replace_config(&self, config: Config) {
        *self.config.write().expect("config lock") = Arc::new(config);
        *self.reload_error.write().expect("reload lock") = None;
    }

    /// Records that a reload found an invalid config: sends stop until a
    /// valid one is loaded.
    pub fn refuse_sends(&self, why: String) {
        *self.reload_error.write().expect("reload lock") = Some(why);
    }

    /// Why sends are refused after a failed reload, if they are.
    pub fn sends_refused(&self) -> Option<String> {
        self.reload_error.read().expect("reload lock").clone()
    }

    /// The config that decides approvals for a call that starts now, or
    /// `None` while a failed reload has turned sends off.
    pub fn approvals(&self) -> Option<Arc<Config>> {
        self.sends_refused().is_none().then(|| self.config())
    }
}

/// Serializes sends to one terminal inside the adapter: a second prompt for
/// the same address waits until the first has been classified. Entries are
/// removed when nobody holds or waits for them.
#[derive(Default)]
pub struct SendLocks {
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl SendLocks {
    pub async fn lock(self: &Arc<Self>, address: &str) -> SendLockGuard {
        let lock = {
            let mut locks = self.locks.lock().expect("send locks");
            Arc::clone(locks.entry(address.to_owned()).or_default())
        };
        let guard = lock.lock_owned().await;
        SendLockGuard {
            locks: Arc::clone(self),
            address: address.to_owned(),
            guard: Some(guard),
        }
    }

    /// Addresses with a holder or waiter (for tests).
    pub fn len(&self) -> usize {
        self.locks.lock().expect("send locks").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub struct SendLockGuard {
    locks: Arc<SendLocks>,
    address: String,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Drop for SendLockGuard {
    fn drop(&mut self) {
        let mut locks = self.locks.locks.lock().expect("send locks");
        drop(self.guard.take());
        if let Some(lock) = locks.get(&self.address) {
            // Only the map holds it now: nobody waits, forget the entry.
            if Arc::strong_count(lock) == 1 {
                locks.remove(&self.address);
            }
        }
    }
}
