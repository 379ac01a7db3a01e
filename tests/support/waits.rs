//! Waiting on terminals and on the wait tools: a status reached, polling
//! stopped, many calls at once, the progress a client receives.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};

use super::mcp::{call, is_error};
use super::world::World;
use super::{Sim, SimOptions};

/// Polls `terminal.get` until `address` reports `status`.
pub async fn wait_status(client: &HcClient, address: &str, status: TerminalStatus) {
    super::eventually(&format!("{address} to become {status}"), async || {
        let record = client.get(address).await.expect("terminal.get").value;
        (record.status == status).then_some(())
    })
    .await;
}

/// Simulator options: `n` agents that each answer after `delay_ms`.
pub fn agents(n: usize, delay_ms: u64) -> SimOptions {
    SimOptions {
        agents: n,
        agent_delay_ms: Some(delay_ms),
        ..SimOptions::default()
    }
}

/// After a wait was cancelled: the simulator sees no more `method` calls.
/// These sleeps are the behaviour under test (an absence of calls can only
/// be watched for): a round already in flight lands within the first
/// 200 ms, and then no call may come for 1.1 s, more than two of the
/// longest poll intervals (500 ms).
pub async fn assert_polling_stopped(sim: &Sim, method: &str) {
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after_cancel = sim.calls(method);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        sim.calls(method),
        after_cancel,
        "{method} went on after cancellation"
    );
}

/// The worst latency of `calls` lockstep `read_output` calls on t2.
pub async fn worst_read_latency(world: &World, calls: usize) -> Duration {
    let mut worst = Duration::ZERO;
    for _ in 0..calls {
        let started = Instant::now();
        let result = call(&world.client, "read_output", json!({"address": "t2"})).await;
        assert!(!is_error(&result), "{result:?}");
        worst = worst.max(started.elapsed());
    }
    worst
}

/// Starts `count` concurrent calls of `tool` with `args`.
pub fn spawn_calls(
    world: &World,
    tool: &'static str,
    args: &Value,
    count: usize,
) -> Vec<tokio::task::JoinHandle<Result<CallToolResult, rmcp::ServiceError>>> {
    (0..count)
        .map(|_| {
            let peer = world.client.peer().clone();
            let request = CallToolRequestParams::new(tool)
                .with_arguments(args.as_object().expect("arguments object").clone());
            tokio::spawn(async move { peer.call_tool(request).await })
        })
        .collect()
}

/// A client that records the progress notifications it receives.
#[derive(Clone, Default)]
pub struct ProgressRecorder(pub Arc<Mutex<Vec<ProgressNotificationParam>>>);

impl ClientHandler for ProgressRecorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}
