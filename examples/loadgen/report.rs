//! The bench table in Markdown (it goes into VALIDATION.md as printed),
//! and the performance targets, each with PASS or MISS and the figure.

use std::fmt::Write;
use std::time::Duration;

use crate::caps::TOO_LARGE;
use crate::procfs::Mem;
use crate::stats::{self, Latency, bytes, count, mib, ms, ratio, us};
use crate::throughput::Run;

pub struct MemRow {
    pub moment: String,
    pub transport: &'static str,
    pub mem: Mem,
}

impl MemRow {
    pub fn new(moment: &str, transport: &'static str, mem: Mem) -> MemRow {
        MemRow {
            moment: moment.to_owned(),
            transport,
            mem,
        }
    }
}

/// One byte-cap case: refusal times, bytes read, or why it went wrong.
pub struct Cap {
    pub times: Vec<Duration>,
    pub bytes: Option<u64>,
    pub error: Option<String>,
    pub note: String,
}

impl Cap {
    pub fn ok(times: Vec<Duration>, bytes: Option<u64>) -> Cap {
        Cap {
            times,
            bytes,
            error: None,
            note: String::new(),
        }
    }

    pub fn failed(error: String) -> Cap {
        Cap {
            times: Vec::new(),
            bytes: None,
            error: Some(error),
            note: String::new(),
        }
    }

    fn median(&self) -> Duration {
        stats::median(&mut self.times.clone())
    }
}

pub struct Results {
    /// Characters on the full and the small screen.
    pub screen_chars: [usize; 2],
    /// `[screen][direct, stdio, HTTP, relay floor]`.
    pub latency: [[Latency; 4]; 2],
    pub latency_calls: usize,
    /// CPU time per lockstep call: adapter over stdio, over HTTP, relay.
    pub lockstep_cpu: [Duration; 3],
    pub level: Duration,
    /// `(concurrency, direct, HTTP)`.
    pub levels: Vec<(usize, Run, Run)>,
    /// OAuth against token mode at 32 clients, unless skipped.
    pub oauth: Option<crate::oauth::Comparison>,
    pub memory: Vec<MemRow>,
    pub startup: Vec<Duration>,
    pub starvation: Vec<crate::starve::Row>,
    pub slow_body: Vec<crate::slowbody::Row>,
    pub output_waits: Vec<crate::waits::Row>,
    pub pattern_costs: Vec<crate::patterns::Cost>,
    /// The stalling pattern's cost per poll under the previous build's caps.
    pub stalling_before: Duration,
    pub beside_costly_waits: crate::patterns::Beside,
    /// Machines against one core, unless skipped.
    pub machines: Option<crate::machines::Figures>,
    pub oversized: Cap,
    pub big_list: Cap,
}

const MIB: f64 = 1024.0 * 1024.0;

impl Results {
    /// The tables; returns them and whether every target passed.
    pub fn render(&self) -> (String, bool) {
        let mut out = String::new();
        self.latency_table(&mut out);
        self.throughput_table(&mut out);
        if let Some(oauth) = &self.oauth {
            crate::oauth::table(&mut out, oauth);
        }
        self.memory_table(&mut out);
        self.starvation_table(&mut out);
        self.slow_body_table(&mut out);
        self.output_wait_table(&mut out);
        crate::patterns::table(
            &mut out,
            &self.pattern_costs,
            self.stalling_before,
            &self.beside_costly_waits,
        );
        if let Some(machines) = &self.machines {
            crate::machines::table(&mut out, machines);
        }
        self.startup_table(&mut out);
        self.caps_table(&mut out);
        let passed = self.targets(&mut out);
        (out, passed)
    }

    fn latency_table(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "### Latency: one lockstep client, `read_output` vs `terminal.read` (`lines: 0`)\n"
        );
        let _ = writeln!(
            out,
            "{} timed calls per row (after warm-up), the four paths interleaved in 5 rounds.\n",
            count(self.latency_calls as f64)
        );
        let _ = writeln!(
            out,
            "| screen | path | median | p99 | median ratio | p99 ratio |"
        );
        let _ = writeln!(out, "| --- | --- | ---: | ---: | ---: | ---: |");
        // Shown in this order: the direct call, the floor, the adapter.
        let rows = [
            (0, "direct hc socket (1 connection)"),
            (3, "floor: do-nothing line relay over stdio pipes"),
            (1, "adapter over stdio"),
            (2, "adapter over HTTP (1 client)"),
        ];
        for (s, paths) in self.latency.iter().enumerate() {
            let screen = format!("{} chars", count(self.screen_chars[s] as f64));
            let base = paths[0];
            for (p, name) in rows {
                let lat = paths[p];
                let _ = writeln!(
                    out,
                    "| {screen} | {name} | {} | {} | {:.2}× | {:.2}× |",
                    us(lat.median),
                    us(lat.p99),
                    ratio(lat.median, base.median),
                    ratio(lat.p99, base.p99)
                );
            }
        }
        let [stdio, http, relay] = self.lockstep_cpu;
        let _ = writeln!(
            out,
            "\nCPU time (user+system) per lockstep call, both screens: adapter over stdio {}, \
             adapter over HTTP {}, the relay {}.",
            us(stdio),
            us(http),
            us(relay)
        );
    }

    fn throughput_table(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "\n### Throughput: `read_output` over HTTP vs `terminal.read` direct through 8 pooled connections\n"
        );
        let _ = writeln!(
            out,
            "{:.0} s per cell; the full screen; CPU per call is user+system time of each process over the run divided by the calls.\n",
            self.level.as_secs_f64()
        );
        let _ = writeln!(
            out,
            "| clients | direct calls/s | HTTP calls/s | HTTP / direct | HTTP 429s | errors | adapter CPU/call | sim CPU/call (direct / HTTP) | loadgen CPU/call (direct / HTTP) |"
        );
        let _ = writeln!(
            out,
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        );
        for (c, direct, http) in &self.levels {
            let _ = writeln!(
                out,
                "| {c} | {} | {} | {:.0}% | {} | {} | {} | {} / {} | {} / {} |",
                count(direct.per_second()),
                count(http.per_second()),
                100.0 * http.per_second() / direct.per_second().max(1e-9),
                count(http.rate_limited as f64),
                direct.errors + http.errors,
                us(http.cpu_per_call[0]),
                us(direct.cpu_per_call[1]),
                us(http.cpu_per_call[1]),
                us(direct.cpu_per_call[2]),
                us(http.cpu_per_call[2]),
            );
            for e in [&direct.first_error, &http.first_error]
                .into_iter()
                .flatten()
            {
                let _ = writeln!(out, "|  | first error: {e} | | | | | | | |");
            }
        }
    }

    fn starvation_table(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "\n### Starvation: an authorised client's fresh connection while idle unauthenticated sockets are held open\n"
        );
        let _ = writeln!(
            out,
            "Each probe connects anew and POSTs one `ping` with the token; the crowd never sends a byte and reopens every socket the adapter closes.\n"
        );
        let _ = writeln!(
            out,
            "| idle sockets held | probes served | median | worst | crowd sockets closed and reopened during the probes |"
        );
        let _ = writeln!(out, "| ---: | ---: | ---: | ---: | ---: |");
        for row in &self.starvation {
            let mut served = row.served();
            served.sort_unstable();
            let median = served.get(served.len() / 2).copied();
            let worst = served.last().copied();
            let show = |d: Option<Duration>| d.map_or("-".to_owned(), ms);
            let _ = writeln!(
                out,
                "| {} | {} of {} | {} | {} | {} |",
                count(row.held as f64),
                served.len(),
                row.probes.len(),
                show(median),
                show(worst),
                count(row.reopened as f64)
            );
            if let Some(Err(e)) = row.probes.iter().find(|p| p.is_err()) {
                let _ = writeln!(out, "|  | first failure: {e} | | | |");
            }
        }
    }

    fn slow_body_table(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "\n### Slow-body flood: an authorised client's fresh connection beside refused connections that declare a body and never send it\n"
        );
        let _ = writeln!(
            out,
            "Each probe connects anew and POSTs one `ping` with the token (connect to answer); each crowd connection sends `POST /mcp` headers with `Content-Length: 65536` and no body, and is replaced as the adapter closes it.\n"
        );
        let _ = writeln!(
            out,
            "| crowd refused for | connections | probes served | median | p99 | worst | crowd requests during the probes |"
        );
        let _ = writeln!(out, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        for row in &self.slow_body {
            let mut served = row.served();
            let lat = Latency::of(&mut served);
            let worst = served.last().copied();
            let show = |d: Duration| {
                if worst.is_some() {
                    ms(d)
                } else {
                    "-".to_owned()
                }
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} of {} | {} | {} | {} | {} |",
                row.variant.name(),
                count(row.crowd as f64),
                served.len(),
                row.probes.len(),
                show(lat.median),
                show(lat.p99),
                show(worst.unwrap_or_default()),
                count(row.crowd_requests as f64)
            );
            if let Some(Err(e)) = row.probes.iter().find(|p| p.is_err()) {
                let _ = writeln!(out, "|  | first failure: {e} | | | | | |");
            }
        }
    }

    fn output_wait_table(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "\n### Output waits: from the awaited line reaching the screen to the `wait_for_output` answer\n"
        );
        let _ = writeln!(
            out,
            "Concurrent waits over HTTP, one per terminal; the line is injected with the simulator's `emit`, which stamps the wall-clock moment it reached the screen.\n"
        );
        let _ = writeln!(
            out,
            "| line printed after | samples | median | p99 | worst |"
        );
        let _ = writeln!(out, "| ---: | ---: | ---: | ---: | ---: |");
        for row in &self.output_waits {
            let mut l = row.latencies.clone();
            let lat = crate::stats::Latency::of(&mut l);
            let worst = row.latencies.iter().max().copied().unwrap_or_default();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                ms(row.delay),
                row.latencies.len(),
                ms(lat.median),
                ms(lat.p99),
                ms(worst)
            );
        }
    }

    fn memory_table(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "\n### Memory of the adapter process (`/proc/<pid>/status`)\n"
        );
        let _ = writeln!(out, "| moment | transport | VmRSS | VmHWM (peak) |");
        let _ = writeln!(out, "| --- | --- | ---: | ---: |");
        for row in &self.memory {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                row.moment,
                row.transport,
                mib(row.mem.rss_kib),
                mib(row.mem.hwm_kib)
            );
        }
    }

    fn startup_table(&self, out: &mut String) {
        let mut sorted = self.startup.clone();
        sorted.sort_unstable();
        let _ = writeln!(
            out,
            "\n### Start-up: spawn to the `initialize` answer over stdio\n"
        );
        let _ = writeln!(out, "| runs | median | p90 | min | max |");
        let _ = writeln!(out, "| ---: | ---: | ---: | ---: | ---: |");
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            sorted.len(),
            ms(stats::percentile(&sorted, 50.0)),
            ms(stats::percentile(&sorted, 90.0)),
            ms(sorted.first().copied().unwrap_or_default()),
            ms(sorted.last().copied().unwrap_or_default()),
        );
    }

    fn caps_table(&self, out: &mut String) {
        let _ = writeln!(out, "\n### Caps: replies over 1 MiB (spec §3)\n");
        let _ = writeln!(
            out,
            "| case | adapter answer | time to refuse (median of {}) | bytes read from hc's socket |",
            self.oversized.times.len()
        );
        let _ = writeln!(out, "| --- | --- | ---: | ---: |");
        for (name, cap) in [
            ("`read_output`, 100 MiB reply", &self.oversized),
            ("`list_sessions` first page", &self.big_list),
        ] {
            let answer = match &cap.error {
                None => format!("isError: \"{TOO_LARGE}\""),
                Some(e) => format!("WRONG: {e}"),
            };
            let read = cap
                .bytes
                .map_or_else(|| "strace not installed".to_owned(), bytes);
            let _ = writeln!(
                out,
                "| {name} ({}) | {answer} | {} | {read} |",
                cap.note,
                ms(cap.median())
            );
        }
    }

    fn targets(&self, out: &mut String) -> bool {
        let mut all = true;
        let mut row = |out: &mut String, name: &str, measured: String, pass: bool| {
            all &= pass;
            let verdict = if pass { "PASS" } else { "MISS" };
            let _ = writeln!(out, "| {name} | {measured} | {verdict} |");
        };
        let _ = writeln!(out, "\n### Targets\n");
        let _ = writeln!(out, "| target | measured | verdict |");
        let _ = writeln!(out, "| --- | --- | --- |");
        let [direct, stdio, _, floor] = self.latency[0];
        let r = ratio(stdio.median, direct.median);
        row(
            out,
            "stdio `read_output` median ≤ 1.5× direct (full screen)",
            format!(
                "{:.2}× ({} vs {}; the do-nothing relay's floor is {:.2}×)",
                r,
                us(stdio.median),
                us(direct.median),
                ratio(floor.median, direct.median)
            ),
            r <= 1.5,
        );
        if let Some((_, d, h)) = self.levels.iter().find(|(c, _, _)| *c == 32) {
            let share = h.per_second() / d.per_second().max(1e-9);
            row(
                out,
                "HTTP throughput at 32 clients ≥ 70% of direct",
                format!(
                    "{:.0}% ({} vs {} calls/s)",
                    100.0 * share,
                    count(h.per_second()),
                    count(d.per_second())
                ),
                share >= 0.70 && h.errors == 0,
            );
        }
        if let Some(oauth) = &self.oauth {
            let (name, measured, pass) = crate::oauth::target(oauth);
            row(out, &name, measured, pass);
        }
        for wait in &self.output_waits {
            let mut l = wait.latencies.clone();
            let p99 = crate::stats::Latency::of(&mut l).p99;
            let goal = if wait.delay <= Duration::from_millis(200) {
                Duration::from_millis(100)
            } else {
                Duration::from_millis(600)
            };
            row(
                out,
                &format!(
                    "wait_for_output sees a line printed {} in: p99 < {}",
                    ms(wait.delay),
                    ms(goal)
                ),
                ms(p99),
                !wait.latencies.is_empty() && p99 < goal,
            );
        }
        for run in &self.starvation {
            let mut served = run.served();
            served.sort_unstable();
            let worst = served.last().copied();
            let all_served = run.failures() == 0;
            match run.held {
                1_000 => row(
                    out,
                    "authorised fresh connection beside 1,000 idle sockets: worst < 100 ms",
                    worst.map_or("none served".to_owned(), ms),
                    all_served && worst.is_some_and(|w| w < Duration::from_millis(100)),
                ),
                10_000 => row(
                    out,
                    "authorised fresh connection beside 10,000 idle sockets: served",
                    format!(
                        "{} of {} served, worst {}",
                        served.len(),
                        run.probes.len(),
                        worst.map_or("-".to_owned(), ms)
                    ),
                    all_served,
                ),
                _ => {}
            }
        }
        for (name, measured, pass) in
            crate::patterns::targets(&self.pattern_costs, &self.beside_costly_waits)
        {
            row(out, &name, measured, pass);
        }
        for run in &self.slow_body {
            let mut served = run.served();
            served.sort_unstable();
            let worst = served.last().copied();
            row(
                out,
                &format!(
                    "authorised fresh connection beside {} slow-body connections, {}: every one < 100 ms",
                    count(run.crowd as f64),
                    run.variant.name()
                ),
                format!(
                    "{} of {} served, worst {}",
                    served.len(),
                    run.probes.len(),
                    worst.map_or("-".to_owned(), ms)
                ),
                run.failures() == 0 && worst.is_some_and(|w| w < Duration::from_millis(100)),
            );
        }
        for m in self.memory.iter().filter(|m| m.moment.starts_with("idle")) {
            let peak = m.mem.hwm_kib;
            row(
                out,
                &format!("peak RSS idle ≤ 12 MiB ({})", m.transport),
                mib(peak),
                peak as f64 * 1024.0 <= 12.0 * MIB,
            );
        }
        if let Some(m) = self.memory.iter().find(|m| m.moment.starts_with("under")) {
            let peak = m.mem.hwm_kib;
            row(
                out,
                "peak RSS under 128-client load ≤ 32 MiB (HTTP)",
                format!("{} (VmHWM)", mib(peak)),
                peak as f64 * 1024.0 <= 32.0 * MIB,
            );
        }
        let startup = stats::median(&mut self.startup.clone());
        row(
            out,
            "spawn to `initialize` answer ≤ 20 ms (median)",
            ms(startup),
            startup <= Duration::from_millis(20),
        );
        let read = self.oversized.bytes;
        row(
            out,
            "100 MiB reply rejected after reading ≤ 1.1 MiB",
            match (&self.oversized.error, read) {
                (Some(e), _) => format!("wrong answer: {e}"),
                (None, Some(b)) => format!(
                    "{} read, refused in {}",
                    bytes(b),
                    ms(self.oversized.median())
                ),
                (None, None) => "not measured (no strace)".into(),
            },
            self.oversized.error.is_none() && read.is_some_and(|b| b as f64 <= 1.1 * MIB),
        );
        row(
            out,
            "`list_sessions` on 10,000 terminals fails explicitly",
            match &self.big_list.error {
                None => format!("\"{TOO_LARGE}\" in {}", ms(self.big_list.median())),
                Some(e) => e.clone(),
            },
            self.big_list.error.is_none(),
        );
        all
    }
}
