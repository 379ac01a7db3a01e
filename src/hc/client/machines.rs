//! `machine.list` (contract §8) and each machine's share of the pool: the
//! calls of [`HcClient`] that know of machines.

use tokio::time::Instant;

use super::{Answer, HcClient};
use crate::hc::error::CoreError;
use crate::hc::machine_share::MachinePlace;
use crate::hc::share::Class;
use crate::hc::wire::{self, MachineRecord, Method};

/// What `machine.list` held: the machines read, sorted by name, and how
/// many entries could not be read (or named a machine twice).
#[derive(Debug, Clone, Default)]
pub struct MachineListing {
    /// The machines read.
    pub machines: Vec<MachineRecord>,
    /// Entries set aside.
    pub unreadable: usize,
}

impl MachineListing {
    /// The machine called `name`, if listed.
    pub fn find(&self, name: &str) -> Option<&MachineRecord> {
        self.machines.iter().find(|machine| machine.name == name)
    }
}

impl HcClient {
    /// The machines this core added (`machine.list`); `None` from a core
    /// that has no such method (it has no machines).
    pub async fn machines(&self) -> Result<Answer<Option<MachineListing>>, CoreError> {
        self.machines_as(Class::Read).await
    }

    pub(super) async fn machines_as(
        &self,
        class: Class,
    ) -> Result<Answer<Option<MachineListing>>, CoreError> {
        let asked = self
            .call(class, Method::MachineList, &serde_json::json!({}), |_| {
                Ok(())
            })
            .await;
        match asked {
            Ok(answer) => {
                let (machines, unreadable) = wire::read_machines(answer.value);
                Ok(Answer {
                    core: answer.core,
                    value: Some(MachineListing {
                        machines,
                        unreadable,
                    }),
                })
            }
            Err(CoreError::Rpc { code, .. }) if code == wire::METHOD_NOT_FOUND => {
                let core = self.hello_as(class).await?;
                Ok(Answer { core, value: None })
            }
            Err(e) => Err(e),
        }
    }

    /// A place in the share of `address`'s machine, waited for until
    /// `deadline`; none needed for this core's own terminals.
    pub(super) async fn machine_place(
        &self,
        address: &str,
        method: Method,
        deadline: Instant,
    ) -> Result<Option<MachinePlace>, CoreError> {
        let Some(machine) = wire::machine_of(address) else {
            return Ok(None);
        };
        let started = Instant::now();
        match self.machines.enter(machine, deadline).await {
            Some(place) => Ok(Some(place)),
            None => Err(CoreError::MachineQueued {
                machine: crate::escape::bounded(machine, wire::MAX_MACHINE_NAME_CHARS).into_owned(),
                method,
                waited_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            }),
        }
    }
}
