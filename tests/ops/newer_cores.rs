//! Serving the cores people run: a core of another version than the
//! built-in one is refused (naming `--accept`) until `inspect-core
//! --check-contract --accept` checked and recorded it; then every tool
//! works; a core whose document changed is refused again; a core is
//! accepted only once it has shown its `if` guard (its own document
//! declares it, or the live check saw it refuse), and one that ignores the
//! guard never is.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::mcp;
use crate::support::{Sim, SimOptions, run_adapter};

/// `inspect-core` with `args` on the config at `config`.
fn inspect(config: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["inspect-core", "--config", config.to_str().unwrap()];
    all.extend_from_slice(args);
    run_adapter(&all, &[])
}

fn hc_versions(config: &Path) -> Value {
    let text = std::fs::read_to_string(config).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["hcVersions"].clone()
}

/// The core's `rpc.discover` document, asked for over a plain socket (not
/// through the adapter), hashed as the adapter documents it.
fn discovered_sha256(socket: &Path) -> String {
    let stream = UnixStream::connect(socket).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    let mut ask = |line: Value| {
        writeln!(writer, "{line}").unwrap();
        let mut reply = String::new();
        reader.read_line(&mut reply).unwrap();
        serde_json::from_str::<Value>(&reply).unwrap()
    };
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "hc.hello",
        "params": {"generation": 1, "framing": "plain", "client": {"name": "test", "version": "0"}}});
    assert!(ask(hello).get("result").is_some());
    let reply = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "rpc.discover", "params": {}}));
    herdr_core_mcp::document_sha256(&reply["result"])
}

fn playing(version: &str) -> SimOptions {
    SimOptions {
        agents: 1,
        evidence: true,
        version: Some(version.to_owned()),
        ..SimOptions::default()
    }
}

#[tokio::test]
async fn a_checked_newer_core_is_accepted_served_and_refused_once_changed() {
    let sim = Sim::start(playing("0.1.20"));
    let config = sim.config(json!({}));
    let flag = format!("--accept --config {}", config.display());

    // Unaccepted: refused by inspect-core and allow, naming the check.
    let (code, _, err) = inspect(&config, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("version 0.1.20, which this adapter has not accepted"),
        "{err}"
    );
    assert!(err.contains(&flag), "{err}");
    let (code, _, err) = run_adapter(&["allow", "--config", config.to_str().unwrap(), "t1"], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&flag), "{err}");

    // The check lists what the core's own document adds, and breaks nothing.
    let (code, out, _) = inspect(&config, &["--check-contract"]);
    assert_eq!(code, 1, "differences are listed: {out}");
    assert!(
        out.contains("rpc.discover: the core's own document"),
        "{out}"
    );
    assert!(
        out.contains("extra fields present (the core's own document)"),
        "{out}"
    );
    assert!(out.contains("terminal.get result.labels"), "{out}");
    assert!(
        out.contains("none of which would make a call fail"),
        "{out}"
    );

    // --accept records the version, bound to the document the core serves.
    let (code, out, err) = inspect(&config, &["--check-contract", "--accept"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("accepted hc 0.1.20"), "{out}");
    let versions = hc_versions(&config);
    assert_eq!(versions.as_array().map(Vec::len), Some(1), "{versions}");
    assert_eq!(versions[0]["version"], "0.1.20");
    assert_eq!(
        versions[0]["document_sha256"],
        json!(discovered_sha256(&sim.socket))
    );
    assert!(versions[0]["checked_ms"].as_u64().is_some(), "{versions}");

    // Every tool now works, the send included.
    let (code, out, err) = run_adapter(&["allow", "--config", config.to_str().unwrap(), "t1"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    let client = crate::support::in_process::stdio(&config).await;
    let listed = mcp::call(&client, "list_sessions", json!({})).await;
    assert!(!mcp::is_error(&listed), "{listed:?}");
    let read = mcp::call(&client, "read_output", json!({"address": "t1"})).await;
    assert!(!mcp::is_error(&read), "{read:?}");
    mcp::until_listed(&client, "t1", "idle").await;
    let sent = mcp::send_prompt(&client, "t1", "hello from a checked core").await;
    assert_eq!(sent["outcome"], "sent", "{sent}");
    assert_eq!(sim.writes_to("t1"), 1);
    drop(client);

    // The core changes (here: the same version serving another document):
    // refused again, and nothing is sent.
    let dir = sim.stop();
    let sim = Sim::start_in(
        dir,
        SimOptions {
            evidence: false,
            ..playing("0.1.20")
        },
    );
    let (code, _, err) = inspect(&config, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("upgraded or changed since it was checked"),
        "{err}"
    );
    assert!(err.contains(&flag), "{err}");
    let client = crate::support::in_process::stdio(&config).await;
    let refused = mcp::send_prompt(&client, "t1", "must not land").await;
    assert_eq!(refused["outcome"], "not_sent", "{refused}");
    assert_eq!(sim.calls("terminal.send"), 0);
}

/// A client that reads the simulated cores of these tests, whatever
/// version they play (the test's own eyes, not the adapter's acceptance).
fn reader(socket: &Path) -> herdr_core_mcp::HcClient {
    let played = |version: &str| herdr_core_mcp::AcceptedVersion {
        version: version.into(),
        document_sha256: None,
        guard_shown: true,
        omits_force: false,
    };
    herdr_core_mcp::HcClient::with(
        socket,
        std::time::Duration::from_secs(5),
        std::time::Duration::from_secs(5),
        herdr_core_mcp::Acceptance {
            versions: vec![played("0.1.17"), played("0.1.20")],
            operator_flag: String::new(),
        },
    )
}

/// What the core says of the terminal at `address`: its status word and
/// status_seq.
async fn record(socket: &Path, address: &str) -> (String, u64) {
    let got = reader(socket)
        .get(address)
        .await
        .expect("the terminal is there");
    (got.value.status.to_string(), got.value.status_seq)
}

/// The screen of the terminal at `address`.
async fn screen(socket: &Path, address: &str) -> String {
    reader(socket)
        .read(address)
        .await
        .expect("a screen")
        .value
        .text
}

/// Waits until the agent at t1 of the core at `socket` reports idle.
async fn t1_idle(socket: &Path) -> u64 {
    crate::support::eventually("t1 idle", async || {
        let (status, seq) = record(socket, "t1").await;
        (status == "idle").then_some(seq)
    })
    .await
}

#[tokio::test]
async fn a_core_that_does_not_describe_itself_is_accepted_once_the_live_check_sees_its_guard() {
    let sim = Sim::start(SimOptions {
        no_discover: true,
        ..playing("0.1.17")
    });
    let config = sim.config(json!({}));
    let before = std::fs::read_to_string(&config).unwrap();
    // Without a document nothing shows the guard: never on the model's word.
    let (code, out, err) = inspect(&config, &["--check-contract", "--accept"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("rpc.discover: not offered"), "{out}");
    assert!(out.contains("guard: NOT shown"), "{out}");
    assert!(err.contains("accepted nothing"), "{err}");
    assert!(
        err.contains(&format!(
            "--guard-check ADDRESS --accept --config {}",
            config.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);

    // The live check: refused with status_mismatch, nothing written.
    let seq = t1_idle(&sim.socket).await;
    let (code, out, err) = inspect(
        &config,
        &["--check-contract", "--guard-check", "t1", "--accept"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("guard: shown by the live check"), "{out}");
    assert!(out.contains("`if`: working (it was idle)"), "{out}");
    assert!(out.contains("accepted hc 0.1.17"), "{out}");
    let versions = hc_versions(&config);
    assert_eq!(versions[0]["document_sha256"], Value::Null, "{versions}");
    assert_eq!(versions[0]["guard"], "live-check", "{versions}");
    assert_eq!(sim.calls("terminal.send"), 1, "the check sends once");
    assert_eq!(sim.writes_to("t1"), 0, "the guarded core wrote nothing");
    assert_eq!(record(&sim.socket, "t1").await, ("idle".to_owned(), seq));
    let (code, out, err) = inspect(&config, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0.1.17"), "{out}");
}

#[tokio::test]
async fn a_core_that_ignores_the_guard_is_never_accepted_and_the_check_types_nothing() {
    // With its own document (without `if`), and without one at all.
    for no_discover in [false, true] {
        let sim = Sim::start(SimOptions {
            no_if_guard: true,
            no_discover,
            ..playing("0.1.20")
        });
        let config = sim.config(json!({}));
        let before = std::fs::read_to_string(&config).unwrap();
        let (code, out, err) = inspect(&config, &["--check-contract", "--accept"]);
        assert_eq!(code, 1, "{out}{err}");
        assert!(out.contains("guard: NOT shown"), "{out}");
        assert!(err.contains("accepted nothing"), "{err}");
        assert!(err.contains("--guard-check ADDRESS"), "{err}");

        let seq = t1_idle(&sim.socket).await;
        let screen_before = screen(&sim.socket, "t1").await;
        let (code, out, err) = inspect(
            &config,
            &["--check-contract", "--guard-check", "t1", "--accept"],
        );
        assert_eq!(code, 1, "{no_discover}: {out}{err}");
        assert!(
            out.contains("! [guard] terminal.send params.if: the core took the guard check's send"),
            "{out}"
        );
        assert!(out.contains("it ignores `if`"), "{out}");
        assert!(err.contains("accepted nothing"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&config).unwrap(),
            before,
            "the config changed"
        );
        // The core wrote (it ignores `if`), but what it wrote types nothing:
        // no character, no Enter; the agent never started a task.
        assert_eq!(sim.writes_to("t1"), 1, "the unguarded core wrote");
        for write in sim.writes() {
            assert_eq!(
                write["sha256"],
                json!(crate::support::sha256_hex("")),
                "{write}"
            );
        }
        assert_eq!(record(&sim.socket, "t1").await, ("idle".to_owned(), seq));
        assert_eq!(screen(&sim.socket, "t1").await, screen_before);
        let (code, _, err) = inspect(&config, &[]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("has not accepted"), "{err}");
    }
}

#[test]
fn an_entry_accepted_on_the_models_word_is_refused_until_checked_again() {
    let sim = Sim::start(SimOptions {
        no_discover: true,
        ..playing("0.1.17")
    });
    // What --accept wrote before a guard had to be shown: no document, no
    // guard.
    let config = sim.config(json!({"hcVersions": [
        {"version": "0.1.17", "document_sha256": null, "checked_ms": 1}
    ]}));
    let (code, _, err) = inspect(&config, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("accepted without its `if` guard being seen"),
        "{err}"
    );
    assert!(err.contains("--guard-check ADDRESS"), "{err}");
}

#[tokio::test]
async fn a_running_serve_speaks_a_version_accepted_meanwhile_once_reloaded() {
    let sim = Sim::start(playing("0.1.20"));
    let config = sim.config(json!({}));
    let served = crate::support::in_process::stdio_with((), &config).await;
    let refused = mcp::call(&served.client, "list_sessions", json!({})).await;
    assert!(mcp::is_error(&refused), "{refused:?}");
    assert!(
        mcp::text(&refused).contains("--check-contract --accept"),
        "{refused:?}"
    );
    let (code, out, err) = inspect(&config, &["--check-contract", "--accept"]);
    assert_eq!(code, 0, "{out}{err}");
    // What SIGHUP does: the config read again and put in force.
    served
        .app
        .replace_config(herdr_core_mcp::Config::load(&config).expect("the accepted config loads"));
    let listed = mcp::call(&served.client, "list_sessions", json!({})).await;
    assert!(!mcp::is_error(&listed), "{listed:?}");
    // And back: the entry removed, the core is refused again, even on
    // connections opened while it was accepted.
    served.app.replace_config(
        herdr_core_mcp::Config::validate(&config, {
            let mut raw = herdr_core_mcp::RawConfig::load(&config).unwrap();
            raw.hc_versions.clear();
            raw
        })
        .unwrap(),
    );
    let refused = mcp::call(&served.client, "list_sessions", json!({})).await;
    assert!(mcp::is_error(&refused), "{refused:?}");
}
