//! The floor phase's report: the ratio table, the relay, syscalls by name
//! and memory.

use super::{CROWD, CROWD_CONNS, Column, Floor};
use crate::{stats, syscalls};

/// Most CPU per call the adapter may use, as a multiple of the floor's.
const CPU_GOAL: f64 = 1.10;
/// Fewest calls per second the adapter may serve, as a fraction of the
/// floor's.
const RATE_GOAL: f64 = 0.95;

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
                if cpu <= CPU_GOAL && rate >= RATE_GOAL {
                    "met"
                } else {
                    "missed"
                },
            ));
        }
        match self.instructions {
            Some([adapter, floor]) => out.push_str(&format!(
                "\nUser-space instructions per stdio call (valgrind cachegrind, {} calls, \
                 start-up subtracted; the load does not move them): adapter {}, floor {}: \
                 {:.2}×.\n",
                self.counted_calls,
                stats::count(adapter),
                stats::count(floor),
                adapter / floor.max(1.0),
            )),
            None => out.push_str(
                "\nUser-space instructions per stdio call: n/a (valgrind is not installed).\n",
            ),
        }
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
        let [(adapter_anon, adapter_file), (floor_anon, floor_file)] = self.idle_stdio_split;
        out.push_str(&format!(
            "\nMemory (VmRSS): idle over stdio after initialize: adapter {} ({} allocated, {} \
             mapped from its binary and libraries), floor {} ({} and {}); highest sampled at \
             {CROWD} HTTP clients: adapter {}, floor {}.\n",
            stats::mib(self.idle_stdio_kib[0]),
            stats::mib(adapter_anon),
            stats::mib(adapter_file),
            stats::mib(self.idle_stdio_kib[1]),
            stats::mib(floor_anon),
            stats::mib(floor_file),
            stats::mib(self.crowd_kib[0]),
            stats::mib(self.crowd_kib[1]),
        ));
        out
    }
}

fn allocations(per_call: Option<f64>) -> String {
    per_call.map_or("n/a".into(), |n| format!("{n:.0}"))
}
