//! The terminal record (contract §3) and the terminal address: what a
//! record must hold (only what the tools cannot work without), how one
//! is read from hc (unknown fields ignored, a status word outside the six
//! kept beside `unknown`), and how a list is read record by record, so
//! one hc sent in another shape never hides the others.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::TerminalStatus;
use super::lenient::lenient;

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
        .find(|c| crate::escape::is_hazard(*c) || c.is_whitespace() || is_invisible(*c))
    {
        return Err(format!(
            "holds U+{:04X}, which no terminal address holds (control, format, space, combining or blank-looking characters)",
            u32::from(c)
        ));
    }
    Ok(())
}

/// Characters that show nothing, or change the one before them, beyond
/// the format characters `escape` already names: fillers that render as
/// blanks (Hangul, braille), variation selectors and the common
/// combining-mark blocks (the combining grapheme joiner among them). An address a person
/// approves must look like what it is.
fn is_invisible(c: char) -> bool {
    matches!(
        u32::from(c),
        0x0300..=0x036F
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x1AB0..=0x1AFF
            | 0x1DC0..=0x1DFF
            | 0x20D0..=0x20FF
            | 0x2800
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFE20..=0xFE2F
            | 0xFFA0
            | 0xE0100..=0xE01EF
    )
}

/// One terminal lifetime; `(address, created_ms)` names it, since hc reuses
/// addresses. Only the four fields the tools cannot work without are
/// required; unknown fields are ignored and never passed on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TerminalRecord {
    /// hc's `address`: a short id such as `t1` or `machine/t7`, reused after
    /// a terminal is gone.
    pub address: String,
    /// hc's `created_ms`: when this lifetime started, in ms since the Unix
    /// epoch.
    pub created_ms: i64,
    /// hc's `finished_ms`: when the program exited, in ms since the Unix
    /// epoch; null while it runs.
    pub finished_ms: Option<i64>,
    /// hc's `exit_code`: the program's exit code once it has exited; null
    /// while it runs.
    pub exit_code: Option<i64>,
    /// hc's `status`: the state the foreground program last reported.
    pub status: TerminalStatus,
    /// The status word hc reported when it is none of the six (then
    /// `status` is `unknown`); null otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reported_status: Option<String>,
    /// hc's `status_seq`: one more at every status change of this terminal.
    pub status_seq: u64,
    /// hc's `title`: the terminal's title; null when hc sent none.
    pub title: Option<String>,
    /// hc's `cwd`: the working directory; null when hc sent none.
    pub cwd: Option<String>,
    /// hc's `program`: the program's name (the `app` of its status reports);
    /// null when hc sent none.
    pub program: Option<String>,
    /// hc's `submit_key`: the key hc sends after a paste to submit it
    /// (`enter` unless configured otherwise); null when hc sent none.
    pub submit_key: Option<String>,
    /// hc's `rows`: the screen's height; null when hc sent none.
    pub rows: Option<u32>,
    /// hc's `cols`: the screen's width; null when hc sent none.
    pub cols: Option<u32>,
    /// The machine the terminal is on (`build` of `build/t7`); null for
    /// this core's own terminals.
    pub machine: Option<String>,
    /// Why the status holds and since when (hc's `status_kind`,
    /// `status_msg` and `status_ms`), when hc says: the reason is untrusted
    /// program text, escaped; the age is read when the record is.
    #[serde(flatten)]
    pub context: super::context::StatusContext,
}

/// A record as hc spells it, before the status word is read. An optional
/// field of another type than the model's (`"rows": -1`, `"title": {}`) is
/// read as absent: only the four required fields can make a record
/// unreadable.
#[derive(Deserialize)]
struct RawRecord {
    address: String,
    created_ms: i64,
    #[serde(default, deserialize_with = "lenient")]
    finished_ms: Option<i64>,
    #[serde(default, deserialize_with = "lenient")]
    exit_code: Option<i64>,
    status: String,
    status_seq: u64,
    #[serde(default, deserialize_with = "lenient")]
    title: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    cwd: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    program: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    submit_key: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    rows: Option<u32>,
    #[serde(default, deserialize_with = "lenient")]
    cols: Option<u32>,
    #[serde(default)]
    machine: Option<Value>,
    #[serde(default, deserialize_with = "lenient")]
    status_kind: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    status_msg: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    status_ms: Option<i64>,
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
        let machine = super::machine::record_machine(&raw.address, raw.machine.as_ref())?;
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
            machine,
            context: super::context::StatusContext::of(
                raw.status_kind.as_deref(),
                raw.status_msg.as_deref(),
                raw.status_ms,
            ),
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
    /// hc's `terminals`: each record still unread.
    pub terminals: Vec<Box<serde_json::value::RawValue>>,
}

/// A record of `terminal.list` that could not be read: its address, when
/// it had a readable one, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct UnreadableRecord {
    /// The record's `address`, when it had a readable one.
    pub address: Option<String>,
    /// What was wrong with the record.
    pub problem: String,
}

/// Unreadable records kept of one list at most (the rest are counted):
/// enough to see what a core sends, never a flood of them in an answer.
pub const MAX_UNREADABLE: usize = 20;

/// The records of a list, each read on its own: those read, the first
/// [`MAX_UNREADABLE`] that could not be, and how many could not be.
pub fn read_records(listed: ListResult) -> (Vec<TerminalRecord>, Vec<UnreadableRecord>, usize) {
    let mut records = Vec::with_capacity(listed.terminals.len());
    let mut unreadable = Vec::new();
    let mut unreadable_count = 0;
    for raw in listed.terminals {
        match serde_json::from_str::<TerminalRecord>(raw.get()) {
            Ok(record) => records.push(record),
            Err(_) if unreadable.len() >= MAX_UNREADABLE => unreadable_count += 1,
            Err(e) => {
                unreadable_count += 1;
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
    (records, unreadable, unreadable_count)
}
