//! `inspect-core`: the operator's read-only probe. One handshake, one
//! `terminal.list` (finished terminals included), each terminal shown with
//! whether the config approves it, and `machine.list` (each machine's state
//! and whether the config shows it); it writes nothing to hc and nothing to
//! disk. `contract` is its conformance report (`--check-contract`).

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::config::{Approval, Config, TerminalLifetime};
use crate::escape::{self, printable, readable_ms};
use crate::hc::CoreError;
use crate::hc::client::Listing;
use crate::hc::wire::{Hello, TerminalRecord};

/// Runs the probe and returns what to print on stdout.
pub(crate) async fn run(config: &Config, as_json: bool) -> Result<String, CoreError> {
    let client = config.hc_client();
    let listed = client.list(true).await?;
    let machines = super::machines::ask(&client).await;
    client.close();
    let listing = &listed.value;
    let approvals: Vec<Option<Approval>> = listing
        .terminals
        .iter()
        .map(|t| {
            let lifetime = TerminalLifetime {
                address: t.address.clone(),
                created_ms: t.created_ms,
            };
            config.approval(&listed.core.core_id, &lifetime)
        })
        .collect();
    Ok(if as_json {
        let machines = machines.json(config);
        render_json(&listed.core, listing, &approvals, Some(&machines))
    } else {
        let mut table = render_table(&listed.core, listing, &approvals);
        table.push_str("\nmachines:\n");
        for line in machines.lines(config) {
            let _ = writeln!(table, "  {line}");
        }
        table
    })
}

/// `terminals` as JSON, each with `approved` and `multiline_allowed` from
/// `approvals` (one per terminal), and `machines` when given.
pub fn render_json(
    hello: &Hello,
    listing: &Listing,
    approvals: &[Option<Approval>],
    machines: Option<&Value>,
) -> String {
    let terminals: Vec<Value> = listing
        .terminals
        .iter()
        .zip(approvals)
        .map(|(t, approval)| {
            let mut record = serde_json::to_value(t).expect("a record encodes");
            record["approved"] = json!(approval.is_some());
            record["multiline_allowed"] = json!(approval.is_some_and(|a| a.multiline));
            record
        })
        .collect();
    let mut doc = json!({
        "core_id": hello.core_id,
        "version": hello.version,
        "generation": hello.generation,
        "framing": hello.framing,
        "pid": hello.pid,
        "started_ms": hello.started_ms,
        "terminals": terminals,
        "unreadable": listing.unreadable,
        "unreadable_count": listing.unreadable_count,
    });
    if let Some(machines) = machines {
        doc["machines"] = machines.clone();
    }
    let written = serde_json::to_string_pretty(&doc).expect("plain data always encodes");
    // serde_json leaves C1, DEL and format characters raw; printed on the
    // operator's terminal they could drive or spoof it.
    let mut out = escape::json(&written).into_owned();
    out.push('\n');
    out
}

/// `terminals` as a table, with an APPROVED column from `approvals` (one
/// per terminal).
pub fn render_table(hello: &Hello, listing: &Listing, approvals: &[Option<Approval>]) -> String {
    let terminals = &listing.terminals;
    let mut out = String::new();
    let facts = [
        ("core_id", printable(hello.core_id.as_str()).into_owned()),
        ("version", printable(&hello.version).into_owned()),
        ("generation", hello.generation.to_string()),
        ("framing", printable(&hello.framing).into_owned()),
        ("pid", hello.pid.map_or("-".to_owned(), |p| p.to_string())),
        (
            "started_ms",
            hello
                .started_ms
                .map_or("-".to_owned(), |ms| format!("{ms} ({})", readable_ms(ms))),
        ),
    ];
    for (key, value) in facts {
        let _ = writeln!(out, "{key:<11} {value}");
    }
    out.push('\n');
    for unreadable in &listing.unreadable {
        let _ = writeln!(
            out,
            "unreadable record {}: {} (compare the core with inspect-core --check-contract)",
            printable(unreadable.address.as_deref().unwrap_or("(no address)")),
            printable(&unreadable.problem)
        );
    }
    if listing.unreadable_count > listing.unreadable.len() {
        let _ = writeln!(
            out,
            "{} more unreadable record(s)",
            listing.unreadable_count - listing.unreadable.len()
        );
    }
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
        "APPROVED",
        "PROGRAM",
        "TITLE",
        "CWD",
    ];
    let rows: Vec<[String; 11]> = terminals
        .iter()
        .zip(approvals)
        .map(|(t, a)| row(t, *a))
        .collect();
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

fn row(t: &TerminalRecord, approval: Option<Approval>) -> [String; 11] {
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
        match &t.reported_status {
            Some(word) => format!("unknown ({})", printable(word)),
            None => t.status.to_string(),
        },
        t.status_seq.to_string(),
        match approval {
            None => "no".to_owned(),
            Some(a) => {
                let mut cell = if a.multiline { "multiline" } else { "yes" }.to_owned();
                if let Some(mode) = a.send_mode {
                    cell.push_str(&format!(" ({})", mode.as_str()));
                }
                cell
            }
        },
        text(&t.program),
        text(&t.title),
        text(&t.cwd),
    ]
}

fn write_row(out: &mut String, cells: &[String; 11], widths: &[usize; 11]) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::escape::is_hazard;

    #[test]
    fn no_rendering_prints_a_hazard_raw() {
        let hello: Hello = serde_json::from_value(json!({
            "core_id": "c1", "version": "0.1.15", "generation": 1,
            "framing": "plain", "pid": 1, "started_ms": 0
        }))
        .unwrap();
        let hostile = "t\u{9b}31m\u{9d}0;x\u{7}\u{7f}\u{202e}\u{2066}\u{feff}";
        let record: TerminalRecord = serde_json::from_value(json!({
            "address": "t1", "created_ms": 1, "finished_ms": null, "exit_code": null,
            "status": "idle", "status_seq": 1, "title": hostile, "cwd": hostile,
            "program": hostile, "submit_key": "enter", "rows": 1, "cols": 1
        }))
        .unwrap();
        let records = Listing {
            terminals: vec![record],
            unreadable: Vec::new(),
            unreadable_count: 0,
        };
        let json_text = render_json(&hello, &records, &[None], None);
        let table = render_table(&hello, &records, &[None]);
        for printed in [&json_text, &table] {
            let raw: Vec<char> = printed
                .chars()
                .filter(|c| *c != '\n' && is_hazard(*c))
                .collect();
            assert!(raw.is_empty(), "{raw:?} in\n{printed}");
        }
        let reread: serde_json::Value = serde_json::from_str(&json_text).unwrap();
        assert_eq!(reread["terminals"][0]["title"], hostile);
        assert!(table.contains("t\\u{009b}31m\\u{009d}0;x"), "{table}");
    }
}
