//! The `since` token: what one answer saw of each terminal it covered
//! (`address`, `created_ms`, `status_seq`, finished), on which core, for
//! which scope, sealed (`seal`) so an edited, cut or made-up one is refused
//! and nothing is kept per client. At most [`MAX_SINCE_CHARS`].
//!
//! Payload, version 2: version, scope, made_ms, core_id, the least
//! created_ms held (the base), then each entry in key order (flags, key,
//! and for a terminal that was there its created_ms less the base, and
//! its status_seq), integers as LEB128. An address shares its leading
//! bytes with the entry before it (`t1a`, `t1b`: the second holds one
//! byte), so a terminal costs about seven bytes: a since holds a few
//! thousand, within the bound; a listing of more answers `since: null`
//! and says which scopes do have one. An address longer than
//! [`FULL_ADDRESS_BYTES`] is held as a keyed 8-byte digest; such a
//! terminal, once gone, is named by its lifetime alone.
//!
//! Version 3 adds an entry flag (its machine was not connected: the
//! terminal is unreachable, not gone) and, after the entries, the shown
//! machines: each name, state and a digest of its core (`machines`).

use super::leb128::{Reader, put, unzigzag, zigzag};
use super::machines::{MachineMark, put_marks, read_marks};
use crate::hc::wire::TerminalRecord;
use crate::mcp::seal::SealKey;

/// Longest `since` made or accepted (32 KiB): well within the 64 KiB an
/// HTTP request may carry, with the rest of a wait's arguments.
pub(crate) const MAX_SINCE_CHARS: usize = 32 * 1024;
/// Longest address held as itself.
const FULL_ADDRESS_BYTES: usize = 32;
const PURPOSE: &str = "since";
const VERSION: u8 = 3;
const HASHED: u8 = 1;
const PRESENT: u8 = 2;
const FINISHED: u8 = 4;
const UNREACHABLE: u8 = 8;

/// Which terminals a `since` covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The approved terminals (for the core and lifetime) of the config in
    /// force at each look.
    Approved,
    /// Every terminal hc lists.
    All,
    /// A fixed set of addresses (a targeted wait's, a resource's).
    Named,
}

impl Scope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Scope::Approved => "approved",
            Scope::All => "all",
            Scope::Named => "named",
        }
    }

    fn code(self) -> u8 {
        match self {
            Scope::Approved => 0,
            Scope::All => 1,
            Scope::Named => 2,
        }
    }

    fn from_code(code: u8) -> Option<Scope> {
        [Scope::Approved, Scope::All, Scope::Named]
            .into_iter()
            .find(|s| s.code() == code)
    }
}

/// How an entry names its terminal's address.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum AddressKey {
    Address(String),
    Digest([u8; 8]),
}

impl AddressKey {
    /// The address itself when short, else its digest under `key`.
    pub(crate) fn of(address: &str, key: &SealKey) -> AddressKey {
        if address.len() <= FULL_ADDRESS_BYTES {
            AddressKey::Address(address.to_owned())
        } else {
            AddressKey::Digest(key.digest("since address", address.as_bytes()))
        }
    }

    /// The address, when held as itself.
    pub(crate) fn address(&self) -> Option<&str> {
        match self {
            AddressKey::Address(a) => Some(a),
            AddressKey::Digest(_) => None,
        }
    }
}

/// What an answer saw of one terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    pub created_ms: i64,
    pub status_seq: u64,
    pub finished: bool,
    /// Its machine was not connected: what is held is from before.
    pub unreachable: bool,
}

impl Seen {
    pub(crate) fn of(record: &TerminalRecord) -> Seen {
        Seen {
            created_ms: record.created_ms,
            status_seq: record.status_seq,
            finished: record.is_finished(),
            unreachable: false,
        }
    }
}

/// One covered address: what was there (`None`: nothing, only in a
/// [`Scope::Named`] since).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub key: AddressKey,
    pub seen: Option<Seen>,
}

/// An opened (or about to be sealed) `since`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Since {
    pub core_id: String,
    pub scope: Scope,
    /// Wall-clock ms when what it holds was known: a look asked before
    /// then may not show it yet.
    pub made_ms: u64,
    /// Sorted by key, one per key.
    pub entries: Vec<Entry>,
    /// The machines shown when it was made, sorted by name (none in a
    /// [`Scope::Named`] since, and from a core without machines).
    pub machines: Vec<MachineMark>,
}

/// Why a `since` was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SinceError {
    #[error(
        "since is not valid (malformed, cut short, edited, or issued before this adapter restarted): call without since (list_sessions or wait_for_status) for a new one"
    )]
    Invalid,
    #[error(
        "since belongs to core {since_core}, but hc is now core {current_core}: hc restarted, and every terminal that since saw is gone; call without since for a new one"
    )]
    OtherCore {
        since_core: String,
        current_core: String,
    },
}

impl Since {
    /// Sealed, or `None` when it would pass [`MAX_SINCE_CHARS`].
    pub(crate) fn seal(&self, key: &SealKey) -> Option<String> {
        let base = self
            .entries
            .iter()
            .filter_map(|e| e.seen.map(|s| s.created_ms))
            .min()
            .unwrap_or(0);
        let mut out = vec![VERSION, self.scope.code()];
        put(&mut out, self.made_ms);
        put(&mut out, self.core_id.len() as u64);
        out.extend_from_slice(self.core_id.as_bytes());
        put(&mut out, zigzag(base));
        put(&mut out, self.entries.len() as u64);
        let mut previous: &[u8] = &[];
        for entry in &self.entries {
            let mut flags = 0;
            if matches!(entry.key, AddressKey::Digest(_)) {
                flags |= HASHED;
            }
            if let Some(seen) = entry.seen {
                flags |= PRESENT;
                if seen.finished {
                    flags |= FINISHED;
                }
                if seen.unreachable {
                    flags |= UNREACHABLE;
                }
            }
            out.push(flags);
            match &entry.key {
                AddressKey::Address(a) => {
                    let a = a.as_bytes();
                    let shared = a.iter().zip(previous).take_while(|(x, y)| x == y).count();
                    put(&mut out, shared as u64);
                    put(&mut out, (a.len() - shared) as u64);
                    out.extend_from_slice(&a[shared..]);
                    previous = a;
                }
                AddressKey::Digest(d) => out.extend_from_slice(d),
            }
            if let Some(seen) = entry.seen {
                // Never negative: the base is the least created_ms held.
                put(&mut out, seen.created_ms.abs_diff(base));
                put(&mut out, seen.status_seq);
            }
        }
        put_marks(&mut out, &self.machines);
        let sealed = key.seal(PURPOSE, &out);
        (sealed.len() <= MAX_SINCE_CHARS).then_some(sealed)
    }

    /// Why an answer covering this since's terminals carries none (it
    /// would pass [`MAX_SINCE_CHARS`]), and what does have one.
    pub(crate) fn unavailable(&self) -> String {
        format!(
            "no since: the {} terminals this answer covers (scope {}) are more than one since can hold within its bound of {} KiB; a wait over fewer has one: wait_for_status with scope \"approved\", or with targets",
            self.entries.len(),
            self.scope.as_str(),
            MAX_SINCE_CHARS / 1024
        )
    }

    /// Opens `token`.
    pub(crate) fn open(key: &SealKey, token: &str) -> Result<Since, SinceError> {
        let payload = key
            .open(PURPOSE, token, MAX_SINCE_CHARS)
            .ok_or(SinceError::Invalid)?;
        decode(&payload).ok_or(SinceError::Invalid)
    }

    /// Refused unless it was made on `current_core`.
    pub(crate) fn check_core(&self, current_core: &str) -> Result<(), SinceError> {
        if self.core_id == current_core {
            return Ok(());
        }
        Err(SinceError::OtherCore {
            since_core: self.core_id.clone(),
            current_core: current_core.to_owned(),
        })
    }

    /// What it holds for `key`.
    pub(crate) fn entry(&self, key: &AddressKey) -> Option<&Entry> {
        self.entries
            .binary_search_by(|e| e.key.cmp(key))
            .ok()
            .map(|i| &self.entries[i])
    }
}

fn decode(payload: &[u8]) -> Option<Since> {
    let mut r = Reader(payload);
    if r.byte()? != VERSION {
        return None;
    }
    let scope = Scope::from_code(r.byte()?)?;
    let made_ms = r.int()?;
    let core_len = usize::try_from(r.int()?).ok()?;
    let core_id = String::from_utf8(r.bytes(core_len)?.to_vec()).ok()?;
    let base = unzigzag(r.int()?);
    let count = usize::try_from(r.int()?).ok()?;
    // Each entry takes at least 2 bytes: a count past that is a lie.
    if count > payload.len() / 2 {
        return None;
    }
    let mut entries: Vec<Entry> = Vec::with_capacity(count);
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let flags = r.byte()?;
        if flags & !(HASHED | PRESENT | FINISHED | UNREACHABLE) != 0 {
            return None;
        }
        let key = if flags & HASHED != 0 {
            AddressKey::Digest(r.bytes(8)?.try_into().ok()?)
        } else {
            let shared = usize::try_from(r.int()?).ok()?;
            let rest = usize::try_from(r.int()?).ok()?;
            let mut address = previous.get(..shared)?.to_vec();
            address.extend_from_slice(r.bytes(rest)?);
            let key = AddressKey::Address(String::from_utf8(address.clone()).ok()?);
            previous = address;
            key
        };
        let seen = if flags & PRESENT != 0 {
            Some(Seen {
                created_ms: base.checked_add_unsigned(r.int()?)?,
                status_seq: r.int()?,
                finished: flags & FINISHED != 0,
                unreachable: flags & UNREACHABLE != 0,
            })
        } else {
            None
        };
        if entries.last().is_some_and(|last| last.key >= key) {
            return None;
        }
        entries.push(Entry { key, seen });
    }
    let machines = read_marks(&mut r)?;
    r.0.is_empty().then_some(Since {
        core_id,
        scope,
        made_ms,
        entries,
        machines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn since(entries: Vec<Entry>) -> Since {
        Since {
            core_id: "core-a".into(),
            scope: Scope::Approved,
            made_ms: 1_780_000_000_123,
            entries,
            machines: Vec::new(),
        }
    }

    fn entry(address: &str, created_ms: i64, status_seq: u64, key: &SealKey) -> Entry {
        Entry {
            key: AddressKey::of(address, key),
            seen: Some(Seen {
                created_ms,
                status_seq,
                finished: false,
                unreachable: false,
            }),
        }
    }

    #[test]
    fn a_sealed_since_opens_as_it_was_on_its_own_core_only() {
        let key = SealKey::random();
        let mut entries = vec![
            entry("t1", 1_780_000_000_000, 7, &key),
            entry(&"long/".repeat(20), -5, u64::MAX, &key),
            Entry {
                key: AddressKey::of("t9", &key),
                seen: None,
            },
        ];
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        let mut made = since(entries);
        made.entries[0].seen.as_mut().unwrap().unreachable = true;
        made.machines = vec![MachineMark {
            name: "build".into(),
            state: crate::hc::wire::MachineState::Disconnected,
            core: None,
        }];
        let token = made.seal(&key).unwrap();
        let opened = Since::open(&key, &token).unwrap();
        assert_eq!(opened, made);
        assert_eq!(opened.check_core("core-a"), Ok(()));
        assert!(matches!(
            opened.check_core("core-b"),
            Err(SinceError::OtherCore { .. })
        ));
    }

    #[test]
    fn cut_edited_foreign_and_oversized_tokens_are_refused() {
        let key = SealKey::random();
        let token = since(vec![entry("t1", 1, 2, &key)]).seal(&key).unwrap();
        for bad in [
            String::new(),
            "not base64 at all".into(),
            token[..token.len() / 2].to_owned(),
            format!("{token}A"),
            token.replace(&token[4..5], if &token[4..5] == "A" { "B" } else { "A" }),
            since(vec![]).seal(&SealKey::random()).unwrap(),
            key.seal("list_sessions cursor", b"\x01\x00"),
            "A".repeat(MAX_SINCE_CHARS + 1),
        ] {
            assert_eq!(Since::open(&key, &bad), Err(SinceError::Invalid), "{bad}");
        }
    }

    #[test]
    fn well_sealed_garbage_is_refused_not_panicked_on() {
        let key = SealKey::random();
        for payload in [
            &b""[..],
            // Version 1, whatever follows.
            b"\x01\x00\x00\x06core-a\x00\x00",
            b"\x02\x09\x00\x00\x00\x00",
            b"\x02\x00\x00\x06core-a\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f",
            b"\x02\x00\x00\x06core-a\x00\x01\x08",
            b"\x02\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
            // An address that shares more bytes than the one before holds.
            b"\x02\x00\x00\x06core-a\x00\x01\x00\x05\x01x",
            // A created_ms past the base's range.
            b"\x02\x00\x00\x06core-a\x02\x01\x02\x00\x01a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x00",
        ] {
            let token = key.seal(PURPOSE, payload);
            assert_eq!(Since::open(&key, &token), Err(SinceError::Invalid));
        }
    }

    /// `n` terminals as hc names them (`t` and base 36), created `spread_ms`
    /// apart from the first, each having reported `seq` statuses.
    fn fleet(n: u64, spread_ms: i64, seq: u64, key: &SealKey) -> Since {
        let base36 = |mut i: u64| {
            let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
            let mut out = Vec::new();
            loop {
                out.push(digits[(i % 36) as usize]);
                i /= 36;
                if i == 0 {
                    break;
                }
            }
            out.reverse();
            format!("t{}", String::from_utf8(out).unwrap())
        };
        let mut entries: Vec<Entry> = (1..=n)
            .map(|i| {
                let created = 1_780_000_000_000 + spread_ms * i64::try_from(i).unwrap();
                entry(&base36(i), created, seq, key)
            })
            .collect();
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        since(entries)
    }

    #[test]
    fn a_fleet_of_thousands_fits_and_opens_as_it_was() {
        let key = SealKey::random();
        // Created a minute apart (most of a day of terminals) with status
        // sequences in the thousands; or a second apart, or all at once,
        // with shorter ones.
        for (n, spread_ms, seq) in [
            (1_100, 60_000, 4_000),
            (2_000, 1_000, 100),
            (2_500, 10, 100),
        ] {
            let made = fleet(n, spread_ms, seq, &key);
            let token = made
                .seal(&key)
                .unwrap_or_else(|| panic!("{n} terminals {spread_ms} ms apart do not fit"));
            assert!(token.len() <= MAX_SINCE_CHARS, "{n}: {}", token.len());
            assert_eq!(Since::open(&key, &token).unwrap(), made, "{n}");
        }
    }

    #[test]
    fn a_fleet_past_the_bound_has_no_since_and_says_so() {
        let key = SealKey::random();
        let made = fleet(20_000, 60_000, 4_000, &key);
        assert_eq!(made.seal(&key), None);
        let why = made.unavailable();
        assert!(why.contains("20000 terminals"), "{why}");
        assert!(why.contains("scope \"approved\""), "{why}");
    }

    #[test]
    fn the_longest_addresses_are_held_as_digests_and_stay_under_the_bound() {
        let key = SealKey::random();
        for address_len in [2, FULL_ADDRESS_BYTES, 128] {
            let mut entries: Vec<Entry> = (0..256)
                .map(|i| {
                    let address = format!("{i:0>address_len$}");
                    entry(&address, 1_780_000_000_000 + i, u64::from(u32::MAX), &key)
                })
                .collect();
            entries.sort_by(|a, b| a.key.cmp(&b.key));
            let token = since(entries).seal(&key).expect("fits");
            assert!(
                token.len() <= MAX_SINCE_CHARS,
                "{address_len}: {}",
                token.len()
            );
        }
    }
}
