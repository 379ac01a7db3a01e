//! What changed between a `since` and a look at hc: per covered address, a
//! terminal that appeared, reported a status (a higher `status_seq`),
//! finished, is another lifetime, is gone, left the scope, or became
//! unreachable or reachable again with its machine (`machines`). Pure: the
//! waits, `list_sessions` and the resources all judge a look so.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use super::machines::{
    MachineChange, Missing, advance_machines, compare_machines, marks_of, missing,
};
use super::since::{AddressKey, Entry, Scope, Seen, Since};
use crate::hc::wire::{MachineRecord, StatusContext, TerminalRecord, TerminalStatus};
use crate::mcp::seal::SealKey;

/// Most changes one answer reports; the rest follow on the next call.
pub(crate) const MAX_CHANGES: usize = 64;

/// What happened to one covered terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ChangeKind {
    /// A terminal the since did not hold (new, or newly in scope).
    Appeared,
    /// It reported a status: a higher status_seq.
    Status,
    /// Its program exited.
    Finished,
    /// Another lifetime is at its address (the old one is gone).
    NewLifetime,
    /// hc no longer lists it.
    Gone,
    /// hc lists it, but it is out of the scope now (no longer approved).
    LeftScope,
    /// Its machine is not connected: hc does not list it now, and it may
    /// still run (never called gone for that).
    Unreachable,
    /// Its machine is connected again and lists it, the same lifetime.
    Reachable,
}

/// One change, as the answer reports it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Change {
    /// The terminal's address; null only for a gone terminal whose address
    /// is longer than 32 bytes (the since held a digest of it).
    pub address: Option<String>,
    pub change: ChangeKind,
    /// The lifetime there now; null when gone or out of scope.
    pub created_ms: Option<i64>,
    /// The lifetime the since saw; null when it appeared.
    pub old_created_ms: Option<i64>,
    pub old_status_seq: Option<u64>,
    pub status_seq: Option<u64>,
    /// Its status now; null when gone or out of scope.
    pub status: Option<TerminalStatus>,
    pub finished: bool,
    /// True when it is a change the wait was asked to end on (every change
    /// but a status outside `until`).
    pub wanted: bool,
    /// Why its status holds now and since when, when hc says (the reason
    /// is untrusted program text, escaped).
    #[serde(flatten)]
    pub context: StatusContext,
    #[serde(skip)]
    key: AddressKey,
    #[serde(skip)]
    after: Option<Seen>,
}

/// The terminals of one look that are in a scope, by key.
pub(crate) struct Look<'a> {
    /// Every terminal hc listed (finished ones too).
    pub terminals: &'a [TerminalRecord],
    /// Whether a listed terminal is in the scope (for [`Scope::Named`],
    /// the since's own keys decide).
    pub in_scope: &'a dyn Fn(&TerminalRecord) -> bool,
    /// The machines shown, asked after the terminals; `None` from a core
    /// without `machine.list`.
    pub machines: Option<&'a [MachineRecord]>,
    /// Wall-clock ms when the terminals were asked for.
    pub listed_ms: u64,
}

/// A since holding what `look` shows of `scope`, made at `made_ms`.
pub(crate) fn since_of(
    look: &Look<'_>,
    core_id: &str,
    scope: Scope,
    made_ms: u64,
    key: &SealKey,
) -> Since {
    let mut entries: BTreeMap<AddressKey, Option<Seen>> = BTreeMap::new();
    for record in look.terminals.iter().filter(|r| (look.in_scope)(r)) {
        entries
            .entry(AddressKey::of(&record.address, key))
            .or_insert(Some(Seen::of(record)));
    }
    let machines = match scope {
        Scope::Named => Vec::new(),
        Scope::Approved | Scope::All => marks_of(look.machines.unwrap_or_default(), key),
    };
    Since {
        core_id: core_id.to_owned(),
        scope,
        made_ms,
        entries: entries
            .into_iter()
            .map(|(key, seen)| Entry { key, seen })
            .collect(),
        machines,
    }
}

/// A [`Scope::Named`] since of `addresses` as `look` shows them.
pub(crate) fn named_since(
    addresses: &[&str],
    terminals: &[TerminalRecord],
    core_id: &str,
    made_ms: u64,
    key: &SealKey,
) -> Since {
    let mut entries: BTreeMap<AddressKey, Option<Seen>> = BTreeMap::new();
    for address in addresses {
        let seen = terminals
            .iter()
            .find(|r| r.address == *address)
            .map(Seen::of);
        entries.insert(AddressKey::of(address, key), seen);
    }
    Since {
        core_id: core_id.to_owned(),
        scope: Scope::Named,
        made_ms,
        entries: entries
            .into_iter()
            .map(|(key, seen)| Entry { key, seen })
            .collect(),
        machines: Vec::new(),
    }
}

/// Every machine change from `since` to `look` (none for a
/// [`Scope::Named`] since, which covers addresses only).
pub(crate) fn machine_changes(since: &Since, look: &Look<'_>, key: &SealKey) -> Vec<MachineChange> {
    match since.scope {
        Scope::Named => Vec::new(),
        Scope::Approved | Scope::All => {
            compare_machines(&since.machines, look.machines.unwrap_or_default(), key)
        }
    }
}

/// Every change from `since` to `look`, in key order; `wanted_status`
/// says which statuses a status change is wanted at.
pub(crate) fn compare(
    since: &Since,
    look: &Look<'_>,
    key: &SealKey,
    wanted_status: &dyn Fn(TerminalStatus) -> bool,
) -> Vec<Change> {
    let mut listed: BTreeMap<AddressKey, &TerminalRecord> = BTreeMap::new();
    for record in look.terminals {
        listed
            .entry(AddressKey::of(&record.address, key))
            .or_insert(record);
    }
    let in_scope = |key: &AddressKey, record: &TerminalRecord| match since.scope {
        Scope::Named => since.entry(key).is_some(),
        Scope::Approved | Scope::All => (look.in_scope)(record),
    };
    let mut changes = Vec::new();
    for (k, record) in &listed {
        if !in_scope(k, record) {
            continue;
        }
        let before = since.entry(k).and_then(|e| e.seen);
        let now = Seen::of(record);
        let kind = match before {
            None => ChangeKind::Appeared,
            Some(b) if b.created_ms != now.created_ms => ChangeKind::NewLifetime,
            Some(b) if b.unreachable => ChangeKind::Reachable,
            Some(b) if now.finished && !b.finished => ChangeKind::Finished,
            Some(b) if now.status_seq > b.status_seq => ChangeKind::Status,
            Some(_) => continue,
        };
        let wanted = kind != ChangeKind::Status || wanted_status(record.status);
        changes.push(Change {
            address: Some(record.address.clone()),
            change: kind,
            created_ms: Some(now.created_ms),
            old_created_ms: before.map(|b| b.created_ms),
            old_status_seq: before.map(|b| b.status_seq),
            status_seq: Some(now.status_seq),
            status: Some(record.status),
            finished: now.finished,
            wanted,
            context: record.context.clone(),
            key: k.clone(),
            after: Some(now),
        });
    }
    for entry in &since.entries {
        let Some(before) = entry.seen else { continue };
        let kind = match listed.get(&entry.key) {
            None => match missing(entry.key.address(), look.machines, look.listed_ms) {
                Missing::Gone => ChangeKind::Gone,
                Missing::Unreachable if !before.unreachable => ChangeKind::Unreachable,
                Missing::Unreachable | Missing::NotYet => continue,
            },
            Some(record) if !in_scope(&entry.key, record) => ChangeKind::LeftScope,
            Some(_) => continue,
        };
        // An unreachable terminal stays covered, as last seen.
        let after = (kind == ChangeKind::Unreachable).then_some(Seen {
            unreachable: true,
            ..before
        });
        changes.push(Change {
            address: entry.key.address().map(str::to_owned),
            change: kind,
            created_ms: None,
            old_created_ms: Some(before.created_ms),
            old_status_seq: Some(before.status_seq),
            status_seq: None,
            status: None,
            finished: before.finished,
            wanted: true,
            context: StatusContext::default(),
            key: entry.key.clone(),
            after,
        });
    }
    changes.sort_by(|a, b| a.key.cmp(&b.key));
    changes
}

/// `since` with `reported` (and `machines_reported`) applied: what the
/// answer that reports them has shown, made at `made_ms` (never earlier
/// than it was).
pub(crate) fn advance(
    since: &Since,
    reported: &[Change],
    machines_reported: &[MachineChange],
    made_ms: u64,
) -> Since {
    let mut entries: BTreeMap<AddressKey, Option<Seen>> = since
        .entries
        .iter()
        .map(|e| (e.key.clone(), e.seen))
        .collect();
    for change in reported {
        match (since.scope, change.after) {
            (Scope::Named, after) => {
                entries.insert(change.key.clone(), after);
            }
            (_, Some(after)) => {
                entries.insert(change.key.clone(), Some(after));
            }
            (_, None) => {
                entries.remove(&change.key);
            }
        }
    }
    Since {
        core_id: since.core_id.clone(),
        scope: since.scope,
        made_ms: made_ms.max(since.made_ms),
        entries: entries
            .into_iter()
            .map(|(key, seen)| Entry { key, seen })
            .collect(),
        machines: advance_machines(&since.machines, machines_reported),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hc::wire::TerminalRecord;

    fn record(address: &str, created_ms: i64, status: TerminalStatus, seq: u64) -> TerminalRecord {
        serde_json::from_value(serde_json::json!({
            "address": address,
            "created_ms": created_ms,
            "status": status.to_string(),
            "status_seq": seq,
        }))
        .expect("a record")
    }

    fn all(_: &TerminalRecord) -> bool {
        true
    }

    #[test]
    fn every_kind_of_change_is_found_and_advancing_past_them_finds_none() {
        let key = SealKey::random();
        let before = [
            record("t1", 10, TerminalStatus::Working, 3),
            record("t2", 20, TerminalStatus::Idle, 1),
            record("t3", 30, TerminalStatus::Idle, 1),
            record("t4", 40, TerminalStatus::Working, 5),
            record("t5", 50, TerminalStatus::Idle, 0),
        ];
        let since = since_of(
            &Look {
                terminals: &before,
                in_scope: &all,
                machines: None,
                listed_ms: 1,
            },
            "c",
            Scope::All,
            1,
            &key,
        );
        let mut finished = record("t4", 40, TerminalStatus::Working, 5);
        finished.exit_code = Some(0);
        let after = [
            record("t1", 10, TerminalStatus::Done, 4),
            record("t2", 20, TerminalStatus::Idle, 1),
            record("t3", 31, TerminalStatus::Idle, 0),
            finished,
            record("t6", 60, TerminalStatus::Unknown, 0),
        ];
        let look = Look {
            terminals: &after,
            in_scope: &all,
            machines: None,
            listed_ms: 2,
        };
        let done_only = |s: TerminalStatus| s == TerminalStatus::Done;
        let changes = compare(&since, &look, &key, &done_only);
        let kinds: Vec<(Option<&str>, ChangeKind)> = changes
            .iter()
            .map(|c| (c.address.as_deref(), c.change))
            .collect();
        assert_eq!(
            kinds,
            [
                (Some("t1"), ChangeKind::Status),
                (Some("t3"), ChangeKind::NewLifetime),
                (Some("t4"), ChangeKind::Finished),
                (Some("t5"), ChangeKind::Gone),
                (Some("t6"), ChangeKind::Appeared),
            ]
        );
        assert_eq!(changes[0].old_status_seq, Some(3));
        assert_eq!(changes[0].status_seq, Some(4));
        assert!(changes.iter().all(|c| c.wanted));
        let next = advance(&since, &changes, &[], 2);
        assert!(compare(&next, &look, &key, &done_only).is_empty());
        assert_eq!(next, since_of(&look, "c", Scope::All, 2, &key));
    }

    #[test]
    fn a_status_outside_until_is_reported_unwanted_and_out_of_scope_is_left() {
        let key = SealKey::random();
        let approved = |r: &TerminalRecord| r.address != "t2" || r.status_seq == 0;
        let before = [
            record("t1", 10, TerminalStatus::Idle, 1),
            record("t2", 20, TerminalStatus::Idle, 0),
        ];
        let since = since_of(
            &Look {
                terminals: &before,
                in_scope: &approved,
                machines: None,
                listed_ms: 1,
            },
            "c",
            Scope::Approved,
            1,
            &key,
        );
        let after = [
            record("t1", 10, TerminalStatus::Working, 2),
            record("t2", 20, TerminalStatus::Idle, 1),
        ];
        let look = Look {
            terminals: &after,
            in_scope: &approved,
            machines: None,
            listed_ms: 2,
        };
        let changes = compare(&since, &look, &key, &|s| s == TerminalStatus::Done);
        assert_eq!(changes.len(), 2);
        assert_eq!(changes[0].change, ChangeKind::Status);
        assert!(!changes[0].wanted);
        assert_eq!(changes[1].change, ChangeKind::LeftScope);
        assert!(changes[1].wanted);
    }

    #[test]
    fn a_named_since_watches_its_addresses_even_while_nothing_is_there() {
        let key = SealKey::random();
        let since = named_since(
            &["t1", "t9"],
            &[record("t1", 10, TerminalStatus::Idle, 1)],
            "c",
            1,
            &key,
        );
        let after = [
            record("t2", 20, TerminalStatus::Idle, 0),
            record("t9", 90, TerminalStatus::Idle, 0),
        ];
        let look = Look {
            terminals: &after,
            in_scope: &all,
            machines: None,
            listed_ms: 2,
        };
        let changes = compare(&since, &look, &key, &|_| true);
        let kinds: Vec<ChangeKind> = changes.iter().map(|c| c.change).collect();
        assert_eq!(kinds, [ChangeKind::Gone, ChangeKind::Appeared]);
        let next = advance(&since, &changes, &[], 2);
        assert_eq!(next.entries.len(), 2, "t1 stays covered while gone");
        assert!(compare(&next, &look, &key, &|_| true).is_empty());
    }
}
