//! `machines`: which of the core's machines (contract §8) this adapter
//! shows and may send to. `"all"` (the default) or a list of names; any
//! other machine is invisible to every tool and refused by name. This
//! core's own terminals are always visible.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::error::{Invalid, invalid};
use crate::hc::wire::{check_machine_name, machine_of};

/// The word for every machine.
const ALL: &str = "all";

/// `machines` as the file spells it: `"all"` or a list of names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RawMachines {
    /// `"all"`.
    #[default]
    All,
    /// The names listed.
    Only(Vec<String>),
}

impl Serialize for RawMachines {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RawMachines::All => s.serialize_str(ALL),
            RawMachines::Only(names) => names.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for RawMachines {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RawMachines, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(word) if word == ALL => Ok(RawMachines::All),
            serde_json::Value::Array(items) => items
                .into_iter()
                .map(|item| match item {
                    serde_json::Value::String(name) => Ok(name),
                    other => Err(other),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(RawMachines::Only)
                .map_err(|other| {
                    serde::de::Error::custom(format!(
                        "each machine is a name such as \"gpu\", not {other}"
                    ))
                }),
            other => Err(serde::de::Error::custom(format!(
                "machines is \"all\" or a list of machine names such as [\"gpu\"], not {other}"
            ))),
        }
    }
}

impl RawMachines {
    /// Whether this is the default (left out of a written config).
    pub fn is_all(&self) -> bool {
        *self == RawMachines::All
    }
}

/// The machines this adapter shows, validated.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum MachineScope {
    /// Every machine the core lists.
    #[default]
    All,
    /// Only these.
    Only(BTreeSet<String>),
}

impl MachineScope {
    /// Whether the terminals of `machine` are shown (`None`: this core's
    /// own, always).
    pub fn shows(&self, machine: Option<&str>) -> bool {
        match (self, machine) {
            (_, None) | (MachineScope::All, Some(_)) => true,
            (MachineScope::Only(names), Some(name)) => names.contains(name),
        }
    }

    /// Whether the terminal at `address` is shown.
    pub fn shows_address(&self, address: &str) -> bool {
        self.shows(machine_of(address))
    }

    /// `"all"`, or the names, comma-separated, for reports.
    pub fn describe(&self) -> String {
        match self {
            MachineScope::All => ALL.to_owned(),
            MachineScope::Only(names) if names.is_empty() => "none".to_owned(),
            MachineScope::Only(names) => names.iter().cloned().collect::<Vec<_>>().join(", "),
        }
    }
}

/// A terminal on a machine the config does not show.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "{address} is on machine {machine}, which this adapter does not show (config machines: {scope}): it is invisible to every tool, and nothing is read from or sent to it"
)]
pub struct Hidden {
    /// The address asked for, escaped.
    pub address: String,
    /// Its machine, escaped.
    pub machine: String,
    /// What the config shows.
    pub scope: String,
}

impl MachineScope {
    /// `Ok` when the terminal at `address` is shown, else why not.
    pub fn check(&self, address: &str) -> Result<(), Hidden> {
        match machine_of(address) {
            Some(machine) if !self.shows(Some(machine)) => Err(Hidden {
                address: crate::escape::printable(address).into_owned(),
                machine: crate::escape::printable(machine).into_owned(),
                scope: self.describe(),
            }),
            _ => Ok(()),
        }
    }
}

/// Checks each listed name.
pub(super) fn scope(raw: RawMachines) -> Result<MachineScope, Invalid> {
    match raw {
        RawMachines::All => Ok(MachineScope::All),
        RawMachines::Only(names) => {
            let mut scope = BTreeSet::new();
            for (i, name) in names.into_iter().enumerate() {
                check_machine_name(&name).map_err(|why| {
                    invalid(
                        format!("machines[{i}]"),
                        format!("{why}: a machine name as hc lists it, such as \"gpu\""),
                    )
                })?;
                if !scope.insert(name) {
                    return Err(invalid(
                        format!("machines[{i}]"),
                        "names a machine again: list each once",
                    ));
                }
            }
            Ok(MachineScope::Only(scope))
        }
    }
}
