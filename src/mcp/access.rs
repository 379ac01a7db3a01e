//! Who may call what, in one place: the one tool that writes, whether a
//! caller's scope lets it call a tool, and the audit line of a call to
//! the writer that was refused before the tool could run (for its scope,
//! or for its arguments). The handler's tool listing, the tool itself and
//! the transports all ask here, so no transport needs to know the tool's
//! name or its arguments.

use serde_json::{Map, Value};

use crate::audit::{Audit, Outcome, ReasonCode, RecordedAddress, SendRecord};
use crate::caller::Caller;
use crate::hc::wire::check_address;

/// The one tool that writes to a terminal; every other tool only reads.
pub(crate) const WRITER_TOOL: &str = "send_prompt";

/// Longest argument name an audit line repeats: names, not documents.
const MAX_ARGUMENT_CHARS: usize = 64;

/// Whether `caller` may call (and see) the tool `name`: the writer needs
/// the send scope, every other tool the read scope every caller has.
pub(crate) fn may_call(caller: &Caller, name: &str) -> bool {
    name != WRITER_TOOL || caller.may_send()
}

/// Whether a `tools/call` of `name` by `caller` is one to refuse for its
/// scope before it reaches the tool.
pub(crate) fn refused_for_scope(caller: &Caller, name: &str) -> bool {
    !may_call(caller, name)
}

/// Why a call to the writer was refused before the tool ran.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Refused<'a> {
    /// The caller may only read.
    Scope,
    /// An argument (this one) is missing, of the wrong type or malformed.
    Arguments {
        /// The argument at fault, as the client named it.
        argument: &'a str,
    },
}

/// Writes the one audit line of a call to `tool` that was refused before
/// the tool ran; nothing for a tool that only reads. `arguments` are the
/// call's raw arguments: what of them is recorded is what the audit may
/// hold (an address only when a terminal can have it, else its length and
/// digest; the text's length and digest, never the text).
pub(crate) fn record_refused(
    audit: &Audit,
    tool: &str,
    arguments: Option<&Map<String, Value>>,
    refused: Refused<'_>,
    caller: &Caller,
) {
    if tool != WRITER_TOOL {
        return;
    }
    let get = |key: &str| arguments.and_then(|a| a.get(key));
    let address = match get("address").and_then(Value::as_str) {
        Some(address) if check_address(address).is_ok() => RecordedAddress::Named(address),
        Some(address) => RecordedAddress::Unusable(address),
        None => RecordedAddress::Absent,
    };
    let (reason, argument) = match refused {
        Refused::Scope => (ReasonCode::InsufficientScope, None),
        Refused::Arguments { argument } => (ReasonCode::InvalidArguments, Some(argument)),
    };
    let argument = argument.map(|a| match a.char_indices().nth(MAX_ARGUMENT_CHARS) {
        Some((end, _)) => &a[..end],
        None => a,
    });
    let text = get("text").and_then(Value::as_str);
    audit.record(&SendRecord {
        created_ms: get("created_ms").and_then(Value::as_i64),
        argument,
        ..SendRecord::of(address, text, caller, Outcome::NotSent, reason)
    });
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use super::*;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn recorded(tool: &str, arguments: Value, refused: Refused<'_>) -> Vec<Value> {
        let captured = Captured::default();
        let audit = Audit::open(Box::new(captured.clone()), None).unwrap();
        record_refused(
            &audit,
            tool,
            arguments.as_object(),
            refused,
            &Caller::read_token(),
        );
        let written = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        written
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn only_the_writer_needs_the_send_scope() {
        assert!(may_call(&Caller::read_token(), "read_output"));
        assert!(!may_call(&Caller::read_token(), WRITER_TOOL));
        assert!(may_call(&Caller::token(), WRITER_TOOL));
        assert!(refused_for_scope(&Caller::unproven(), WRITER_TOOL));
    }

    #[test]
    fn a_refused_read_leaves_no_line_and_a_refused_send_exactly_one() {
        let args = json!({"address": "t1"});
        assert!(recorded("read_output", args.clone(), Refused::Scope).is_empty());
        let lines = recorded(WRITER_TOOL, args, Refused::Scope);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["reason"], "insufficient_scope");
        assert_eq!(lines[0]["outcome"], "not_sent");
        assert_eq!(lines[0]["caller"], json!({"kind": "read-token"}));
    }

    #[test]
    fn an_unusable_address_is_recorded_by_length_and_digest_only() {
        let address = format!("t1\u{1b}[2J{}", "x".repeat(4_000));
        let lines = recorded(
            WRITER_TOOL,
            json!({"address": address, "text": "secret prompt", "created_ms": 7}),
            Refused::Arguments {
                argument: "address",
            },
        );
        let line = &lines[0];
        assert_eq!(line["reason"], "invalid_arguments", "{line}");
        assert_eq!(line["argument"], "address", "{line}");
        assert_eq!(line["address"], Value::Null, "{line}");
        assert_eq!(line["address_chars"], address.chars().count(), "{line}");
        assert_eq!(line["address_sha256"].as_str().unwrap().len(), 64, "{line}");
        assert_eq!(line["chars"], 13, "{line}");
        assert_eq!(line["created_ms"], 7, "{line}");
        assert!(!line.to_string().contains("secret"), "{line}");
        assert!(!line.to_string().contains("xxxx"), "{line}");
    }

    #[test]
    fn a_call_without_strings_records_no_address_and_no_digest() {
        let lines = recorded(
            WRITER_TOOL,
            json!({"address": 5, "text": ["a"]}),
            Refused::Arguments {
                argument: "address",
            },
        );
        let line = &lines[0];
        assert_eq!(line["address"], Value::Null, "{line}");
        assert!(line.get("address_chars").is_none(), "{line}");
        assert_eq!(line["chars"], Value::Null, "{line}");
        assert_eq!(line["sha256"], Value::Null, "{line}");
    }
}
