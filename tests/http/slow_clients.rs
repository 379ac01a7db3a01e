//! Slow clients: half a header or part of a declared body is cut off by the
//! server's timers, and the server goes on answering.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::http::INITIALIZE;
use crate::support::http::request::Req;
use crate::support::http::response::exchange;
use crate::support::in_process;
use crate::support::{Sim, SimOptions};
use herdr_core_mcp::Pace;

/// Waits until the server closes `stream`; returns what it sent and when.
async fn await_server_close(
    mut stream: TcpStream,
    limit: Duration,
) -> (Result<Duration, String>, Vec<u8>) {
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let outcome = tokio::time::timeout(limit, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) => return Ok(started.elapsed()),
                Ok(n) => received.extend_from_slice(&buf[..n]),
                // A reset is a close too.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                    return Ok(started.elapsed());
                }
                Err(e) => return Err(format!("read: {e}")),
            }
        }
    })
    .await
    .unwrap_or_else(|_| Err(format!("still open after {limit:?}")));
    (outcome, received)
}

#[tokio::test]
async fn slow_clients_are_cut_off() {
    let limit = Duration::from_secs(15);
    let sim = Sim::start(SimOptions::default());
    // The real pace: the one test of the HTTP deadlines as `serve` has them.
    let adapter = in_process::http_for_paced(&sim, &json!({}), Pace::default()).await;
    let port = adapter.port;
    let slow_head = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let head = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthor");
        stream.write_all(head.as_bytes()).await.unwrap();
        await_server_close(stream, limit).await
    };
    let slow_body = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let mut request = Req::mcp(port).remove("Connection").declared(100).bytes();
        request.extend_from_slice(&INITIALIZE.as_bytes()[..10]);
        stream.write_all(&request).await.unwrap();
        await_server_close(stream, limit).await
    };
    let ((head_closed, head_reply), (body_closed, body_reply)) = tokio::join!(slow_head, slow_body);
    let head_reply = String::from_utf8_lossy(&head_reply).into_owned();
    let body_reply = String::from_utf8_lossy(&body_reply).into_owned();
    println!("half a header: closed {head_closed:?}, sent {head_reply:?}");
    println!("10 of 100 body bytes: closed {body_closed:?}, sent {body_reply:?}");
    let head_after = head_closed.expect("a half-sent header is cut off");
    let body_after = body_closed.expect("a half-sent body is cut off");
    // Cut off by the timers (10 s), not at once and not much later.
    for (what, after) in [("header", head_after), ("body", body_after)] {
        assert!(
            after >= Duration::from_secs(5),
            "{what} cut off early: {after:?}"
        );
        assert!(after <= limit, "{what} cut off late: {after:?}");
    }
    assert!(
        body_reply.starts_with("HTTP/1.1 408"),
        "a stalled body must get 408 Request Timeout: {body_reply}"
    );
    // The server is still answering.
    let alive = exchange(port, &Req::mcp(port).bytes(), false)
        .await
        .unwrap();
    assert_eq!(alive.status, 200, "{}", alive.summary());
}
