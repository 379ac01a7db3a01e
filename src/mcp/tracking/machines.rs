//! Machines in what changed (contract §8): a `since` of a fleet also holds
//! each shown machine's state and a digest of its core, so that a machine
//! added, removed, going down, coming back or running another core is a
//! change of its own; and a covered terminal a look does not list is read
//! against its machine: `unreachable` while its machine is not connected
//! (it may still run), `gone` only when the machine is connected (or
//! removed) and no longer lists it.

use schemars::JsonSchema;
use serde::Serialize;

use super::leb128::{Reader, put};
use crate::hc::wire::{MachineRecord, MachineState, machine_of};
use crate::mcp::seal::SealKey;

/// What a since holds of one machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MachineMark {
    pub name: String,
    pub state: MachineState,
    /// A keyed digest of its core_id, when the core said which.
    pub core: Option<[u8; 8]>,
}

impl MachineMark {
    pub(crate) fn of(machine: &MachineRecord, key: &SealKey) -> MachineMark {
        MachineMark {
            name: machine.name.clone(),
            state: machine.state,
            core: machine
                .core_id
                .as_ref()
                .map(|core| key.digest("since machine core", core.as_str().as_bytes())),
        }
    }
}

/// The marks of `machines`, sorted by name.
pub(crate) fn marks_of(machines: &[MachineRecord], key: &SealKey) -> Vec<MachineMark> {
    let mut marks: Vec<MachineMark> = machines.iter().map(|m| MachineMark::of(m, key)).collect();
    marks.sort_by(|a, b| a.name.cmp(&b.name));
    marks
}

/// What happened to one machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MachineChangeKind {
    /// The core lists a machine the since did not hold.
    Added,
    /// Its connection state changed.
    State,
    /// It is connected to another core than before (its hc restarted, or
    /// another machine was added under its name): approvals bound to the
    /// old core no longer send.
    CoreChanged,
    /// The core no longer lists it.
    Removed,
}

/// One machine's change, as an answer reports it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct MachineChange {
    /// The machine's name (`NAME` of `NAME/tN`).
    pub machine: String,
    pub change: MachineChangeKind,
    /// Its state now; null when removed.
    pub state: Option<MachineState>,
    /// Its state in the since; null when added.
    pub old_state: Option<MachineState>,
    /// Its core now, when the core says.
    pub core_id: Option<String>,
    /// When it entered its state, as the core says.
    pub since_ms: Option<i64>,
    #[serde(skip)]
    pub(super) after: Option<MachineMark>,
}

/// Every machine change from `before` to `now`, by name.
pub(crate) fn compare_machines(
    before: &[MachineMark],
    now: &[MachineRecord],
    key: &SealKey,
) -> Vec<MachineChange> {
    let mut changes = Vec::new();
    for machine in now {
        let mark = MachineMark::of(machine, key);
        let old = before.iter().find(|b| b.name == machine.name);
        let change = match old {
            None => MachineChangeKind::Added,
            Some(old) if old.state != mark.state => MachineChangeKind::State,
            Some(old) if old.core != mark.core && mark.core.is_some() => {
                MachineChangeKind::CoreChanged
            }
            Some(_) => continue,
        };
        changes.push(MachineChange {
            machine: machine.name.clone(),
            change,
            state: Some(machine.state),
            old_state: old.map(|o| o.state),
            core_id: machine.core_id.as_ref().map(ToString::to_string),
            since_ms: machine.since_ms,
            after: Some(mark),
        });
    }
    for old in before {
        if !now.iter().any(|m| m.name == old.name) {
            changes.push(MachineChange {
                machine: old.name.clone(),
                change: MachineChangeKind::Removed,
                state: None,
                old_state: Some(old.state),
                core_id: None,
                since_ms: None,
                after: None,
            });
        }
    }
    changes.sort_by(|a, b| a.machine.cmp(&b.machine));
    changes
}

/// `before` with `reported` applied.
pub(crate) fn advance_machines(
    before: &[MachineMark],
    reported: &[MachineChange],
) -> Vec<MachineMark> {
    let mut marks: Vec<MachineMark> = before
        .iter()
        .filter(|b| !reported.iter().any(|c| c.machine == b.name))
        .cloned()
        .collect();
    marks.extend(reported.iter().filter_map(|c| c.after.clone()));
    marks.sort_by(|a, b| a.name.cmp(&b.name));
    marks
}

/// What a look says of a covered terminal it does not list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    /// It is gone: this core's own, on a connected machine that no longer
    /// lists it, or on a machine the core no longer lists.
    Gone,
    /// Its machine is not connected: it may still run.
    Unreachable,
    /// Its machine connected after the list was asked, or so shortly
    /// before that its terminals may not be listed yet: a later look says.
    NotYet,
}

/// How long after a machine connects its terminals may still be missing
/// from `terminal.list`: a core can say a machine is connected before it
/// has listed the machine's terminals, and a terminal missing then is not
/// gone. A terminal that did end shows as gone once this has passed.
const SETTLING_MS: i64 = 2_000;

/// How to read the absence, from a look of `machines` (`None`: the core
/// has no `machine.list`) whose terminal list was asked at `listed_ms`.
/// An address held as a digest has no machine to read: gone.
pub(crate) fn missing(
    address: Option<&str>,
    machines: Option<&[MachineRecord]>,
    listed_ms: u64,
) -> Missing {
    let (Some(name), Some(machines)) = (address.and_then(machine_of), machines) else {
        return Missing::Gone;
    };
    match machines.iter().find(|m| m.name == name) {
        None => Missing::Gone,
        Some(m) if m.state != MachineState::Connected => Missing::Unreachable,
        Some(m)
            if m.since_ms.is_some_and(|since| {
                since.saturating_add(SETTLING_MS) > i64::try_from(listed_ms).unwrap_or(i64::MAX)
            }) =>
        {
            Missing::NotYet
        }
        Some(_) => Missing::Gone,
    }
}

fn state_code(state: MachineState) -> u8 {
    match state {
        MachineState::Connected => 0,
        MachineState::Connecting => 1,
        MachineState::Disconnected => 2,
        MachineState::Unknown => 3,
    }
}

const HAS_CORE: u8 = 4;

/// The marks as a since holds them: count, then each name, state and core.
pub(super) fn put_marks(out: &mut Vec<u8>, marks: &[MachineMark]) {
    put(out, marks.len() as u64);
    for mark in marks {
        put(out, mark.name.len() as u64);
        out.extend_from_slice(mark.name.as_bytes());
        let mut flags = state_code(mark.state);
        if mark.core.is_some() {
            flags |= HAS_CORE;
        }
        out.push(flags);
        if let Some(core) = mark.core {
            out.extend_from_slice(&core);
        }
    }
}

/// The marks [`put_marks`] wrote, or `None` when they are not well formed.
pub(super) fn read_marks(r: &mut Reader<'_>) -> Option<Vec<MachineMark>> {
    let count = usize::try_from(r.int()?).ok()?;
    if count > r.0.len() / 2 {
        return None;
    }
    let mut marks: Vec<MachineMark> = Vec::with_capacity(count);
    for _ in 0..count {
        let len = usize::try_from(r.int()?).ok()?;
        let name = String::from_utf8(r.bytes(len)?.to_vec()).ok()?;
        let flags = r.byte()?;
        if flags & !(HAS_CORE | 3) != 0 {
            return None;
        }
        let state = [
            MachineState::Connected,
            MachineState::Connecting,
            MachineState::Disconnected,
            MachineState::Unknown,
        ]
        .into_iter()
        .find(|s| state_code(*s) == flags & 3)?;
        let core = if flags & HAS_CORE != 0 {
            Some(r.bytes(8)?.try_into().ok()?)
        } else {
            None
        };
        if marks.last().is_some_and(|last| last.name >= name) {
            return None;
        }
        marks.push(MachineMark { name, state, core });
    }
    Some(marks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hc::CoreId;

    fn machine(name: &str, state: MachineState, core: Option<&str>, since: i64) -> MachineRecord {
        MachineRecord {
            name: name.into(),
            state,
            since_ms: Some(since),
            core_id: core.map(|c| CoreId::try_from(c.to_owned()).unwrap()),
            version: None,
        }
    }

    #[test]
    fn added_state_core_and_removed_machines_are_each_a_change_once() {
        let key = SealKey::random();
        let before = marks_of(
            &[
                machine("a", MachineState::Connected, Some("c1"), 1),
                machine("b", MachineState::Connected, Some("c2"), 1),
                machine("c", MachineState::Connected, Some("c3"), 1),
                machine("d", MachineState::Connected, Some("c4"), 1),
            ],
            &key,
        );
        let now = [
            machine("a", MachineState::Connected, Some("c1"), 1),
            machine("b", MachineState::Disconnected, None, 5),
            machine("c", MachineState::Connected, Some("c9"), 5),
            machine("e", MachineState::Connecting, None, 5),
        ];
        let changes = compare_machines(&before, &now, &key);
        let kinds: Vec<_> = changes
            .iter()
            .map(|c| (c.machine.as_str(), c.change))
            .collect();
        assert_eq!(
            kinds,
            [
                ("b", MachineChangeKind::State),
                ("c", MachineChangeKind::CoreChanged),
                ("d", MachineChangeKind::Removed),
                ("e", MachineChangeKind::Added),
            ]
        );
        let next = advance_machines(&before, &changes);
        assert!(compare_machines(&next, &now, &key).is_empty());
        assert_eq!(next, marks_of(&now, &key));
    }

    #[test]
    fn a_missing_terminal_is_unreachable_only_while_its_machine_is_down() {
        let machines = [
            machine("down", MachineState::Disconnected, None, 1),
            machine("up", MachineState::Connected, Some("c"), 10),
            machine("back", MachineState::Connected, Some("c"), 500),
        ];
        let at = |address: &str| missing(Some(address), Some(&machines), 100);
        assert_eq!(at("down/t1"), Missing::Unreachable);
        assert_eq!(
            at("up/t1"),
            Missing::NotYet,
            "connected just before the list was asked: maybe not listed yet"
        );
        assert_eq!(
            missing(Some("up/t1"), Some(&machines), 2_009),
            Missing::NotYet
        );
        assert_eq!(
            missing(Some("up/t1"), Some(&machines), 2_010),
            Missing::Gone
        );
        assert_eq!(
            at("back/t1"),
            Missing::NotYet,
            "connected after the list was asked"
        );
        assert_eq!(at("removed/t1"), Missing::Gone);
        assert_eq!(at("t1"), Missing::Gone);
        assert_eq!(missing(Some("down/t1"), None, 100), Missing::Gone);
        assert_eq!(missing(None, Some(&machines), 100), Missing::Gone);
    }

    #[test]
    fn marks_read_back_as_they_were_and_garbage_is_refused() {
        let key = SealKey::random();
        let marks = marks_of(
            &[
                machine("gpu", MachineState::Connected, Some("c1"), 1),
                machine("build", MachineState::Unknown, None, 1),
            ],
            &key,
        );
        let mut out = Vec::new();
        put_marks(&mut out, &marks);
        let mut reader = Reader(&out);
        assert_eq!(read_marks(&mut reader), Some(marks));
        assert!(reader.0.is_empty());
        for bad in [&b"\x05"[..], b"\x01\x01a\x09", b"\x02\x01b\x00\x01a\x00"] {
            assert_eq!(read_marks(&mut Reader(bad)), None, "{bad:?}");
        }
    }
}
