//! Pattern costs: what the costliest `wait_for_output` patterns the
//! adapter accepts cost per poll on a hostile screen, and what sixteen
//! such waits do to other callers. The screen is 20 rows of 120 cells of
//! "é" and combining acute accents, every row different; the patterns
//! match nothing on it, so every line is matched.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use herdr_core_mcp::{LineMatcher, POLL_BUDGET, compile_pattern as compile};
use serde_json::json;

use crate::http::HttpClient;
use crate::world::Sim;
use crate::{Res, progress};

/// The costliest accepted shapes found while choosing the caps, each at its
/// kind's cap.
pub const COSTLY: [&str; 3] = [
    r"(?:é?\b?){28}[^é\x{301}]",
    r"(?:[\w\W]?){61}[^é\x{301}]",
    r"(?:a?(?-u:\b)?){300}[^é\x{301}]",
];
/// The pattern the review stalled the server with; refused now.
pub const STALLING: &str = r"(?:é?\b?){3500}[^é\x{301}]";
/// Scans of each pattern measured.
const RUNS: usize = 20;
/// Waits beside which the other callers are timed.
pub const WAITS: usize = 16;
const WAIT_TIMEOUT: Duration = Duration::from_millis(2_000);

/// The hostile screen as a program would print it, shifted by `phase`.
pub fn hostile_screen(phase: usize) -> String {
    let mut text = String::from("\x1b[2J\x1b[H");
    for line in hostile_lines(phase) {
        text.push_str(&line);
        text.push_str("\r\n");
    }
    text
}

fn hostile_lines(phase: usize) -> Vec<String> {
    (0..20)
        .map(|row| {
            (0..120)
                .map(|cell| {
                    if (cell + row + phase).is_multiple_of(row + 2) {
                        "é\u{301}"
                    } else {
                        "é"
                    }
                })
                .collect()
        })
        .collect()
}

/// One pattern's cost on the hostile screen.
#[derive(Debug, Clone)]
pub struct Cost {
    pub pattern: String,
    /// A whole screen matched with no budget, worst of the runs.
    pub whole_screen: Duration,
    /// One poll as the adapter runs it (budget on, nothing known yet),
    /// worst of the runs.
    pub per_poll: Duration,
}

/// The cost of each accepted costly pattern.
pub fn costs() -> Res<Vec<Cost>> {
    progress("pattern costs: the costliest accepted patterns on a hostile 20x120 screen");
    let screen = hostile_lines(0).join("\n");
    let stop = AtomicBool::new(false);
    let mut costs = Vec::new();
    for pattern in COSTLY {
        let regex = compile(pattern).map_err(|e| format!("{pattern}: {e}"))?;
        let mut whole_screen = Duration::ZERO;
        let mut per_poll = Duration::ZERO;
        for _ in 0..RUNS {
            let started = Instant::now();
            LineMatcher::new(regex.clone()).scan(&screen, Duration::MAX, &stop);
            whole_screen = whole_screen.max(started.elapsed());
            let started = Instant::now();
            LineMatcher::new(regex.clone()).scan(&screen, POLL_BUDGET, &stop);
            per_poll = per_poll.max(started.elapsed());
        }
        costs.push(Cost {
            pattern: pattern.to_owned(),
            whole_screen,
            per_poll,
        });
    }
    Ok(costs)
}

/// What the stalling pattern cost before it was refused: compiled with the
/// previous build's caps (1 MiB program and DFA), matched on the async
/// workers every poll.
pub fn stalling_cost_before() -> Res<Duration> {
    let regex = regex::RegexBuilder::new(STALLING)
        .size_limit(1 << 20)
        .dfa_size_limit(1 << 20)
        .build()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    for line in hostile_lines(0) {
        std::hint::black_box(regex.is_match(&line));
    }
    Ok(started.elapsed())
}

/// Other callers beside [`WAITS`] costly waits.
#[derive(Debug, Clone, Default)]
pub struct Beside {
    /// read_output and send_prompt latencies of the other callers.
    pub others: Vec<Duration>,
    /// How long after its timeout each wait answered (zero if before).
    pub overruns: Vec<Duration>,
    /// The adapter accepted [`STALLING`] (a build before the caps), and the
    /// waits used it.
    pub stalling_accepted: bool,
}

/// Starts the waits on `hostile` and times calls to the other `terminals`
/// while the screen keeps changing.
pub async fn beside_waits(
    sim: &Sim,
    port: u16,
    token: &str,
    hostile: &str,
    others: &[String],
) -> Res<Beside> {
    progress(&format!(
        "pattern costs: read_output and send_prompt beside {WAITS} costly waits"
    ));
    sim.control(
        "emit",
        json!({"address": hostile, "text": hostile_screen(0)}),
    )
    .await?;
    // A build that still accepts the stalling pattern is measured with it.
    let mut probe = HttpClient::new(port, token);
    let args = json!({"address": hostile, "pattern": STALLING, "timeout_ms": 100}).to_string();
    probe.call_tool("wait_for_output", &args).await?;
    let stalling_accepted = !probe.text().contains("invalid arguments");
    let patterns: Vec<&str> = if stalling_accepted {
        vec![STALLING]
    } else {
        COSTLY.to_vec()
    };
    let mut waits = tokio::task::JoinSet::new();
    for w in 0..WAITS {
        let args = json!({
            "address": hostile,
            "pattern": patterns[w % patterns.len()],
            "timeout_ms": WAIT_TIMEOUT.as_millis() as u64,
        })
        .to_string();
        let token = token.to_owned();
        waits.spawn(async move {
            let mut client = HttpClient::new(port, &token);
            let started = Instant::now();
            client.call_tool("wait_for_output", &args).await?;
            let body = client.text().to_owned();
            if !body.contains(r#""outcome":"timeout""#) {
                return Err(format!("a costly wait did not time out: {body}"));
            }
            Ok::<_, String>(started.elapsed().saturating_sub(WAIT_TIMEOUT))
        });
    }
    let mut client = HttpClient::new(port, token);
    let mut beside = Beside {
        stalling_accepted,
        ..Beside::default()
    };
    let started = Instant::now();
    let mut phase = 1;
    while started.elapsed() < WAIT_TIMEOUT - Duration::from_millis(200) {
        sim.control(
            "emit",
            json!({"address": hostile, "text": hostile_screen(phase)}),
        )
        .await?;
        phase += 1;
        for other in others {
            let read = json!({"address": other}).to_string();
            let t = Instant::now();
            client.call_tool("read_output", &read).await?;
            beside.others.push(t.elapsed());
            let send = json!({"address": other, "text": "hello"}).to_string();
            let t = Instant::now();
            client.call_tool("send_prompt", &send).await?;
            beside.others.push(t.elapsed());
        }
    }
    while let Some(joined) = waits.join_next().await {
        beside
            .overruns
            .push(joined.map_err(|e| format!("a wait panicked: {e}"))??);
    }
    Ok(beside)
}

/// The pattern-cost tables.
pub fn table(out: &mut String, costs: &[Cost], stalling_before: Duration, beside: &Beside) {
    use std::fmt::Write;
    let _ = writeln!(
        out,
        "\n### Pattern costs: the costliest accepted `wait_for_output` patterns on a hostile 20×120 screen\n"
    );
    let _ = writeln!(
        out,
        "Rows of \"é\" and combining acute accents, every row different; {RUNS} scans each, worst shown. One poll stops matching after the {} budget (past the first new line) and leaves the rest to the next poll.\n",
        ms(POLL_BUDGET)
    );
    let _ = writeln!(out, "| pattern | whole screen, no budget | one poll |");
    let _ = writeln!(out, "| --- | ---: | ---: |");
    for cost in costs {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            cost.pattern,
            ms(cost.whole_screen),
            ms(cost.per_poll)
        );
    }
    let _ = writeln!(
        out,
        "| `{STALLING}` under the previous build's caps (now refused) | {} | {} (matched whole, every poll) |",
        ms(stalling_before),
        ms(stalling_before)
    );
    let mut others = beside.others.clone();
    let lat = Latency::of(&mut others);
    let overrun = beside.overruns.iter().max().copied().unwrap_or_default();
    let which = if beside.stalling_accepted {
        format!("waits with `{STALLING}` (this build accepts it)")
    } else {
        "such waits (the stalling pattern is refused)".to_owned()
    };
    let _ = writeln!(
        out,
        "\nBeside {WAITS} {which} (timeout {}) while the screen changed every round: {} read_output/send_prompt calls of other callers, median {}, p99 {}, worst {}; the waits answered at most {} after their timeout.",
        ms(WAIT_TIMEOUT),
        others.len(),
        ms(lat.median),
        ms(lat.p99),
        ms(others.last().copied().unwrap_or_default()),
        ms(overrun)
    );
}

/// `(target, measured, pass)` rows.
pub fn targets(costs: &[Cost], beside: &Beside) -> Vec<(String, String, bool)> {
    let worst_poll = costs.iter().map(|c| c.per_poll).max().unwrap_or_default();
    let mut others = beside.others.clone();
    others.sort_unstable();
    let worst_other = others.last().copied().unwrap_or_default();
    let overrun = beside.overruns.iter().max().copied().unwrap_or_default();
    vec![
        (
            "any accepted pattern ≤ 50 ms per poll on a 20×120 hostile screen".into(),
            format!("worst {}", ms(worst_poll)),
            worst_poll <= Duration::from_millis(50),
        ),
        (
            format!("other callers' read_output/send_prompt < 100 ms beside {WAITS} costly waits"),
            format!("worst {} of {} calls", ms(worst_other), others.len()),
            !others.is_empty() && worst_other < Duration::from_millis(100),
        ),
        (
            "a costly wait answers within timeout_ms + 250 ms".into(),
            format!("worst {} after", ms(overrun)),
            beside.overruns.len() == WAITS && overrun <= Duration::from_millis(250),
        ),
    ]
}

fn ms(d: Duration) -> String {
    crate::stats::ms(d)
}

use crate::stats::Latency;
