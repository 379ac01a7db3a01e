//! Output-wait latency: how long after the awaited line reaches a screen
//! a `wait_for_output` call returns, for lines printed 0.2 s, 2 s and 20 s
//! after the wait began. Each sample is one wait on its own terminal of a
//! dedicated simulator, over its own HTTP connection; the line is injected
//! with the simulator's `emit`, which answers the wall-clock microsecond it
//! reached the screen, and the latency is the wall clock when the answer
//! arrived minus that.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::http::HttpClient;
use crate::world::Sim;
use crate::{Res, progress};

/// One delay's samples.
#[derive(Debug, Clone)]
pub struct Row {
    pub delay: Duration,
    /// Emit-to-answer latency of each sample.
    pub latencies: Vec<Duration>,
}

/// `rounds` rounds of one wait per terminal at `addresses` of `sim`, for
/// each delay.
pub async fn measure(
    sim: &Sim,
    port: u16,
    token: &str,
    addresses: &[String],
    delays: &[Duration],
    rounds: usize,
) -> Res<Vec<Row>> {
    let mut rows = Vec::new();
    for &delay in delays {
        progress(&format!(
            "wait_for_output latency: a line {} after the wait began, {} samples",
            crate::stats::ms(delay),
            addresses.len() * rounds
        ));
        let mut latencies = Vec::new();
        for round in 0..rounds {
            let mut samples = tokio::task::JoinSet::new();
            for (t, address) in addresses.iter().enumerate() {
                let address = address.clone();
                let marker = format!("MARK-{}-{round}-{t}", delay.as_millis());
                let token = token.to_owned();
                let control = sim.control_path();
                samples.spawn(async move {
                    sample(port, &token, &control, &address, &marker, delay).await
                });
            }
            while let Some(joined) = samples.join_next().await {
                latencies.push(joined.map_err(|e| format!("a sample panicked: {e}"))??);
            }
        }
        rows.push(Row { delay, latencies });
    }
    Ok(rows)
}

async fn sample(
    port: u16,
    token: &str,
    control: &std::path::Path,
    address: &str,
    marker: &str,
    delay: Duration,
) -> Res<Duration> {
    let mut client = HttpClient::new(port, token);
    let arguments =
        json!({"address": address, "pattern": format!("^{marker}$"), "timeout_ms": 120000});
    let waiting = async move {
        let status = client
            .call_tool("wait_for_output", &arguments.to_string())
            .await?;
        let answered = now_us();
        let body: Value = serde_json::from_str(client.text())
            .map_err(|e| format!("wait_for_output answer is not JSON ({e})"))?;
        let outcome = &body["result"]["structuredContent"]["outcome"];
        if status.0 != 200 || outcome != "matched" {
            return Err(format!(
                "wait_for_output on {address} ended {outcome} (HTTP {})",
                status.0
            ));
        }
        Ok(answered)
    };
    let emit = emit_after(control, address, format!("\r\n{marker}\r\n"), delay);
    let (answered, emitted) = tokio::join!(waiting, emit);
    let (answered, emitted) = (answered?, emitted?);
    Ok(Duration::from_micros(answered.saturating_sub(emitted)))
}

/// Puts `text` on the screen of `address` with the `emit` of the simulator
/// whose control socket is `control`, `delay` from now; returns the
/// wall-clock microsecond it reached the screen.
pub async fn emit_after(
    control: &std::path::Path,
    address: &str,
    text: String,
    delay: Duration,
) -> Res<u64> {
    tokio::time::sleep(delay).await;
    let control = control.to_path_buf();
    let address = address.to_owned();
    let answer = tokio::task::spawn_blocking(move || {
        hc_sim::testing::control_call(&control, "emit", json!({"address": address, "text": text}))
    })
    .await
    .map_err(|e| format!("emit task: {e}"))?
    .map_err(|e| format!("emit: {e}"))?;
    answer["emitted_unix_us"]
        .as_u64()
        .ok_or_else(|| format!("emit answered {answer}"))
}

/// The wall clock in microseconds since the Unix epoch, as `emit` stamps.
pub fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}
