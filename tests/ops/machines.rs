//! The operator's commands and machines (contract §8), with real
//! simulator processes as the machines' cores: `allow` binds an approval
//! of a machine's terminal to that machine's own core and says so, and
//! refuses a machine that is down or hidden; `doctor` and `inspect-core`
//! list the machines and whether the config shows them, and `doctor`
//! fails an approval whose machine now runs another core.

use serde_json::{Value, json};

use crate::support::{Sim, SimOptions, run_adapter};

fn read(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// This core with machine `build` (one agent).
fn federated() -> (Sim, Sim) {
    let build = Sim::start(SimOptions::agents(1));
    let here = Sim::start(SimOptions::agents(1).machine("build", &build.socket));
    (here, build)
}

#[test]
fn allow_binds_a_machine_terminal_to_the_machine_core_and_says_so() {
    let (here, build) = federated();
    let config = here.config(json!({}));
    let path = config.to_str().unwrap();
    let (code, stdout, stderr) = run_adapter(&["allow", "--config", path, "build/t1"], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("machine build: its core is {}", build.core_id)),
        "{stdout}"
    );
    let doc = read(&config);
    assert_eq!(
        doc["coreId"],
        here.core_id.as_str(),
        "the local core still keys the list"
    );
    assert_eq!(doc["sendAllowlist"][0]["address"], "build/t1");
    assert_eq!(
        doc["sendAllowlist"][0]["machineCoreId"],
        build.core_id.as_str()
    );

    // doctor: the machine is listed and shown, the approval live.
    let (code, stdout, _) = run_adapter(&["doctor", "--config", path], &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("machines   build connected"), "{stdout}");
    assert!(stdout.contains("shown"), "{stdout}");
    assert!(stdout.contains("ok   approval   build/t1"), "{stdout}");

    // inspect-core lists the machine beside the terminals.
    let (code, stdout, _) = run_adapter(&["inspect-core", "--config", path], &[]);
    assert_eq!(code, 0);
    assert!(stdout.contains("machines:\n  build connected"), "{stdout}");
    let (_, json_out, _) = run_adapter(&["inspect-core", "--config", path, "--json"], &[]);
    let doc: Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(doc["machines"]["machines"][0]["name"], "build");
    assert_eq!(doc["machines"]["machines"][0]["shown"], true);
}

#[test]
fn allow_refuses_a_machine_that_is_down_or_hidden() {
    let (here, _build) = federated();
    let hidden = here.config(json!({"machines": ["gpu"]}));
    let (code, _, stderr) = run_adapter(
        &["allow", "--config", hidden.to_str().unwrap(), "build/t1"],
        &[],
    );
    assert_ne!(code, 0);
    assert!(stderr.contains("does not show (machines: gpu)"), "{stderr}");
    assert!(read(&hidden).get("sendAllowlist").is_none());

    here.control("machine.disconnect", json!({"name": "build"}));
    let config = here.config(json!({}));
    let (code, _, stderr) = run_adapter(
        &["allow", "--config", config.to_str().unwrap(), "build/t1"],
        &[],
    );
    assert_ne!(code, 0);
    assert!(stderr.contains("machine build is disconnected"), "{stderr}");
    assert!(read(&config).get("sendAllowlist").is_none());
}

#[test]
fn doctor_fails_an_approval_whose_machine_runs_another_core_now() {
    let (here, build) = federated();
    let config = here.config(json!({}));
    let path = config.to_str().unwrap();
    assert_eq!(
        run_adapter(&["allow", "--config", path, "build/t1"], &[]).0,
        0
    );

    // Another core is added under the same name.
    let stranger = Sim::start(SimOptions::agents(1));
    here.control("machine.remove", json!({"name": "build"}));
    here.control(
        "machine.add",
        json!({"name": "build", "socket": stranger.socket}),
    );
    let (code, stdout, _) = run_adapter(&["doctor", "--config", path], &[]);
    assert_ne!(code, 0, "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.contains("approval") && l.contains("build/t1"))
        .unwrap_or_else(|| panic!("no approval line:\n{stdout}"));
    assert!(line.starts_with("FAIL"), "{line}");
    assert!(line.contains(&build.core_id), "{line}");
    assert!(line.contains(&stranger.core_id), "{line}");
    assert!(line.contains("allow"), "{line}");
}

/// `status` shows, for each running serve, the machines it shows and
/// their state.
#[tokio::test]
async fn status_shows_each_serve_s_machines_and_their_state() {
    let (here, _build) = federated();
    let config = here.config(json!({"machines": ["build"]}));
    let log = here.dir.path().join("serve.stderr");
    let (client, pid) = crate::support::mcp::stdio_process((), &config, &log).await;
    let (code, out, err) = run_adapter(&["status", "--json"], &[]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let row = doc["serves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["pid"] == pid)
        .unwrap_or_else(|| panic!("no serve {pid} in {doc}"))
        .clone();
    assert_eq!(row["machines"], "build: build connected", "{row}");
    drop(client);
}
