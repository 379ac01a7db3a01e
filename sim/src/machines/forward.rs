//! Calls to a machine's terminals (`NAME/tN`): forwarded to that
//! machine's core over a fresh connection whose hello must show the core
//! `machine.list` shows, its answer passed on with this core's address;
//! refused before forwarding when the machine is not connected
//! (`machine_unavailable`), cut with `machine_lost` when the link goes
//! while the call is in flight.

use serde_json::{Map, Value, json};

use super::link::{Answer, Link, Lost};
use super::{Machines, OPEN_WAIT, State};
use crate::wire::{Method, RpcError};

impl Machines {
    /// Whether `address` names a terminal of a machine (`NAME/tN` with a
    /// machine called NAME or any other name: unknown names are not found).
    pub(crate) fn is_remote(address: &str) -> bool {
        address.contains('/')
    }

    /// Forwards `terminal.get`, `terminal.read` or `terminal.send` on
    /// `NAME/tN` to machine NAME's core and passes its answer on, with the
    /// address as this core gives it.
    pub(crate) async fn forward(
        &self,
        method: Method,
        address: &str,
        mut params: Map<String, Value>,
    ) -> Result<Value, RpcError> {
        let (name, remote_address) = address
            .split_once('/')
            .ok_or_else(|| RpcError::not_found(address))?;
        let machine = self.get(name).ok_or_else(|| RpcError::not_found(address))?;
        let mut cut = machine.cut.subscribe();
        let expected = {
            let shown = machine.shown();
            match (&shown.peer, shown.state) {
                (Some(peer), State::Connected) => peer.core_id.clone(),
                (_, state) => return Err(RpcError::machine_unavailable(name, state.name())),
            }
        };
        let unavailable = || RpcError::machine_unavailable(name, State::Connecting.name());
        let opened = tokio::time::timeout(OPEN_WAIT, Link::open(&machine.socket, &self.version));
        let mut link = match opened.await {
            // Another core answers at that socket now: nothing goes to it
            // until the machine's link has greeted it and the list says so.
            Ok(Ok((link, peer))) if peer.core_id == expected => link,
            Ok(Ok(_)) => return Err(unavailable()),
            Ok(Err(_)) | Err(_) => {
                return Err(RpcError::machine_unavailable(
                    name,
                    State::Disconnected.name(),
                ));
            }
        };
        if cut.has_changed().unwrap_or(true) {
            return Err(unavailable());
        }
        params.insert("address".into(), json!(remote_address));
        let answer = tokio::select! {
            biased;
            _ = cut.changed() => return Err(RpcError::machine_lost(address, name)),
            answer = link.call(method.name(), Value::Object(params)) => answer,
        };
        match answer {
            Ok(Answer::Result(mut result)) => {
                if let Some(fields) = result.as_object_mut() {
                    if let Some(Value::String(there)) = fields.get("address") {
                        let here = format!("{name}/{there}");
                        fields.insert("address".into(), json!(here));
                    }
                    fields.insert("machine".into(), json!(name));
                }
                Ok(result)
            }
            Ok(Answer::Error {
                code,
                message,
                mut data,
            }) => {
                if let Some(Value::String(there)) = data.get("address") {
                    let here = format!("{name}/{there}");
                    data.insert("address".into(), json!(here));
                }
                Err(RpcError::from_machine(code, message, data))
            }
            Err(Lost(_)) => Err(RpcError::machine_lost(address, name)),
        }
    }
}
