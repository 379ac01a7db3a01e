//! The machines an operator's command shows (contract §8): each as the
//! core lists it, with whether the config shows it (`machines`); and, for
//! `doctor`, what an approval of a machine's terminal runs into (its
//! machine removed, hidden, down, or running another core than the one
//! `allow` recorded).

use serde_json::{Value, json};

use crate::config::{Config, TerminalLifetime};
use crate::escape;
use crate::escape::printable;
use crate::hc::wire::{MachineRecord, MachineState, machine_of};
use crate::hc::{CoreError, HcClient};

/// What the core said of its machines.
#[derive(Debug, Clone)]
pub(crate) enum Machines {
    /// The core has no `machine.list`: no machines.
    None,
    /// As listed.
    Listed(Vec<MachineRecord>),
    /// `machine.list` failed (the reason, escaped).
    Failed(String),
}

/// Asks the core behind `client`.
pub(crate) async fn ask(client: &HcClient) -> Machines {
    match client.machines().await {
        Ok(answer) => match answer.value {
            Some(listing) => Machines::Listed(listing.machines),
            None => Machines::None,
        },
        Err(e) => Machines::Failed(printable(&e.to_string()).into_owned()),
    }
}

impl Machines {
    /// One line per machine (`NAME STATE since core version shown|hidden`),
    /// or what there is instead.
    pub(crate) fn lines(&self, config: &Config) -> Vec<String> {
        match self {
            Machines::None => vec!["none (this core has no machine.list)".to_owned()],
            Machines::Failed(why) => vec![format!("machine.list failed: {why}")],
            Machines::Listed(machines) if machines.is_empty() => vec!["none".to_owned()],
            Machines::Listed(machines) => machines
                .iter()
                .map(|m| {
                    format!(
                        "{} {} since_ms={} core={} version={} {}",
                        printable(&m.name),
                        m.state,
                        m.since_ms.map_or("-".to_owned(), |s| s.to_string()),
                        m.core_id.as_ref().map_or("-", |c| c.as_str()),
                        m.version.as_deref().map_or("-".into(), printable),
                        if config.machines().shows(Some(&m.name)) {
                            "shown"
                        } else {
                            "hidden (config machines)"
                        }
                    )
                })
                .collect(),
        }
    }

    /// `{"supported", "machines": [{…, "shown"}], "error"}`.
    pub(crate) fn json(&self, config: &Config) -> Value {
        match self {
            Machines::None => json!({"supported": false, "machines": []}),
            Machines::Failed(why) => json!({"supported": null, "machines": [], "error": why}),
            Machines::Listed(machines) => {
                let machines: Vec<Value> = machines
                    .iter()
                    .map(|m| {
                        let mut value = serde_json::to_value(m).expect("a machine encodes");
                        value["shown"] = json!(config.machines().shows(Some(&m.name)));
                        value
                    })
                    .collect();
                json!({"supported": true, "machines": machines})
            }
        }
    }

    fn find(&self, name: &str) -> Option<&MachineRecord> {
        match self {
            Machines::Listed(machines) => machines.iter().find(|m| m.name == name),
            Machines::None | Machines::Failed(_) => None,
        }
    }

    /// What stops the approval of `lifetime` (a machine's terminal) from
    /// sending now, if anything: its machine hidden, not listed, not
    /// connected, or running another core than `allow` recorded. `None`
    /// for this core's own terminals, and when nothing does.
    pub(crate) fn blocks(&self, config: &Config, lifetime: &TerminalLifetime) -> Option<Block> {
        let name = machine_of(&lifetime.address)?;
        let shown = printable(name).into_owned();
        if !config.machines().shows(Some(name)) {
            return Some(Block::Fails(format!(
                "is on machine {shown}, which the config's machines ({}) does not show: nothing is sent to it",
                config.machines().describe()
            )));
        }
        let listed = match self {
            Machines::Failed(_) => return Some(Block::Unknown("machine.list failed".into())),
            Machines::None => {
                return Some(Block::Fails(format!(
                    "is on machine {shown}, but this core has no machine.list: nothing is sent to it"
                )));
            }
            Machines::Listed(_) => self.find(name),
        };
        let Some(machine) = listed else {
            return Some(Block::Fails(format!(
                "is on machine {shown}, which the core no longer lists (removed): nothing is sent to it"
            )));
        };
        if let Some(approved) = config.approved_machine_core(lifetime)
            && machine.core_id.as_ref().is_some_and(|now| now != approved)
        {
            return Some(Block::Fails(format!(
                "was approved on machine {shown}'s core {approved}, and {shown} now runs core {} (its hc restarted, or another machine was added as {shown}): nothing is sent to it",
                machine.core_id.as_ref().map_or("-", |c| c.as_str())
            )));
        }
        (machine.state != MachineState::Connected)
            .then(|| Block::Unknown(format!("machine {shown} is {}", machine.state)))
    }
}

/// Why an approval of a machine's terminal cannot send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Block {
    /// It never will as it stands (approve again, or change the config).
    Fails(String),
    /// Not now, and it cannot be checked now (the machine is down).
    Unknown(String),
}

/// Why `allow` cannot bind an approval to a machine's core.
#[derive(Debug)]
pub(crate) enum Unavailable {
    /// The core could not be asked.
    Core(CoreError),
    /// The machine is not listed, or not connected (the reason).
    Machine(String),
}

/// The machine `name` as the core lists it now: connected, or the
/// approval is refused (a terminal on a machine that is down cannot be
/// checked).
pub(crate) async fn machine_core(
    config: &Config,
    name: &str,
) -> Result<MachineRecord, Unavailable> {
    let client = config.hc_client();
    let listed = client.machines().await;
    client.close();
    let shown = escape::printable(name);
    let listing = listed.map_err(Unavailable::Core)?.value.ok_or_else(|| {
        Unavailable::Machine(format!(
            "the core has no machine.list, so machine {shown} cannot be checked: nothing approved"
        ))
    })?;
    match listing.find(name) {
        Some(machine) if machine.state == MachineState::Connected => Ok(machine.clone()),
        Some(machine) => Err(Unavailable::Machine(format!(
            "machine {shown} is {}: approve its terminals while it is connected",
            machine.state
        ))),
        None => Err(Unavailable::Machine(format!(
            "the core does not list machine {shown} (or lists it twice): nothing approved"
        ))),
    }
}

/// What `allow` says of the machine core an approval is bound to.
pub(crate) fn machine_line(machine: &MachineRecord) -> String {
    let name = escape::printable(&machine.name);
    match &machine.core_id {
        Some(core_id) => format!(
            "machine {name}: its core is {core_id} (hc {}); sends go only while {name} is connected with this core (a restart of it, or another core added as {name}, needs a new allow)
",
            escape::printable(machine.version.as_deref().unwrap_or("?"))
        ),
        None => format!(
            "machine {name}: the core does not say which core {name} runs, so this approval holds by name and lifetime only: another core added as {name} with a terminal of the same address and created_ms would receive prompts
"
        ),
    }
}
