//! `list_machines`: the machines the core added (contract §8) that this
//! adapter shows, each with its connection state, its own core when known,
//! and how many of its live terminals are listed and approved.

use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::app::App;
use crate::config::TerminalLifetime;
use crate::escape::printable;
use crate::hc::wire::MachineState;
use crate::mcp::error::{ToolError, structured};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListMachinesArgs {}

/// One machine.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct MachineView {
    /// How its terminals are addressed: `NAME/t7`. Not an identity: another
    /// machine can be added under the same name (then core_id differs).
    pub name: String,
    /// `connected`, `connecting`, `disconnected`, or `unknown` (a state
    /// word outside these). Only a connected machine's terminals are
    /// listed and can be read, waited on or prompted.
    pub state: MachineState,
    /// When it entered that state (ms since the Unix epoch), as hc says.
    pub since_ms: Option<i64>,
    /// The machine's own hc core, when known (while connected).
    pub core_id: Option<String>,
    /// The machine's hc version, when known.
    pub version: Option<String>,
    /// Its live terminals list_sessions shows now.
    pub terminals: usize,
    /// Of those, how many send_prompt may prompt (send_approved).
    pub approved: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ListMachinesOutput {
    /// This core (the one this adapter's socket reaches).
    pub core_id: String,
    /// False when this core has no machine.list: it adds no machines, and
    /// every terminal is its own.
    pub machines_supported: bool,
    /// The machines shown, sorted by name (the operator's config may hide
    /// some: they are invisible to every tool).
    pub machines: Vec<MachineView>,
    /// This core's own live terminals.
    pub local_terminals: usize,
}

/// The machines, through `app`.
pub(crate) async fn run(app: &App, _args: ListMachinesArgs) -> Result<CallToolResult, ToolError> {
    let listed = app.list(false).await?;
    let machines = app.machines().await?;
    let core = &listed.core.core_id;
    let loaded = app.loaded();
    let approvals = loaded.for_sends().ok();
    let live: Vec<_> = listed
        .value
        .terminals
        .iter()
        .filter(|t| !t.is_finished())
        .collect();
    let approved = |address: &str, created_ms: i64| {
        approvals.is_some_and(|config| {
            config.is_send_approved(
                core,
                &TerminalLifetime {
                    address: address.to_owned(),
                    created_ms,
                },
            )
        })
    };
    let count = |name: Option<&str>| {
        let on = live.iter().filter(|t| t.machine.as_deref() == name);
        let terminals = on.clone().count();
        let approved = on.filter(|t| approved(&t.address, t.created_ms)).count();
        (terminals, approved)
    };
    let output = ListMachinesOutput {
        core_id: core.to_string(),
        machines_supported: machines.is_some(),
        machines: machines
            .unwrap_or_default()
            .into_iter()
            .map(|m| {
                let (terminals, approved) = count(Some(&m.name));
                MachineView {
                    name: m.name,
                    state: m.state,
                    since_ms: m.since_ms,
                    core_id: m.core_id.map(|c| c.to_string()),
                    version: m.version,
                    terminals,
                    approved,
                }
            })
            .collect(),
        local_terminals: count(None).0,
    };
    let text = render(&output);
    Ok(structured(&output, text, false))
}

fn render(output: &ListMachinesOutput) -> String {
    let mut text = format!(
        "core {}: {} terminal(s) of its own",
        output.core_id, output.local_terminals
    );
    if !output.machines_supported {
        text.push_str("; this core has no machines (no machine.list)\n");
        return text;
    }
    text.push_str(&format!("; {} machine(s)\n", output.machines.len()));
    for m in &output.machines {
        text.push_str(&format!(
            "{} {} since_ms={} core={} version={} terminals={} approved={}\n",
            printable(&m.name),
            m.state,
            m.since_ms.map_or("-".to_owned(), |s| s.to_string()),
            m.core_id.as_deref().map_or("-".into(), printable),
            m.version.as_deref().map_or("-".into(), printable),
            m.terminals,
            m.approved,
        ));
    }
    text
}
