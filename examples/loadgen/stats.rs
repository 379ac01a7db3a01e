//! Percentiles and the number formats of the tables.

use std::time::Duration;

/// Median, 95th and 99th percentile of a latency sample.
#[derive(Debug, Clone, Copy)]
pub struct Latency {
    pub median: Duration,
    pub p95: Duration,
    pub p99: Duration,
}

impl Latency {
    pub fn of(samples: &mut [Duration]) -> Latency {
        samples.sort_unstable();
        Latency {
            median: percentile(samples, 50.0),
            p95: percentile(samples, 95.0),
            p99: percentile(samples, 99.0),
        }
    }
}

/// Nearest-rank percentile of sorted samples.
pub fn percentile(sorted: &[Duration], pct: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((pct / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn median(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    percentile(samples, 50.0)
}

pub fn us(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

pub fn bytes(n: u64) -> String {
    if n >= 1024 * 1024 {
        format!("{:.3} MiB ({n} B)", n as f64 / (1024.0 * 1024.0))
    } else if n >= 1024 {
        format!("{:.1} KiB ({n} B)", n as f64 / 1024.0)
    } else {
        format!("{n} B")
    }
}

pub fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}

/// Thousands separators for counts and rates.
pub fn count(n: f64) -> String {
    let s = format!("{:.0}", n.max(0.0));
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
