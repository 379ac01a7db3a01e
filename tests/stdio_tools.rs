//! The three tools end to end: rmcp's client drives the real adapter binary
//! over stdio against the real simulator; the simulator's input log is the
//! ground truth for what reached a terminal. By noun:
//! - `world`: a simulator, a core client and the adapter, ready to drive
//!   (used by other modules too, as `crate::stdio_tools::World`).
//! - `sends`: `send_prompt` outcomes by status, refusal, core and fault.
//! - `multiline`: multi-line prompts only where the operator allowed them.
//! - `list_and_read`: `list_sessions` pages and cursors, `read_output` cuts.
//! - `json_rpc`: what stdout carries, and answers to malformed lines.
//!
//! `tools_list_is_pinned` stays here: its snapshot is named after this module.

mod json_rpc;
mod list_and_read;
mod multiline;
mod sends;
mod world;

use serde_json::json;

use crate::support::SimOptions;
pub use world::{World, approve_all, audit_lines};

#[tokio::test]
async fn tools_list_is_pinned() {
    let world = World::new(SimOptions::agents(1), json!({})).await;
    let tools = world.client.list_all_tools().await.expect("tools/list");
    let tools = serde_json::to_value(&tools).unwrap();
    insta::assert_json_snapshot!("tools_list", tools);
}
