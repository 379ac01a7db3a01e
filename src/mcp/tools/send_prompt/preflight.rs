//! The preflight: one `terminal.get` of the target before anything is
//! decided (and, for a machine's terminal, `machine.list`), and what it
//! learned.

use super::machine::{MachineRefusal, MachineSeen};
use super::verdict::Refusal;
use crate::hc::wire::{ErrorKind, StatusContext, TerminalStatus, machine_of};
use crate::hc::{CoreError, CoreId, HcClient};

/// What the preflight learned of the terminal.
#[derive(Debug, Clone)]
pub(super) struct Preflight {
    pub core_id: CoreId,
    pub created_ms: i64,
    pub status: TerminalStatus,
    pub finished: bool,
    /// What the human is shown when asked to confirm (the program's own
    /// words: escaped where shown).
    pub program: Option<String>,
    pub title: Option<String>,
    pub cwd: Option<String>,
    /// Why its status holds and since when, when hc says.
    pub context: StatusContext,
    /// The terminal's machine and what `machine.list` said of it; none
    /// for this core's own terminals.
    pub machine: Option<(String, MachineSeen)>,
}

/// `terminal.get` of `address` through `client`; a failure refuses the
/// send (nothing was dispatched).
pub(super) async fn preflight(client: &HcClient, address: &str) -> Result<Preflight, Refusal> {
    let answer = client.get(address).await.map_err(|e| match e.hc_kind() {
        Some(ErrorKind::NotFound) => Refusal::NotFound(e),
        Some(ErrorKind::MachineUnavailable) => unavailable(address, &e),
        _ => Refusal::PreflightFailed(e),
    })?;
    let record = answer.value;
    // Asked after the record, as close to the send as the preflight gets.
    let machine = match machine_of(address) {
        Some(name) => {
            let listing = client.machines().await.map_err(Refusal::PreflightFailed)?;
            let seen = match listing.value {
                None => MachineSeen::NoMachineList,
                Some(listing) => listing
                    .find(name)
                    .map_or(MachineSeen::NotListed, |m| MachineSeen::Listed(m.clone())),
            };
            Some((name.to_owned(), seen))
        }
        None => None,
    };
    Ok(Preflight {
        core_id: answer.core.core_id.clone(),
        created_ms: record.created_ms,
        status: record.status,
        finished: record.is_finished(),
        program: record.program,
        title: record.title,
        cwd: record.cwd,
        context: record.context,
        machine,
    })
}

/// hc's `machine_unavailable` to the preflight: nothing was forwarded.
fn unavailable(address: &str, e: &CoreError) -> Refusal {
    let data = match e {
        CoreError::Rpc { data, .. } => data.as_ref(),
        _ => None,
    };
    let state = data
        .and_then(|d| d.get("state"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("not connected");
    Refusal::Machine(MachineRefusal::Unavailable {
        machine: machine_of(address).unwrap_or(address).to_owned(),
        state: crate::escape::bounded(state, 32).into_owned(),
    })
}
