//! A send to a machine's terminal (`NAME/tN`, contract §8): the config
//! must show the machine, the core must list it connected, and when the
//! approval recorded the machine's own core, that core must be the one the
//! machine runs now. Decided on what the preflight saw (no I/O here),
//! before anything is dispatched: every refusal here is NOT SENT, never a
//! fallback to a terminal of this core, never retried.

use std::fmt;

use crate::config::MachineScope;
use crate::escape::printable;
use crate::hc::CoreId;
use crate::hc::wire::{MachineRecord, MachineState, machine_of};

/// What the preflight saw of the target's machine.
#[derive(Debug, Clone)]
pub(crate) enum MachineSeen {
    /// The core has no `machine.list`: it cannot show the machine.
    NoMachineList,
    /// The core's `machine.list` does not list it (or lists it twice).
    NotListed,
    /// As listed.
    Listed(MachineRecord),
}

/// Why a send to a machine's terminal was refused.
#[derive(Debug)]
pub(crate) enum MachineRefusal {
    /// The config's `machines` does not show the machine.
    Hidden { machine: String, scope: String },
    /// The machine is not listed connected (or hc answered
    /// `machine_unavailable`).
    Unavailable { machine: String, state: String },
    /// The machine runs another core than the approval recorded.
    Changed {
        machine: String,
        approved: CoreId,
        current: Option<CoreId>,
        /// ` --config PATH` for the operator's command, or empty.
        flag: String,
    },
}

/// The config shows the machine of `address` (before any hc call).
pub(super) fn shown(scope: &MachineScope, address: &str) -> Result<(), MachineRefusal> {
    match machine_of(address) {
        Some(machine) if !scope.shows(Some(machine)) => Err(MachineRefusal::Hidden {
            machine: machine.to_owned(),
            scope: scope.describe(),
        }),
        _ => Ok(()),
    }
}

/// The machine as the preflight saw it can take the send approved on
/// `approved` (its recorded machine core, if any).
pub(super) fn check(
    machine: &str,
    seen: &MachineSeen,
    approved: Option<&CoreId>,
    flag: &str,
) -> Result<(), MachineRefusal> {
    let unavailable = |state: &str| MachineRefusal::Unavailable {
        machine: machine.to_owned(),
        state: state.to_owned(),
    };
    let listed = match seen {
        MachineSeen::NoMachineList => {
            return Err(unavailable("not shown (the core has no machine.list)"));
        }
        MachineSeen::NotListed => return Err(unavailable("not listed")),
        MachineSeen::Listed(listed) => listed,
    };
    if listed.state != MachineState::Connected {
        return Err(unavailable(listed.state.as_str()));
    }
    match approved {
        Some(approved) if listed.core_id.as_ref() != Some(approved) => {
            Err(MachineRefusal::Changed {
                machine: machine.to_owned(),
                approved: approved.clone(),
                current: listed.core_id.clone(),
                flag: flag.to_owned(),
            })
        }
        _ => Ok(()),
    }
}

impl fmt::Display for MachineRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MachineRefusal::Hidden { machine, scope } => write!(
                f,
                "the terminal is on machine {}, which this adapter does not show (config machines: {scope}); nothing was sent. Only the operator can change which machines are shown",
                printable(machine)
            ),
            MachineRefusal::Unavailable { machine, state } => write!(
                f,
                "machine {} is {}: its terminals cannot be reached now, and nothing was sent (never to a terminal of another machine instead, never retried). See list_machines, and send again once it is connected",
                printable(machine),
                printable(state)
            ),
            MachineRefusal::Changed {
                machine,
                approved,
                current,
                flag,
            } => write!(
                f,
                "machine {} now runs core {}, not core {approved}, on which this terminal was approved (its hc restarted, or another machine was added under that name); nothing was sent: the operator approves the terminal again with herdr-core-mcp allow{flag} ADDRESS",
                printable(machine),
                current.as_ref().map_or("(not said)", CoreId::as_str)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(state: MachineState, core: Option<&str>) -> MachineSeen {
        MachineSeen::Listed(MachineRecord {
            name: "build".into(),
            state,
            since_ms: Some(1),
            core_id: core.map(|c| CoreId::try_from(c.to_owned()).unwrap()),
            version: None,
        })
    }

    fn outcome(seen: &MachineSeen, approved: Option<&str>) -> String {
        let approved = approved.map(|c| CoreId::try_from(c.to_owned()).unwrap());
        match check("build", seen, approved.as_ref(), "") {
            Ok(()) => "sendable".into(),
            Err(MachineRefusal::Unavailable { state, .. }) => format!("unavailable: {state}"),
            Err(MachineRefusal::Changed { .. }) => "changed".into(),
            Err(MachineRefusal::Hidden { .. }) => "hidden".into(),
        }
    }

    #[test]
    fn only_a_connected_machine_running_the_approved_core_takes_a_send() {
        let connected = listed(MachineState::Connected, Some("c1"));
        assert_eq!(outcome(&connected, Some("c1")), "sendable");
        assert_eq!(
            outcome(&connected, None),
            "sendable",
            "approved by name only"
        );
        assert_eq!(outcome(&connected, Some("c0")), "changed");
        assert_eq!(
            outcome(&listed(MachineState::Connected, None), Some("c1")),
            "changed"
        );
        for state in [
            MachineState::Connecting,
            MachineState::Disconnected,
            MachineState::Unknown,
        ] {
            assert_eq!(
                outcome(&listed(state, Some("c1")), Some("c1")),
                format!("unavailable: {state}")
            );
        }
        assert_eq!(
            outcome(&MachineSeen::NotListed, Some("c1")),
            "unavailable: not listed"
        );
        assert!(outcome(&MachineSeen::NoMachineList, None).starts_with("unavailable"));
    }

    #[test]
    fn a_hidden_machine_is_refused_by_name_and_this_core_is_always_shown() {
        let only_gpu = MachineScope::Only(["gpu".to_owned()].into());
        assert!(shown(&only_gpu, "gpu/t1").is_ok());
        assert!(shown(&only_gpu, "t1").is_ok());
        let refused = shown(&only_gpu, "build/t1").unwrap_err();
        assert!(refused.to_string().contains("machine build"), "{refused}");
    }
}
