//! The hc methods (contract §2 and §4): one connection's handshake state,
//! and one function per method from decoded params to a result or a wire
//! error. Framing, faults and sockets are left to `framing`, `faults` and
//! `server`.

use std::sync::Arc;

use serde_json::Value;

use crate::framing::{Call, decode};
use crate::input::{self, Input, Refusal};
use crate::machines::Machines;
use crate::sim::Sim;
use crate::terminal::Terminal;
use crate::wire::{
    FRAMING_PLAIN, GENERATION, GetParams, HelloParams, HelloResult, ListParams, ListResult,
    MAX_TEXT_BYTES, Method, ReadParams, ReadResult, RpcError, SendParams, SendResult, StatusWhy,
    TERMINAL_COLS, TERMINAL_ROWS,
};

/// `machine.list` takes no params.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NoParams {}

/// Per-connection protocol state.
#[derive(Debug, Default)]
pub(crate) struct Session {
    greeted: bool,
}

/// Answers one call on a connection.
pub(crate) async fn answer(
    sim: &Sim,
    session: &mut Session,
    method: Option<Method>,
    call: &Call,
) -> Result<Value, RpcError> {
    match (method, session.greeted) {
        (Some(Method::Hello), false) => {
            let result = hello(sim, call)?;
            session.greeted = true;
            Ok(result)
        }
        (Some(Method::Hello), true) => Err(RpcError::invalid_request(format!(
            "{} was already answered on this connection",
            Method::Hello.name()
        ))),
        (_, false) => Err(RpcError::handshake_required()),
        (None, true) => Err(RpcError::method_not_found(&call.method)),
        (Some(Method::List), true) => list(sim, call),
        (Some(Method::Get), true) => get(sim, call).await,
        (Some(Method::Read), true) => read(sim, call).await,
        (Some(Method::Send), true) => send(sim, call).await,
        (Some(Method::Discover), true) if sim.discover => Ok(crate::discover::document(sim)),
        (Some(Method::Discover), true) => Err(RpcError::method_not_found(&call.method)),
        (Some(Method::MachineList), true) => {
            let _: NoParams = decode(&call.params)?;
            Ok(sim.machines.list())
        }
    }
}

fn hello(sim: &Sim, call: &Call) -> Result<Value, RpcError> {
    let params: HelloParams = decode(&call.params)?;
    if params.generation != GENERATION as i64 {
        return Err(RpcError::unsupported_generation());
    }
    if params.framing != FRAMING_PLAIN {
        return Err(RpcError::invalid_params(format!(
            "framing `{}` is not supported; generation {GENERATION} speaks only `{FRAMING_PLAIN}`",
            params.framing
        )));
    }
    let identity = &sim.identity;
    to_value(HelloResult {
        core_id: &identity.core_id,
        version: &sim.version,
        generation: GENERATION,
        framing: FRAMING_PLAIN,
        pid: identity.pid,
        started_ms: identity.started_ms,
    })
}

fn list(sim: &Sim, call: &Call) -> Result<Value, RpcError> {
    let params: ListParams = decode(&call.params)?;
    let mut terminals = sim
        .registry
        .list(params.include_finished)
        .iter()
        .map(|terminal| to_value(sim.record(terminal)))
        .collect::<Result<Vec<_>, _>>()?;
    terminals.extend(sim.machines.records(params.include_finished));
    to_value(ListResult { terminals })
}

/// The machine's answer when `address` is a terminal of a machine
/// (`NAME/tN`, contract §8), `None` when it is this core's own.
async fn forwarded(
    sim: &Sim,
    method: Method,
    address: &str,
    call: &Call,
) -> Option<Result<Value, RpcError>> {
    let remote = Machines::is_remote(address) && sim.registry.get(address).is_none();
    match remote {
        true => Some(
            sim.machines
                .forward(method, address, call.params.clone())
                .await,
        ),
        false => None,
    }
}

async fn get(sim: &Sim, call: &Call) -> Result<Value, RpcError> {
    let params: GetParams = decode(&call.params)?;
    if let Some(answer) = forwarded(sim, Method::Get, &params.address, call).await {
        return answer;
    }
    let terminal = find(sim, &params.address)?;
    to_value(sim.record(&terminal))
}

async fn read(sim: &Sim, call: &Call) -> Result<Value, RpcError> {
    let params: ReadParams = decode(&call.params)?;
    if let Some(answer) = forwarded(sim, Method::Read, &params.address, call).await {
        return answer;
    }
    let terminal = find(sim, &params.address)?;
    let screen = terminal.read(params.lines);
    to_value(ReadResult {
        address: terminal.address.clone(),
        created_ms: terminal.created_ms,
        text: screen.text,
        complete: screen.complete,
        rows: TERMINAL_ROWS,
        cols: TERMINAL_COLS,
        status: screen.status,
        status_seq: screen.status_seq,
        why: if sim.status_reasons {
            screen.why
        } else {
            StatusWhy::default()
        },
    })
}

async fn send(sim: &Sim, call: &Call) -> Result<Value, RpcError> {
    let params: SendParams = decode(&call.params)?;
    if params.text.len() > MAX_TEXT_BYTES {
        return Err(RpcError::invalid_params(format!(
            "text is {} bytes; hc accepts at most {MAX_TEXT_BYTES}",
            params.text.len()
        )));
    }
    if let Some(answer) = forwarded(sim, Method::Send, &params.address, call).await {
        return answer;
    }
    let terminal = find(sim, &params.address)?;
    let input = Input {
        text: params.text,
        submit: params.submit,
        // `--no-if-guard`: a core without the guard ignores it, as a core
        // that takes unknown params would (the unsafe case).
        guard: params
            .guard
            .filter(|_| sim.if_guard)
            .map(|guard| guard.status()),
        force: params.force.unwrap_or(false),
        force_present: params.force.is_some(),
    };
    let accepted = input::send(&terminal, &input, sim.input_log.as_ref(), sim.patience)
        .await
        .map_err(|refusal| refusal_error(&terminal.address, refusal))?;
    to_value(SendResult {
        address: terminal.address.clone(),
        created_ms: terminal.created_ms,
        accepted: true,
        status: accepted.status,
        status_seq: accepted.status_seq,
        started: accepted.started,
    })
}

/// The wire error for a send (or keystrokes) that did not complete.
pub(crate) fn refusal_error(address: &str, refusal: Refusal) -> RpcError {
    match refusal {
        Refusal::Finished { finished_ms } => RpcError::finished(address, finished_ms),
        Refusal::Mismatch {
            expected,
            actual,
            status_seq,
        } => RpcError::status_mismatch(address, expected, actual, status_seq),
        Refusal::Blocked => RpcError::blocked(address),
        Refusal::Busy => RpcError::busy(address),
        Refusal::Failed(detail) => RpcError::internal(detail),
    }
}

/// The terminal at `address`, live or finished.
pub(crate) fn find(sim: &Sim, address: &str) -> Result<Arc<Terminal>, RpcError> {
    sim.registry
        .get(address)
        .ok_or_else(|| RpcError::not_found(address))
}

fn to_value(result: impl serde::Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(result).map_err(|error| RpcError::internal(error.to_string()))
}
