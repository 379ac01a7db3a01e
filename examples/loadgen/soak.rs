//! `loadgen soak`: many HTTP clients mixing every tool against the
//! simulator for a long time, while the adapter's resident memory and open
//! descriptors are sampled. It fails on any protocol error and on growth
//! beyond noise.
//!
//! Growth beyond noise: samples taken during the warm-up (the first tenth
//! of the run, at least 5 s) are ignored; the rest are cut into quarters,
//! and the run fails when the last quarter's highest VmRSS exceeds the first
//! quarter's highest by more than max(1 MiB, 5%), or its highest descriptor
//! count exceeds the first quarter's by more than 4.

use std::fmt::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::direct::DirectConn;
use crate::mix::{Tally, Targets, client};
use crate::stats::{count, mib};
use crate::world::{self, Bins, HttpAdapter, Sim};
use crate::{Res, procfs, progress};

#[derive(Debug, Clone)]
pub struct Options {
    pub duration: Duration,
    pub clients: usize,
    pub sample_every: Duration,
    pub seed: u64,
}

/// Agents started; all but the last are approved.
const AGENTS: usize = 4;
const RSS_SLACK_KIB: u64 = 1024;
const RSS_SLACK_SHARE: f64 = 0.05;
const FD_SLACK: usize = 4;
struct Sample {
    at: Duration,
    rss_kib: u64,
    hwm_kib: u64,
    fds: usize,
}

pub async fn run(bins: &Bins, o: &Options) -> Res<(String, bool)> {
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let dir = dir.path();
    let agents = AGENTS.to_string();
    let sim = Sim::start(
        bins,
        dir,
        "hc",
        &[
            "--agents",
            &agents,
            "--shells",
            "1",
            "--idle-records",
            "20",
            "--agent-delay-ms",
            "200",
        ],
    )?;
    let mut direct = DirectConn::connect(&sim.socket).await?;
    direct
        .call("terminal.list", r#"{"include_finished":false}"#)
        .await?;
    let list = direct.result()?;
    let records = list["terminals"].as_array().cloned().unwrap_or_default();
    let agent_records: Vec<&Value> = records
        .iter()
        .filter(|t| t["program"] == "sim-agent")
        .collect();
    if agent_records.len() != AGENTS {
        return Err(format!("expected {AGENTS} agents: {list}"));
    }
    let allowlist: Vec<Value> = agent_records[..AGENTS - 1]
        .iter()
        .map(|t| json!({"address": t["address"], "created_ms": t["created_ms"]}))
        .collect();
    let address = |t: &Value| t["address"].as_str().unwrap_or_default().to_owned();
    let targets = Arc::new(Targets {
        approved: agent_records[..AGENTS - 1]
            .iter()
            .map(|t| address(t))
            .collect(),
        unapproved: records
            .iter()
            .filter(|t| t["program"] == "sh")
            .chain([agent_records[AGENTS - 1]])
            .map(address)
            .collect(),
        all: records.iter().map(address).collect(),
    });
    let (listener, port) = world::bind_port()?;
    let token = world::random_token()?;
    // `normal` mode: the agents sit in `done` between prompts, so idle-only
    // would refuse every prompt after the first.
    let config = world::http_config(
        &sim,
        port,
        json!({"coreId": sim.core_id, "sendMode": "normal", "sendAllowlist": allowlist}),
    );
    let config = world::write_config(dir, "soak.json", &config)?;
    let log = dir.join("adapter.err");
    let mut adapter = HttpAdapter::start(bins, &config, listener, &token, &log)?;
    let pid = adapter.pid();
    progress(&format!(
        "soak: {} clients for {} s against pid {pid}",
        o.clients,
        o.duration.as_secs()
    ));

    let started = Instant::now();
    let deadline = started + o.duration;
    let mut clients = Vec::new();
    for i in 0..o.clients {
        let (targets, token) = (Arc::clone(&targets), token.clone());
        let seed = o.seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        clients.push(tokio::spawn(async move {
            client(port, &token, &targets, seed, i, deadline).await
        }));
    }
    let mut samples = Vec::new();
    while Instant::now() < deadline {
        let mem = procfs::mem(pid)?;
        samples.push(Sample {
            at: started.elapsed(),
            rss_kib: mem.rss_kib,
            hwm_kib: mem.hwm_kib,
            fds: procfs::fds(pid)?,
        });
        tokio::time::sleep(
            o.sample_every
                .min(deadline.saturating_duration_since(Instant::now())),
        )
        .await;
    }
    let mut tally = Tally::default();
    for c in clients {
        tally.merge(
            c.await
                .map_err(|e| format!("a soak client panicked: {e}"))?,
        );
    }
    let elapsed = started.elapsed();
    let mem = procfs::mem(pid)?;
    samples.push(Sample {
        at: elapsed,
        rss_kib: mem.rss_kib,
        hwm_kib: mem.hwm_kib,
        fds: procfs::fds(pid)?,
    });
    let alive = adapter.alive();
    drop(adapter);
    let errors_logged = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("ERROR"))
        .count();
    Ok(verdict(o, &tally, &samples, elapsed, alive, errors_logged))
}

fn verdict(
    o: &Options,
    tally: &Tally,
    samples: &[Sample],
    elapsed: Duration,
    alive: bool,
    errors_logged: usize,
) -> (String, bool) {
    let mut out = String::new();
    let warmup = (o.duration / 10).max(Duration::from_secs(5));
    let steady: Vec<&Sample> = samples.iter().filter(|s| s.at >= warmup).collect();
    let quarter = (steady.len() / 4).max(1);
    let first = &steady[..quarter.min(steady.len())];
    let last = &steady[steady.len().saturating_sub(quarter)..];
    let max_rss = |s: &[&Sample]| s.iter().map(|s| s.rss_kib).max().unwrap_or(0);
    let max_fds = |s: &[&Sample]| s.iter().map(|s| s.fds).max().unwrap_or(0);
    let (rss_first, rss_last) = (max_rss(first), max_rss(last));
    let (fds_first, fds_last) = (max_fds(first), max_fds(last));
    let rss_allowed = rss_first + RSS_SLACK_KIB.max((rss_first as f64 * RSS_SLACK_SHARE) as u64);
    let rss_ok = rss_last <= rss_allowed;
    let fds_ok = fds_last <= fds_first + FD_SLACK;
    let enough = steady.len() >= 4;
    let all = |f: fn(&Sample) -> u64| {
        (
            samples.iter().map(f).min().unwrap_or(0),
            samples.iter().map(f).max().unwrap_or(0),
        )
    };
    let (rss_min, rss_max) = all(|s| s.rss_kib);
    let (fds_min, fds_max) = all(|s| s.fds as u64);
    let hwm = samples.last().map_or(0, |s| s.hwm_kib);
    let _ = writeln!(out, "| figure | value |");
    let _ = writeln!(out, "| --- | --- |");
    let _ = writeln!(
        out,
        "| duration | {:.0} s ({} clients, seed {}) |",
        elapsed.as_secs_f64(),
        o.clients,
        o.seed
    );
    let _ = writeln!(
        out,
        "| tool calls | {} ({:.0}/s) |",
        count(tally.calls as f64),
        tally.calls as f64 / elapsed.as_secs_f64()
    );
    let _ = writeln!(out, "| protocol errors | {} |", tally.error_count);
    let _ = writeln!(out, "| HTTP 429 (rate limit) | {} |", tally.rate_limited);
    let _ = writeln!(out, "| adapter ERROR log lines | {errors_logged} |");
    let _ = writeln!(
        out,
        "| samples | {} every {:.0} s; warm-up {:.0} s excluded |",
        samples.len(),
        o.sample_every.as_secs_f64(),
        warmup.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "| VmRSS min / max (whole run) | {} / {} |",
        mib(rss_min),
        mib(rss_max)
    );
    let _ = writeln!(out, "| VmHWM at the end | {} |", mib(hwm));
    let _ = writeln!(
        out,
        "| VmRSS max, first / last quarter after warm-up | {} / {} (allowed {}) |",
        mib(rss_first),
        mib(rss_last),
        mib(rss_allowed)
    );
    let _ = writeln!(
        out,
        "| open fds min / max (whole run) | {fds_min} / {fds_max} |"
    );
    let _ = writeln!(
        out,
        "| open fds max, first / last quarter after warm-up | {fds_first} / {fds_last} (allowed {}) |",
        fds_first + FD_SLACK
    );
    let _ = writeln!(out, "| adapter alive at the end | {alive} |");
    let _ = writeln!(out, "\nOutcomes:\n");
    let _ = writeln!(out, "| tool / outcome | calls |");
    let _ = writeln!(out, "| --- | ---: |");
    for (k, v) in &tally.outcomes {
        let _ = writeln!(out, "| {k} | {} |", count(*v as f64));
    }
    for e in &tally.errors {
        let _ = writeln!(out, "\nerror: {e}");
    }
    let _ = writeln!(
        out,
        "\nSamples (s: VmRSS MiB / fds): {}",
        samples
            .iter()
            .map(|s| format!(
                "{:.0}: {:.1}/{}",
                s.at.as_secs_f64(),
                s.rss_kib as f64 / 1024.0,
                s.fds
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut failures = Vec::new();
    if tally.error_count > 0 {
        failures.push(format!("{} protocol error(s)", tally.error_count));
    }
    if !rss_ok {
        failures.push("resident memory grew beyond noise".to_owned());
    }
    if !fds_ok {
        failures.push("open descriptors grew".to_owned());
    }
    if !enough {
        failures.push("too few samples after warm-up to judge growth".to_owned());
    }
    if !alive {
        failures.push("the adapter died".to_owned());
    }
    let passed = failures.is_empty();
    let _ = writeln!(
        out,
        "\nsoak: {}",
        if passed {
            "PASS".to_owned()
        } else {
            format!("FAIL: {}", failures.join("; "))
        }
    );
    (out, passed)
}
