//! How a tool's JSON arguments become its typed `…Args`: like rmcp's
//! `Parameters<T>`, but an argument of the wrong type is named in the
//! error (`argument `limit`: invalid type: string "x", expected u32`,
//! `argument `targets[0].after_seq`: …`), which serde alone does not do.
//! The error keeps rmcp's shape (an `invalid_params` whose message starts
//! "failed to deserialize parameters:", which rmcp's router turns into an
//! `isError` result the model reads), and is escaped, since it quotes what
//! the client sent.

use rmcp::ErrorData;
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::escape::printable;

/// The start rmcp's router looks for to answer with an `isError` result
/// rather than a JSON-RPC error.
const PREFIX: &str = "failed to deserialize parameters:";

/// A tool's arguments, deserialized with the path of any wrong one.
pub(super) struct Arguments<T>(pub T);

/// A tool's arguments as the client sent them, for a tool that must answer
/// (and record) even a call whose arguments do not read: `send_prompt`,
/// whose every call leaves an audit line. [`parse_object`] reads them.
pub(super) struct RawArguments(pub Map<String, Value>);

impl<S> FromContextPart<ToolCallContext<'_, S>> for RawArguments {
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        Ok(RawArguments(context.arguments.take().unwrap_or_default()))
    }
}

/// Arguments that did not read as the tool's: the message rmcp would have
/// answered, and the argument at fault.
#[derive(Debug)]
pub(crate) struct BadArguments {
    /// The text of the `isError` result, as [`Arguments`] words it.
    pub message: String,
    /// The argument at fault (`address`, `targets[1].after_seq`), as the
    /// client named it; `arguments` when no one argument is.
    pub argument: String,
}

/// `arguments` as `T`, or what is wrong with them (a clone is read, so
/// the raw arguments stay for the record).
pub(super) fn parse_object<T: DeserializeOwned>(
    arguments: &Map<String, Value>,
) -> Result<T, BadArguments> {
    if let Ok(parsed) = T::deserialize(arguments) {
        return Ok(parsed);
    }
    let Err(e) = serde_path_to_error::deserialize::<_, T>(Value::Object(arguments.clone())) else {
        unreachable!("the same arguments read once already failed")
    };
    let path = e.path().to_string();
    let error = e.into_inner().to_string();
    let argument = match path.as_str() {
        // A missing or unknown field: serde names it in backticks.
        "." => error.split('`').nth(1).unwrap_or("arguments").to_owned(),
        _ if error.starts_with("unknown field `") => {
            error.split('`').nth(1).unwrap_or(&path).to_owned()
        }
        _ => path.clone(),
    };
    Err(BadArguments {
        message: worded(&path, error),
        argument,
    })
}

impl<S, T: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Arguments<T> {
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        let arguments = context.arguments.take().unwrap_or_default();
        parse(Value::Object(arguments))
            .map(Arguments)
            .map_err(|message| ErrorData::invalid_params(message, None))
    }
}

/// A terminal address argument: any string hc could name a terminal with
/// (`t1`, `machine/t7`), checked as `wire::check_address` says (non-empty,
/// bounded, printable), so what the operator and the model see is what is
/// asked of hc.
pub(super) fn address<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let address = <String as serde::Deserialize>::deserialize(d)?;
    crate::hc::wire::check_address(&address)
        .map_err(|why| serde::de::Error::custom(format!("the address {why}")))?;
    Ok(address)
}

/// `value` as `T`, or the error text naming the argument at fault. Read
/// once as it is; only arguments that fail are read again, tracking the
/// path, to name the one at fault (tracking costs a copy of every key).
fn parse<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    if let Ok(parsed) = T::deserialize(&value) {
        return Ok(parsed);
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        worded(&path, e.into_inner().to_string())
    })
}

/// The error text of a wrong argument at `path`.
fn worded(path: &str, error: String) -> String {
    // "." is the arguments object itself (a missing field), and an
    // unknown field's message names it already: both stay as serde
    // words them.
    let named = path == "." || error.contains(&format!("`{path}`"));
    let said = match named {
        true => error,
        false => format!("argument `{path}`: {error}"),
    };
    format!("{PREFIX} {}", printable(&said))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "read only to see how reading fails")]
    struct Args {
        limit: Option<u32>,
        targets: Vec<Target>,
    }

    #[derive(Debug, Deserialize)]
    #[expect(dead_code, reason = "read only to see how reading fails")]
    struct Target {
        after_seq: Option<u64>,
    }

    fn error(value: Value) -> String {
        parse::<Args>(value).unwrap_err()
    }

    #[test]
    fn a_wrong_type_names_its_argument() {
        assert_eq!(
            error(json!({"limit": "x", "targets": []})),
            "failed to deserialize parameters: argument `limit`: invalid type: string \"x\", expected u32"
        );
        let nested = error(json!({"targets": [{}, {"after_seq": true}]}));
        assert!(
            nested.contains("argument `targets[1].after_seq`: invalid type: boolean"),
            "{nested}"
        );
    }

    #[test]
    fn missing_and_unknown_fields_read_as_serde_words_them() {
        assert_eq!(
            error(json!({})),
            "failed to deserialize parameters: missing field `targets`"
        );
        let unknown = error(json!({"targets": [], "force": 1}));
        assert!(
            unknown.ends_with("parameters: unknown field `force`, expected `limit` or `targets`"),
            "{unknown}"
        );
    }

    #[test]
    fn what_the_client_sent_is_escaped() {
        let said = error(json!({"targets": [], "x\u{1b}[2J\u{202e}": 1}));
        assert!(!said.chars().any(crate::escape::is_hazard), "{said}");
        assert!(said.contains("x\\u{001b}[2J\\u{202e}"), "{said}");
    }
}
