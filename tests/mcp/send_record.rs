//! The send record never misleads: input that landed in another lifetime
//! says so, there is no unaudited send when an audit file is configured,
//! the audit file cannot be redirected, and logging never blocks an answer.

use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

use crate::support::mcp::{self, Client, is_error, structured};
use crate::support::waits::wait_status;
use crate::support::world::{World, approve_all};
use crate::support::{Sim, SimOptions, adapter_bin, run_adapter};
use herdr_core_mcp::Audit;
use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;

/// Runs `serve` (stdio, stdin at EOF) on a config naming `audit_log`, and
/// returns its exit code and stderr: a refused audit file exits 2 at start.
fn serve_with_audit_log(sim: &Sim, audit_log: &Path) -> (i32, String) {
    let config = sim.config(json!({"auditLog": audit_log}));
    let (code, _, stderr) = run_adapter(&["serve", "--config", config.to_str().unwrap()], &[]);
    (code, stderr)
}

#[tokio::test]
async fn input_that_lands_in_a_new_lifetime_is_sent_flagged_and_audited_with_both() {
    let world = World::new(
        SimOptions {
            agents: 1,
            slow_reply_ms: Some(2_000),
            ..SimOptions::default()
        },
        json!({}),
    )
    .await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    let approved = world.hc.list(false).await.unwrap().value.terminals[0].created_ms;
    // The preflight's reply is held back; meanwhile t1 ends and a new
    // agent takes its address, as hc reuses addresses.
    world.sim.set_faults(&["slow-reply:terminal.get"]);
    let gets = world.sim.calls("terminal.get");
    let peer = world.client.peer().clone();
    let sending = tokio::spawn(async move {
        let args = json!({"address": "t1", "text": "meant for the old agent"});
        peer.call_tool(
            rmcp::model::CallToolRequestParams::new("send_prompt")
                .with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .expect("send_prompt answered")
    });
    world.sim.wait_for_calls("terminal.get", gets).await;
    world.sim.control("remove", json!({"address": "t1"}));
    let replacement = world.sim.control("spawn", json!({"kind": "agent"}));
    assert_eq!(replacement["address"], "t1", "{replacement}");
    let landed = replacement["created_ms"].as_i64().unwrap();
    wait_listed_idle(&world.hc, "t1").await;
    let result = sending.await.unwrap();
    let out = structured(&result);
    assert_eq!(out["outcome"], "sent", "{out}");
    assert_eq!(out["reason_code"], "accepted_other_lifetime", "{out}");
    assert!(is_error(&result), "{result:?}");
    assert_eq!(out["created_ms"], approved, "{out}");
    assert_eq!(out["landed_created_ms"], landed, "{out}");
    let text = mcp::text(&result);
    assert!(text.contains("ANOTHER TERMINAL"), "{text}");
    let audit: Vec<Value> = world
        .audit_lines()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let line = audit.last().expect("an audit line");
    assert_eq!(line["reason"], "accepted_other_lifetime", "{line}");
    assert_eq!(line["created_ms"], approved, "{line}");
    assert_eq!(line["landed_created_ms"], landed, "{line}");
}

/// Waits until `address` reports idle, through `terminal.list` (which the
/// held-back `terminal.get` does not slow).
async fn wait_listed_idle(hc: &HcClient, address: &str) {
    crate::support::eventually(&format!("{address} listed idle"), async || {
        let listed = hc.list(false).await.expect("terminal.list").value.terminals;
        listed
            .iter()
            .any(|t| t.address == address && t.status == TerminalStatus::Idle)
            .then_some(())
    })
    .await;
}

#[test]
fn an_audit_log_an_attacker_could_have_prepared_is_refused_at_start() {
    let sim = Sim::start(SimOptions::default());
    let dir = sim.dir.path().to_path_buf();
    let private = |path: &Path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .unwrap();
    };

    let fifo = dir.join("audit.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let (code, stderr) = serve_with_audit_log(&sim, &fifo);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a regular file (a FIFO)"), "{stderr}");

    let (code, stderr) = serve_with_audit_log(&sim, Path::new("/dev/stdout"));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");

    let target = dir.join("elsewhere.jsonl");
    private(&target);
    let link = dir.join("audit-link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (code, stderr) = serve_with_audit_log(&sim, &link);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 0);

    let readable = dir.join("readable.jsonl");
    private(&readable);
    std::fs::set_permissions(&readable, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, stderr) = serve_with_audit_log(&sim, &readable);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("chmod 600"), "{stderr}");

    let shared_dir = dir.join("shared");
    std::fs::create_dir(&shared_dir).unwrap();
    std::fs::set_permissions(&shared_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (code, stderr) = serve_with_audit_log(&sim, &shared_dir.join("audit.jsonl"));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("chmod go-w"), "{stderr}");
    assert!(!shared_dir.join("audit.jsonl").exists());

    // Root can make a file someone else's; others skip this case.
    if rustix::process::geteuid().is_root() {
        let foreign = dir.join("foreign.jsonl");
        private(&foreign);
        std::os::unix::fs::chown(&foreign, Some(65534), None).unwrap();
        let (code, stderr) = serve_with_audit_log(&sim, &foreign);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("chown"), "{stderr}");
    }

    // A private file of the operator's own is taken (serve then ends at
    // stdin's end of file).
    let good = dir.join("audit.jsonl");
    let (code, stderr) = serve_with_audit_log(&sim, &good);
    assert_eq!(code, 0, "{stderr}");
    let mode = std::fs::metadata(&good).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn opening_a_fifo_audit_log_never_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("audit.fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let (done, opened) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(Audit::open(Box::new(std::io::sink()), Some(&fifo)).is_err());
    });
    let refused = opened
        .recv_timeout(Duration::from_secs(10))
        .expect("opening a FIFO blocked");
    assert!(refused);
}

/// The adapter binary over stdio, its audit file allowed to grow to
/// `max_file_bytes` only (RLIMIT_FSIZE; past it a write fails with EFBIG,
/// as on a full disk).
async fn stdio_with_file_size_limit(
    config: &Path,
    stderr_log: &Path,
    max_file_bytes: u64,
) -> Client {
    let stderr = std::fs::File::create(stderr_log).unwrap();
    let command = tokio::process::Command::new(adapter_bin()).configure(|c| {
        c.arg("serve").arg("--config").arg(config);
        crate::support::limits::limit_child(
            c,
            crate::support::limits::ChildLimits {
                open_files: None,
                file_bytes: Some(max_file_bytes),
            },
        );
    });
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::from(stderr))
        .spawn()
        .unwrap();
    ().serve(transport).await.expect("MCP initialize")
}

#[tokio::test]
async fn no_send_goes_unaudited_while_the_audit_file_cannot_be_written() {
    const LIMIT: u64 = 4_096;
    let sim = Sim::start(SimOptions {
        agents: 2,
        ..SimOptions::default()
    });
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    let audit_log: PathBuf = sim.dir.path().join("audit.jsonl");
    // The file is already at the size the adapter may write: every append
    // fails, as on a full disk.
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&audit_log)
        .unwrap();
    std::fs::write(&audit_log, vec![b'#'; LIMIT as usize]).unwrap();
    let config = sim.config(json!({
        "coreId": sim.core_id,
        "sendAllowlist": approve_all(&hc).await,
        "auditLog": audit_log,
    }));
    let stderr_log = sim.dir.path().join("adapter.stderr");
    let client = stdio_with_file_size_limit(&config, &stderr_log, LIMIT).await;
    for agent in ["t1", "t2"] {
        wait_status(&hc, agent, TerminalStatus::Idle).await;
    }

    // No write has failed yet: this send goes, and says its line did not.
    let first = mcp::send_prompt(&client, "t1", "first").await;
    assert_eq!(first["outcome"], "sent", "{first}");
    assert_eq!(first["audit"], "not_written", "{first}");
    // Now a line is outstanding: nothing is sent.
    let second = mcp::send_prompt(&client, "t2", "second").await;
    assert_eq!(second["outcome"], "not_sent", "{second}");
    assert_eq!(second["reason_code"], "audit_unavailable", "{second}");
    assert_eq!(sim.writes_to("t2"), 0);

    // Room again (the operator freed the disk): the outstanding lines are
    // written first, in order, and sends resume.
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&audit_log)
        .unwrap();
    let third = mcp::send_prompt(&client, "t2", "third").await;
    assert_eq!(third["outcome"], "sent", "{third}");
    assert_eq!(third["audit"], "written", "{third}");
    let lines: Vec<Value> = std::fs::read_to_string(&audit_log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("whole JSON lines"))
        .collect();
    let reasons: Vec<&str> = lines
        .iter()
        .map(|l| l["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        ["accepted", "audit_unavailable", "accepted"],
        "{lines:?}"
    );
    assert_eq!(lines[0]["address"], "t1");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_host_that_never_reads_stderr_gets_every_answer() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        ..SimOptions::default()
    });
    let config = sim.config(json!({}));
    let command = tokio::process::Command::new(adapter_bin()).configure(|c| {
        c.arg("serve").arg("--config").arg(&config);
    });
    // The pipe is kept open and never read: once its 64 KiB are full, a
    // blocking write to stderr would never return.
    let (transport, unread_stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let client: Client = ().serve(transport).await.expect("MCP initialize");
    // Two thousand calls, eight at a time; each is refused at once (empty
    // text) and logs its audit line: some 600 KB, nine times what the
    // unread pipe holds.
    let mut callers = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let peer = client.peer().clone();
        callers.spawn(async move {
            for _ in 0..2_000 / 8 {
                let request = rmcp::model::CallToolRequestParams::new("send_prompt")
                    .with_arguments(
                        json!({"address": "t1", "text": ""})
                            .as_object()
                            .unwrap()
                            .clone(),
                    );
                let out = peer.call_tool(request).await.expect("an answer");
                assert_eq!(structured(&out)["reason_code"], "text_empty");
            }
        });
    }
    let calls = async {
        while let Some(done) = callers.join_next().await {
            done.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(120), calls)
        .await
        .expect("calls stalled behind an unread stderr");
    drop(unread_stderr);
    client.cancel().await.unwrap();
}
