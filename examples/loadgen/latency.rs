//! Lockstep latency of one read: `terminal.read` (`lines: 0`) straight on
//! the hc socket, and `read_output` through the adapter over stdio and over
//! HTTP. Only the exchange is timed; answers are validated outside the
//! clock (fully on the first call and every [`FULL_CHECK_EVERY`] calls,
//! cheaply on the others).

use std::time::{Duration, Instant};

use crate::Res;
use crate::direct::DirectConn;
use crate::http::HttpClient;
use crate::relay::Relay;
use crate::stdio::{StdioAdapter, tool_ok};

/// Every this many calls an answer is decoded and compared in full.
const FULL_CHECK_EVERY: usize = 500;

/// The screen every path must return for `address`.
pub struct Expect<'a> {
    pub address: &'a str,
    pub text: &'a str,
}

impl Expect<'_> {
    pub fn arguments(&self) -> String {
        format!(r#"{{"address":"{}","max_chars":32768}}"#, self.address)
    }

    fn check_tool(&self, result: &serde_json::Value) -> Res<()> {
        let sc = &result["structuredContent"];
        if sc["address"] != self.address || sc["text"] != self.text {
            return Err(format!(
                "read_output of {} returned another screen: {}",
                self.address, sc
            ));
        }
        Ok(())
    }
}

/// `warmup` untimed then `calls` timed reads on one direct connection.
pub async fn direct(
    conn: &mut DirectConn,
    expect: &Expect<'_>,
    warmup: usize,
    calls: usize,
) -> Res<Vec<Duration>> {
    let mut samples = Vec::with_capacity(calls);
    for i in 0..warmup + calls {
        let started = Instant::now();
        conn.read_screen(expect.address).await?;
        let elapsed = started.elapsed();
        if i >= warmup {
            samples.push(elapsed);
        }
        if i % FULL_CHECK_EVERY == 0 {
            let result = conn.result()?;
            if result["text"] != expect.text {
                return Err(format!("terminal.read of {} changed", expect.address));
            }
        }
    }
    Ok(samples)
}

/// The same through the adapter over stdio.
pub async fn stdio(
    adapter: &mut StdioAdapter,
    expect: &Expect<'_>,
    warmup: usize,
    calls: usize,
) -> Res<Vec<Duration>> {
    let arguments = expect.arguments();
    let mut samples = Vec::with_capacity(calls);
    for i in 0..warmup + calls {
        let started = Instant::now();
        let id = adapter.call_tool("read_output", &arguments).await?;
        let elapsed = started.elapsed();
        if i >= warmup {
            samples.push(elapsed);
        }
        if i % FULL_CHECK_EVERY == 0 {
            expect.check_tool(&tool_ok(&adapter.line, id)?)?;
        } else if adapter.line.contains(r#""isError":true"#) {
            return Err(format!("read_output failed: {}", adapter.line));
        }
    }
    Ok(samples)
}

/// The same through the adapter over HTTP, one keep-alive client.
pub async fn http(
    client: &mut HttpClient,
    expect: &Expect<'_>,
    warmup: usize,
    calls: usize,
) -> Res<Vec<Duration>> {
    let arguments = expect.arguments();
    let mut samples = Vec::with_capacity(calls);
    for i in 0..warmup + calls {
        let started = Instant::now();
        let (status, id) = client.call_tool("read_output", &arguments).await?;
        let elapsed = started.elapsed();
        if status != 200 {
            return Err(format!(
                "read_output over HTTP: status {status}: {}",
                client.text()
            ));
        }
        if i >= warmup {
            samples.push(elapsed);
        }
        if i % FULL_CHECK_EVERY == 0 {
            expect.check_tool(&tool_ok(client.text(), id)?)?;
        } else if client.text().contains(r#""isError":true"#) {
            return Err(format!("read_output failed: {}", client.text()));
        }
    }
    Ok(samples)
}

/// The same `terminal.read` lines through the do-nothing stdio relay.
pub async fn relay(
    relay: &mut Relay,
    expect: &Expect<'_>,
    warmup: usize,
    calls: usize,
) -> Res<Vec<Duration>> {
    let mut samples = Vec::with_capacity(calls);
    for i in 0..warmup + calls {
        let started = Instant::now();
        relay.read_screen(expect.address).await?;
        let elapsed = started.elapsed();
        if i >= warmup {
            samples.push(elapsed);
        }
        if i % FULL_CHECK_EVERY == 0 {
            let reply: serde_json::Value = serde_json::from_str(&relay.line)
                .map_err(|e| format!("relay reply is not JSON: {e}"))?;
            if reply["result"]["text"] != expect.text {
                return Err(format!(
                    "relay: terminal.read of {} changed",
                    expect.address
                ));
            }
        }
    }
    Ok(samples)
}
