//! What a first-time operator meets: `doctor`, `allow --dry-run`,
//! `reload`, completions and the man page, the log lines that say what is
//! wrong at start and on refused HTTP requests, and the audit line that no
//! log level switches off.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::mcp::{self, TEST_TOKEN};
use crate::support::waits::wait_status;
use crate::support::world::{approve_all, audit_lines};
use crate::support::{Sim, SimOptions, eventually, run_adapter};
use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;

/// `doctor`'s exit code and its report with the run's ids scrubbed.
fn doctor(sim: Option<&Sim>, config: &std::path::Path, env: &[(&str, &str)]) -> (i32, String) {
    let (code, stdout, stderr) =
        run_adapter(&["doctor", "--config", config.to_str().unwrap()], env);
    let mut shown = format!("{stdout}{stderr}");
    shown = shown.replace(config.parent().unwrap().to_str().unwrap(), "[dir]");
    if let Some(sim) = sim {
        shown = shown.replace(&sim.core_id, "[core_id]");
    }
    (code, scrub_numbers(&shown))
}

/// Creation times (13-digit unix ms) and ports, which differ per run.
fn scrub_numbers(text: &str) -> String {
    let mut out = String::new();
    let mut digits = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        match digits.len() {
            13 => out.push_str("[ms]"),
            _ => out.push_str(&digits),
        }
        digits.clear();
        out.push(c);
    }
    out.pop();
    out
}

async fn approved_sim() -> (Sim, HcClient, Value) {
    let sim = Sim::start(SimOptions::agents(2));
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    for a in ["t1", "t2"] {
        wait_status(&hc, a, TerminalStatus::Idle).await;
    }
    let allowlist = approve_all(&hc).await;
    (sim, hc, allowlist)
}

#[tokio::test]
async fn doctor_passes_a_healthy_setup_and_names_every_fix_otherwise() {
    let (sim, _hc, allowlist) = approved_sim().await;
    let healthy = sim.config(json!({"coreId": sim.core_id, "sendAllowlist": allowlist}));
    let (code, report) = doctor(Some(&sim), &healthy, &[]);
    assert_eq!(code, 0, "{report}");
    insta::assert_snapshot!("doctor_healthy", report);

    // hc restarted since the approvals were written: another core.
    let stale = sim.config(json!({
        "coreId": "c-before-the-restart",
        "sendAllowlist": [{"address": "t1", "created_ms": 1_764_480_000_123_i64}],
    }));
    let (code, report) = doctor(Some(&sim), &stale, &[]);
    assert_eq!(code, 1, "{report}");
    insta::assert_snapshot!("doctor_stale_core", report);

    let gone = sim.config(json!({"socketPath": sim.dir.path().join("nothing.sock")}));
    let (code, report) = doctor(Some(&sim), &gone, &[]);
    assert_eq!(code, 1, "{report}");
    insta::assert_snapshot!("doctor_missing_socket", report);

    let writable = sim.config(json!({}));
    std::fs::set_permissions(
        &writable,
        std::os::unix::fs::PermissionsExt::from_mode(0o664),
    )
    .unwrap();
    let (code, report) = doctor(Some(&sim), &writable, &[]);
    // A refused config is a config error, as for every other command.
    assert_eq!(code, 2, "{report}");
    insta::assert_snapshot!("doctor_bad_config", report);
}

#[tokio::test]
async fn doctor_checks_the_http_token_hosts_and_port() {
    let (sim, _hc, allowlist) = approved_sim().await;
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let config = sim.config(json!({
        "coreId": sim.core_id,
        "sendAllowlist": allowlist,
        "transport": "http",
        "http": {"port": port, "allowedHosts": ["127.0.0.1:1"]},
    }));
    let (code, report) = doctor(
        Some(&sim),
        &config,
        &[("HERDR_MCP_TOKEN", "changeme-but-long-enough-to-pass-1234")],
    );
    assert_eq!(code, 1, "{report}");
    let line = |check: &str| {
        report
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(check))
            .unwrap_or_else(|| panic!("no {check} line:\n{report}"))
            .to_owned()
    };
    assert!(
        line("token").starts_with("FAIL") && line("token").contains("placeholder"),
        "{report}"
    );
    assert!(
        line("hosts").starts_with("FAIL") && line("hosts").contains(&format!("127.0.0.1:{port}")),
        "{report}"
    );
    assert!(
        line("port").starts_with("FAIL") && line("port").contains("another http.port"),
        "{report}"
    );
    drop(held);
    let fixed = sim.config(json!({
        "coreId": sim.core_id,
        "sendAllowlist": allowlist,
        "transport": "http",
        "http": {"port": port},
    }));
    let (code, report) = doctor(Some(&sim), &fixed, &[("HERDR_MCP_TOKEN", TEST_TOKEN)]);
    assert_eq!(code, 0, "{report}");
}

#[tokio::test]
async fn allow_dry_run_shows_and_writes_nothing() {
    let sim = Sim::start(SimOptions::agents(1));
    let config = sim.config(json!({}));
    let before = std::fs::read(&config).unwrap();
    let (code, stdout, stderr) = run_adapter(
        &[
            "allow",
            "--dry-run",
            "--config",
            config.to_str().unwrap(),
            "t1",
        ],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("dry run") && stdout.contains(&sim.core_id),
        "{stdout}"
    );
    assert!(stdout.contains("\"sendAllowlist\""), "{stdout}");
    assert_eq!(std::fs::read(&config).unwrap(), before, "a dry run wrote");
}

#[tokio::test]
async fn reload_signals_the_serve_of_that_config_and_only_it() {
    let (sim, _hc, _) = approved_sim().await;
    let config = sim.config(json!({}));
    let other = sim.config(json!({}));
    let (code, _, stderr) = run_adapter(&["reload", "--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 1, "no serve yet: {stderr}");
    assert!(
        stderr.contains("no running herdr-core-mcp serve"),
        "{stderr}"
    );
    let log = sim.dir.path().join("reload.stderr");
    let (client, pid) = mcp::stdio_process((), &config, &log).await;
    let other_log = sim.dir.path().join("other.stderr");
    let (other_client, _) = mcp::stdio_process((), &other, &other_log).await;
    let (code, stdout, stderr) =
        run_adapter(&["reload", "--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(&format!("(pid {pid})")), "{stdout}");
    eventually("the reload in the log", async || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("config reloaded")
            .then_some(())
    })
    .await;
    let others = std::fs::read_to_string(&other_log).unwrap_or_default();
    assert!(!others.contains("config reloaded"), "{others}");
    drop((client, other_client));
}

#[test]
fn completions_and_the_man_page_come_from_the_command_line() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, stdout, stderr) = run_adapter(&["completions", shell], &[]);
        assert_eq!(code, 0, "{shell}: {stderr}");
        for word in ["doctor", "inspect-core", "multiline", "dry-run"] {
            assert!(stdout.contains(word), "{shell} completions lack {word}");
        }
    }
    let (code, stdout, _) = run_adapter(&["man"], &[]);
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with(".ie") && stdout.contains("herdr\\-core\\-mcp"),
        "{stdout}"
    );
    assert!(
        stdout.contains("doctor") && stdout.contains("reload"),
        "{stdout}"
    );
}

#[tokio::test]
async fn no_log_level_switches_off_the_audit_line() {
    let (sim, _hc, allowlist) = approved_sim().await;
    let config = sim.config(json!({"coreId": sim.core_id, "sendAllowlist": allowlist}));
    for (n, rust_log) in ["off", "warn", "herdr_core_mcp=debug", "error,rmcp=trace"]
        .iter()
        .enumerate()
    {
        let log = sim.dir.path().join(format!("audit-{n}.stderr"));
        let client = mcp::stdio_logging(&config, &log, rust_log).await;
        mcp::send_prompt(&client, "t2", "hello").await;
        // The line reaches stderr through the log queue, a moment after the
        // answer.
        let lines = eventually("the audit line on stderr", async || {
            let lines = audit_lines(&std::fs::read_to_string(&log).unwrap_or_default());
            (!lines.is_empty()).then_some(lines)
        })
        .await;
        client.cancel().await.unwrap();
        assert_eq!(lines.len(), 1, "RUST_LOG={rust_log}: {lines:?}");
    }
}

/// The line `serve` logs after its start-up probe of hc.
async fn start_probe_line(log: &Path) -> String {
    eventually("the start probe line", async || {
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .find(|l| l.contains("core_id") && l.contains("approval"))
            .map(str::to_owned)
    })
    .await
}

#[tokio::test]
async fn serve_says_at_start_what_it_found() {
    let (sim, _hc, allowlist) = approved_sim().await;
    let wrong = sim.config(json!({"coreId": "c-of-yesterday", "sendAllowlist": allowlist}));
    let log = sim.dir.path().join("start-wrong.stderr");
    let (client, _) = mcp::stdio_process((), &wrong, &log).await;
    let line = start_probe_line(&log).await;
    assert!(
        line.contains("does NOT match") && line.contains("0 of 2 approval"),
        "{line}"
    );
    drop(client);
    let right = sim.config(json!({"coreId": sim.core_id, "sendAllowlist": allowlist}));
    let log = sim.dir.path().join("start-right.stderr");
    let (client, _) = mcp::stdio_process((), &right, &log).await;
    let line = start_probe_line(&log).await;
    assert!(
        line.contains("coreId matches") && line.contains("2 of 2 approval"),
        "{line}"
    );
    drop(client);
    let absent = sim.config(json!({"socketPath": sim.dir.path().join("later.sock")}));
    let log = sim.dir.path().join("start-absent.stderr");
    let (client, _) = mcp::stdio_process((), &absent, &log).await;
    eventually("the unreachable line", async || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("not reachable")
            .then_some(())
    })
    .await;
    drop(client);
}

#[tokio::test]
async fn http_refusals_are_logged_with_reason_and_host_never_the_token() {
    let sim = Sim::start(SimOptions::default());
    let stderr_log = sim.dir.path().join("refusals.stderr");
    let config = |port: u16| {
        sim.config(json!({
            "transport": "http",
            // Only the proxy's name: the port of 127.0.0.1 is missing.
            "http": {"port": port, "allowedHosts": ["mcp.example.net", "127.0.0.1:1"]},
        }))
    };
    let adapter = mcp::http(config, &stderr_log).await;
    let port = adapter.port;
    let post = |host: &str, token: &str| {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let send = |request: String| async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut reply = Vec::new();
        let _ = stream.read_to_end(&mut reply).await;
        String::from_utf8_lossy(&reply).into_owned()
    };
    let forbidden = send(post(&format!("127.0.0.1:{port}"), TEST_TOKEN)).await;
    assert!(forbidden.starts_with("HTTP/1.1 403"), "{forbidden}");
    let wrong_token = "Wr0ng-t0ken-NOT-the-configured-one-9x";
    let unauthorized = send(post("mcp.example.net", wrong_token)).await;
    assert!(unauthorized.starts_with("HTTP/1.1 401"), "{unauthorized}");
    // A flood of refusals: counted, not all logged.
    for _ in 0..200 {
        send(post("evil\u{202e}elpmaxe.example", "x")).await;
    }
    let log = eventually("the refusal lines", async || {
        let log = std::fs::read_to_string(&stderr_log).unwrap_or_default();
        log.contains("suppressed_since_last").then_some(log)
    })
    .await;
    assert!(
        log.contains("names the listening port") && log.contains(&format!("127.0.0.1:{port}")),
        "no start warning about the port:\n{log}"
    );
    let refused: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("HTTP request refused"))
        .collect();
    assert!(
        refused[0].contains("status=403") && refused[0].contains(&format!("host=127.0.0.1:{port}")),
        "{}",
        refused[0]
    );
    assert!(refused[1].contains("status=401") && refused[1].contains("bearer token"));
    assert!(
        refused.len() < 60,
        "{} refusal lines for 202 refusals",
        refused.len()
    );
    assert!(
        !log.contains(TEST_TOKEN) && !log.contains(wrong_token),
        "a token reached the log"
    );
    assert!(
        !log.contains('\u{202e}'),
        "a raw bidi override reached the log"
    );
    assert!(log.contains("evil\\u{202e}elpmaxe.example"), "{log}");
}

#[tokio::test]
async fn inspect_core_marks_the_approved_terminals() {
    let sim = Sim::start(SimOptions::agents(2));
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    let t1 = hc.get("t1").await.unwrap().value.created_ms;
    let config = sim.config(json!({
        "coreId": sim.core_id,
        "sendAllowlist": [{"address": "t1", "created_ms": t1, "multiline": true}],
    }));
    let (code, stdout, stderr) = run_adapter(
        &[
            "inspect-core",
            "--json",
            "--config",
            config.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let marks: Vec<(Value, Value)> = doc["terminals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["approved"].clone(), t["multiline_allowed"].clone()))
        .collect();
    assert_eq!(
        marks,
        [(json!(true), json!(true)), (json!(false), json!(false))]
    );
}

/// A key a reload cannot change, edited under a running serve: `reload`
/// names it (and still applies the rest), `doctor` fails that serve; back
/// to what it started with, both are quiet about it.
#[tokio::test]
async fn reload_and_doctor_name_the_keys_that_need_a_restart() {
    let (sim, _hc, _) = approved_sim().await;
    let config = sim.config(json!({}));
    let path = config.to_str().unwrap();
    let started = std::fs::read_to_string(&config).unwrap();
    let log = sim.dir.path().join("restart.stderr");
    let (client, pid) = mcp::stdio_process((), &config, &log).await;
    let mut edited: serde_json::Value = serde_json::from_str(&started).unwrap();
    edited["socketPath"] = json!(sim.dir.path().join("elsewhere.sock"));
    edited["timeoutMs"] = json!(7000);
    std::fs::write(&config, serde_json::to_vec_pretty(&edited).unwrap()).unwrap();

    let (code, stdout, stderr) = run_adapter(&["reload", "--config", path], &[]);
    assert_eq!(code, 0, "{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("RESTART NEEDED"))
        .unwrap_or_else(|| panic!("no restart line:\n{stdout}"));
    assert!(line.contains(&format!("(pid {pid})")), "{line}");
    assert!(
        line.contains("socketPath") && line.contains("timeoutMs"),
        "{line}"
    );
    let (code, stdout, _) = run_adapter(&["doctor", "--config", path], &[]);
    assert_ne!(code, 0, "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("FAIL serve") && l.contains("socketPath")),
        "{stdout}"
    );

    std::fs::write(&config, &started).unwrap();
    let (_, stdout, _) = run_adapter(&["reload", "--config", path], &[]);
    assert!(!stdout.contains("RESTART NEEDED"), "{stdout}");
    let (_, stdout, _) = run_adapter(&["doctor", "--config", path], &[]);
    assert!(
        stdout.contains(&format!("ok   serve      serve (pid {pid})")),
        "{stdout}"
    );
    drop(client);
}

/// `doctor`'s exit codes are the ones docs/operations.md gives: 0 with no
/// FAIL line, 1 with one, 2 when the config itself is refused.
#[tokio::test]
async fn doctor_exits_as_the_docs_say() {
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/operations.md"),
    )
    .unwrap();
    assert!(
        docs.contains("`doctor` exits 0 when no line is a `FAIL`, 1 when one is, and 2 when the config itself is refused"),
        "docs/operations.md no longer says doctor's exit codes"
    );
    let (sim, _hc, _) = approved_sim().await;
    let healthy = sim.config(json!({}));
    let (code, out, _) = run_adapter(&["doctor", "--config", healthy.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{out}");
    let failing = sim.config(json!({"socketPath": sim.dir.path().join("nobody.sock")}));
    let (code, out, _) = run_adapter(&["doctor", "--config", failing.to_str().unwrap()], &[]);
    assert_eq!(code, 1, "{out}");
    let refused = sim.config(json!({}));
    std::fs::set_permissions(
        &refused,
        std::os::unix::fs::PermissionsExt::from_mode(0o666),
    )
    .unwrap();
    let (code, out, _) = run_adapter(&["doctor", "--config", refused.to_str().unwrap()], &[]);
    assert_eq!(code, 2, "{out}");
}
