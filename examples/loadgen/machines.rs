//! `list_sessions` and a fleet wait over 3 machines of 50 terminals each
//! (contract §8: another core's terminals, listed by this core as `mN/tK`
//! from records it refreshes every 100 ms), against the same over one core
//! of 150 terminals. Each setup has its own adapter over stdio; both run
//! at once and take turns within each round, the first alternating, so
//! background load hits them alike. A round times `lists` lockstep
//! `list_sessions` calls per setup, then one fleet wait (no targets,
//! `scope: "all"`, the last list's `since`) ended by one status change: an
//! agent's OSC 7501 state put on its screen with `emit` (on the machine's
//! own simulator for the machines), at a delay spread over the adapter's
//! poll from round to round so that the change meets every phase of it.
//! The wait is timed from the emit's stamp to the answer, as the output
//! waits are. Every terminal is an idle record but one agent per machine
//! (and three on the one core).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;
use serde_json::json;

use crate::stats::{Latency, count, ms, ratio, us};
use crate::stdio::{self, StdioAdapter};
use crate::waits::{emit_after, now_us};
use crate::world::{self, Bins, Sim};
use crate::{Res, progress};

#[derive(Debug, Clone)]
pub struct Options {
    /// Rounds, one fleet wait per setup each (0 skips the phase).
    pub rounds: usize,
    /// Timed `list_sessions` calls per setup and round.
    pub lists: usize,
}

const MACHINES: usize = 3;
const PER_MACHINE: usize = 50;
/// `list_sessions` asks for its largest page.
const LIST_ARGS: &str = r#"{"limit":100}"#;
/// The earliest a round's status change comes after its wait began.
const FIRST_DELAY: Duration = Duration::from_millis(20);
const NAMES: [&str; 2] = ["one core, 150 terminals", "3 machines, 50 terminals each"];

/// Each setup's samples: `[one core, machines]`.
pub struct Figures {
    pub rounds: usize,
    pub lists: [Vec<Duration>; 2],
    pub waits: [Vec<Duration>; 2],
}

/// An agent whose status a round changes.
struct Agent {
    /// The control socket of the simulator it runs on.
    control: PathBuf,
    /// Its address there.
    local: String,
    /// Its address as the adapter's core lists it.
    listed: String,
}

/// One setup: the simulators (the core the adapter is in front of first),
/// its adapter, its agents.
struct Setup {
    _sims: Vec<Sim>,
    adapter: StdioAdapter,
    agents: Vec<Agent>,
    changes: usize,
}

pub async fn run(bins: &Bins, o: &Options) -> Res<Figures> {
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let dir = dir.path();
    progress(&format!(
        "machines: starting one core of {} terminals, and {MACHINES} machines of {PER_MACHINE} \
         behind another core",
        MACHINES * PER_MACHINE
    ));
    let idle = (MACHINES * (PER_MACHINE - 1)).to_string();
    let one = Sim::start(
        bins,
        dir,
        "one-core",
        &["--agents", &MACHINES.to_string(), "--idle-records", &idle],
    )?;
    let agents = (1..=MACHINES)
        .map(|t| Agent {
            control: one.control_path(),
            local: format!("t{t}"),
            listed: format!("t{t}"),
        })
        .collect();
    let one = Setup::start(bins, dir, "one-core", vec![one], agents).await?;

    let idle = (PER_MACHINE - 1).to_string();
    let mut sims = Vec::new();
    let mut flags = Vec::new();
    let mut agents = Vec::new();
    for m in 1..=MACHINES {
        let name = format!("m{m}");
        let sim = Sim::start(
            bins,
            dir,
            &name,
            &["--agents", "1", "--idle-records", &idle],
        )?;
        flags.push("--machine".to_owned());
        flags.push(format!("{name}={}", sim.socket.display()));
        agents.push(Agent {
            control: sim.control_path(),
            local: "t1".into(),
            listed: format!("{name}/t1"),
        });
        sims.push(sim);
    }
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    sims.insert(0, Sim::start(bins, dir, "fleet", &flags)?);
    let fleet = Setup::start(bins, dir, "fleet", sims, agents).await?;

    progress(&format!(
        "machines: {} rounds of {} list_sessions and one fleet wait per setup",
        o.rounds, o.lists
    ));
    let poll = herdr_core_mcp::Pace::default().poll;
    let mut setups = [one, fleet];
    let mut figures = Figures {
        rounds: o.rounds,
        lists: Default::default(),
        waits: Default::default(),
    };
    for round in 0..o.rounds {
        let delay = FIRST_DELAY + poll.mul_f64(round as f64 / o.rounds as f64);
        for turn in 0..2 {
            let s = (round + turn) % 2;
            let setup = &mut setups[s];
            let mut since = String::new();
            for _ in 0..o.lists.max(1) {
                let (took, listed) = setup.list().await?;
                figures.lists[s].push(took);
                since = listed;
            }
            figures.waits[s].push(setup.wait(&since, delay).await?);
        }
    }
    for setup in setups {
        setup.adapter.close().await?;
    }
    Ok(figures)
}

impl Setup {
    /// Waits until the core lists every terminal and the agents idle, then
    /// starts and initializes the adapter.
    async fn start(
        bins: &Bins,
        dir: &std::path::Path,
        name: &str,
        sims: Vec<Sim>,
        agents: Vec<Agent>,
    ) -> Res<Setup> {
        let core = &sims[0];
        let hc = HcClient::new(&core.socket, Duration::from_secs(5));
        let wanted = MACHINES * PER_MACHINE;
        let mut seen = 0;
        for _ in 0..200 {
            let listed = hc
                .list(false)
                .await
                .map_err(|e| format!("listing {name}: {e}"))?
                .value
                .terminals;
            seen = listed.len();
            let idle = |address: &str| {
                listed
                    .iter()
                    .any(|t| t.address == address && t.status == TerminalStatus::Idle)
            };
            if seen == wanted && agents.iter().all(|a| idle(&a.listed)) {
                let config = world::write_config(
                    dir,
                    &format!("{name}.json"),
                    &world::stdio_config(core, json!({})),
                )?;
                let mut adapter =
                    StdioAdapter::spawn(bins, &config, &dir.join(format!("{name}-stdio.err")))?;
                adapter.initialize().await?;
                return Ok(Setup {
                    _sims: sims,
                    adapter,
                    agents,
                    changes: 0,
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(format!(
            "{name} listed {seen} of {wanted} terminals, or its agents were not idle, after 10 s"
        ))
    }

    /// One timed `list_sessions`, and its `since`.
    async fn list(&mut self) -> Res<(Duration, String)> {
        let started = Instant::now();
        let id = self.adapter.call_tool("list_sessions", LIST_ARGS).await?;
        let took = started.elapsed();
        let result = stdio::tool_ok(&self.adapter.line, id)?;
        let since = result["structuredContent"]["since"]
            .as_str()
            .ok_or_else(|| format!("list_sessions gave no since: {}", self.adapter.line))?;
        Ok((took, since.to_owned()))
    }

    /// A fleet wait from `since`, and the next agent's status changed
    /// `delay` after it began: from that change to the answer.
    async fn wait(&mut self, since: &str, delay: Duration) -> Res<Duration> {
        let Setup {
            adapter,
            agents,
            changes,
            ..
        } = self;
        let agent = &agents[*changes % agents.len()];
        // Each agent goes working, then idle again, then working...
        let state = if (*changes / agents.len()).is_multiple_of(2) {
            "working"
        } else {
            "idle"
        };
        *changes += 1;
        let arguments = json!({"since": since, "scope": "all", "timeout_ms": 10_000}).to_string();
        let waiting = async {
            let id = adapter.call_tool("wait_for_status", &arguments).await?;
            Ok::<_, String>((id, now_us()))
        };
        let text = format!("\x1b]7501;state={state}:app=sim-agent\x07");
        let emit = emit_after(&agent.control, &agent.local, text, delay);
        let (answered, emitted) = tokio::join!(waiting, emit);
        let ((id, answered), emitted) = (answered?, emitted?);
        let result = stdio::tool_ok(&adapter.line, id)?;
        let out = &result["structuredContent"];
        if out["outcome"] != "reached" || out["address"] != agent.listed.as_str() {
            return Err(format!(
                "a fleet wait for {} going {state} answered {out}",
                agent.listed
            ));
        }
        Ok(Duration::from_micros(answered.saturating_sub(emitted)))
    }
}

/// The machines table: median and p95 per setup, and machines / one core.
pub fn table(out: &mut String, figures: &Figures) {
    use std::fmt::Write;
    let _ = writeln!(
        out,
        "\n### Machines: `list_sessions` and a fleet wait over {MACHINES} machines of {PER_MACHINE} terminals against one core of {}\n",
        MACHINES * PER_MACHINE
    );
    let _ = writeln!(
        out,
        "Each setup behind its own adapter over stdio, both running, in turns over {} rounds: \
         lockstep `list_sessions` (`limit` 100); then a fleet wait (`wait_for_status`, no \
         targets, `scope: \"all\"`, the last list's `since`) ended by one agent's status \
         change, put on its screen with `emit` (on the machine's own simulator) {}–{} ms \
         after the wait began, timed from the emit's stamp to the answer. Ratios: machines / \
         one core.\n",
        figures.rounds,
        FIRST_DELAY.as_millis(),
        (FIRST_DELAY + herdr_core_mcp::Pace::default().poll).as_millis()
    );
    let _ = writeln!(
        out,
        "| call | terminals | samples | median | p95 | median ratio | p95 ratio |"
    );
    let _ = writeln!(out, "| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    rows(out, "`list_sessions`", &figures.lists, us);
    rows(out, "fleet wait, change to answer", &figures.waits, ms);
}

/// One call's rows, one core first, each with `show`n figures.
fn rows(out: &mut String, call: &str, samples: &[Vec<Duration>; 2], show: fn(Duration) -> String) {
    use std::fmt::Write;
    let lat = samples.clone().map(|mut s| Latency::of(&mut s));
    for (s, name) in NAMES.iter().enumerate() {
        let _ = writeln!(
            out,
            "| {call} | {name} | {} | {} | {} | {:.2}× | {:.2}× |",
            count(samples[s].len() as f64),
            show(lat[s].median),
            show(lat[s].p95),
            ratio(lat[s].median, lat[0].median),
            ratio(lat[s].p95, lat[0].p95)
        );
    }
}
