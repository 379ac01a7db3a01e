//! Each machine's share of the pool: calls to the terminals of one machine
//! (`NAME/tN`) hold at most [`MACHINE_SHARE`] connections at once, whatever
//! their class, so a machine that is slow or hung (every call to it held
//! until its timeout) never takes the connections that this core's own
//! terminals and the other machines need. A leaf beside `share`: the
//! client takes a machine's place before its class's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::lock::held;

/// Most connections the calls to one machine's terminals hold at once.
pub(crate) const MACHINE_SHARE: usize = 2;

/// Machines whose shares are kept before idle ones are pruned: more than
/// an operator runs, so a caller naming made-up machines cannot grow the
/// map without bound.
const KEPT_MACHINES: usize = 256;

/// The shares of the machines called lately.
#[derive(Default)]
pub(crate) struct MachineShares {
    machines: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// A place in one machine's share, held for the call; given back on drop.
pub(crate) struct MachinePlace {
    _permit: OwnedSemaphorePermit,
}

impl MachineShares {
    /// A place in `machine`'s share, waited for until `deadline`; `None`
    /// when none came free in time (the machine's calls hold them all).
    pub(crate) async fn enter(&self, machine: &str, deadline: Instant) -> Option<MachinePlace> {
        let semaphore = {
            let mut machines = held(&self.machines);
            if machines.len() >= KEPT_MACHINES && !machines.contains_key(machine) {
                machines.retain(|_, share| {
                    Arc::strong_count(share) > 1 || share.available_permits() < MACHINE_SHARE
                });
            }
            Arc::clone(
                machines
                    .entry(machine.to_owned())
                    .or_insert_with(|| Arc::new(Semaphore::new(MACHINE_SHARE))),
            )
        };
        match tokio::time::timeout_at(deadline, semaphore.acquire_owned()).await {
            Ok(Ok(permit)) => Some(MachinePlace { _permit: permit }),
            Ok(Err(_)) | Err(_) => None,
        }
    }

    /// Machines with a share kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        held(&self.machines).len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_machine_holds_at_most_its_share_and_others_are_not_held() {
        let shares = MachineShares::default();
        let soon = || Instant::now() + Duration::from_millis(10);
        let first = shares.enter("build", soon()).await;
        let second = shares.enter("build", soon()).await;
        assert!(first.is_some() && second.is_some());
        assert!(
            shares.enter("build", soon()).await.is_none(),
            "a third call to build waits"
        );
        assert!(
            shares.enter("gpu", soon()).await.is_some(),
            "gpu has its own share"
        );
        drop(first);
        assert!(shares.enter("build", soon()).await.is_some());
        drop(second);
    }

    #[tokio::test(start_paused = true)]
    async fn made_up_machine_names_never_grow_the_shares_past_the_bound() {
        let shares = MachineShares::default();
        let soon = || Instant::now() + Duration::from_millis(10);
        let held = shares.enter("busy", soon()).await;
        for n in 0..1000 {
            drop(shares.enter(&format!("m{n}"), soon()).await);
        }
        assert!(shares.len() <= KEPT_MACHINES, "{}", shares.len());
        drop(held);
    }
}
