//! Machines (contract §8, a model from public clients): `machine.list`'s
//! records, read one by one and tolerantly (a state word outside the
//! model's reads as `unknown`, a record that cannot be read is set aside
//! and hides no other), and the machine part of a terminal address
//! (`NAME/tN`). Which machine a terminal is on is its address's prefix:
//! that is where hc routes a call, whatever else a record says.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::lenient::lenient;
use crate::hc::core_id::CoreId;

/// Longest machine name read from hc or from the config. The model says
/// 32; a real core may allow more, and a longer name is still shown.
pub const MAX_MACHINE_NAME_CHARS: usize = 64;

/// Machines kept of one `machine.list`: more than an operator runs.
pub const MAX_MACHINES: usize = 256;

/// The machine of a terminal address: the part before the first `/`
/// (`build` of `build/t7`), or none for this core's own terminals.
pub fn machine_of(address: &str) -> Option<&str> {
    address.split_once('/').map(|(machine, _)| machine)
}

/// Whether `name` can be a machine name: 1–64 printable characters,
/// without `/` or whitespace.
pub fn check_machine_name(name: &str) -> Result<(), String> {
    let chars = name.chars().count();
    if name.is_empty() || chars > MAX_MACHINE_NAME_CHARS {
        return Err(format!(
            "is {chars} characters long; a machine name has 1-{MAX_MACHINE_NAME_CHARS}"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|&c| c == '/' || c.is_whitespace() || crate::escape::is_hazard(c))
    {
        return Err(format!(
            "holds U+{:04X}, which no machine name holds",
            u32::from(c)
        ));
    }
    Ok(())
}

/// A machine's connection state as hc reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MachineState {
    /// Its core answers: its terminals are listed and can be called.
    Connected,
    /// hc is connecting to it.
    Connecting,
    /// Not connected: its terminals are not listed and calls fail.
    Disconnected,
    /// A state word outside the model's three.
    Unknown,
}

impl MachineState {
    /// The state as hc spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            MachineState::Connected => "connected",
            MachineState::Connecting => "connecting",
            MachineState::Disconnected => "disconnected",
            MachineState::Unknown => "unknown",
        }
    }

    fn from_reported(word: &str) -> MachineState {
        match word {
            "connected" => MachineState::Connected,
            "connecting" => MachineState::Connecting,
            "disconnected" => MachineState::Disconnected,
            _ => MachineState::Unknown,
        }
    }
}

impl std::fmt::Display for MachineState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One machine as hc lists it. Only `name` and `state` are required.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct MachineRecord {
    /// hc's `name`: how its terminals are addressed (`NAME/tN`). Not an
    /// identity: another core can be added under the same name.
    pub name: String,
    /// hc's `state`.
    pub state: MachineState,
    /// hc's `since_ms`: when it entered that state, when sent.
    pub since_ms: Option<i64>,
    /// hc's `core_id`: the machine's own core, when known (while connected).
    pub core_id: Option<CoreId>,
    /// hc's `version`: the machine's core's version, when known.
    pub version: Option<String>,
}

#[derive(Deserialize)]
struct RawMachine {
    name: String,
    state: String,
    #[serde(default, deserialize_with = "lenient")]
    since_ms: Option<i64>,
    #[serde(default, deserialize_with = "lenient")]
    core_id: Option<CoreId>,
    #[serde(default, deserialize_with = "lenient")]
    version: Option<String>,
}

impl<'de> Deserialize<'de> for MachineRecord {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<MachineRecord, D::Error> {
        let raw = RawMachine::deserialize(d)?;
        check_machine_name(&raw.name)
            .map_err(|why| serde::de::Error::custom(format!("its name {why}")))?;
        let version = raw
            .version
            .map(|version| crate::escape::bounded(&version, 64).into_owned());
        Ok(MachineRecord {
            name: raw.name,
            state: MachineState::from_reported(&raw.state),
            since_ms: raw.since_ms,
            core_id: raw.core_id,
            version,
        })
    }
}

/// `machine.list`'s answer, each entry still to be read on its own.
#[derive(Debug, Deserialize)]
pub struct MachineListResult {
    /// hc's `machines`.
    pub machines: Vec<Box<serde_json::value::RawValue>>,
}

/// The machines of a list that could be read (at most [`MAX_MACHINES`],
/// sorted by name) and how many could not be. A name listed twice is
/// ambiguous: neither entry is kept, so nothing is sent to that name.
pub fn read_machines(listed: MachineListResult) -> (Vec<MachineRecord>, usize) {
    let mut machines: Vec<MachineRecord> = Vec::new();
    let mut unreadable = 0;
    for raw in listed.machines {
        match serde_json::from_str::<MachineRecord>(raw.get()) {
            Ok(machine) if machines.len() < MAX_MACHINES => machines.push(machine),
            Ok(_) | Err(_) => unreadable += 1,
        }
    }
    machines.sort_by(|a, b| a.name.cmp(&b.name));
    let mut kept: Vec<MachineRecord> = Vec::with_capacity(machines.len());
    for group in machines.chunk_by(|a, b| a.name == b.name) {
        match group {
            [one] => kept.push(one.clone()),
            twice => unreadable += twice.len(),
        }
    }
    (kept, unreadable)
}

/// The machine of a record at `address` whose `machine` field (if any)
/// says `said`: the address's prefix. A record whose field names another
/// machine than its address is unreadable (which would a send reach?); a
/// field on this core's own terminals (a core may name itself) is ignored.
pub(super) fn record_machine(
    address: &str,
    said: Option<&Value>,
) -> Result<Option<String>, String> {
    let Some(machine) = machine_of(address) else {
        return Ok(None);
    };
    check_machine_name(machine).map_err(|why| format!("its machine name {why}"))?;
    match said.and_then(Value::as_str) {
        Some(said) if !said.is_empty() && said != machine => Err(format!(
            "its machine field names `{}`, its address machine `{machine}`",
            crate::escape::bounded(said, 64)
        )),
        _ => Ok(Some(machine.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(value: Value) -> (Vec<MachineRecord>, usize) {
        read_machines(serde_json::from_value(value).unwrap())
    }

    #[test]
    fn machines_are_read_one_by_one_and_an_odd_state_is_unknown() {
        let (machines, unreadable) = read(json!({ "machines": [
            { "name": "gpu", "state": "connected", "core_id": "c2", "version": "0.1.20",
              "since_ms": 5, "extra": true },
            { "name": "build", "state": "sleeping" },
            { "name": "bad/name", "state": "connected" },
            { "state": "connected" },
        ]}));
        assert_eq!(unreadable, 2);
        let names: Vec<_> = machines
            .iter()
            .map(|m| (m.name.as_str(), m.state))
            .collect();
        assert_eq!(
            names,
            [
                ("build", MachineState::Unknown),
                ("gpu", MachineState::Connected)
            ]
        );
        assert_eq!(machines[1].core_id.as_ref().map(CoreId::as_str), Some("c2"));
        assert_eq!(machines[0].core_id, None);
    }

    #[test]
    fn a_name_listed_twice_is_ambiguous_and_neither_entry_is_kept() {
        let (machines, unreadable) = read(json!({ "machines": [
            { "name": "a", "state": "connected", "core_id": "c1" },
            { "name": "b", "state": "connected" },
            { "name": "a", "state": "connected", "core_id": "c2" },
        ]}));
        let names: Vec<_> = machines.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["b"]);
        assert_eq!(unreadable, 2);
    }

    #[test]
    fn the_machine_of_an_address_is_its_prefix() {
        assert_eq!(machine_of("build/t7"), Some("build"));
        assert_eq!(machine_of("t7"), None);
    }
}
