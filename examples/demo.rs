//! The main job end to end, on the bundled simulator: start `hc-sim`, probe
//! it with `inspect-core` as an operator would, approve one agent terminal,
//! then drive `herdr-core-mcp serve` over stdio with an MCP client: list the
//! terminals, send a prompt, watch the reply arrive on screen, and see a
//! send to an unapproved terminal refused. Run it with `scripts/demo.sh`.

// The crate's fence lints are for the library's API; a test or example
// binary has none.
#![allow(
    unreachable_pub,
    missing_docs,
    reason = "an example binary has no API to fence"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use hc_sim::testing::{Options, Simulator};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt, service::RunningService};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let started = Instant::now();
    match run().await {
        Ok(()) => {
            // The simulator plays hc's keyboard-quiet wait (3 s since the
            // last input to a terminal): a send to a terminal just written
            // to waits that long, so a run can take a few seconds more than
            // its calls.
            println!(
                "\ndemo: OK in {:.1} s (hc types a send once its terminal's keyboard has been quiet for 3 s, so runs can take a few seconds longer)",
                started.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("demo: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let adapter = sibling_dir()?.join("herdr-core-mcp");

    step("start the bundled hc simulator: 2 agents, 1 shell");
    let sim = Simulator::start(Options {
        agents: 2,
        shells: 1,
        // hc's own keyboard-quiet wait, not the tests' short one.
        quiet_ms: None,
        ..Options::default()
    })
    .map_err(|e| e.to_string())?;
    print!("{}", sim.ready_line);
    let outcome = session(&adapter, sim.dir.path(), &sim.socket).await;
    // SIGTERM: the simulator kills its programs and removes its sockets.
    sim.stop();
    outcome
}

async fn session(adapter: &Path, dir: &Path, socket: &Path) -> Result<(), String> {
    let probe_config = write_config(dir, "probe.json", &json!({"socketPath": socket}))?;
    step("operator: herdr-core-mcp inspect-core --config probe.json");
    let table = Command::new(adapter)
        .args(["inspect-core", "--config"])
        .arg(&probe_config)
        .output()
        .map_err(|e| e.to_string())?;
    print!("{}", String::from_utf8_lossy(&table.stdout));
    let probe = Command::new(adapter)
        .args(["inspect-core", "--json", "--config"])
        .arg(&probe_config)
        .output()
        .map_err(|e| e.to_string())?;
    let core: Value = serde_json::from_slice(&probe.stdout).map_err(|e| e.to_string())?;
    let t1 = core["terminals"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["address"] == "t1"))
        .ok_or("no terminal t1")?;

    step("operator: approve t1 (core_id + address + created_ms) in config.json");
    let config = json!({
        "socketPath": socket,
        "coreId": core["core_id"],
        "sendMode": "idle-only",
        "sendAllowlist": [{"address": "t1", "created_ms": t1["created_ms"]}],
    });
    println!("{}", serde_json::to_string_pretty(&config).expect("json"));
    let config_path = write_config(dir, "config.json", &config)?;

    step("MCP host: launch herdr-core-mcp serve over stdio");
    let command = tokio::process::Command::new(adapter).configure(|c| {
        c.arg("serve").arg("--config").arg(&config_path);
    });
    let client: Client =
        ().serve(TokioChildProcess::new(command).map_err(|e| e.to_string())?)
            .await
            .map_err(|e| format!("MCP initialize failed: {e}"))?;
    let tools = client.list_all_tools().await.map_err(|e| e.to_string())?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    println!("tools: {names:?}");

    step("list_sessions");
    let listed = call(&client, "list_sessions", json!({})).await?;
    println!("{}", listed.1);

    wait_for(&client, "t1", |s| s["status"] == "idle", "t1 to be idle").await?;
    step("send_prompt to t1 (approved, idle)");
    let sent = call(
        &client,
        "send_prompt",
        json!({"address": "t1", "text": "summarise the build log"}),
    )
    .await?;
    println!("{}", sent.1);
    if sent.0["outcome"] != "sent" {
        return Err(format!("expected the send to succeed: {}", sent.0));
    }

    step("read_output of t1 until the agent is done");
    let screen = wait_for(
        &client,
        "t1",
        |s| {
            s["status"] == "done"
                && s["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("summarise the build log"))
        },
        "the agent's reply",
    )
    .await?;
    println!("{}", screen["text"].as_str().unwrap_or_default());

    step("send_prompt to t3 (a shell, not approved): refused, nothing typed");
    let refused = call(
        &client,
        "send_prompt",
        json!({"address": "t3", "text": "rm -rf /"}),
    )
    .await?;
    println!("{}", refused.1);
    if refused.0["outcome"] != "not_sent" {
        return Err(format!("expected a refusal: {}", refused.0));
    }
    client.cancel().await.map_err(|e| e.to_string())?;
    Ok(())
}

async fn call(client: &Client, tool: &str, args: Value) -> Result<(Value, String), String> {
    let Value::Object(args) = args else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .map_err(|e| format!("{tool}: {e}"))?;
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    Ok((result.structured_content.unwrap_or(Value::Null), text))
}

async fn wait_for(
    client: &Client,
    address: &str,
    done: impl Fn(&Value) -> bool,
    what: &str,
) -> Result<Value, String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (screen, _) = call(client, "read_output", json!({"address": address})).await?;
        if done(&screen) {
            return Ok(screen);
        }
        if Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}: {screen}"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn write_config(dir: &Path, name: &str, config: &Value) -> Result<PathBuf, String> {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(config).expect("json"))
        .map_err(|e| e.to_string())?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| e.to_string())?;
    Ok(path)
}

/// target/<profile>/, where the adapter binary sits beside `examples/`.
fn sibling_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .ok_or_else(|| "cannot locate the build directory".to_owned())
}

fn step(what: &str) {
    println!("\n== {what}");
}
