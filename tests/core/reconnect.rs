//! Parked connections whose hc has gone: a read finds out on its write,
//! before a byte of it leaves, and goes out once on a fresh connection; a
//! send asks the kernel before it is dispatched, and one whose connection
//! breaks after dispatch is never sent again.

use std::time::Duration;

use herdr_core_mcp::{CoreError, HcClient, SendError, SendRequest};

use crate::support::{Sim, SimOptions, core};

fn client(sim: &Sim) -> HcClient {
    HcClient::new(&sim.socket, Duration::from_secs(5))
}

fn hello(address: &str) -> SendRequest<'_> {
    SendRequest {
        address,
        text: "hello",
        guard: None,
    }
}

/// A client with one connection parked, to a simulator that is then
/// replaced by a new one (a new core) before the test's runtime has had a
/// chance to see the old connection close.
fn parked_then_restarted(sim: Sim, client: &HcClient) -> (Sim, String) {
    assert_eq!(client.pool().idle_count(), 1);
    let old_core = sim.core_id.clone();
    let dir = sim.stop();
    (Sim::start_in(dir, SimOptions::agents(1)), old_core)
}

#[tokio::test]
async fn a_read_on_a_parked_connection_to_a_gone_hc_goes_out_once_on_a_fresh_one() {
    let sim = Sim::start(SimOptions::agents(1));
    let client = client(&sim);
    client.get("t1").await.expect("warm-up call");
    let (sim, old_core) = parked_then_restarted(sim, &client);
    let answer = client.get("t1").await.expect("served by the new core");
    assert_eq!(answer.core.core_id.as_str(), sim.core_id);
    assert_ne!(answer.core.core_id.as_str(), old_core);
    assert_eq!(sim.calls("terminal.get"), 1, "{}", sim.stats());
    assert_eq!(sim.stats()["connections_total"], 1, "{}", sim.stats());
}

#[tokio::test]
async fn a_send_on_a_parked_connection_to_a_gone_hc_is_not_dispatched_on_it() {
    let sim = Sim::start(SimOptions::agents(1));
    let client = client(&sim);
    client.get("t1").await.expect("warm-up call");
    let (sim, old_core) = parked_then_restarted(sim, &client);
    // Addressed to the old core: the fresh connection shows the new one,
    // so nothing is sent, and the answer says nothing can have landed.
    let refused = client.send(hello("t1"), &core(&old_core)).await;
    assert!(
        matches!(
            refused,
            Err(SendError::NotDispatched(CoreError::CoreChanged { .. }))
        ),
        "{refused:?}"
    );
    assert_eq!(sim.writes().len(), 0);
    let sent = client.send(hello("t1"), &core(&sim.core_id)).await;
    assert!(sent.is_ok(), "{sent:?}");
    assert_eq!(sim.writes_to("t1"), 1);
}

#[tokio::test]
async fn a_send_whose_connection_breaks_after_dispatch_is_never_sent_again() {
    let sim = Sim::start(SimOptions::agents(1));
    let client = client(&sim);
    client.get("t1").await.expect("warm-up call");
    sim.set_faults(&["drop-after-dispatch:terminal.send"]);
    let broken = client.send(hello("t1"), &core(&sim.core_id)).await;
    assert!(
        matches!(broken, Err(SendError::Dispatched(_))),
        "{broken:?}"
    );
    assert_eq!(sim.calls("terminal.send"), 1, "{}", sim.stats());
}
