//! The hc 0.1.15 contract as data: every method name, field name, status,
//! limit and error code the simulator serves lives here and nowhere else, so a
//! correction after checking the real `hc.openrpc.json` is a one-place change.
//! This module does no I/O; it builds and parses JSON values only. By noun:
//! - `method`: the methods and their wire names.
//! - `status`: the statuses, and the ones an `if` guard may name.
//! - `messages`: params and results of each method, and the terminal record.
//! - `error`: JSON-RPC errors in hc's shape.
//! - `lines`: whole response and notification lines.

mod error;
mod lines;
mod messages;
mod method;
mod status;

pub(crate) use error::RpcError;
pub(crate) use lines::{
    hello_fields, notification_line, response_line, result_prefix, status_notification_params,
};
pub(crate) use messages::{
    GetParams, HelloParams, HelloResult, ListParams, ListResult, ParamKind, ParamSpec, ReadParams,
    ReadResult, Record, SendParams, SendResult, StatusWhy, params_of,
};
pub(crate) use method::Method;
pub(crate) use status::{Guard, Status};

/// The only JSON-RPC version hc speaks.
pub(crate) const JSONRPC_VERSION: &str = "2.0";
/// The hc version the simulator claims to be.
pub(crate) const HC_VERSION: &str = "0.1.15";
/// The protocol generation of hc 0.1.15 (the only one it supports).
pub(crate) const GENERATION: u64 = 1;
/// The only framing of generation 1: one JSON object per `\n`-ended line.
pub(crate) const FRAMING_PLAIN: &str = "plain";
/// The submit key of every simulated terminal.
pub(crate) const SUBMIT_KEY_ENTER: &str = "enter";
/// What the `enter` submit key writes to the program.
pub(crate) const ENTER_BYTES: &[u8] = b"\r";
/// hc caps `terminal.send` text at 64 KiB (contract §4).
pub(crate) const MAX_TEXT_BYTES: usize = 65_536;
/// Terminal height of every simulated terminal.
pub(crate) const TERMINAL_ROWS: u16 = 40;
/// Terminal width of every simulated terminal.
pub(crate) const TERMINAL_COLS: u16 = 120;
/// Bracketed paste start marker (written around a paste when the program
/// enabled mode 2004).
pub(crate) const PASTE_START: &[u8] = b"\x1b[200~";
/// Bracketed paste end marker.
pub(crate) const PASTE_END: &[u8] = b"\x1b[201~";
/// Method of the notification line the `notification` fault injects (hc
/// 0.1.15 itself never sends notifications on request connections).
pub(crate) const STATUS_NOTIFICATION: &str = "terminal.status";
