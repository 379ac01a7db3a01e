//! Sends a human confirms, end to end with the official Python SDK
//! (tests/mcp/confirm_client.py): its elicitation callback answers for the
//! human over stdio in both eras and over stateless HTTP in the 2026-07-28
//! era; a client without the capability, and a legacy HTTP request, are
//! refused. The simulator's input log shows what landed (once on a
//! confirmation, never otherwise) and the audit log each attempt's line.

use std::path::{Path, PathBuf};

use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;
use serde_json::{Value, json};

use crate::support::mcp::{TEST_PACE_DIVISOR, TEST_TOKEN};
use crate::support::waits::wait_status;
use crate::support::world::audit_lines;
use crate::support::{Sim, SimOptions, adapter_bin, in_process, python, sha256_hex};

/// Two agents, both approved with confirmation (answered within 1 s);
/// the config's path for `extra` (a transport), and its JSON.
async fn confirming() -> (Sim, Value) {
    let sim = Sim::start(SimOptions {
        agents: 2,
        ..SimOptions::default()
    });
    let hc = HcClient::new(&sim.socket, std::time::Duration::from_secs(5));
    let mut allowlist = Vec::new();
    for address in ["t1", "t2"] {
        wait_status(&hc, address, TerminalStatus::Idle).await;
        let created_ms = hc.get(address).await.expect("the agent").value.created_ms;
        allowlist.push(json!({"address": address, "created_ms": created_ms, "confirm": true}));
    }
    let config = json!({
        "coreId": sim.core_id,
        "sendAllowlist": allowlist,
        "confirmTimeoutMs": 1000,
        "confirmCallTimeoutMs": 1000,
        "auditLog": sim.dir.path().join("audit.log"),
    });
    (sim, config)
}

/// Runs the Python client with `args`; its one JSON line.
async fn client(args: &[&str], token: bool) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/confirm_client.py");
    let mut command = tokio::process::Command::new(python());
    command
        .arg(script)
        .args(args)
        .env(herdr_core_mcp::TEST_PACE_ENV, TEST_PACE_DIVISOR)
        .kill_on_drop(true);
    if token {
        command.env("HERDR_MCP_TOKEN", TEST_TOKEN);
    }
    let output = command.output().await.expect("run the Python client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "confirm_client {args:?} failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("confirm_client printed {stdout:?}: {e}"))
}

async fn over_stdio(config: &Path, era: &str, answer: &str, address: &str, text: &str) -> Value {
    over_stdio_with(config, era, answer, address, text, &[]).await
}

async fn over_stdio_with(
    config: &Path,
    era: &str,
    answer: &str,
    address: &str,
    text: &str,
    extra: &[&str],
) -> Value {
    let adapter = adapter_bin();
    let mut args = vec![
        "--transport",
        "stdio",
        "--adapter",
        adapter.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--era",
        era,
        "--answer",
        answer,
        "--address",
        address,
        "--text",
        text,
    ];
    args.extend_from_slice(extra);
    client(&args, false).await
}

fn audit(path: &Path) -> Vec<Value> {
    audit_lines(&std::fs::read_to_string(path).unwrap_or_default())
        .iter()
        .map(|l| serde_json::from_str(l).expect("an audit line is JSON"))
        .collect()
}

/// Every refusal, then one confirmed send, in one era at `address`; the
/// audit lines expected of it.
async fn one_era(sim: &Sim, config: &Path, era: &str, address: &str) -> usize {
    let via = if era == "legacy" {
        "elicitation"
    } else {
        "input_required"
    };
    // A 2026-07-28 question leaves its own line before the retry's.
    let per_call = if era == "legacy" { 1 } else { 2 };
    // The refusals run side by side (each a client process of its own):
    // none of them may send, whatever the order.
    let refused = |answer: &'static str, reason: &'static str| async move {
        let text = format!("{era} {answer}: not to be typed");
        let out = over_stdio(config, era, answer, address, &text).await;
        let result = &out["result"];
        assert_eq!(result["outcome"], "not_sent", "{era} {answer}: {out}");
        assert_eq!(result["reason_code"], reason, "{era} {answer}: {out}");
        assert_eq!(result["confirmed"], Value::Null, "{era} {answer}");
        assert_eq!(out["isError"], true, "{era} {answer}");
        let asked = out["asked"].as_array().unwrap();
        if answer == "none" {
            assert!(asked.is_empty(), "{era}: {out}");
            return 1;
        }
        // The target and the exact prompt, with its length.
        let message = asked[0].as_str().unwrap();
        assert!(
            message.contains(&format!("\naddress: \"{address}\"\n")),
            "{message}"
        );
        assert!(message.contains(&format!(": \"{text}\"\n")), "{message}");
        assert!(
            message.contains(&format!("({} characters", text.chars().count())),
            "{message}"
        );
        assert!(message.contains("\nprogram: \"sim-agent\"\n"), "{message}");
        assert!(message.contains("send mode: idle-only"), "{message}");
        per_call
    };
    let (a, b, c, d, e) = tokio::join!(
        refused("decline", "confirmation_declined"),
        refused("unconfirmed", "confirmation_declined"),
        refused("cancel", "confirmation_cancelled"),
        refused("slow", "confirmation_timeout"),
        refused("none", "confirmation_unavailable"),
    );
    let lines = a + b + c + d + e;
    assert_eq!(sim.writes_to(address), 0, "{era}: input landed");
    let text = format!("confirmed in the {era} era");
    let out = over_stdio(config, era, "accept", address, &text).await;
    let result = &out["result"];
    assert_eq!(result["outcome"], "sent", "{era}: {out}");
    assert_eq!(result["reason_code"], "accepted", "{era}: {out}");
    assert_eq!(result["confirmed"]["via"], via, "{era}: {out}");
    eprintln!(
        "confirmations: a confirmed send in the {era} era took {} ms (an instant answer)",
        out["elapsed_ms"]
    );
    assert!(
        result["confirmed"]["client"]
            .as_str()
            .is_some_and(|c| !c.is_empty()),
        "{era}: the client is named: {out}"
    );
    let writes: Vec<Value> = sim
        .writes()
        .into_iter()
        .filter(|w| w["address"] == address)
        .collect();
    assert_eq!(writes.len(), 1, "{era}: exactly one write: {writes:?}");
    assert_eq!(writes[0]["sha256"], sha256_hex(&text), "{writes:?}");
    lines + per_call
}

#[tokio::test]
async fn over_stdio_in_both_eras_only_a_confirmation_sends_and_exactly_once() {
    let (sim, config) = confirming().await;
    let audit_log = PathBuf::from(config["auditLog"].as_str().unwrap());
    let config = sim.config(config);
    let (legacy, current) = tokio::join!(
        one_era(&sim, &config, "legacy", "t1"),
        one_era(&sim, &config, "current", "t2")
    );
    // Only the two confirmed sends were ever dispatched.
    assert_eq!(sim.calls("terminal.send"), 2);
    eprintln!(
        "confirmations: {} terminal.get, {} terminal.send for 12 attempts",
        sim.calls("terminal.get"),
        sim.calls("terminal.send")
    );
    let lines = audit(&audit_log);
    assert_eq!(lines.len(), legacy + current, "{lines:#?}");
    let sent: Vec<&Value> = lines.iter().filter(|l| l["outcome"] == "sent").collect();
    assert_eq!(sent.len(), 2, "{lines:#?}");
    for line in sent {
        let via = if line["address"] == "t1" {
            "elicitation"
        } else {
            "input_required"
        };
        assert_eq!(line["confirmed"]["via"], via, "{line}");
    }
    assert!(
        lines
            .iter()
            .filter(|l| l["outcome"] != "sent")
            .all(|l| l["outcome"] == "not_sent" && l.get("confirmed").is_none()),
        "{lines:#?}"
    );
}

#[tokio::test]
async fn over_stateless_http_the_current_era_confirms_and_a_legacy_request_is_refused() {
    let (sim, config) = confirming().await;
    let adapter = in_process::http_for(&sim, &config).await;
    let url = adapter.url();
    let base = ["--transport", "http", "--url", url.as_str()];
    let legacy = client(
        &[
            &base[..],
            &[
                "--era",
                "legacy",
                "--answer",
                "accept",
                "--text",
                "legacy over http",
            ],
        ]
        .concat(),
        true,
    )
    .await;
    assert_eq!(legacy["result"]["outcome"], "not_sent", "{legacy}");
    assert_eq!(
        legacy["result"]["reason_code"], "confirmation_unavailable",
        "{legacy}"
    );
    assert!(legacy["asked"].as_array().unwrap().is_empty(), "{legacy}");
    assert_eq!(sim.writes_to("t1"), 0);

    let tamper = client(
        &[
            &base[..],
            &[
                "--era",
                "current",
                "--scenario",
                "tamper",
                "--text",
                "confirmed over http",
            ],
        ]
        .concat(),
        true,
    )
    .await;
    assert_eq!(tamper["first"], "input_required", "{tamper}");
    assert_eq!(
        tamper["forged"]["reason_code"], "confirmation_invalid",
        "{tamper}"
    );
    assert_eq!(
        tamper["other_text"]["reason_code"], "confirmation_invalid",
        "a state is bound to its text: {tamper}"
    );
    assert_eq!(tamper["accepted"]["outcome"], "sent", "{tamper}");
    assert_eq!(tamper["accepted"]["confirmed"]["via"], "input_required");
    assert_eq!(
        tamper["replayed"]["reason_code"], "confirmation_invalid",
        "a confirmation opens once: {tamper}"
    );
    let writes = sim.writes();
    assert_eq!(writes.len(), 1, "exactly one write: {writes:?}");
    assert_eq!(writes[0]["sha256"], sha256_hex("confirmed over http"));
    let reasons: Vec<String> = adapter
        .audit
        .lines()
        .iter()
        .map(|l| {
            let line: Value = serde_json::from_str(l).unwrap();
            line["reason"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        reasons,
        [
            "confirmation_unavailable",
            "confirmation_required",
            "confirmation_invalid",
            "confirmation_invalid",
            "accepted",
            "confirmation_invalid"
        ]
    );
}

#[tokio::test]
async fn a_question_asked_inside_the_call_keeps_the_host_informed_and_fits_its_clock() {
    let (sim, mut config) = confirming().await;
    // The in-call wait's default is under the 60 s many hosts give a call.
    config
        .as_object_mut()
        .unwrap()
        .remove("confirmCallTimeoutMs");
    let path = sim.config(config);
    let loaded = herdr_core_mcp::Config::load(&path).unwrap();
    assert_eq!(
        loaded.confirm_call_timeout(),
        std::time::Duration::from_secs(50)
    );
    // The human takes 1 s: the call hears progress at least every tenth
    // of the real 5 s (the test pace).
    let text = "answered after a while";
    let out = over_stdio_with(&path, "legacy", "slow", "t1", text, &["--slow-secs", "1"]).await;
    assert_eq!(out["result"]["outcome"], "sent", "{out}");
    let progress = out["progress"].as_array().unwrap();
    assert!(
        !progress.is_empty(),
        "no progress while the human read: {out}"
    );
    assert!(
        progress[0]
            .as_str()
            .unwrap()
            .contains("waiting for the human to confirm the prompt"),
        "{out}"
    );
    assert_eq!(sim.writes_to("t1"), 1);
}

/// An idle-only agent approved with confirmation that reports `done`: no
/// answer of the human could lead to a send (idle-only sends only to an
/// idle terminal), so nobody is asked: refused first, naming the way out;
/// when it is idle, the question comes (here: a client that cannot ask).
#[tokio::test]
async fn a_done_agent_in_idle_only_mode_is_refused_before_anyone_is_asked() {
    let (sim, config) = confirming().await;
    let path = sim.config(config);
    let served = in_process::stdio_with((), &path).await;
    let hc = HcClient::new(&sim.socket, std::time::Duration::from_secs(5));
    let core = hc.hello().await.unwrap().core_id.clone();
    hc.send(
        herdr_core_mcp::SendRequest {
            address: "t1",
            text: "a task, so that it reports done",
            guard: None,
        },
        &core,
    )
    .await
    .expect("arranging send");
    wait_status(&hc, "t1", TerminalStatus::Done).await;
    let out = crate::support::mcp::send_prompt(&served.client, "t1", "a follow-up").await;
    assert_eq!(out["outcome"], "not_sent", "{out}");
    assert_eq!(out["reason_code"], "status_not_allowed", "{out}");
    let reason = out["reason"].as_str().unwrap();
    assert!(reason.contains("was not asked"), "{reason}");
    assert!(
        reason.contains(&format!("allow --mode normal --config {}", path.display())),
        "{reason}"
    );
    // The idle one: the question is asked (this client cannot answer it).
    let out = crate::support::mcp::send_prompt(&served.client, "t2", "a first task").await;
    assert_eq!(out["reason_code"], "confirmation_unavailable", "{out}");
    assert_eq!(sim.writes_to("t2"), 0);
    assert_eq!(sim.writes_to("t1"), 1, "only the arranging send");
}
