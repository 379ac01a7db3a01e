//! The one way a lock of the adapter's own state is taken. A mutex is
//! poisoned when a thread panicked holding it; every such state here stays
//! valid between statements (a map, a counter, a swapped value), so the
//! value is taken as it is rather than the panic passed on to every later
//! caller: one failed call never takes the server down with it.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// `mutex`, locked, whether or not a panic poisoned it.
pub(crate) fn held<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `lock`, read, whether or not a panic poisoned it.
pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

/// `lock`, written, whether or not a panic poisoned it.
pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}
