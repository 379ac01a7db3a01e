//! The terminal record (contract §3) and the terminal address: what a
//! record must hold (only what the tools cannot work without), how one
//! is read from hc (unknown fields ignored, a status word outside the six
//! kept beside `unknown`), and how a list is read record by record, so
//! one hc sent in another shape never hides the others.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::TerminalStatus;

/// Longest terminal address accepted, from hc or from a caller. Real
/// addresses are short (`t1b`, `machine/t7`).
pub const MAX_ADDRESS_CHARS: usize = 128;

/// Whether `address` is a terminal address this adapter handles: an opaque
/// string (hc names terminals of other machines `machine/t7`), non-empty,
/// at most [`MAX_ADDRESS_CHARS`] characters, printable (no control, bidi
/// or invisible character: it is shown to people who approve it).
pub fn check_address(address: &str) -> Result<(), String> {
    let chars = address.chars().count();
    if address.is_empty() {
        return Err("is empty".to_owned());
    }
    if chars > MAX_ADDRESS_CHARS {
        return Err(format!(
            "is {chars} characters long; addresses have at most {MAX_ADDRESS_CHARS}"
        ));
    }
    if let Some(c) = address
        .chars()
        .find(|c| crate::escape::is_hazard(*c) || c.is_whitespace())
    {
        return Err(format!(
            "holds U+{:04X}, which no terminal address holds (control, format or space characters)",
            u32::from(c)
        ));
    }
    Ok(())
}

/// One terminal lifetime; `(address, created_ms)` names it, since hc reuses
/// addresses. Only the four fields the tools cannot work without are
/// required; unknown fields are ignored and never passed on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TerminalRecord {
    pub address: String,
    pub created_ms: i64,
    pub finished_ms: Option<i64>,
    pub exit_code: Option<i64>,
    pub status: TerminalStatus,
    /// The status word hc reported when it is none of the six (then
    /// `status` is `unknown`); null otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reported_status: Option<String>,
    pub status_seq: u64,
    pub title: Option<String>,
    pub cwd: Option<String>,
    pub program: Option<String>,
    pub submit_key: Option<String>,
    pub rows: Option<u32>,
    pub cols: Option<u32>,
}

/// A record as hc spells it, before the status word is read.
#[derive(Deserialize)]
struct RawRecord {
    address: String,
    created_ms: i64,
    #[serde(default)]
    finished_ms: Option<i64>,
    #[serde(default)]
    exit_code: Option<i64>,
    status: String,
    status_seq: u64,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    program: Option<String>,
    #[serde(default)]
    submit_key: Option<String>,
    #[serde(default)]
    rows: Option<u32>,
    #[serde(default)]
    cols: Option<u32>,
}

impl<'de> Deserialize<'de> for TerminalRecord {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TerminalRecord, D::Error> {
        TerminalRecord::try_from(RawRecord::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<RawRecord> for TerminalRecord {
    type Error = String;

    fn try_from(raw: RawRecord) -> Result<TerminalRecord, String> {
        check_address(&raw.address).map_err(|why| format!("its address {why}"))?;
        let (status, reported_status) = TerminalStatus::from_reported(&raw.status);
        Ok(TerminalRecord {
            address: raw.address,
            created_ms: raw.created_ms,
            finished_ms: raw.finished_ms,
            exit_code: raw.exit_code,
            status,
            reported_status,
            status_seq: raw.status_seq,
            title: raw.title,
            cwd: raw.cwd,
            program: raw.program,
            submit_key: raw.submit_key,
            rows: raw.rows,
            cols: raw.cols,
        })
    }
}

impl TerminalRecord {
    /// The program has exited: hc set `finished_ms` (or, without it, an
    /// `exit_code`).
    pub fn is_finished(&self) -> bool {
        self.finished_ms.is_some() || self.exit_code.is_some()
    }
}

/// `terminal.list`'s answer, each record still to be read on its own: one
/// record hc sent in another shape never hides the others.
#[derive(Debug, Deserialize)]
pub struct ListResult {
    pub terminals: Vec<Box<serde_json::value::RawValue>>,
}

/// A record of `terminal.list` that could not be read: its address, when
/// it had a readable one, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct UnreadableRecord {
    pub address: Option<String>,
    pub problem: String,
}

/// The records of a list, each read on its own.
pub fn read_records(listed: ListResult) -> (Vec<TerminalRecord>, Vec<UnreadableRecord>) {
    let mut records = Vec::with_capacity(listed.terminals.len());
    let mut unreadable = Vec::new();
    for raw in listed.terminals {
        match serde_json::from_str::<TerminalRecord>(raw.get()) {
            Ok(record) => records.push(record),
            Err(e) => {
                let address = serde_json::from_str::<serde_json::Value>(raw.get())
                    .ok()
                    .and_then(|v| v.get("address").and_then(Value::as_str).map(str::to_owned))
                    .filter(|a| check_address(a).is_ok());
                unreadable.push(UnreadableRecord {
                    address,
                    problem: crate::escape::bounded(&e.to_string(), 200).into_owned(),
                });
            }
        }
    }
    (records, unreadable)
}
