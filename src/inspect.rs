//! `inspect-core`: the operator's read-only probe. One handshake and one
//! `terminal.list` (finished terminals included); it writes nothing to hc
//! and nothing to disk.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;

use crate::cli::Failure;
use crate::config::Config;
use crate::hc::HcClient;
use crate::hc::wire::{Hello, TerminalRecord};

/// Runs the probe and returns what to print on stdout.
pub async fn run(config_path: &Path, as_json: bool) -> Result<String, Failure> {
    let config = Config::load(config_path)?;
    let client = HcClient::new(&config.socket_path, config.timeout);
    let listed = client.list(true).await?;
    client.close();
    Ok(if as_json {
        render_json(&listed.core, &listed.value)
    } else {
        render_table(&listed.core, &listed.value)
    })
}

pub fn render_json(hello: &Hello, terminals: &[TerminalRecord]) -> String {
    let doc = json!({
        "core_id": hello.core_id,
        "version": hello.version,
        "generation": hello.generation,
        "framing": hello.framing,
        "pid": hello.pid,
        "started_ms": hello.started_ms,
        "terminals": terminals,
    });
    let mut out = serde_json::to_string_pretty(&doc).expect("plain data always encodes");
    out.push('\n');
    out
}

pub fn render_table(hello: &Hello, terminals: &[TerminalRecord]) -> String {
    let mut out = String::new();
    let facts = [
        ("core_id", printable(&hello.core_id).into_owned()),
        ("version", printable(&hello.version).into_owned()),
        ("generation", hello.generation.to_string()),
        ("framing", printable(&hello.framing).into_owned()),
        ("pid", hello.pid.to_string()),
        (
            "started_ms",
            format!("{} ({})", hello.started_ms, readable_ms(hello.started_ms)),
        ),
    ];
    for (key, value) in facts {
        let _ = writeln!(out, "{key:<11} {value}");
    }
    out.push('\n');
    if terminals.is_empty() {
        out.push_str("no terminals\n");
        return out;
    }
    let header = [
        "ADDRESS",
        "CREATED_MS",
        "CREATED",
        "FINISHED_MS",
        "EXIT",
        "STATUS",
        "STATUS_SEQ",
        "PROGRAM",
        "TITLE",
        "CWD",
    ];
    let rows: Vec<[String; 10]> = terminals.iter().map(row).collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    write_row(&mut out, &header.map(str::to_owned), &widths);
    for row in &rows {
        write_row(&mut out, row, &widths);
    }
    out
}

fn row(t: &TerminalRecord) -> [String; 10] {
    let opt = |v: Option<i64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    let text = |v: &Option<String>| {
        v.as_deref()
            .map_or_else(|| "-".to_owned(), |s| printable(s).into_owned())
    };
    [
        printable(&t.address).into_owned(),
        t.created_ms.to_string(),
        readable_ms(t.created_ms),
        opt(t.finished_ms),
        opt(t.exit_code),
        t.status.to_string(),
        t.status_seq.to_string(),
        text(&t.program),
        text(&t.title),
        text(&t.cwd),
    ]
}

fn write_row(out: &mut String, cells: &[String; 10], widths: &[usize; 10]) {
    let mut line = String::new();
    for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
        if i + 1 == cells.len() {
            line.push_str(cell);
        } else {
            let _ = write!(line, "{cell:<width$}  ");
        }
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

/// A unix-ms timestamp as RFC 3339 UTC, e.g. `2025-11-30T05:20:00.123Z`.
pub fn readable_ms(ms: i64) -> String {
    match u64::try_from(ms) {
        Ok(ms) => {
            humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
        }
        Err(_) => "-".to_owned(),
    }
}

/// Titles, programs and cwds come from terminal programs: escape control
/// characters so printing them cannot drive the operator's terminal.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_from_programs_are_escaped() {
        assert_eq!(printable("ok"), "ok");
        assert_eq!(printable("a\u{1b}]0;x\u{7}b"), "a\\u{1b}]0;x\\u{7}b");
        assert_eq!(printable("c1\u{9b}"), "c1\\u{9b}");
    }

    #[test]
    fn timestamps_read_as_utc() {
        assert_eq!(readable_ms(1_764_480_000_123), "2025-11-30T05:20:00.123Z");
        assert_eq!(readable_ms(-1), "-");
    }
}
