//! `allow` / `revoke` and config reload on SIGHUP.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use serde_json::{Value, json};

use crate::support::mcp::{self, call, structured};
use crate::support::waits::wait_status;
use crate::support::{Sim, SimOptions, run_adapter, send_signal};
use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn adapter(args: &[&str]) -> (i32, String, String) {
    run_adapter(args, &[])
}

#[tokio::test]
async fn allow_writes_core_id_and_lifetime_keeping_everything_else() {
    let sim = Sim::start(SimOptions::agents(2));
    let config = sim.config(json!({"timeoutMs": 4321, "sendMode": "normal"}));
    let inode_before = std::fs::metadata(&config).unwrap().ino();
    let path = config.to_str().unwrap();
    let (code, stdout, stderr) = adapter(&["allow", "--config", path, "t2"]);
    assert_eq!(code, 0, "{stderr}");
    let t2 = HcClient::new(&sim.socket, std::time::Duration::from_secs(5))
        .get("t2")
        .await
        .unwrap()
        .value;
    for shown in ["t2", &t2.created_ms.to_string(), "sim-agent", &sim.core_id] {
        assert!(stdout.contains(shown), "{shown} not shown:\n{stdout}");
    }
    let doc = read(&config);
    assert_eq!(doc["coreId"], sim.core_id.as_str());
    assert_eq!(
        doc["sendAllowlist"],
        json!([{"address": "t2", "created_ms": t2.created_ms}])
    );
    assert_eq!(doc["timeoutMs"], 4321);
    assert_eq!(doc["sendMode"], "normal");
    let meta = std::fs::metadata(&config).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_ne!(meta.ino(), inode_before, "not replaced by rename");
    let leftovers: Vec<_> = std::fs::read_dir(sim.dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Again: nothing changes; t1 too: both listed.
    let (code, stdout, _) = adapter(&["allow", "--config", path, "t2"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("already approved"), "{stdout}");
    assert_eq!(adapter(&["allow", "--config", path, "t1"]).0, 0);
    assert_eq!(read(&config)["sendAllowlist"].as_array().unwrap().len(), 2);

    // revoke removes only that address.
    let (code, stdout, stderr) = adapter(&["revoke", "--config", path, "t2"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("revoked 1"), "{stdout}");
    let doc = read(&config);
    assert_eq!(doc["sendAllowlist"].as_array().unwrap().len(), 1);
    assert_eq!(doc["sendAllowlist"][0]["address"], "t1");
    assert_eq!(doc["timeoutMs"], 4321);
    // Revoking it again is not an error: scripts can run it twice.
    let unchanged = std::fs::read(&config).unwrap();
    let (code, stdout, stderr) = adapter(&["revoke", "--config", path, "t2"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("nothing to revoke"), "{stdout}");
    assert_eq!(std::fs::read(&config).unwrap(), unchanged);
}

#[tokio::test]
async fn allow_refuses_what_it_cannot_parse_or_approve() {
    let sim = Sim::start(SimOptions::agents(1));
    let config = sim.config(json!({}));
    let path = config.to_str().unwrap();
    std::fs::write(&config, "{ not json").unwrap();
    let (code, _, stderr) = adapter(&["allow", "--config", path, "t1"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "{ not json",
        "file changed"
    );
    std::fs::write(
        &config,
        json!({"socketPath": sim.socket, "extra": 1}).to_string(),
    )
    .unwrap();
    let (code, _, stderr) = adapter(&["allow", "--config", path, "t1"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("extra"), "{stderr}");
    std::fs::write(&config, json!({"socketPath": sim.socket}).to_string()).unwrap();
    let (code, _, stderr) = adapter(&["allow", "--config", path, "t9"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("t9"), "{stderr}");
    sim.control("kill", json!({"address": "t1"}));
    let (code, _, stderr) = adapter(&["allow", "--config", path, "t1"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("exited"), "{stderr}");
    assert_eq!(
        read(&config),
        json!({"socketPath": sim.socket}),
        "a refused allow wrote"
    );
}

#[tokio::test]
async fn sighup_reloads_approvals_and_a_broken_file_stops_only_sends() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        agent_delay_ms: Some(20),
        ..SimOptions::default()
    });
    let hc = HcClient::new(&sim.socket, std::time::Duration::from_secs(5));
    let config = sim.config(json!({}));
    let path = config.to_str().unwrap().to_owned();
    let (client, pid) = mcp::stdio_process((), &config, &sim.dir.path().join("stderr.log")).await;
    let approved = async || {
        let out = structured(&call(&client, "list_sessions", json!({})).await).clone();
        out["sessions"][0]["send_approved"] == true
    };
    let send = async || {
        structured(
            &call(
                &client,
                "send_prompt",
                json!({"address": "t1", "text": "hi"}),
            )
            .await,
        )
        .clone()
    };
    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    assert_eq!(send().await["reason_code"], "no_core_id");

    assert_eq!(adapter(&["allow", "--config", &path, "t1"]).0, 0);
    send_signal(pid, libc::SIGHUP);
    wait_until(async || approved().await).await;
    assert_eq!(send().await["outcome"], "sent");
    assert_eq!(sim.writes_to("t1"), 1);

    assert_eq!(adapter(&["revoke", "--config", &path, "t1"]).0, 0);
    send_signal(pid, libc::SIGHUP);
    wait_until(async || !approved().await).await;
    wait_status(&hc, "t1", TerminalStatus::Done).await;
    assert_eq!(send().await["reason_code"], "not_approved");

    assert_eq!(adapter(&["allow", "--config", &path, "t1"]).0, 0);
    send_signal(pid, libc::SIGHUP);
    wait_until(async || approved().await).await;
    // A file others could write holds no authority, on reload either.
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o664)).unwrap();
    send_signal(pid, libc::SIGHUP);
    wait_until(async || !approved().await).await;
    let refused = send().await;
    assert_eq!(refused["reason_code"], "config_invalid", "{refused}");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("writable by group or others"),
        "{refused}"
    );
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    send_signal(pid, libc::SIGHUP);
    wait_until(async || approved().await).await;
    std::fs::write(&config, "{ broken").unwrap();
    send_signal(pid, libc::SIGHUP);
    wait_until(async || !approved().await).await;
    let refused = send().await;
    assert_eq!(refused["outcome"], "not_sent");
    assert_eq!(refused["reason_code"], "config_invalid", "{refused}");
    let read = call(&client, "read_output", json!({"address": "t1"})).await;
    assert!(read.is_error != Some(true), "reads must go on: {read:?}");
    assert_eq!(sim.writes_to("t1"), 1);
    let log = std::fs::read_to_string(sim.dir.path().join("stderr.log")).unwrap();
    assert_eq!(log.matches("config reload failed").count(), 2, "{log}");
}

async fn wait_until(mut condition: impl AsyncFnMut() -> bool) {
    crate::support::eventually("the reload to take effect", async || {
        condition().await.then_some(())
    })
    .await;
}

#[tokio::test]
async fn allow_multiline_and_links_write_the_real_file() {
    let sim = Sim::start(SimOptions::agents(1));
    let real = sim.config(json!({"timeoutMs": 4321}));
    let link = sim.dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let link_arg = link.to_str().unwrap();
    let (code, stdout, stderr) = adapter(&["allow", "--multiline", "--config", link_arg, "t1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("never a shell"), "{stdout}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    let doc = read(&real);
    assert_eq!(doc["sendAllowlist"][0]["multiline"], true, "{doc}");
    assert_eq!(doc["timeoutMs"], 4321);
    // Approving again without --multiline takes the permission back.
    assert_eq!(adapter(&["allow", "--config", link_arg, "t1"]).0, 0);
    let doc = read(&real);
    assert_eq!(doc["sendAllowlist"].as_array().unwrap().len(), 1, "{doc}");
    assert!(doc["sendAllowlist"][0].get("multiline").is_none(), "{doc}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[tokio::test]
async fn allow_confirm_writes_confirm_and_list_sessions_shows_it() {
    let sim = Sim::start(SimOptions::agents(2));
    let config = sim.config(json!({}));
    let path = config.to_str().unwrap();
    let (code, stdout, stderr) = adapter(&["allow", "--confirm", "--config", path, "t1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("confirmation required"), "{stdout}");
    assert_eq!(adapter(&["allow", "--config", path, "t2"]).0, 0);
    let doc = read(&config);
    let entries = doc["sendAllowlist"].as_array().unwrap();
    assert_eq!(entries[0]["confirm"], true, "{doc}");
    assert!(entries[1].get("confirm").is_none(), "{doc}");
    let client = mcp::stdio(&config, &sim.dir.path().join("adapter.stderr")).await;
    let result = call(&client, "list_sessions", json!({})).await;
    let listed = structured(&result);
    let confirm: Vec<(&str, bool)> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["address"].as_str().unwrap(),
                s["confirm_required"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(confirm, [("t1", true), ("t2", false)]);
}

#[test]
fn allow_again_keeps_a_confirmation_unless_told_and_says_what_changes() {
    let sim = Sim::start(SimOptions::agents(1));
    let config = sim.config(json!({}));
    let path = config.to_str().unwrap();
    let confirm = |doc: &Value| doc["sendAllowlist"][0].get("confirm").cloned();
    let (code, _, stderr) = adapter(&[
        "allow",
        "--confirm",
        "--mode",
        "normal",
        "--config",
        path,
        "t1",
    ]);
    assert_eq!(code, 0, "{stderr}");
    // Re-approved without flags: the confirmation stays; the mode change is said.
    let (code, stdout, stderr) = adapter(&["allow", "--config", path, "t1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("keeps the human confirmation"), "{stdout}");
    assert!(
        stdout.contains("send mode changes from normal to the config's sendMode"),
        "{stdout}"
    );
    let doc = read(&config);
    assert_eq!(confirm(&doc), Some(json!(true)), "{doc}");
    assert!(doc["sendAllowlist"][0].get("sendMode").is_none(), "{doc}");
    // The same again changes nothing.
    let (_, stdout, _) = adapter(&["allow", "--config", path, "t1"]);
    assert!(
        stdout.contains("already approved; config unchanged"),
        "{stdout}"
    );
    // Only --no-confirm removes it.
    let (code, stdout, stderr) = adapter(&["allow", "--no-confirm", "--config", path, "t1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("removes the human confirmation"),
        "{stdout}"
    );
    assert_eq!(confirm(&read(&config)), None);
    let (code, _, stderr) =
        adapter(&["allow", "--confirm", "--no-confirm", "--config", path, "t1"]);
    assert_eq!(code, 2, "{stderr}");
}
