//! Serializes sends to one terminal inside the adapter: a second prompt for
//! the same address waits until the first has been classified. Entries are
//! removed when nobody holds or waits for them, so the map stays as small
//! as the number of terminals being sent to right now.

use crate::lock::held;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

#[derive(Default)]
pub(crate) struct SendLocks {
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl SendLocks {
    /// Waits for the lock of `address`; released when the guard drops.
    pub(crate) async fn lock(self: &Arc<Self>, address: &str) -> SendLockGuard {
        let lock = {
            let mut locks = held(&self.locks);
            Arc::clone(locks.entry(address.to_owned()).or_default())
        };
        let guard = lock.lock_owned().await;
        SendLockGuard {
            locks: Arc::clone(self),
            address: address.to_owned(),
            guard: Some(guard),
        }
    }
}

pub(crate) struct SendLockGuard {
    locks: Arc<SendLocks>,
    address: String,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Drop for SendLockGuard {
    fn drop(&mut self) {
        let mut locks = held(&self.locks.locks);
        drop(self.guard.take());
        if let Some(lock) = locks.get(&self.address) {
            // Only the map holds it now: nobody waits, forget the entry.
            if Arc::strong_count(lock) == 1 {
                locks.remove(&self.address);
            }
        }
    }
}
