//! The simulator inside the test's own process: the same handle as a
//! process, its own runtime (so an async test's runtime neither drives nor
//! blocks it), and a stop or a crash that leaves the directory as a process
//! would.

use std::os::unix::net::UnixStream;

use hc_sim::testing::{Options, SOCKET_FILE};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::{greeted_client, hello_params, start, start_in, wait_for_status};

#[test]
fn its_ready_line_and_hello_name_this_process_and_a_fresh_core_id() {
    let sim = start(Options::default());
    let expected = format!(
        "ready core_id={} socket={}\n",
        sim.core_id,
        sim.socket.display()
    );
    assert_eq!(sim.ready_line, expected);
    assert_eq!(sim.pid(), std::process::id());
    let mut client = greeted_client(&sim);
    assert_eq!(
        client.result("terminal.list", json!({ "include_finished": true }))["terminals"],
        json!([])
    );
    assert_ne!(start(Options::default()).core_id, sim.core_id);
}

#[test]
fn a_stop_removes_the_sockets_and_a_restart_serves_the_same_path() {
    let mut sim = start(Options::agents(1));
    wait_for_status(&mut greeted_client(&sim), "t1", "idle");
    assert!(sim.try_wait().unwrap().is_none(), "still serving");
    let (socket, old_core) = (sim.socket.clone(), sim.core_id.clone());
    let dir = sim.stop();
    assert!(!dir.path().join(SOCKET_FILE).exists(), "removed on stop");
    assert!(!dir.path().join("control.sock").exists(), "removed on stop");

    let sim = start_in(dir, Options::agents(1));
    assert_eq!(sim.socket, socket);
    assert_ne!(sim.core_id, old_core);
    let hello = greeted_client(&sim);
    drop(hello);
    assert_eq!(sim.spawn("shell")["address"], "t2");
}

#[test]
fn a_crash_leaves_a_stale_socket_that_a_restart_replaces() {
    let sim = start(Options::agents(1));
    let mut client = greeted_client(&sim);
    let dir = sim.crash();
    assert!(client.read_line().is_none(), "the connection dropped");
    let socket = dir.path().join(SOCKET_FILE);
    assert!(socket.exists(), "a crash cleans nothing up");
    let refused = UnixStream::connect(&socket).unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);

    let sim = start_in(dir, Options::default());
    assert_eq!(sim.socket, socket);
    greeted_client(&sim);
}

#[test]
fn bad_options_are_refused_before_anything_serves() {
    let refused = hc_sim::testing::Simulator::in_process(Options::default().fault("sleepy"))
        .expect_err("an unknown fault");
    assert!(
        refused.to_string().contains("unknown fault `sleepy`"),
        "{refused}"
    );
}

/// A current-thread runtime that only awaits the simulator (and then drops
/// it) would deadlock if the simulator needed that runtime to make progress.
#[tokio::test]
async fn it_serves_an_async_test_without_its_runtime_and_drops_inside_it() {
    let sim = start(Options::default());
    let stream = tokio::net::UnixStream::connect(&sim.socket).await.unwrap();
    let (reader, mut writer) = stream.into_split();
    let hello =
        json!({ "jsonrpc": "2.0", "id": 1, "method": "hc.hello", "params": hello_params(1) });
    writer
        .write_all(format!("{hello}\n").as_bytes())
        .await
        .unwrap();
    let mut line = String::new();
    BufReader::new(reader).read_line(&mut line).await.unwrap();
    let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(reply["result"]["core_id"], sim.core_id.as_str());
    drop(sim);
}
