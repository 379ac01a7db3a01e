//! A socket handed over as systemd does (`LISTEN_FDS`), checked as
//! sd_listen_fds(3) says: a bound socket that never listened refuses the
//! start at once (it used to make every accept fail, in a loop at most of
//! a core), sockets passed to another pid are ignored, and of several
//! only the first is served, saying so.

use std::os::fd::AsRawFd;
use std::time::Duration;

use serde_json::json;

use crate::support::commands::{finished_within, stderr_of};
use crate::support::mcp::TEST_TOKEN;
use crate::support::{adapter_bin, write_config};

/// `serve` of an HTTP config on `port`, with `socket` on descriptor 3 and
/// the shell assignments `environment` before it.
fn serve_with(
    dir: &std::path::Path,
    port: u16,
    socket: &impl AsRawFd,
    environment: &str,
) -> tokio::process::Command {
    let config = write_config(
        dir,
        &json!({"socketPath": dir.join("hc.sock"), "transport": "http", "http": {"port": port}}),
    );
    let mut command = tokio::process::Command::from(hc_sim::testing::command_with_descriptor(
        &adapter_bin(),
        socket,
        environment,
    ));
    command
        .arg("serve")
        .arg("--config")
        .arg(config)
        .env("HERDR_MCP_TOKEN", TEST_TOKEN)
        .env("RUST_LOG", "info");
    command
}

/// A TCP socket bound to a loopback port the kernel picked, never listened on.
fn bound_only() -> (socket2::Socket, u16) {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket
        .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    let port = socket.local_addr().unwrap().as_socket().unwrap().port();
    (socket, port)
}

#[tokio::test]
async fn a_bound_socket_that_does_not_listen_refuses_the_start_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (socket, port) = bound_only();
    let command = serve_with(dir.path(), port, &socket, "LISTEN_PID=$$ LISTEN_FDS=1");
    let output = finished_within(command, Duration::from_secs(10)).await;
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains("bound but not listening") && last.contains("pass a listening socket"),
        "{stderr}"
    );
    assert!(!stderr.contains("accept failed"), "{stderr}");
}

#[tokio::test]
async fn sockets_passed_to_another_process_are_ignored_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    // The port is held by the socket passed: a serve that ignores it, as it
    // must, then fails to bind the port itself.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    for environment in ["LISTEN_PID=1 LISTEN_FDS=1", "LISTEN_FDS=1"] {
        let command = serve_with(dir.path(), port, &listener, environment);
        let output = finished_within(command, Duration::from_secs(10)).await;
        let stderr = stderr_of(&output);
        assert!(
            stderr.contains("LISTEN_PID does not name this process")
                && stderr.contains("are ignored"),
            "{environment}: {stderr}"
        );
        assert_eq!(output.status.code(), Some(1), "{environment}: {stderr}");
        assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");
    }
}

#[tokio::test]
async fn of_two_passed_sockets_the_first_is_served_and_the_other_named() {
    let dir = tempfile::tempdir().unwrap();
    let listener = herdr_core_mcp::listen(([127, 0, 0, 1], 0).into())
        .and_then(|l| l.into_std())
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = dir.path().join("serve.stderr");
    let mut command = serve_with(dir.path(), port, &listener, "LISTEN_PID=$$ LISTEN_FDS=2");
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .kill_on_drop(true);
    let _serve = command.spawn().unwrap();
    drop(listener);
    // It serves on the first socket (listening already, so the request
    // waits in its queue until serve accepts it): unauthenticated, a 401.
    let response = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .timeout(crate::support::PATIENCE)
        .send()
        .await
        .expect("serve answers on the socket passed first");
    assert_eq!(response.status(), reqwest::StatusCode::UNAUTHORIZED);
    crate::support::eventually("the warning about the other socket", async || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains(
                "LISTEN_FDS=2: serve uses the first socket (descriptor 3) and ignores the other 1",
            )
            .then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_first_descriptor_other_than_three_is_not_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = serve_with(
        dir.path(),
        port,
        &listener,
        "LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDS_FIRST_FD=4",
    );
    let output = finished_within(command, Duration::from_secs(10)).await;
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("LISTEN_FDS_FIRST_FD is \"4\"") && stderr.contains("does not honour it"),
        "{stderr}"
    );
}
