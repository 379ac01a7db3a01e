//! The one error type of the core client. Every message says what happened,
//! where (the socket path, the hc method) and what the operator can do.

use std::path::PathBuf;

use serde_json::Value;

use super::core_id::CoreId;
use super::share::{Class, InUse};
use super::wire::{self, ErrorKind, Method};

/// Why a call to hc failed. Whether the failure happened before or after a
/// `terminal.send` request reached the socket is tracked separately, by
/// [`super::client::SendError`].
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// Nothing exists at the configured socket path.
    #[error("no hc socket at {path}: start hc, or fix socketPath in the config")]
    SocketMissing {
        /// The socket path.
        path: PathBuf,
    },

    /// A file exists at the path but nobody accepts connections on it.
    #[error(
        "nobody is listening on {path} (stale socket or not a socket): start hc, or fix socketPath"
    )]
    NotListening {
        /// The socket path.
        path: PathBuf,
    },

    /// The path is a directory or a regular file, not a socket.
    #[error(
        "socketPath {path} is {what}, not a socket: it names hc's socket file itself (such as $XDG_RUNTIME_DIR/herdr-core/hc.sock); fix socketPath in the config"
    )]
    NotASocket {
        /// The socket path.
        path: PathBuf,
        /// What is there instead.
        what: &'static str,
    },

    /// Connecting failed for another reason (permissions, ...).
    #[error("cannot connect to hc at {path}: {source}")]
    Connect {
        /// The socket path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },

    /// The handshake answered with a generation or framing other than the
    /// pins (which no acceptance changes).
    #[error(
        "hc at {path} reports {what} {actual}; this adapter needs exactly {expected}, whatever the version (herdr-core-mcp inspect-core --check-contract{flag} shows how that core differs from the model)"
    )]
    HandshakePin {
        /// ` --config PATH` for the operator's command, or empty.
        flag: String,
        /// The socket path.
        path: PathBuf,
        /// The pin that differs: `generation` or `framing`.
        what: &'static str,
        /// The pinned value.
        expected: String,
        /// The value hc reported.
        actual: String,
    },

    /// The core's version is neither built in nor accepted, or it was
    /// accepted with a document the core no longer serves.
    #[error(
        "hc at {path} is version {version}, which this adapter has not accepted{why}; nothing was sent. Check that core and accept it with: herdr-core-mcp inspect-core --check-contract --accept{flag} (built in: hc {pinned})",
        pinned = wire::PINNED_VERSION
    )]
    Unaccepted {
        /// The socket path.
        path: PathBuf,
        /// The version hc reported, escaped.
        version: String,
        /// Why a listed version is refused after all, or empty.
        why: String,
        /// ` --config PATH`, or empty for the default config.
        flag: String,
    },

    /// hc refused the handshake itself (e.g. `unsupported_generation`).
    #[error("hc at {path} refused the handshake: {detail}; this adapter speaks generation {generation}, plain framing", generation = wire::PINNED_GENERATION)]
    HandshakeRefused {
        /// The socket path.
        path: PathBuf,
        /// hc's error `message`, and its `data` when sent.
        detail: String,
    },

    /// The whole call did not finish within `timeoutMs`.
    #[error(
        "hc at {path} did not answer {method} within {timeout_ms} ms: check hc is responsive, or raise {key}{hint}",
        key = if *method == Method::Send { "sendTimeoutMs" } else { "timeoutMs" },
        hint = not_hc_hint(*method)
    )]
    Timeout {
        /// The socket path.
        path: PathBuf,
        /// The hc method called.
        method: Method,
        /// The bound that passed (`sendTimeoutMs` for a send, else
        /// `timeoutMs`), in ms.
        timeout_ms: u64,
    },

    /// The reply passed the byte cap; reading stopped and the connection was dropped.
    #[error(
        "hc reply exceeded 1 MiB ({method} at {path}); the connection was dropped and nothing more was read"
    )]
    ReplyTooLarge {
        /// The socket path.
        path: PathBuf,
        /// The hc method called.
        method: Method,
    },

    /// The reply broke the JSON-RPC or result-shape rules of the contract.
    #[error("hc at {path} broke the protocol on {method}: {detail}; the connection was discarded{hint}", hint = not_hc_hint(*method))]
    Protocol {
        /// The socket path.
        path: PathBuf,
        /// The hc method called.
        method: Method,
        /// Which rule the reply broke.
        detail: String,
    },

    /// hc closed the connection before answering.
    #[error("hc at {path} closed the connection before answering {method}{hint}", hint = not_hc_hint(*method))]
    Closed {
        /// The socket path.
        path: PathBuf,
        /// The hc method called.
        method: Method,
    },

    /// Reading or writing the socket failed.
    #[error("i/o error talking to hc at {path} during {method}: {source}")]
    Io {
        /// The socket path.
        path: PathBuf,
        /// The hc method called.
        method: Method,
        /// Why.
        #[source]
        source: std::io::Error,
    },

    /// hc answered with a JSON-RPC error.
    #[error("{}", rpc_message(*method, *code, message, kind.as_ref(), data.as_ref()))]
    Rpc {
        /// The hc method called.
        method: Method,
        /// The error's `code`.
        code: i64,
        /// The error's `message`: shown, never read.
        message: String,
        /// Set only when code, message and `data.kind` agree on a documented kind.
        kind: Option<ErrorKind>,
        /// The error's `data`, when sent.
        data: Option<Value>,
    },

    /// The connection picked for a send belongs to another hc incarnation
    /// than the one the send was approved for.
    #[error(
        "hc's core_id is now {actual}, not {expected}: hc restarted; nothing was sent. Approve again with herdr-core-mcp allow{flag} ADDRESS"
    )]
    CoreChanged {
        /// The core_id the send was approved for.
        expected: CoreId,
        /// The core_id the connection's handshake reported.
        actual: CoreId,
        /// ` --config PATH` for the operator's command, or empty.
        flag: String,
    },

    /// No connection of the call's share of the pool came free in time:
    /// the adapter's own calls held them. Nothing was asked of hc.
    #[error("{}", queued_message(*method, *class, *waited_ms, in_use))]
    Queued {
        /// The hc method that was to be called.
        method: Method,
        /// The share of the pool it waited in.
        class: Class,
        /// How long it waited, in ms.
        waited_ms: u64,
        /// What each share held when it gave up.
        in_use: InUse,
    },

    /// No place in the terminal's machine's share came free in time: the
    /// adapter's earlier calls to that machine held them. Nothing was asked
    /// of hc.
    #[error("{}", machine_queued_message(machine, *method, *waited_ms))]
    MachineQueued {
        /// The machine (escaped name).
        machine: String,
        /// The hc method that was to be called.
        method: Method,
        /// How long it waited, in ms.
        waited_ms: u64,
    },
}

fn machine_queued_message(machine: &str, method: Method, waited_ms: u64) -> String {
    format!(
        "this adapter's calls to machine {machine} hold all {share} of the connections one machine may use, and this call ({method}) waited {waited_ms} ms (timeoutMs) for one: nothing was asked of hc. {machine} may be slow or hung; this core's own terminals and other machines are not held up. Try again shortly",
        share = super::machine_share::MACHINE_SHARE
    )
}

fn queued_message(method: Method, class: Class, waited_ms: u64, in_use: &InUse) -> String {
    match class {
        Class::Send => format!(
            "this adapter's own sends hold all of their share of its connections to hc ({in_use}; hc holds a send while a user's draft sits in its terminal), and this send waited {waited_ms} ms (timeoutMs) for one: nothing was written, and hc is not at fault. Send again once an earlier send has ended"
        ),
        _ => format!(
            "this adapter's own calls hold every connection to hc that {} may use ({in_use}), and this call ({method}) waited {waited_ms} ms (timeoutMs) for one: nothing was asked of hc, and hc is not at fault. Try again shortly, or make fewer calls at once",
            class.plural()
        ),
    }
}

/// The handshake is the first thing said on a socket: when it fails this
/// way, the socket may not be hc's at all.
fn not_hc_hint(method: Method) -> &'static str {
    if method == Method::Hello {
        ". Is socketPath really hc's socket? Something answers there, but not as hc 0.1.15 does"
    } else {
        ""
    }
}

fn rpc_message(
    method: Method,
    code: i64,
    message: &str,
    kind: Option<&ErrorKind>,
    data: Option<&Value>,
) -> String {
    let field = |key: &str| {
        data.and_then(|d| d.get(key))
            .and_then(Value::as_str)
            .map_or_else(
                || "?".to_owned(),
                |v| crate::escape::bounded(v, 64).into_owned(),
            )
    };
    match kind {
        Some(ErrorKind::MachineUnavailable) => format!(
            "machine {} is {}: hc cannot reach its terminals now, and nothing was asked of any other terminal (never a fallback, never retried); see list_machines ({method})",
            field("machine"),
            field("state")
        ),
        Some(ErrorKind::MachineLost) => format!(
            "hc lost its connection to machine {} while the call was in flight ({method})",
            field("machine")
        ),
        Some(ErrorKind::NotFound) => format!("hc has no terminal at that address ({method})"),
        Some(ErrorKind::Finished) => format!("the terminal's program has exited ({method})"),
        Some(ErrorKind::Blocked) => {
            format!("the terminal is blocked waiting for a human decision ({method})")
        }
        Some(ErrorKind::Busy) => format!(
            "hc is busy with that terminal's input (queue full or keyboard not quiet) ({method})"
        ),
        Some(ErrorKind::StatusMismatch) => {
            format!("hc refused: terminal status did not match the guard ({method})")
        }
        _ => match wire::standard_code_name(code) {
            Some(name) => format!("hc answered {method} with {name} ({code}): {message}"),
            None => format!("hc answered {method} with error {code}: {message}"),
        },
    }
}

impl CoreError {
    /// hc's documented error kind, when this is a validated hc error reply.
    pub fn hc_kind(&self) -> Option<ErrorKind> {
        match self {
            CoreError::Rpc { kind, .. } => *kind,
            _ => None,
        }
    }
}
