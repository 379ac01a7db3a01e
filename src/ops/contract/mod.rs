//! `inspect-core --check-contract`: how a live core (of any version) and,
//! with `--schema`, an OpenRPC document differ from the modelled contract
//! (`src/hc/hc-0.1.15.openrpc.json`). Read-only like the rest of
//! `inspect-core`: it calls `hc.hello`, `terminal.list` (finished ones
//! included), `terminal.get` and `terminal.read {lines: 0}` on at most
//! [`MAX_TERMINALS`] terminals, and one method no core has (to see the
//! error shape), and `terminal.send` only for the live guard check, which
//! types nothing (`probe` can spell no other send). It asks `rpc.discover`
//! too: a core that describes itself has its own document judged, as a
//! `--schema` one is, with the replies the probe saw. A version other than
//! the built-in one is reported first, and the check goes on.
//!
//! Each difference names its rule in one table (`rules`), which says
//! which side of the exchange it is on and whether it would make a call
//! fail (or an idle-only send unguarded): `--accept` records the core's
//! version only when none does.
//!
//! By noun: `schema` reads JSON Schema, `model` an OpenRPC document,
//! `judgement` rules on a document (`guard` on its `if`, `schema_diff`
//! notes what differs from the model elsewhere), `compare` holds one live
//! reply against the model, `observed` keeps the replies seen, `probe`
//! talks to the core and `asking` decides what to ask it.

mod asking;
mod compare;
mod guard;
mod judgement;
mod model;
mod observed;
mod probe;
mod replies;
mod report;
mod rules;
mod schema;
mod schema_diff;

use std::path::PathBuf;

use serde::Serialize;

use crate::config::Config;
use crate::hc::framing::MAX_REPLY_BYTES;
use model::Document;
use probe::Probe;
use report::Findings;
pub(crate) use rules::Rule;
use rules::Side;

/// Terminals asked about one by one at most: enough to see each shape a
/// core sends, few enough to stay quick on a large core.
pub(crate) const MAX_TERMINALS: usize = 50;
/// Longest method or field name a report repeats: names, not documents.
const MAX_NAME_CHARS: usize = 128;

/// What the operator asked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Check {
    /// An OpenRPC document to compare with the model as well.
    pub schema: Option<PathBuf>,
    pub json: bool,
    /// Where to write the exchange, private values digested.
    pub record: Option<PathBuf>,
    /// The terminal of the live guard check (`--guard-check ADDRESS`).
    pub guard_check: Option<String>,
}

/// How the core showed its `if` guard, if it did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Guard {
    /// It did not (the report says why).
    #[default]
    NotShown,
    /// Its own document declares it, soundly.
    Document,
    /// The live check saw it refuse a mismatching send.
    LiveCheck(guard::Live),
}

/// Why the check could not run at all (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// `--schema` names a file that is not an OpenRPC document.
    #[error("--schema {path}: {why}", path = path.display())]
    Schema { path: PathBuf, why: String },
    /// `--record` names a file that cannot be written.
    #[error("{0}")]
    Record(String),
}

/// Kinds of difference, in the order the report lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Group {
    /// The core could not be reached, or stopped answering.
    Unreachable,
    /// Version, generation or framing other than the pins.
    Handshake,
    /// Bytes that are not one JSON line.
    NotJson,
    /// `jsonrpc`, `id`, `result`/`error` other than JSON-RPC 2.0 says.
    Envelope,
    Missing,
    Extra,
    WrongType,
    StatusOutside,
    AddressForm,
    ValueOutside,
    /// An error object whose `message` is not its kind's name.
    ErrorMessage,
    /// An error object without the code or `data.kind` the model has.
    ErrorShape,
    /// A document's `terminal.send` guard declared ambiguously, withdrawn,
    /// or unable to take `"idle"`.
    Guard,
    /// Params the document requires that the adapter does not send.
    RequiredNotSent,
    /// Params the adapter sends that the document does not declare.
    Undeclared,
    /// Params taken by position only.
    ParamStructure,
    /// Fields the adapter needs that the document does not promise.
    NotPromised,
    /// What the document says that cannot be read.
    Unreadable,
}

impl Group {
    fn heading(self) -> &'static str {
        match self {
            Group::Unreachable => "the core could not be reached",
            Group::Handshake => "handshake facts outside the pins",
            Group::NotJson => "replies that are not JSON lines",
            Group::Envelope => "JSON-RPC envelopes outside the standard",
            Group::Missing => "modelled fields missing",
            Group::Extra => "extra fields present",
            Group::WrongType => "fields of another type",
            Group::StatusOutside => "status values outside the model",
            Group::AddressForm => "address forms outside the model",
            Group::ValueOutside => "other values outside the model",
            Group::ErrorMessage => "error objects whose message is not the kind's name",
            Group::ErrorShape => "error objects of another shape",
            Group::Guard => "the `if` guard of terminal.send",
            Group::RequiredNotSent => "params required that the adapter does not send",
            Group::Undeclared => "params the adapter sends that are not declared",
            Group::ParamStructure => "params taken by position only",
            Group::NotPromised => "fields the adapter needs that are not promised",
            Group::Unreadable => "what cannot be read",
        }
    }
}

/// Where a difference was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Source {
    Core,
    /// The core's own document, from `rpc.discover`.
    Discovered,
    /// The `--schema` document.
    Document,
}

/// One difference from the model.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub(crate) struct Difference {
    /// The rule of the judgement's table it falls under.
    pub rule: Rule,
    /// Which side of the exchange that rule is on.
    pub side: Side,
    pub group: Group,
    pub source: Source,
    pub method: String,
    /// The field, e.g. `terminals[].title`; empty for the whole reply.
    pub field: String,
    pub detail: String,
    /// It would make a call fail, or an idle-only send unguarded: what
    /// its rule says.
    pub breaks: bool,
}

impl Difference {
    /// A difference seen on the core, under `rule`; the method's and the
    /// field's names (a core's or a document's words) are cut to
    /// [`MAX_NAME_CHARS`].
    pub(crate) fn new(
        rule: Rule,
        group: Group,
        method: &str,
        field: &str,
        detail: String,
    ) -> Difference {
        let name = |s: &str| crate::escape::bounded(s, MAX_NAME_CHARS).into_owned();
        Difference {
            rule,
            side: rule.side(),
            group,
            source: Source::Core,
            method: name(method),
            field: name(field),
            detail,
            breaks: rule.breaks(),
        }
    }

    /// The same, found in a document rather than on the core.
    pub(crate) fn in_document(self, source: Source) -> Difference {
        Difference { source, ..self }
    }
}

/// The outcome: what was found, ready to print, and what `--accept`
/// needs.
pub(crate) struct CheckReport {
    pub text: String,
    pub differences: usize,
    /// Differences that would make calls fail.
    pub breaking: usize,
    /// The core's version as its hello reported it (unescaped), when read.
    pub version: Option<String>,
    /// What `rpc.discover` said.
    pub discovery: Discovery,
    /// Whether, and how, the core showed its `if` guard.
    pub guard: Guard,
    /// The rules the breaking differences fall under, each once.
    pub breaking_rules: Vec<Rule>,
    /// The core's own document does not declare `force`: its sends leave
    /// it out (`--accept` writes `params_omitted`).
    pub omits_force: bool,
}

/// What the core said of itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Discovery {
    /// Not asked (the check stopped before).
    #[default]
    NotAsked,
    /// It answered `rpc.discover` with an error (code): it does not describe
    /// itself, and is judged on the observed shapes alone.
    NotOffered(i64),
    /// Its own document, and that document's SHA-256 in canonical JSON.
    Described { sha256: String },
}

/// Runs the check against the core of `config` (and the document of
/// `check.schema`).
pub(crate) async fn run(config: &Config, check: &Check) -> Result<CheckReport, CheckError> {
    let model = Document::model();
    let document = match &check.schema {
        Some(path) => {
            // Capped as a core's own document is (one reply), and never
            // waiting on a FIFO or a device.
            let text = crate::files::read_text(path, MAX_REPLY_BYTES as u64).map_err(|e| {
                CheckError::Schema {
                    path: path.clone(),
                    why: e.to_string(),
                }
            })?;
            Some(Document::parse(&text).map_err(|why| CheckError::Schema {
                path: path.clone(),
                why,
            })?)
        }
        None => None,
    };
    let mut findings = Findings::default();
    match Probe::connect(
        config.socket_path(),
        config.timeout(),
        check.record.as_deref(),
    )
    .await
    {
        Ok(probe) => {
            let guard_check = check
                .guard_check
                .as_deref()
                .map(|address| (address, config.send_timeout()));
            asking::probe_core(&model, probe, guard_check, &mut findings).await;
        }
        Err(why) if why.starts_with("cannot write the record") => {
            return Err(CheckError::Record(why));
        }
        Err(why) => findings.add(Difference::new(
            Rule::Unreachable,
            Group::Unreachable,
            "",
            "",
            why,
        )),
    }
    if let Some(document) = &document {
        let judged = judgement::judge(&model, document, &findings.observed);
        for difference in judged.differences {
            findings.add(difference.in_document(Source::Document));
        }
    }
    let socket = config.socket_path();
    let acceptance = config.acceptance();
    Ok(if check.json {
        findings.json(socket, check, &acceptance)
    } else {
        findings.text(socket, check, &acceptance)
    })
}
