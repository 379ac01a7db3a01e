//! What the check found, and how it is printed: a text grouped by kind of
//! difference, or one JSON document. Every value from the core is escaped.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::{Check, CheckReport, Difference, Discovery, Source};
use crate::escape::{self, printable};
use crate::hc::Acceptance;
use crate::hc::acceptance::Standing;
use crate::hc::wire::{PINNED_FRAMING, PINNED_GENERATION, PINNED_VERSION};

/// Everything seen: the differences (each counted once per place), the
/// core's version, and the calls made.
#[derive(Default)]
pub(super) struct Findings {
    /// (difference, how many times it was seen)
    differences: Vec<(Difference, usize)>,
    /// The version, escaped and bounded for showing.
    pub version: Option<String>,
    /// The version as the hello spelt it, for `--accept`.
    pub raw_version: Option<String>,
    pub core_id: Option<String>,
    pub discovery: Discovery,
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

    fn breaking(&self) -> usize {
        self.differences.iter().filter(|(d, _)| d.breaks).count()
    }

    fn report(&self, text: String) -> CheckReport {
        CheckReport {
            text,
            differences: self.count(),
            breaking: self.breaking(),
            version: self.raw_version.clone(),
            discovery: self.discovery.clone(),
        }
    }

    /// Whether this config speaks the core as it runs now.
    fn standing(&self, acceptance: &Acceptance) -> Option<&'static str> {
        let version = self.raw_version.as_deref()?;
        Some(match (acceptance.standing(version), &self.discovery) {
            (Standing::Accepted, _) if version == PINNED_VERSION => "the built-in version",
            (Standing::Accepted, _) => "accepted in this config (hcVersions, without a document)",
            (Standing::IfDocumentIs(sha), Discovery::Described { sha256 }) if sha == sha256 => {
                "accepted in this config (hcVersions), and its document is the one accepted"
            }
            (Standing::IfDocumentIs(_), _) => {
                "listed in hcVersions with another document than it serves now: refused until accepted again (--accept)"
            }
            (Standing::Unaccepted, _) => {
                "not accepted: serve, allow and the tools refuse this core until --accept records it"
            }
        })
    }

    fn discovery_line(&self) -> Option<String> {
        Some(match &self.discovery {
            Discovery::NotAsked => return None,
            Discovery::NotOffered(code) => format!(
                "rpc.discover: not offered (error {code}): the core does not describe itself, so it is judged on the shapes observed alone, and whether its terminal.send honours `if` cannot be read without writing (it rests on the model's word)"
            ),
            Discovery::Described { sha256 } => format!(
                "rpc.discover: the core's own document (SHA-256 {sha256}), compared with the model below"
            ),
        })
    }

    pub(super) fn text(
        &self,
        socket: &Path,
        check: &Check,
        acceptance: &Acceptance,
    ) -> CheckReport {
        let mut out = format!(
            "checking hc at {} against the modelled contract (hc {PINNED_VERSION}, src/hc/hc-0.1.15.openrpc.json)\n",
            printable(&socket.display().to_string())
        );
        if let (Some(version), Some(standing)) = (&self.version, self.standing(acceptance)) {
            let _ = writeln!(out, "version: {} ({standing})", printable(version));
        }
        if let Some(core_id) = &self.core_id {
            let _ = writeln!(out, "core_id: {}", printable(core_id));
        }
        if let Some(line) = self.discovery_line() {
            let _ = writeln!(out, "{line}");
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
                    Source::Discovered => " (the core's own document)",
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
                "{} {}{}{seen}",
                if difference.breaks { "!" } else { " " },
                printable(&place),
                printable(&difference.detail)
            );
        }
        let _ = match (self.count(), self.breaking()) {
            (0, _) => writeln!(out, "\nno difference from the model"),
            (n, 0) => writeln!(
                out,
                "\n{n} difference(s) from the model, none of which would make a call fail: the adapter does without missing optional fields, ignores extra ones, reads statuses outside the six as unknown, takes addresses as opaque and only shows error messages (docs/operations.md, \"Checking a real hc\")"
            ),
            (n, b) => writeln!(
                out,
                "\n{n} difference(s) from the model, {b} of which (marked !) would make calls fail or an idle-only send unguarded (docs/operations.md, \"Checking a real hc\")"
            ),
        };
        self.report(out)
    }

    pub(super) fn json(
        &self,
        socket: &Path,
        check: &Check,
        acceptance: &Acceptance,
    ) -> CheckReport {
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
            "standing": self.standing(acceptance),
            "discovery": match &self.discovery {
                Discovery::NotAsked => json!(null),
                Discovery::NotOffered(code) => json!({"offered": false, "error_code": code}),
                Discovery::Described { sha256 } => json!({"offered": true, "document_sha256": sha256}),
            },
            "breaking": self.breaking(),
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
        self.report(text)
    }
}
