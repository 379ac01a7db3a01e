//! The judgement's table: every case `inspect-core --check-contract`
//! rules on, which side of the exchange it is on (the params the adapter
//! sends, the results it reads, the `if` guard, the document itself, the
//! connection), and its verdict. One match, so each rule has exactly one
//! row: every report line names its rule, `--accept` refuses on the count
//! of breaking lines, and docs/operations.md ("Checking a real hc") prints
//! this very table (a test reads both and compares them).

use serde::Serialize;

/// Which side of the exchange a rule is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Side {
    /// Reaching the core and pairing its replies with requests.
    Connection,
    /// The params the adapter sends: it is the caller.
    Params,
    /// The results the adapter reads: it is the reader.
    Results,
    /// The `if` guard idle-only sends rest on.
    Guard,
    /// The document as a whole, and what in it cannot be read.
    Document,
}

impl Side {
    /// The side as the report and the docs name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Side::Connection => "connection",
            Side::Params => "params sent",
            Side::Results => "results read",
            Side::Guard => "guard",
            Side::Document => "document",
        }
    }
}

impl Serialize for Side {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// What a case means for the adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ruling {
    /// Nothing to report: the adapter works with it.
    Fine,
    /// Reported, and tolerated.
    Note,
    /// Reported: a call would fail, or an idle-only send would go
    /// unguarded; `--accept` refuses.
    Breaking,
}

impl Ruling {
    /// The verdict as the docs' table words it.
    #[cfg(test)]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Ruling::Fine => "fine",
            Ruling::Note => "note",
            Ruling::Breaking => "breaking",
        }
    }
}

/// One rule of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Rule {
    Unreachable,
    Envelope,
    ParamTaken,
    ParamRefusedValue,
    ParamRequiredNotSent,
    ParamUndeclared,
    ParamUndeclaredRefused,
    ForceOmitted,
    ParamsByPosition,
    FieldPromised,
    FieldWider,
    FieldSeen,
    FieldNotSeen,
    OptionalWider,
    ReplyLacksNeeded,
    ReplyOther,
    Pins,
    ErrorShape,
    ErrorMessage,
    GuardDeclared,
    GuardNotDeclared,
    GuardUnsound,
    GuardIgnored,
    NotOpenRpc,
    UnreadableNeeded,
    UnreadableOther,
    MethodMissing,
    Other,
    PassedOver,
}

/// A row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row {
    /// The rule's name in reports (`--json`'s `rule`) and in the docs.
    pub id: &'static str,
    pub side: Side,
    /// The case, as the docs' table words it.
    pub case: &'static str,
    pub verdict: Ruling,
}

const fn row(id: &'static str, side: Side, verdict: Ruling, case: &'static str) -> Row {
    Row {
        id,
        side,
        case,
        verdict,
    }
}

impl Rule {
    /// Every rule, in the table's order.
    pub(crate) const ALL: [Rule; 29] = [
        Rule::Unreachable,
        Rule::Envelope,
        Rule::ParamTaken,
        Rule::ParamRefusedValue,
        Rule::ParamRequiredNotSent,
        Rule::ParamUndeclared,
        Rule::ParamUndeclaredRefused,
        Rule::ForceOmitted,
        Rule::ParamsByPosition,
        Rule::FieldPromised,
        Rule::FieldWider,
        Rule::FieldSeen,
        Rule::FieldNotSeen,
        Rule::OptionalWider,
        Rule::ReplyLacksNeeded,
        Rule::ReplyOther,
        Rule::Pins,
        Rule::ErrorShape,
        Rule::ErrorMessage,
        Rule::GuardDeclared,
        Rule::GuardNotDeclared,
        Rule::GuardUnsound,
        Rule::GuardIgnored,
        Rule::NotOpenRpc,
        Rule::UnreadableNeeded,
        Rule::UnreadableOther,
        Rule::MethodMissing,
        Rule::Other,
        Rule::PassedOver,
    ];

    /// The rule's row.
    pub(crate) fn row(self) -> Row {
        use Ruling::{Breaking, Fine, Note};
        use Side::{Connection, Document, Guard, Params, Results};
        match self {
            Rule::Unreachable => row(
                "unreachable",
                Connection,
                Breaking,
                "the core cannot be reached, stops answering, or answers with bytes that are not one JSON line or under another id",
            ),
            Rule::Envelope => row(
                "envelope",
                Connection,
                Breaking,
                "a reply whose envelope is not JSON-RPC 2.0 (`jsonrpc`, exactly one of `result` and `error`)",
            ),
            Rule::ParamTaken => row(
                "param-taken",
                Params,
                Fine,
                "a param the adapter sends, declared (required or optional) with a schema that takes the value sent",
            ),
            Rule::ParamRefusedValue => row(
                "param-refused-value",
                Params,
                Breaking,
                "a param the adapter sends, declared with a schema that cannot take the value sent",
            ),
            Rule::ParamRequiredNotSent => row(
                "param-required-not-sent",
                Params,
                Breaking,
                "a param the document requires that the adapter does not send on every call",
            ),
            Rule::ParamUndeclared => row(
                "param-undeclared",
                Params,
                Note,
                "a param the adapter sends that the document does not declare",
            ),
            Rule::ParamUndeclaredRefused => row(
                "param-undeclared-refused",
                Params,
                Breaking,
                "the same, where the document refuses params it does not declare (`\"x-additional-params\": false` on the method or at the top)",
            ),
            Rule::ForceOmitted => row(
                "force-omitted",
                Params,
                Note,
                "`force` not declared, or declared optional and unable to take `false`: sends to this core leave it out (`false` is hc's default)",
            ),
            Rule::ParamsByPosition => row(
                "params-by-position",
                Params,
                Breaking,
                "a method that takes its params by position only (`paramStructure: by-position`): the adapter sends them by name",
            ),
            Rule::FieldPromised => row(
                "field-promised",
                Results,
                Fine,
                "a field the adapter needs, promised (under `properties` or in `required`) with the types it decodes, fewer, or none stated",
            ),
            Rule::FieldWider => row(
                "field-wider",
                Results,
                Breaking,
                "a field the adapter needs, promised with a type it cannot decode",
            ),
            Rule::FieldSeen => row(
                "field-seen",
                Results,
                Note,
                "a field the adapter needs that the document does not promise, carried with a type it decodes by every live reply the probe saw",
            ),
            Rule::FieldNotSeen => row(
                "field-not-seen",
                Results,
                Breaking,
                "a field the adapter needs that the document does not promise and that not every live reply carried (or no reply was seen)",
            ),
            Rule::OptionalWider => row(
                "optional-wider",
                Results,
                Breaking,
                "a field the adapter reads when present (`pid`, `started_ms`, a screen's `rows` and `cols`, a send's `started`), declared with a type it cannot decode",
            ),
            Rule::ReplyLacksNeeded => row(
                "reply-lacks-needed",
                Results,
                Breaking,
                "a live reply without a field the adapter needs, or with one of a type it cannot decode",
            ),
            Rule::ReplyOther => row(
                "reply-other",
                Results,
                Note,
                "anything else a live reply differs in from the model: fields missing or added, a version, status, address form or other value outside it",
            ),
            Rule::Pins => row(
                "pins",
                Results,
                Breaking,
                "a hello whose generation or framing is not the pin (1, `plain`)",
            ),
            Rule::ErrorShape => row(
                "error-shape",
                Results,
                Breaking,
                "an error object without the `code` and `data.kind` the adapter tells hc's errors apart by",
            ),
            Rule::ErrorMessage => row(
                "error-message",
                Results,
                Note,
                "an error `message` that is not its kind's name (the adapter only shows it)",
            ),
            Rule::GuardDeclared => row(
                "guard-declared",
                Guard,
                Fine,
                "`terminal.send` declares, once and not deprecated, an `if` that can take `\"idle\"` (an enum holding it, a `const`, a plain `string`)",
            ),
            Rule::GuardNotDeclared => row(
                "guard-not-declared",
                Guard,
                Note,
                "no `if` (or no `terminal.send`): the core must show the guard live (`--guard-check ADDRESS`) before it is accepted",
            ),
            Rule::GuardUnsound => row(
                "guard-unsound",
                Guard,
                Breaking,
                "`terminal.send` or its `if` declared twice or deprecated, or an `if` that cannot take `\"idle\"`",
            ),
            Rule::GuardIgnored => row(
                "guard-ignored",
                Guard,
                Breaking,
                "the live check saw the core take a send whose `if` did not match",
            ),
            Rule::NotOpenRpc => row(
                "not-openrpc",
                Document,
                Breaking,
                "what the core serves as its own document is not OpenRPC (no `methods` array)",
            ),
            Rule::UnreadableNeeded => row(
                "unreadable-needed",
                Document,
                Breaking,
                "a construct the judgement cannot read (an unknown keyword, a `$ref` to another file or to nothing, a `$ref` cycle, nesting past 16 levels) that a param sent, a field needed or the guard depends on",
            ),
            Rule::UnreadableOther => {
                row("unreadable-other", Document, Note, "the same anywhere else")
            }
            Rule::MethodMissing => row(
                "method-missing",
                Document,
                Note,
                "a method the adapter calls that the document does not declare (its params go unjudged; its results are judged as not promised)",
            ),
            Rule::Other => row(
                "other",
                Document,
                Note,
                "methods, params and fields the adapter neither sends nor reads, and their differences from the model: notes for correcting the model",
            ),
            Rule::PassedOver => row(
                "passed-over",
                Document,
                Fine,
                "descriptions, examples, `x-` keys other than the one above, value bounds and formats (`minimum`, `maxLength`, `pattern`, `format`, …): not read",
            ),
        }
    }

    pub(crate) fn side(self) -> Side {
        self.row().side
    }

    /// A line of this rule makes `--accept` refuse.
    pub(crate) fn breaks(self) -> bool {
        self.row().verdict == Ruling::Breaking
    }

    pub(crate) fn id(self) -> &'static str {
        self.row().id
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of the table under `## Checking a real hc` in
    /// docs/operations.md: `| rule | side | case | verdict |`, the rule
    /// and the verdict in backticks.
    fn documented() -> Vec<(String, String, String, String)> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operations.md");
        let text = std::fs::read_to_string(path).expect("docs/operations.md");
        let section = text
            .split("\n## ")
            .find(|s| s.starts_with("Checking a real hc"))
            .expect("the section");
        let start = section
            .find("| rule | side | case | verdict |")
            .expect("the judgement's table");
        section[start..]
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|line| {
                let cells: Vec<String> = line
                    .trim_matches('|')
                    .split(" | ")
                    .map(|c| c.trim().to_owned())
                    .collect();
                assert_eq!(cells.len(), 4, "{line}");
                let plain = |c: &str| c.trim_matches('`').to_owned();
                (
                    plain(&cells[0]),
                    cells[1].clone(),
                    cells[2].clone(),
                    plain(&cells[3]),
                )
            })
            .collect()
    }

    #[test]
    fn the_docs_table_is_the_codes_table() {
        let code: Vec<(String, String, String, String)> = Rule::ALL
            .iter()
            .map(|r| {
                let row = r.row();
                (
                    row.id.to_owned(),
                    row.side.name().to_owned(),
                    row.case.to_owned(),
                    row.verdict.name().to_owned(),
                )
            })
            .collect();
        assert_eq!(documented(), code);
    }

    #[test]
    fn every_rule_is_listed_once_and_named_once() {
        for (i, rule) in Rule::ALL.iter().enumerate() {
            assert!(!Rule::ALL[..i].contains(rule), "{rule:?} twice");
            assert!(
                !Rule::ALL[..i].iter().any(|r| r.id() == rule.id()),
                "{} twice",
                rule.id()
            );
        }
    }
}
