//! The operator's path without dead ends: follow-up prompts through
//! `allow --mode normal`, approvals that follow restarts, `revoke
//! --dry-run/--all`, a `doctor` that judges a read-only setup fairly and
//! checks `auditLog` as `serve` would, `init` and `status`, and messages
//! that say what to do.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::mcp::{self, call, send_prompt, structured};
use crate::support::waits::wait_status;
use crate::support::{Sim, SimOptions, in_process, run_adapter};
use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;

fn sim(options: SimOptions) -> (Sim, HcClient) {
    let sim = Sim::start(options);
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    (sim, hc)
}

fn adapter(args: &[&str]) -> (i32, String, String) {
    run_adapter(args, &[])
}

#[tokio::test]
async fn an_agent_approved_with_mode_normal_takes_two_prompts_in_a_row() {
    let (sim, hc) = sim(SimOptions {
        agents: 2,
        ..SimOptions::default()
    });
    let config = sim.config(json!({}));
    let path = config.to_str().unwrap();
    let (code, out, err) = adapter(&["allow", "--config", path, "--mode", "normal", "t1"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("send mode normal"), "{out}");
    assert!(
        out.contains(&format!("reload --config {path}")),
        "the hint repeats --config: {out}"
    );
    let (code, out, err) = adapter(&["allow", "--config", path, "t2"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("approve it with --mode normal for follow-ups"),
        "{out}"
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(
        written["sendAllowlist"][0]["sendMode"], "normal",
        "{written}"
    );
    assert!(
        written["sendAllowlist"][1].get("sendMode").is_none(),
        "{written}"
    );

    let client = in_process::stdio(&config).await;
    let listed = structured(&call(&client, "list_sessions", json!({})).await).clone();
    let modes: Vec<&Value> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["send_mode"])
        .collect();
    assert_eq!(modes, [&json!("normal"), &json!("idle-only")], "{listed}");

    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    let first = send_prompt(&client, "t1", "first task").await;
    assert_eq!(first["outcome"], "sent", "{first}");
    assert_eq!(first["send_mode"], "normal", "{first}");
    wait_status(&hc, "t1", TerminalStatus::Done).await;
    let second = send_prompt(&client, "t1", "a follow-up").await;
    assert_eq!(
        second["outcome"], "sent",
        "a done agent takes a follow-up: {second}"
    );
    assert_eq!(sim.writes_to("t1"), 2);

    // The idle-only agent: one prompt, then a refusal that names the way out.
    wait_status(&hc, "t2", TerminalStatus::Idle).await;
    assert_eq!(
        send_prompt(&client, "t2", "only task").await["outcome"],
        "sent"
    );
    wait_status(&hc, "t2", TerminalStatus::Done).await;
    let refused = send_prompt(&client, "t2", "a follow-up").await;
    assert_eq!(refused["outcome"], "not_sent", "{refused}");
    let reason = refused["reason"].as_str().unwrap();
    assert!(
        reason.contains("may not become idle by itself")
            && reason.contains("herdr-core-mcp allow --mode normal --config ")
            && reason.ends_with(" t2"),
        "{reason}"
    );
    assert_eq!(sim.writes_to("t2"), 1);
}

#[tokio::test]
async fn approvals_follow_restarts_and_revoke_can_preview_and_clear() {
    let (sim, hc) = sim(SimOptions {
        agents: 1,
        shells: 1,
        ..SimOptions::default()
    });
    let config = sim.config(json!({}));
    let path = config.to_str().unwrap();
    assert_eq!(adapter(&["allow", "--config", path, "t1"]).0, 0);
    let old = hc.get("t1").await.unwrap().value.created_ms;
    // t1's program ends and a new one takes the address.
    sim.control("remove", json!({"address": "t1"}));
    let new = sim.control("spawn", json!({"kind": "agent"}));
    assert_eq!(new["address"], "t1");
    let (code, out, err) = adapter(&["doctor", "--config", path]);
    assert_ne!(code, 0);
    assert!(
        out.contains(&format!("revoke --config {path} t1 --created-ms {old}")),
        "doctor names the exact revoke: {out}{err}"
    );
    let (code, out, _) = adapter(&["allow", "--config", path, "t1"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "replaces the approval of an earlier lifetime at t1 (created_ms {old})"
        )),
        "{out}"
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(
        written["sendAllowlist"].as_array().unwrap().len(),
        1,
        "{written}"
    );

    // A terminal that never reported a status: approved, with a warning.
    let shell = hc
        .list(false)
        .await
        .unwrap()
        .value
        .terminals
        .into_iter()
        .find(|t| t.status == TerminalStatus::Unknown)
        .expect("a shell that reports no status");
    let (code, out, _) = adapter(&["allow", "--config", path, &shell.address]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("has never reported a status"), "{out}");

    let before = std::fs::read(&config).unwrap();
    let (code, out, _) = adapter(&["revoke", "--config", path, "--all", "--dry-run"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("would revoke t1") && out.contains("dry run"),
        "{out}"
    );
    assert_eq!(
        std::fs::read(&config).unwrap(),
        before,
        "a dry run writes nothing"
    );
    let (code, out, _) = adapter(&["revoke", "--config", path, "--all"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("revoked 2 approval(s)"), "{out}");
    let written: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(written["sendAllowlist"], json!([]));
}

#[tokio::test]
async fn doctor_passes_a_read_only_setup_and_checks_the_audit_log_as_serve_does() {
    let (sim, _hc) = sim(SimOptions {
        agents: 1,
        ..SimOptions::default()
    });
    let config = sim.config(json!({}));
    let path = config.to_str().unwrap();
    let (code, out, err) = adapter(&["doctor", "--config", path]);
    assert_eq!(code, 0, "a read-only setup is healthy: {out}{err}");
    assert!(
        out.contains("note coreId") && out.contains("read-only"),
        "{out}"
    );
    let (code, out, _) = adapter(&["doctor", "--config", path, "--json"]);
    assert_eq!(code, 0);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["failed"], 0, "{report}");
    assert!(
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["status"] == "note" && c["check"] == "approvals"),
        "{report}"
    );
    // An audit file others can read: doctor says what serve says.
    let audit = sim.dir.path().join("audit.log");
    std::fs::write(&audit, "").unwrap();
    std::fs::set_permissions(&audit, std::fs::Permissions::from_mode(0o644)).unwrap();
    let config = sim.config(json!({"auditLog": audit}));
    let path = config.to_str().unwrap();
    let (code, out, _) = adapter(&["doctor", "--config", path]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL auditLog") && out.contains("chmod 600"),
        "{out}"
    );
    let (code, _, serve_err) = adapter(&["serve", "--config", path]);
    assert_eq!(code, 2);
    assert!(
        serve_err.contains("chmod 600"),
        "serve refuses it the same way: {serve_err}"
    );
}

#[tokio::test]
async fn init_writes_a_private_config_once_and_status_lists_running_serves() {
    let home = tempfile::tempdir().unwrap();
    let env = [
        ("HOME", home.path().to_str().unwrap()),
        ("XDG_CONFIG_HOME", ""),
        ("XDG_RUNTIME_DIR", "/run/user/4242"),
    ];
    let (code, out, err) = run_adapter(&["init", "--transport", "http"], &env);
    assert_eq!(code, 0, "{out}{err}");
    let config = home.path().join(".config/herdr-core-mcp/config.json");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&config), 0o600);
    assert_eq!(mode(config.parent().unwrap()), 0o700);
    assert_eq!(mode(&home.path().join(".config")), 0o700);
    let written: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(written["socketPath"], "/run/user/4242/herdr-core/hc.sock");
    assert_eq!(written["transport"], "http");
    assert!(
        out.contains("inspect-core") && out.contains("claude mcp add --transport http"),
        "{out}"
    );
    let before = std::fs::read(&config).unwrap();
    let (code, _, err) = run_adapter(&["init", "--socket", "/tmp/other.sock"], &env);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(std::fs::read(&config).unwrap(), before, "never overwritten");

    // A running HTTP serve shows up with its port.
    let (sim, _hc) = sim(SimOptions::default());
    let log = sim.dir.path().join("serve.stderr");
    let mut served = mcp::http(
        |port| sim.config(json!({"transport": "http", "http": {"port": port}})),
        &log,
    )
    .await;
    served.ready().await;
    let (code, out, _) = run_adapter(&["status", "--json"], &[]);
    assert_eq!(code, 0);
    let status: Value = serde_json::from_str(&out).unwrap();
    let pid = served.child.id().unwrap();
    let ours = status["serves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["pid"] == pid)
        .unwrap_or_else(|| panic!("serve {pid} not listed: {status}"));
    assert_eq!(ours["transport"], "http", "{ours}");
    assert_eq!(ours["ports"], json!([served.port]), "{ours}");
    assert_eq!(ours["version"], env!("CARGO_PKG_VERSION"), "{ours}");
    let exe = crate::support::adapter_bin();
    assert_eq!(ours["exe"], exe.to_str().unwrap(), "{ours}");
}

#[test]
fn messages_say_what_to_do() {
    let (code, _, err) = adapter(&["serve", "--http"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("the transport is chosen in the config"),
        "{err}"
    );
    let (code, out, _) = run_adapter(
        &["allow", "--help"],
        &[("XDG_CONFIG_HOME", "/home/someone/.cfg")],
    );
    assert_eq!(code, 0);
    assert!(
        out.contains("/home/someone/.cfg/herdr-core-mcp/config.json"),
        "the default config is shown resolved: {out}"
    );
    assert!(
        out.contains("HERDR_MCP_TOKEN") && out.contains("Exit status") && out.contains("Example"),
        "{out}"
    );
    let (code, _, err) = adapter(&["allow", "--mode", "busy", "t1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("[possible values: idle-only, normal]"),
        "{err}"
    );
    assert!(!err.contains("``"), "no doubled backticks: {err}");
}

#[tokio::test]
async fn a_web_server_on_the_socket_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("web.sock");
    let listener = tokio::net::UnixListener::bind(&socket).unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).await;
            let _ = stream
                .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                .await;
        }
    });
    let config = crate::support::write_config(dir.path(), &json!({"socketPath": socket}));
    let path = config.to_str().unwrap().to_owned();
    let (code, _, err) =
        tokio::task::spawn_blocking(move || adapter(&["inspect-core", "--config", &path]))
            .await
            .unwrap();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("answered with HTTP"), "{err}");
    assert!(err.contains("Is socketPath really hc's socket?"), "{err}");
}

#[test]
fn a_wrong_send_mode_in_the_config_is_named_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let config = crate::support::write_config(
        dir.path(),
        &json!({"socketPath": "/tmp/none.sock", "sendMode": "busy"}),
    );
    let (code, _, err) = adapter(&["doctor", "--config", config.to_str().unwrap()]);
    assert_ne!(code, 0);
    let (code, out, _) = adapter(&["inspect-core", "--config", config.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    let (_, _, err2) = adapter(&["inspect-core", "--config", config.to_str().unwrap()]);
    assert!(
        err2.contains("\"busy\" is not one of: idle-only, normal"),
        "{err2}"
    );
    assert!(!err2.contains("``") && !err.contains("``"), "{err2}");
}

#[tokio::test]
async fn doctor_beside_a_running_serve_asks_for_its_token_and_names_it_on_the_port() {
    let (sim, _hc) = sim(SimOptions::default());
    let (served, config) = crate::support::http::serve_process_with_config(&sim).await;
    // This shell has no HERDR_MCP_TOKEN (run_adapter removes it).
    let (code, out, _) = adapter(&["doctor", "--config", config.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    let pid = served.child.id().unwrap();
    assert!(
        out.contains(&format!("a serve of this config is running (pid {pid})"))
            && out.contains("do not make a new one"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "127.0.0.1:{} is held by the running serve of this config (pid {pid})",
            served.port
        )),
        "{out}"
    );
}

#[test]
fn serve_started_by_hand_at_a_terminal_says_what_it_is_for() {
    let dir = tempfile::tempdir().unwrap();
    let config = crate::support::write_config(dir.path(), &json!({"socketPath": "/tmp/none.sock"}));
    let line = "serve speaks MCP on stdin/stdout and is meant to be launched by an MCP host";
    // `script` (util-linux) gives serve a terminal for stdin; its own input
    // is empty, so the terminal closes and serve ends.
    let command = format!(
        "{} serve --config {}",
        crate::support::adapter_bin().display(),
        config.display()
    );
    let output = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script(1) from util-linux");
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains(line), "{said}");
    // Launched by a host (stdin a pipe), it says nothing of the kind.
    let (_, _, err) = adapter(&["serve", "--config", config.to_str().unwrap()]);
    assert!(!err.contains(line), "{err}");
}
