//! The params and results of each hc method, and the terminal record
//! (contract §3 and §4): field names and which fields are optional, and
//! the params again as data ([`params_of`]), for the documents the
//! simulator describes itself with (a test holds the two together).

use serde::{Deserialize, Serialize};

use super::{Guard, Method, Status};

/// What a param holds, as this core reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamKind {
    /// The protocol generation asked for (an integer).
    Generation,
    /// The framing asked for (a string; `plain`).
    Framing,
    /// Who is calling: `{name, version}`.
    Client,
    /// A terminal's address (a string).
    Address,
    /// History lines to stitch in (an integer, 0 or more).
    Lines,
    /// Text to paste (a string).
    Text,
    /// A yes or no the caller chooses (`include_finished`, `submit`).
    Flag,
    /// The `if` guard: one of [`Guard::ALL`].
    Guard,
    /// `force`: skip the blocked refusal and the keyboard-quiet wait
    /// (false when left out).
    Force,
}

/// One param this core reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ParamSpec {
    pub name: &'static str,
    /// A call without it is refused.
    pub required: bool,
    pub kind: ParamKind,
}

const fn param(name: &'static str, required: bool, kind: ParamKind) -> ParamSpec {
    ParamSpec {
        name,
        required,
        kind,
    }
}

use ParamKind as K;

const HELLO_PARAMS: [ParamSpec; 3] = [
    param("generation", true, K::Generation),
    param("framing", true, K::Framing),
    param("client", true, K::Client),
];
const LIST_PARAMS: [ParamSpec; 1] = [param("include_finished", true, K::Flag)];
const GET_PARAMS: [ParamSpec; 1] = [param("address", true, K::Address)];
const READ_PARAMS: [ParamSpec; 2] = [
    param("address", true, K::Address),
    param("lines", true, K::Lines),
];
const SEND_PARAMS: [ParamSpec; 5] = [
    param("address", true, K::Address),
    param("text", true, K::Text),
    param("submit", true, K::Flag),
    param("if", false, K::Guard),
    param("force", false, K::Force),
];

/// The params of `method`, as the structs below read them.
pub(crate) fn params_of(method: Method) -> &'static [ParamSpec] {
    match method {
        Method::Hello => &HELLO_PARAMS,
        Method::List => &LIST_PARAMS,
        Method::Get => &GET_PARAMS,
        Method::Read => &READ_PARAMS,
        Method::Send => &SEND_PARAMS,
        Method::Discover | Method::MachineList => &[],
    }
}

/// `hc.hello` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HelloParams {
    pub generation: i64,
    pub framing: String,
    /// Read so that a hello without a valid `client` is refused, as hc
    /// refuses it; the simulator has no use for its value.
    #[expect(dead_code, reason = "required on the wire, unused by the simulator")]
    pub client: ClientInfo,
}

/// Who is calling, as the client says in `hc.hello`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "required on the wire, unused by the simulator")]
pub(crate) struct ClientInfo {
    pub name: String,
    pub version: String,
}

/// `hc.hello` result.
#[derive(Debug, Serialize)]
pub(crate) struct HelloResult<'a> {
    pub core_id: &'a str,
    pub version: &'a str,
    pub generation: u64,
    pub framing: &'a str,
    pub pid: u32,
    pub started_ms: u64,
}

/// `terminal.list` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListParams {
    pub include_finished: bool,
}

/// `terminal.list` result.
#[derive(Debug, Serialize)]
pub(crate) struct ListResult {
    /// This core's records, then those of its connected machines.
    pub terminals: Vec<serde_json::Value>,
}

/// `terminal.get` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetParams {
    pub address: String,
}

/// `terminal.read` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadParams {
    pub address: String,
    pub lines: u64,
}

/// `terminal.read` result.
#[derive(Debug, Serialize)]
pub(crate) struct ReadResult {
    pub address: String,
    pub created_ms: u64,
    pub text: String,
    pub complete: bool,
    pub rows: u16,
    pub cols: u16,
    pub status: Status,
    pub status_seq: u64,
    #[serde(flatten)]
    pub why: StatusWhy,
}

/// Why a status holds (contract §3, optional): the latest root report's
/// `kind` and decoded `msg`, and when the status began. Each is left out
/// while unknown, and all of them by a core that does not pass them on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StatusWhy {
    #[serde(rename = "status_kind", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    #[serde(rename = "status_msg", skip_serializing_if = "Option::is_none")]
    pub msg: Option<String>,
    /// When the status began (ms since the Unix epoch).
    #[serde(rename = "status_ms", skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<u64>,
}

/// `terminal.send` params. `if` and `force` may be left out (`force`
/// then is false, hc's default: a client may leave it out for a core whose
/// document does not declare it).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SendParams {
    pub address: String,
    pub text: String,
    pub submit: bool,
    #[serde(rename = "if", default)]
    pub guard: Option<Guard>,
    #[serde(default)]
    pub force: Option<bool>,
}

/// `terminal.send` result.
#[derive(Debug, Serialize)]
pub(crate) struct SendResult {
    pub address: String,
    pub created_ms: u64,
    pub accepted: bool,
    pub status: Status,
    pub status_seq: u64,
    /// False: draft protection held the send to the end and nothing was
    /// written (model from public clients, unverified).
    pub started: bool,
}

/// The terminal record (contract §3).
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    pub address: String,
    pub created_ms: u64,
    pub finished_ms: Option<u64>,
    pub exit_code: Option<i32>,
    pub status: Status,
    pub status_seq: u64,
    #[serde(flatten)]
    pub why: StatusWhy,
    pub title: String,
    pub cwd: String,
    pub program: String,
    pub submit_key: &'static str,
    pub rows: u16,
    pub cols: u16,
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn sample(kind: ParamKind) -> Value {
        match kind {
            ParamKind::Generation => json!(1),
            ParamKind::Framing => json!("plain"),
            ParamKind::Client => json!({"name": "test", "version": "0"}),
            ParamKind::Address => json!("t1"),
            ParamKind::Lines => json!(0),
            ParamKind::Text => json!("hi"),
            ParamKind::Flag | ParamKind::Force => json!(true),
            ParamKind::Guard => json!("idle"),
        }
    }

    fn reads(method: Method, params: Value) -> bool {
        match method {
            Method::Hello => serde_json::from_value::<HelloParams>(params).is_ok(),
            Method::List => serde_json::from_value::<ListParams>(params).is_ok(),
            Method::Get => serde_json::from_value::<GetParams>(params).is_ok(),
            Method::Read => serde_json::from_value::<ReadParams>(params).is_ok(),
            Method::Send => serde_json::from_value::<SendParams>(params).is_ok(),
            Method::Discover => true,
            // `machine.list` takes no params, and refuses any.
            Method::MachineList => params.as_object().is_some_and(serde_json::Map::is_empty),
        }
    }

    #[test]
    fn the_params_as_data_are_what_the_structs_read() {
        for method in Method::ALL {
            let specs = params_of(method);
            let all: serde_json::Map<String, Value> = specs
                .iter()
                .map(|p| (p.name.to_owned(), sample(p.kind)))
                .collect();
            assert!(reads(method, Value::Object(all.clone())), "{method:?}");
            for spec in specs {
                let mut without = all.clone();
                without.remove(spec.name);
                assert_eq!(
                    reads(method, Value::Object(without)),
                    !spec.required,
                    "{method:?} without {}",
                    spec.name
                );
            }
            let mut extra = all.clone();
            extra.insert("session".into(), json!("s"));
            assert!(
                method == Method::Discover || !reads(method, Value::Object(extra)),
                "{method:?} takes a param it does not name"
            );
        }
    }
}
