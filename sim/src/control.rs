//! The control socket (`--control PATH`), for tests: the same line JSON-RPC
//! as the hc socket but with no handshake and no faults, to create, kill and
//! remove terminals, type at a terminal's keyboard, print on a terminal's
//! screen as its program would, read the hc socket's counters, change
//! the faults at run time, and add, remove, disconnect and reconnect
//! machines. Its traffic is not counted.

use std::future::Future;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use crate::faults::Fault;
use crate::framing::{self, Call, Incoming, MAX_REQUEST_BYTES, decode};
use crate::input;
use crate::machines::MachineSpec;
use crate::methods::{find, refusal_error};
use crate::sim::{Sim, TerminalKind};
use crate::wire::{self, RpcError};

const SPAWN: &str = "spawn";
const KILL: &str = "kill";
const REMOVE: &str = "remove";
const TYPE: &str = "type";
const EMIT: &str = "emit";
const STATS: &str = "stats";
const SET_FAULTS: &str = "set_faults";
const RESET_STATS: &str = "reset_stats";
const MACHINE_ADD: &str = "machine.add";
const MACHINE_REMOVE: &str = "machine.remove";
const MACHINE_DISCONNECT: &str = "machine.disconnect";
const MACHINE_CONNECT: &str = "machine.connect";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineParams {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineConnectParams {
    name: String,
    /// How long the machine shows `connected` before its terminals are
    /// listed (as a core that says connected before it has listed them).
    #[serde(default)]
    listing_lag_ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineAddParams {
    name: String,
    socket: std::path::PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpawnParams {
    kind: TerminalKind,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddressParams {
    address: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TypeParams {
    address: String,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EmitParams {
    address: String,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetFaultsParams {
    faults: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoParams {}

/// Serves the control socket until `shutdown` completes.
pub(crate) async fn serve(
    sim: Arc<Sim>,
    listener: UnixListener,
    shutdown: impl Future<Output = ()>,
) {
    crate::server::accept_loop(sim, listener, shutdown, "control", connection).await;
}

async fn connection(sim: Arc<Sim>, stream: UnixStream) {
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    while let Ok(Some(line)) = framing::read_line(&mut reader, MAX_REQUEST_BYTES).await {
        let (id, reply) = match framing::parse(&line) {
            Incoming::Invalid { id, error } => (id, Err(error)),
            Incoming::Call(call) => {
                let reply = answer(&sim, &call).await;
                (call.id, reply)
            }
        };
        let line = wire::response_line(&id, &reply);
        if writer.write_all(line.as_bytes()).await.is_err() {
            return;
        }
    }
}

async fn answer(sim: &Sim, call: &Call) -> Result<Value, RpcError> {
    match call.method.as_str() {
        SPAWN => {
            let params: SpawnParams = decode(&call.params)?;
            let terminal = sim
                .spawn(params.kind)
                .await
                .map_err(|error| RpcError::internal(error.to_string()))?;
            to_value(terminal.record())
        }
        KILL => {
            let params: AddressParams = decode(&call.params)?;
            let terminal = find(sim, &params.address)?;
            if !sim.kill(&terminal).await {
                return Err(RpcError::internal(format!(
                    "{} did not exit after SIGKILL",
                    params.address
                )));
            }
            to_value(terminal.record())
        }
        REMOVE => {
            let params: AddressParams = decode(&call.params)?;
            let terminal = sim
                .remove(&params.address)
                .ok_or_else(|| RpcError::not_found(&params.address))?;
            to_value(terminal.record())
        }
        TYPE => {
            let params: TypeParams = decode(&call.params)?;
            let terminal = find(sim, &params.address)?;
            input::type_keys(&terminal, &params.text)
                .await
                .map_err(|refusal| refusal_error(&terminal.address, refusal))?;
            Ok(json!({ "address": terminal.address, "bytes": params.text.len() }))
        }
        EMIT => {
            let params: EmitParams = decode(&call.params)?;
            let emitted_unix_us = emit(sim, &params)?;
            Ok(json!({ "emitted_unix_us": emitted_unix_us }))
        }
        STATS => {
            let _: NoParams = decode(&call.params)?;
            to_value(sim.stats.snapshot())
        }
        SET_FAULTS => {
            let params: SetFaultsParams = decode(&call.params)?;
            let faults = params
                .faults
                .iter()
                .map(|spec| spec.parse::<Fault>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(RpcError::invalid_params)?;
            let names: Vec<_> = faults.iter().map(Fault::to_string).collect();
            sim.faults.replace(faults);
            Ok(json!({ "faults": names }))
        }
        RESET_STATS => {
            let _: NoParams = decode(&call.params)?;
            sim.stats.reset();
            Ok(json!({}))
        }
        MACHINE_ADD => {
            let params: MachineAddParams = decode(&call.params)?;
            let spec = MachineSpec {
                name: params.name,
                socket: params.socket,
            };
            sim.machines.add(&spec).await
        }
        MACHINE_REMOVE => {
            let params: MachineParams = decode(&call.params)?;
            sim.machines.remove(&params.name)
        }
        MACHINE_DISCONNECT => {
            let params: MachineParams = decode(&call.params)?;
            sim.machines.disconnect(&params.name)
        }
        MACHINE_CONNECT => {
            let params: MachineConnectParams = decode(&call.params)?;
            let lag = std::time::Duration::from_millis(params.listing_lag_ms);
            sim.machines.connect(&params.name, lag).await
        }
        other => Err(RpcError::method_not_found(other)),
    }
}

/// Puts `text` on a terminal's screen as if its program had printed it
/// (OSC filter, VT parser, status reports: the very path of real output);
/// returns when the screen held it, in µs since the Unix epoch.
fn emit(sim: &Sim, params: &EmitParams) -> Result<u64, RpcError> {
    let terminal = find(sim, &params.address)?;
    if let Some(exit) = terminal.exit() {
        return Err(RpcError::finished(&terminal.address, exit.finished_ms));
    }
    terminal
        .apply_output(params.text.as_bytes())
        .ok_or_else(|| {
            RpcError::invalid_params(format!(
                "{} is an idle record: it has no program and no screen to emit on; \
                 emit to an agent, shell or reader terminal",
                terminal.address
            ))
        })
}

fn to_value(result: impl serde::Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(result).map_err(|error| RpcError::internal(error.to_string()))
}
