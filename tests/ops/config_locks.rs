//! The allowlist is the product's authority, so writers of the config take
//! turns: two `allow`s at once both land (one used to be lost, though both
//! said "written"), and a `revoke` that runs while a slow `allow` probes
//! the core is never undone by it (it used to be, silently).

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::commands::{adapter, finished_within, stderr_of};
use crate::support::{Sim, SimOptions};

/// The addresses the config at `path` approves.
fn approved(path: &std::path::Path) -> Vec<String> {
    let config: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut addresses: Vec<String> = config["sendAllowlist"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["address"].as_str().unwrap().to_owned())
        .collect();
    addresses.sort();
    addresses
}

/// A simulator whose `terminal.get` answers only after `slow_ms`.
fn slow_sim(agents: usize, slow_ms: u64) -> Sim {
    Sim::start(SimOptions {
        agents,
        faults: vec!["slow-reply:terminal.get".to_owned()],
        slow_reply_ms: Some(slow_ms),
        ..SimOptions::default()
    })
}

#[tokio::test]
async fn two_allows_at_once_both_land() {
    let sim = slow_sim(2, 400);
    let config = sim.config(json!({}));
    let path = config.to_str().unwrap();
    let (first, second) = tokio::join!(
        finished_within(
            adapter(&["allow", "--config", path, "t1"]),
            Duration::from_secs(20)
        ),
        finished_within(
            adapter(&["allow", "--config", path, "t2"]),
            Duration::from_secs(20)
        ),
    );
    for output in [&first, &second] {
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(output));
        assert!(String::from_utf8_lossy(&output.stdout).contains("written to"));
    }
    assert_eq!(approved(&config), ["t1", "t2"]);
}

#[tokio::test]
async fn a_revoke_during_a_slow_allow_is_never_undone() {
    let sim = Sim::start(SimOptions::agents(2));
    let config = sim.config(json!({}));
    let path = config.to_str().unwrap();
    let approve = finished_within(
        adapter(&["allow", "--config", path, "t1"]),
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(approve.status.code(), Some(0), "{}", stderr_of(&approve));
    assert_eq!(approved(&config), ["t1"]);

    // `allow t2` reads the config, then waits on the core's slow answer...
    sim.control("set_faults", json!({"faults": ["slow-reply:terminal.get"]}));
    let gets = sim.calls("terminal.get");
    let slow_allow = tokio::spawn(finished_within(
        adapter(&["allow", "--config", path, "t2"]),
        Duration::from_secs(20),
    ));
    sim.wait_for_calls("terminal.get", gets).await;
    // ...while t1 is revoked.
    let revoke = finished_within(
        adapter(&["revoke", "--config", path, "t1"]),
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(revoke.status.code(), Some(0), "{}", stderr_of(&revoke));
    assert!(String::from_utf8_lossy(&revoke.stdout).contains("revoked 1 approval(s)"));
    assert_eq!(approved(&config), [] as [&str; 0]);

    let allowed = slow_allow.await.unwrap();
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr_of(&allowed));
    assert_eq!(approved(&config), ["t2"], "the revoke of t1 was undone");
}
