//! What the check found, and how it is printed: a text grouped by kind of
//! difference, or one JSON document. Every value from the core is escaped.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::guard::Live;
use super::model::Document;
use super::observed::Observed;
use super::{Check, CheckReport, Difference, Discovery, Guard, Rule, Source};
use crate::escape::{self, printable};
use crate::hc::Acceptance;
use crate::hc::acceptance::Standing;
use crate::hc::wire::{PINNED_FRAMING, PINNED_GENERATION, PINNED_VERSION};

/// Differences of one kind listed in the text report at most; the rest
/// are counted (a document of thousands of methods stays readable).
const MAX_LISTED_PER_GROUP: usize = 20;
/// Differences listed in the JSON report at most; the rest are counted.
const MAX_LISTED_JSON: usize = 500;

/// Everything seen: the differences (each counted once per place), the
/// core's version, and the calls made.
#[derive(Default)]
pub(super) struct Findings {
    /// (difference, how many times it was seen)
    differences: Vec<(Difference, usize)>,
    /// Where each difference sits in `differences`.
    index: HashMap<Difference, usize>,
    /// The version, escaped and bounded for showing.
    pub version: Option<String>,
    /// The version as the hello spelt it, for `--accept`.
    pub raw_version: Option<String>,
    pub core_id: Option<String>,
    pub discovery: Discovery,
    /// Whether, and how, the core showed its `if` guard.
    pub guard: Guard,
    /// Why the guard was not shown, each way it was looked for.
    pub guard_notes: Vec<String>,
    pub calls: BTreeMap<&'static str, usize>,
    pub terminals: usize,
    /// The connection stopped pairing replies with requests (no reply, a
    /// line that is not JSON, another id): nothing more was asked.
    pub lost: bool,
    /// The results the live calls returned.
    pub observed: Observed,
    /// The core's own document, until it is judged.
    pub discovered: Option<Document>,
    /// The core's own document does not declare `force`.
    pub omits_force: bool,
    /// What `machine.list` answered, in one line, when it was asked.
    pub machines: Option<String>,
}

impl Findings {
    pub(super) fn add(&mut self, difference: Difference) {
        match self.index.get(&difference) {
            Some(&at) => self.differences[at].1 += 1,
            None => {
                self.index
                    .insert(difference.clone(), self.differences.len());
                self.differences.push((difference, 1));
            }
        }
    }

    fn count(&self) -> usize {
        self.differences.len()
    }

    fn breaking(&self) -> usize {
        self.differences.iter().filter(|(d, _)| d.breaks).count()
    }

    /// The rules the breaking differences fall under, each once, in the
    /// table's order.
    fn breaking_rules(&self) -> Vec<Rule> {
        Rule::ALL
            .into_iter()
            .filter(|rule| {
                self.differences
                    .iter()
                    .any(|(d, _)| d.breaks && d.rule == *rule)
            })
            .collect()
    }

    fn report(&self, text: String) -> CheckReport {
        CheckReport {
            text,
            differences: self.count(),
            breaking: self.breaking(),
            version: self.raw_version.clone(),
            discovery: self.discovery.clone(),
            guard: self.guard.clone(),
            breaking_rules: self.breaking_rules(),
            omits_force: self.omits_force,
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
            (Standing::Unguarded, _) => {
                "listed in hcVersions, but accepted without its `if` guard being seen: refused until accepted again with --guard-check ADDRESS"
            }
            (Standing::Unaccepted, _) => {
                "not accepted: serve, allow and the tools refuse this core until --accept records it"
            }
        })
    }

    /// Whether the core showed its guard, and how; or why not and how it
    /// can.
    fn guard_line(&self) -> Option<String> {
        let version = self.raw_version.as_deref()?;
        Some(match &self.guard {
            Guard::Document => "guard: shown by the core's own document (terminal.send declares an `if` that takes \"idle\")".to_owned(),
            Guard::LiveCheck(Live::Refused {
                address,
                sent_if,
                status,
            }) => format!(
                "guard: shown by the live check: terminal.send to {} with `if`: {sent_if} (it was {status}), empty text and no Enter, was refused with status_mismatch before anything was written",
                printable(address)
            ),
            Guard::LiveCheck(_) | Guard::NotShown if version == PINNED_VERSION =>
            {
                "guard: the built-in version, whose modelled contract has it (--guard-check ADDRESS shows whether this core honours it)".to_owned()
            }
            Guard::LiveCheck(_) | Guard::NotShown => {
                let mut line = "guard: NOT shown".to_owned();
                for note in &self.guard_notes {
                    let _ = write!(line, "; {}", printable(note));
                }
                line.push_str(
                    "; a core is accepted only once it shows its `if` guard, by its own document or by the live check on a terminal you name, which types nothing (--guard-check ADDRESS)",
                );
                line
            }
        })
    }

    fn discovery_line(&self) -> Option<String> {
        Some(match &self.discovery {
            Discovery::NotAsked => return None,
            Discovery::NotOffered(code) => format!(
                "rpc.discover: not offered (error {code}): the core does not describe itself, so it is judged on the shapes observed alone"
            ),
            Discovery::Described { sha256 } => format!(
                "rpc.discover: the core's own document (SHA-256 {sha256}), judged below with the replies seen"
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
        if let Some(line) = self.guard_line() {
            let _ = writeln!(out, "{line}");
        }
        if let Some(line) = &self.machines {
            let _ = writeln!(out, "machines: {line}");
        }
        if self.terminals > 0 {
            let _ = writeln!(
                out,
                "why a status holds: {}",
                self.observed.status_reasons()
            );
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
        let mut listed = 0;
        for (at, (difference, count)) in sorted.iter().enumerate() {
            let this = (difference.source, difference.group);
            if heading != Some(this) {
                listed = 0;
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
            listed += 1;
            if listed > MAX_LISTED_PER_GROUP {
                let last_of_group = sorted
                    .get(at + 1)
                    .is_none_or(|(d, _)| (d.source, d.group) != this);
                if last_of_group {
                    let _ = writeln!(
                        out,
                        "  … and {} more of this kind (not listed; --json lists up to {MAX_LISTED_JSON} in all)",
                        listed - MAX_LISTED_PER_GROUP
                    );
                }
                continue;
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
                "{} [{}] {}{}{seen}",
                if difference.breaks { "!" } else { " " },
                difference.side.name(),
                printable(&place),
                printable(&difference.detail)
            );
        }
        let _ = match (self.count(), self.breaking()) {
            (0, _) => writeln!(out, "\nno difference from the model"),
            (n, 0) => writeln!(
                out,
                "\n{n} difference(s) from the model, none of which would make a call fail: each line says which side of the judgement it is on, and docs/operations.md (\"Checking a real hc\") why the adapter works with it"
            ),
            (n, b) => writeln!(
                out,
                "\n{n} difference(s) from the model, {b} of which (marked !) would make calls fail or an idle-only send unguarded, by the rules {} (docs/operations.md, \"Checking a real hc\", names each)",
                self.breaking_rules()
                    .iter()
                    .map(|r| r.id())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        if self.omits_force {
            let _ = writeln!(
                out,
                "sends to this core leave `force` out: its own document does not declare it (false is hc's default); --accept records that"
            );
        }
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
            .take(MAX_LISTED_JSON)
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
            "guard": {
                "shown": match &self.guard {
                    Guard::Document => json!("document"),
                    Guard::LiveCheck(Live::Refused { .. }) => json!("live-check"),
                    _ => json!(null),
                },
                "notes": self.guard_notes,
            },
            "breaking": self.breaking(),
            "breaking_rules": self.breaking_rules(),
            "omits_force": self.omits_force,
            "calls": self.calls,
            "terminals_checked": self.terminals,
            "schema": check.schema,
            "record": check.record,
            "differences": differences,
            "differences_not_listed": self.count().saturating_sub(MAX_LISTED_JSON),
        });
        let mut text =
            escape::json(&serde_json::to_string_pretty(&doc).expect("plain data always encodes"))
                .into_owned();
        text.push('\n');
        self.report(text)
    }
}
