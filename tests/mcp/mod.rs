//! The tools end to end: rmcp's client drives the real adapter over stdio
//! against the real simulator (`support::world`); the simulator's input log
//! is the ground truth for what reached a terminal. By noun:
//! - `sends`: `send_prompt` outcomes by status, refusal, core and fault.
//! - `multiline`: multi-line prompts only where the operator allowed them.
//! - `list_and_read`: `list_sessions` pages and cursors, `read_output` cuts.
//! - `machines`: other machines' terminals, their approvals and their waits.
//! - `json_rpc`: what stdout carries, and answers to malformed lines.
//! - `status_waits`, `output_waits`, `wait_lifetimes`: the bounded waits.
//! - `follow`: `send_prompt` with `follow_ms`: progress, cancel, confirmed.
//! - `send_record`: the audit file of sends.
//! - `send_audit`: one audit line for every `send_prompt` call, counted.
//! - `pattern_costs`: what a hostile `wait_for_output` pattern costs.
//! - `what_users_read`: the answers and error lines, pinned.
//!
//! `tools_list_is_pinned` stays here: its snapshot is named after this module.

mod confirmed_sends;
mod fleet_python;
mod fleet_waits;
mod follow;
mod held_sends;
mod json_rpc;
mod list_and_read;
mod machines;
mod multiline;
mod output_waits;
mod pattern_costs;
mod prompts;
mod send_audit;
mod send_record;
mod sends;
mod status_reasons;
mod status_waits;
mod subscriptions;
mod wait_lifetimes;
mod what_users_read;

use serde_json::json;

use crate::support::SimOptions;
use crate::support::world::World;

#[tokio::test]
async fn tools_list_is_pinned() {
    let world = World::new(SimOptions::agents(1), json!({})).await;
    let tools = world.client.list_all_tools().await.expect("tools/list");
    let tools = serde_json::to_value(&tools).unwrap();
    // Portable to single-`type` dialects (the Inspector's schema check):
    // a nullable value is `anyOf` branches, never a list of types.
    assert!(
        !tools.to_string().contains(r#""type":["#),
        "a type list in a tool schema: {tools}"
    );
    // Every closed set is an `enum`: no `oneOf` of constants.
    assert!(
        !tools.to_string().contains(r#""const":"#),
        "a closed set listed as constants: {tools}"
    );
    // Hosts decide when to ask the user from these hints: a prompt can make
    // an agent change files or reach the network.
    let tool = |name: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .clone()
    };
    let send = tool("send_prompt");
    assert_eq!(send["annotations"]["destructiveHint"], true, "{send}");
    assert_eq!(send["annotations"]["openWorldHint"], true, "{send}");
    // Waits default under the 60 s many hosts allow a call, and say so.
    for wait in ["wait_for_status", "wait_for_output"] {
        let timeout = &tool(wait)["inputSchema"]["properties"]["timeout_ms"];
        assert_eq!(timeout["default"], 50_000, "{wait}: {timeout}");
    }
    insta::assert_json_snapshot!("tools_list", tools);
}
