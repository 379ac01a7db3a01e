//! The send authority the config holds: the send modes, and the approved
//! terminal lifetimes with what each may be sent.

use std::collections::HashMap;

use super::error::{Invalid, invalid};
use super::raw::RawLifetime;
use super::send_mode::SendMode;
use crate::hc::CoreId;

/// One terminal lifetime: hc reuses addresses, so the address alone never
/// approves anything.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TerminalLifetime {
    /// The terminal's address.
    pub address: String,
    /// hc's `created_ms` of the lifetime: when it started, in ms since the
    /// Unix epoch.
    pub created_ms: i64,
}

/// What the operator approved for one lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Approval {
    /// TAB and LF may be sent: only for programs that read a paste as one
    /// input (agent CLIs with bracketed paste), never for shells.
    pub multiline: bool,
    /// How it may be prompted, when the entry says (`allow --mode`);
    /// otherwise the top-level `sendMode`.
    pub send_mode: Option<SendMode>,
    /// Each prompt waits for a human's confirmation through the MCP
    /// client (`allow --confirm`).
    pub confirm: bool,
}

impl Approval {
    /// The mode sends to this lifetime use under `default` (the top level).
    pub fn mode(&self, default: SendMode) -> SendMode {
        self.send_mode.unwrap_or(default)
    }
}

/// The approvals, keyed by lifetime, and the machine core each approval
/// of a machine's terminal was bound to. A lifetime listed twice must say
/// the same thing both times.
pub(super) fn allowlist(entries: Vec<RawLifetime>) -> Result<Approvals, Invalid> {
    let mut approvals = HashMap::new();
    let mut machine_cores = HashMap::new();
    for (i, entry) in entries.into_iter().enumerate() {
        if let Err(why) = crate::hc::wire::check_address(&entry.address) {
            return Err(invalid(
                format!("sendAllowlist[{i}].address"),
                format!("{why}: it must be a terminal address such as \"t1\" or \"machine/t7\""),
            ));
        }
        let lifetime = TerminalLifetime {
            address: entry.address,
            created_ms: entry.created_ms,
        };
        if let Some(id) = entry.machine_core_id {
            let field = format!("sendAllowlist[{i}].machineCoreId");
            if crate::hc::wire::machine_of(&lifetime.address).is_none() {
                return Err(invalid(
                    field,
                    "only a machine's terminal (NAME/tN) has a machine core: remove it from this entry",
                ));
            }
            let id = CoreId::try_from(id).map_err(|e| invalid(field.clone(), e.to_string()))?;
            if machine_cores
                .insert(lifetime.clone(), id.clone())
                .is_some_and(|earlier| earlier != id)
            {
                return Err(invalid(
                    field,
                    "lists a lifetime again with another machineCoreId: keep one entry per lifetime",
                ));
            }
        }
        let approval = Approval {
            multiline: entry.multiline,
            send_mode: entry.send_mode,
            confirm: entry.confirm,
        };
        if approvals
            .insert(lifetime, approval)
            .is_some_and(|earlier| earlier != approval)
        {
            return Err(invalid(
                format!("sendAllowlist[{i}]"),
                "lists a lifetime again with another multiline, sendMode or confirm value: keep one entry per lifetime",
            ));
        }
    }
    Ok(Approvals {
        approvals,
        machine_cores,
    })
}

/// The validated `sendAllowlist`.
#[derive(Debug, Clone, Default)]
pub(super) struct Approvals {
    pub approvals: HashMap<TerminalLifetime, Approval>,
    /// `machineCoreId` of the approvals that recorded one.
    pub machine_cores: HashMap<TerminalLifetime, CoreId>,
}
