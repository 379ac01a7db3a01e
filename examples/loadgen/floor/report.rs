//! The floor phase's report: the ratio table, instructions per call, the
//! relay, syscalls by name, memory and the binaries' sizes.

use super::{CROWD, CROWD_CONNS, Column, Floor};
use crate::{stats, syscalls};

/// Most CPU per call the adapter may use, as a multiple of the floor's.
const CPU_GOAL: f64 = 1.10;
/// Fewest calls per second the adapter may serve, as a fraction of the
/// floor's.
const RATE_GOAL: f64 = 0.95;
/// Most user-space instructions per call, as a multiple of the floor's.
const INSTRUCTION_GOAL: f64 = 1.10;
/// Most resident memory idle, over stdio and over HTTP (7 MiB).
const IDLE_GOAL_KIB: u64 = 7 * 1024;
/// Most resident memory at 32 HTTP clients, as a multiple of the floor's.
const CROWD_RSS_GOAL: f64 = 1.3;
/// Largest binary on disk (8 MB).
const BINARY_GOAL_BYTES: u64 = 8_000_000;

impl Floor {
    pub fn render(&self) -> String {
        let mut out = format!(
            "### Against the floor of the stack\n\n\
             adapter / examples/floor (a minimal rmcp server on the same crates and profile: one \
             read_output tool, one terminal.read per call, no checks); {} rounds, the servers \
             taking turns (first turn rotating), each figure the median of the rounds; {} \
             lockstep calls per turn on stdio and HTTP-1, {:.0} s turns at {CROWD} clients \
             (the floor on {CROWD_CONNS} hc connections, the adapter on its pool of 8). CPU is \
             the server process's own. Goal: CPU per call ≤ {CPU_GOAL:.2}×, calls/s ≥ \
             {RATE_GOAL:.2}×.\n\n\
             | path | CPU per call | wall median | calls/s | syscalls per call, floor vs adapter | allocations per call, floor vs adapter | goal |\n\
             |---|---|---|---|---|---|---|\n",
            self.rounds,
            self.calls,
            self.crowd_turn.as_secs_f64(),
        );
        let rows: [(&str, &Column, &Column); 3] = [
            ("stdio, 1 client", &self.stdio[0], &self.stdio[1]),
            ("HTTP, 1 client", &self.http1[0], &self.http1[1]),
            ("HTTP, 32 clients", &self.http32[0], &self.http32[1]),
        ];
        for (path, adapter, floor) in rows {
            let cpu = stats::ratio(adapter.cpu(), floor.cpu());
            let rate = adapter.per_second() / floor.per_second().max(1e-9);
            out.push_str(&format!(
                "| {path} | {cpu:.2}× ({} vs {}) | {:.2}× | {rate:.2}× ({} vs {}) | {} vs {} | {} vs {} | {} |\n",
                stats::us(adapter.cpu()),
                stats::us(floor.cpu()),
                stats::ratio(adapter.wall(), floor.wall()),
                stats::count(adapter.per_second()),
                stats::count(floor.per_second()),
                syscalls::per_call(floor.syscalls.as_ref()),
                syscalls::per_call(adapter.syscalls.as_ref()),
                allocations(floor.allocations),
                allocations(adapter.allocations),
                met(cpu <= CPU_GOAL && rate >= RATE_GOAL),
            ));
        }
        out.push_str(&self.render_instructions());
        let relay = &self.stdio[2];
        out.push_str(&format!(
            "\nThe do-nothing stdio relay: floor / relay CPU per call {:.2}× ({} vs {}), \
             wall median {:.2}×; {} syscalls per call.\n",
            stats::ratio(self.stdio[1].cpu(), relay.cpu()),
            stats::us(self.stdio[1].cpu()),
            stats::us(relay.cpu()),
            stats::ratio(self.stdio[1].wall(), relay.wall()),
            syscalls::per_call(relay.syscalls.as_ref()),
        ));
        out.push_str("\nSyscalls per call by name (strace -c -f), adapter then floor:\n\n");
        for (path, adapter, floor) in rows {
            out.push_str(&format!(
                "- {path}: adapter {}; floor {}\n",
                syscalls::breakdown(adapter.syscalls.as_ref()),
                syscalls::breakdown(floor.syscalls.as_ref()),
            ));
        }
        out.push_str(&self.render_footprint());
        out
    }
}

impl Floor {
    fn render_instructions(&self) -> String {
        let Some(counts) = self.instructions else {
            return "\nUser-space instructions per call: n/a (valgrind is not installed).\n".into();
        };
        let mut out = format!(
            "\nUser-space instructions per call (valgrind cachegrind, {} calls on each path, \
             start-up and connections subtracted; the load does not move them). Goal: ≤ \
             {INSTRUCTION_GOAL:.2}×.\n\n\
             | path | adapter | floor | adapter / floor | goal |\n|---|---|---|---|---|\n",
            self.counted_calls,
        );
        let rows = [
            ("stdio, 1 client", counts.stdio),
            ("HTTP, 1 client", counts.http1),
            ("HTTP, 32 clients", counts.http32),
        ];
        for (path, [adapter, floor]) in rows {
            let ratio = adapter / floor.max(1.0);
            out.push_str(&format!(
                "| {path} | {} | {} | {ratio:.2}× | {} |\n",
                stats::count(adapter),
                stats::count(floor),
                met(ratio <= INSTRUCTION_GOAL),
            ));
        }
        out
    }

    fn render_footprint(&self) -> String {
        let [(adapter_anon, adapter_file), (floor_anon, floor_file)] = self.idle_stdio_split;
        let crowd = self.crowd_kib[0] as f64 / (self.crowd_kib[1].max(1) as f64);
        let [adapter_bytes, floor_bytes] = self.binary_bytes;
        let idle_goal = |kib: u64| met(kib <= IDLE_GOAL_KIB);
        format!(
            "\nFootprint (VmRSS; the binaries as built, stripped):\n\n\
             | figure | adapter | floor | goal |\n|---|---|---|---|\n\
             | idle over stdio, after initialize | {} ({} allocated, {} mapped from the binary \
             and libraries) | {} ({} and {}) | ≤ {}: {} |\n\
             | idle over HTTP, token mode, listening | {} | {} | ≤ {}: {} |\n\
             | highest sampled at {CROWD} HTTP clients | {} | {} | ≤ {CROWD_RSS_GOAL:.1}× the \
             floor's: {crowd:.2}×, {} |\n\
             | binary | {:.1} MB ({adapter_bytes} B) | {:.1} MB ({floor_bytes} B) | ≤ \
             {:.0} MB: {} |\n",
            stats::mib(self.idle_stdio_kib[0]),
            stats::mib(adapter_anon),
            stats::mib(adapter_file),
            stats::mib(self.idle_stdio_kib[1]),
            stats::mib(floor_anon),
            stats::mib(floor_file),
            stats::mib(IDLE_GOAL_KIB),
            idle_goal(self.idle_stdio_kib[0]),
            stats::mib(self.idle_http_kib[0]),
            stats::mib(self.idle_http_kib[1]),
            stats::mib(IDLE_GOAL_KIB),
            idle_goal(self.idle_http_kib[0]),
            stats::mib(self.crowd_kib[0]),
            stats::mib(self.crowd_kib[1]),
            met(crowd <= CROWD_RSS_GOAL),
            adapter_bytes as f64 / 1e6,
            floor_bytes as f64 / 1e6,
            BINARY_GOAL_BYTES as f64 / 1e6,
            met(adapter_bytes <= BINARY_GOAL_BYTES),
        )
    }
}

fn met(yes: bool) -> &'static str {
    if yes { "met" } else { "missed" }
}

fn allocations(per_call: Option<f64>) -> String {
    per_call.map_or("n/a".into(), |n| format!("{n:.0}"))
}
