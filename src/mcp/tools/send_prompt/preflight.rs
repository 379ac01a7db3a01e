//! The preflight: one `terminal.get` of the target before anything is
//! decided, and what it learned.

use super::verdict::Refusal;
use crate::hc::wire::{ErrorKind, TerminalStatus};
use crate::hc::{CoreId, HcClient};

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
}

/// `terminal.get` of `address` through `client`; a failure refuses the
/// send (nothing was dispatched).
pub(super) async fn preflight(client: &HcClient, address: &str) -> Result<Preflight, Refusal> {
    let answer = client.get(address).await.map_err(|e| {
        if e.hc_kind() == Some(ErrorKind::NotFound) {
            Refusal::NotFound(e)
        } else {
            Refusal::PreflightFailed(e)
        }
    })?;
    let record = answer.value;
    Ok(Preflight {
        core_id: answer.core.core_id.clone(),
        created_ms: record.created_ms,
        status: record.status,
        finished: record.is_finished(),
        program: record.program,
        title: record.title,
        cwd: record.cwd,
    })
}
