//! The world most tool tests build on: a simulator, a direct core client
//! for arranging terminal states, and the adapter over stdio (in-process,
//! or the spawned binary when a test reads its log).

use std::path::PathBuf;
use std::time::Duration;

use herdr_core_mcp::HcClient;
use herdr_core_mcp::SendRequest;
use serde_json::{Value, json};

use crate::support::mcp::{self, Client};
use crate::support::{Sim, SimOptions, in_process};

/// A simulator, a direct core client for arranging terminal states, and the
/// adapter over stdio: in-process, or the spawned binary when a test reads
/// its log (`stderr_log`).
pub struct World {
    pub sim: Sim,
    pub hc: HcClient,
    pub client: Client,
    pub stderr_log: Option<PathBuf>,
    audit: Option<in_process::AuditLines>,
}

impl World {
    /// Every terminal the simulator starts with is approved; the adapter
    /// runs in-process.
    pub async fn new(options: SimOptions, extra_config: Value) -> World {
        World::build(options, extra_config, false).await
    }

    /// As [`World::new`], with the adapter binary spawned and its log kept.
    pub async fn spawned(options: SimOptions, extra_config: Value) -> World {
        World::build(options, extra_config, true).await
    }

    async fn build(options: SimOptions, extra_config: Value, spawn: bool) -> World {
        let sim = Sim::start(options);
        let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
        let mut config = json!({"coreId": sim.core_id, "sendAllowlist": approve_all(&hc).await});
        crate::support::merge(&mut config, extra_config);
        let config = sim.config(config);
        let (client, stderr_log, audit) = if spawn {
            let stderr_log = sim.dir.path().join("adapter.stderr");
            (
                mcp::stdio(&config, &stderr_log).await,
                Some(stderr_log),
                None,
            )
        } else {
            let served = in_process::stdio_with((), &config).await;
            (served.client, None, Some(served.audit))
        };
        World {
            sim,
            hc,
            client,
            stderr_log,
            audit,
        }
    }

    /// Sends straight to hc (not through the adapter) to arrange a state.
    pub async fn arrange(&self, address: &str, text: &str) {
        let core = self.hc.hello().await.unwrap().core_id.clone();
        let request = SendRequest {
            address,
            text,
            guard: None,
        };
        self.hc.send(request, &core).await.expect("arranging send");
    }

    /// Waits until the adapter has written `count` audit lines (a spawned
    /// adapter's reach its log through a queue, a moment after the answer)
    /// and returns them.
    pub async fn wait_audit_lines(&self, count: usize) -> Vec<String> {
        crate::support::eventually(&format!("{count} audit lines"), async || {
            let lines = self.audit_lines();
            (lines.len() >= count).then_some(lines)
        })
        .await
    }

    /// The audit lines the adapter wrote (its captured stream, or its log).
    pub fn audit_lines(&self) -> Vec<String> {
        if let Some(audit) = &self.audit {
            return audit.lines();
        }
        let log = self.stderr_log.as_ref().expect("a spawned adapter's log");
        audit_lines(&std::fs::read_to_string(log).unwrap_or_default())
    }
}

/// The audit lines among a log's lines: JSON objects with `"audit"`.
pub fn audit_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.starts_with("{\"audit\":\"send_prompt\""))
        .map(str::to_owned)
        .collect()
}

pub async fn approve_all(hc: &HcClient) -> Value {
    let listed = hc.list(true).await.expect("list for approval");
    listed
        .value
        .terminals
        .iter()
        .map(|t| json!({"address": t.address, "created_ms": t.created_ms}))
        .collect()
}
