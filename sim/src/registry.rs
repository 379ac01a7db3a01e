//! The table of terminals: who holds which address, in creation order. It
//! hands out addresses (`t` + base-36 of the smallest free index, freed only
//! when a terminal is removed) and `created_ms` values that increase strictly
//! across the whole simulator, so a reused address always names a new
//! lifetime. It neither starts nor stops programs: that is `sim`'s job.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::clock::unix_ms;
use crate::terminal::Terminal;

/// An address and creation time handed out for a terminal being created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// The `t` index, or none for an address given by name.
    index: Option<u64>,
    pub address: String,
    pub created_ms: u64,
}

#[derive(Default)]
pub struct Registry {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Keyed by `created_ms`, which is unique, so iteration is list order.
    terminals: BTreeMap<u64, Arc<Terminal>>,
    /// Address → (`created_ms`, index) of the terminal holding it.
    addresses: HashMap<String, (u64, Option<u64>)>,
    /// Indices freed by removal, below `next_index`.
    free: BTreeSet<u64>,
    /// Smallest index never handed out (indices start at 1).
    next_index: u64,
    last_created_ms: u64,
}

impl Registry {
    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Takes the smallest free address and the next creation time.
    pub fn reserve(&self) -> Slot {
        let mut inner = self.inner();
        let index = match inner.free.pop_first() {
            Some(index) => index,
            None => {
                inner.next_index = inner.next_index.max(1);
                inner.next_index += 1;
                inner.next_index - 1
            }
        };
        let created_ms = unix_ms().max(inner.last_created_ms + 1);
        inner.last_created_ms = created_ms;
        Slot {
            index: Some(index),
            address: address_of(index),
            created_ms,
        }
    }

    /// Takes `address` as it is (a connected machine's `machine/t7`) and
    /// the next creation time; fails if a terminal holds it.
    pub fn reserve_named(&self, address: &str) -> std::io::Result<Slot> {
        let mut inner = self.inner();
        if inner.addresses.contains_key(address) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("a terminal holds {address}"),
            ));
        }
        let created_ms = unix_ms().max(inner.last_created_ms + 1);
        inner.last_created_ms = created_ms;
        Ok(Slot {
            index: None,
            address: address.to_owned(),
            created_ms,
        })
    }

    /// Gives back a slot whose terminal could not be created.
    pub fn release(&self, slot: Slot) {
        if let Some(index) = slot.index {
            self.inner().free.insert(index);
        }
    }

    /// Makes a terminal visible under the slot it was created from.
    pub fn insert(&self, slot: &Slot, terminal: Arc<Terminal>) {
        let mut inner = self.inner();
        inner
            .addresses
            .insert(slot.address.clone(), (slot.created_ms, slot.index));
        inner.terminals.insert(slot.created_ms, terminal);
    }

    pub fn get(&self, address: &str) -> Option<Arc<Terminal>> {
        let inner = self.inner();
        let (created_ms, _) = inner.addresses.get(address)?;
        inner.terminals.get(created_ms).cloned()
    }

    /// Terminals in list order (by `created_ms`, which is unique).
    pub fn list(&self, include_finished: bool) -> Vec<Arc<Terminal>> {
        let terminals: Vec<_> = self.inner().terminals.values().cloned().collect();
        if include_finished {
            terminals
        } else {
            terminals
                .into_iter()
                .filter(|t| t.exit().is_none())
                .collect()
        }
    }

    /// Takes a terminal out of the table; its address becomes free.
    pub fn remove(&self, address: &str) -> Option<Arc<Terminal>> {
        let mut inner = self.inner();
        let (created_ms, index) = inner.addresses.remove(address)?;
        if let Some(index) = index {
            inner.free.insert(index);
        }
        inner.terminals.remove(&created_ms)
    }
}

/// `t` + base-36 (lowercase) of the index: 1 → `t1`, 10 → `ta`, 36 → `t10`.
fn address_of(index: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut digits = Vec::new();
    let mut rest = index;
    loop {
        digits.push(DIGITS[(rest % 36) as usize]);
        rest /= 36;
        if rest == 0 {
            break;
        }
    }
    digits.push(b't');
    digits.reverse();
    String::from_utf8(digits).expect("address digits are ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_t_plus_base36() {
        let names: Vec<_> = [1, 9, 10, 35, 36, 1296].map(address_of).into();
        assert_eq!(names, ["t1", "t9", "ta", "tz", "t10", "t100"]);
    }

    #[test]
    fn the_smallest_freed_address_is_reused_with_a_later_created_ms() {
        let registry = Registry::default();
        let slots: Vec<_> = (0..3).map(|_| registry.reserve()).collect();
        for slot in &slots {
            let terminal = Terminal::idle_record(slot.address.clone(), slot.created_ms, "/".into());
            registry.insert(slot, Arc::new(terminal));
        }
        assert!(registry.remove("t3").is_some());
        assert!(registry.remove("t2").is_some());
        let reused = registry.reserve();
        assert_eq!(reused.address, "t2");
        assert!(reused.created_ms > slots[2].created_ms);
        assert_eq!(registry.reserve().address, "t3");
        assert_eq!(registry.reserve().address, "t4");
    }
}
