//! What the check found, and how it is printed: a text grouped by kind of
//! difference, or one JSON document. Every value from the core is escaped.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::{Check, CheckReport, Difference, Source};
use crate::escape::{self, printable};
use crate::hc::wire::{PINNED_FRAMING, PINNED_GENERATION, PINNED_VERSION};

/// Everything seen: the differences (each counted once per place), the
/// core's version, and the calls made.
#[derive(Default)]
pub(super) struct Findings {
    /// (difference, how many times it was seen)
    differences: Vec<(Difference, usize)>,
    pub version: Option<String>,
    pub core_id: Option<String>,
    pub calls: BTreeMap<&'static str, usize>,
    pub terminals: usize,
    /// The connection stopped pairing replies with requests (no reply, a
    /// line that is not JSON, another id): nothing more was asked.
    pub lost: bool,
}

impl Findings {
    pub(super) fn add(&mut self, difference: Difference) {
        match self.differences.iter_mut().find(|(d, _)| *d == difference) {
            Some((_, count)) => *count += 1,
            None => self.differences.push((difference, 1)),
        }
    }

    fn count(&self) -> usize {
        self.differences.len()
    }

    pub(super) fn text(&self, socket: &Path, check: &Check) -> CheckReport {
        let mut out = format!(
            "checking hc at {} against the modelled contract (hc {PINNED_VERSION}, src/hc/hc-0.1.15.openrpc.json)\n",
            printable(&socket.display().to_string())
        );
        if let Some(version) = &self.version {
            let _ = writeln!(
                out,
                "version: {}{}",
                printable(version),
                if version == PINNED_VERSION {
                    " (the pinned version)".to_owned()
                } else {
                    format!(
                        "; this adapter needs exactly {PINNED_VERSION}, so serve, allow and the tools refuse this core; the check goes on"
                    )
                }
            );
        }
        if let Some(core_id) = &self.core_id {
            let _ = writeln!(out, "core_id: {}", printable(core_id));
        }
        if !self.calls.is_empty() {
            let calls: Vec<String> = self
                .calls
                .iter()
                .map(|(method, n)| format!("{method} x{n}"))
                .collect();
            let _ = writeln!(
                out,
                "asked: {} ({} terminal(s) looked at; nothing was sent to any terminal)",
                calls.join(", "),
                self.terminals
            );
        }
        if let Some(path) = &check.record {
            let _ = writeln!(
                out,
                "recorded the exchange in {} (screens, titles, cwds and argv as length and SHA-256)",
                printable(&path.display().to_string())
            );
        }
        let mut sorted = self.differences.clone();
        sorted.sort_by_key(|(a, _)| (a.source, a.group));
        let mut heading = None;
        for (difference, count) in &sorted {
            let this = (difference.source, difference.group);
            if heading != Some(this) {
                let n = sorted
                    .iter()
                    .filter(|(d, _)| (d.source, d.group) == this)
                    .count();
                let from = match difference.source {
                    Source::Core => "",
                    Source::Document => " (the --schema document)",
                };
                let _ = write!(out, "\n{}{from} ({n})\n", difference.group.heading());
                heading = Some(this);
            }
            let place = match (difference.method.is_empty(), difference.field.is_empty()) {
                (true, _) => String::new(),
                (false, true) => format!("{}: ", difference.method),
                (false, false) => format!("{} {}: ", difference.method, difference.field),
            };
            let seen = if *count > 1 {
                format!(" (seen {count} times)")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {}{}{seen}",
                printable(&place),
                printable(&difference.detail)
            );
        }
        let _ = match self.count() {
            0 => writeln!(out, "\nno difference from the model"),
            n => writeln!(
                out,
                "\n{n} difference(s) from the model; the adapter tolerates missing optional fields, extra fields, statuses outside the six (as unknown), opaque addresses and error messages; the rest would make calls fail (docs/operations.md, \"Checking a real hc\")"
            ),
        };
        CheckReport {
            text: out,
            differences: self.count(),
        }
    }

    pub(super) fn json(&self, socket: &Path, check: &Check) -> CheckReport {
        let differences: Vec<Value> = self
            .differences
            .iter()
            .map(|(d, count)| {
                let mut value = serde_json::to_value(d).expect("a difference encodes");
                value["count"] = json!(count);
                value
            })
            .collect();
        let doc = json!({
            "socket": socket,
            "model": {"version": PINNED_VERSION, "generation": PINNED_GENERATION, "framing": PINNED_FRAMING},
            "core": {"version": self.version, "core_id": self.core_id},
            "version_matches": self.version.as_deref() == Some(PINNED_VERSION),
            "calls": self.calls,
            "terminals_checked": self.terminals,
            "schema": check.schema,
            "record": check.record,
            "differences": differences,
        });
        let mut text =
            escape::json(&serde_json::to_string_pretty(&doc).expect("plain data always encodes"))
                .into_owned();
        text.push('\n');
        CheckReport {
            text,
            differences: self.count(),
        }
    }
}
