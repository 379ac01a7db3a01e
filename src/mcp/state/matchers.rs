//! The threads that match output patterns, shared by every output wait: a
//! pattern is matched off the async workers, and at most
//! [`MATCHING_THREADS`] at once, so no accepted pattern can take the
//! runtime from other callers.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Threads matching at once, for all waits together: matching can take at
/// most one core from the async workers, whatever the number of waits.
const MATCHING_THREADS: usize = 1;

/// The matching threads all waits share.
pub(crate) struct Matchers(Arc<Semaphore>);

impl Default for Matchers {
    fn default() -> Matchers {
        Matchers(Arc::new(Semaphore::new(MATCHING_THREADS)))
    }
}

impl Matchers {
    /// A place on one of the matching threads, held until dropped.
    pub(crate) async fn place(&self) -> OwnedSemaphorePermit {
        Arc::clone(&self.0)
            .acquire_owned()
            .await
            .expect("the semaphore is never closed")
    }
}
