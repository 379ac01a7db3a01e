//! The simulator as a process (the `hc-sim` binary): its ready line, its
//! help text, SIGTERM, and restarts on the same socket path after a stop
//! or a crash.

use std::os::unix::net::UnixStream;
use std::process::Command;

use hc_sim::faults::FaultKind;
use hc_sim::testing::{Options, SOCKET_FILE};

use serde_json::json;

use crate::support::{
    Client, binary, eventually, greeted_client, hello_params, start_process, start_process_in,
};

fn idle_records(n: usize) -> Options {
    Options {
        idle_records: n,
        ..Options::default()
    }
}

#[test]
fn ready_line_names_a_fresh_core_id_and_the_socket() {
    let first = start_process(Options::default());
    let second = start_process(Options::default());
    for sim in [&first, &second] {
        let expected = format!(
            "ready core_id={} socket={}\n",
            sim.core_id,
            sim.socket.display()
        );
        assert_eq!(sim.ready_line, expected);
        assert_eq!(sim.core_id.len(), 36, "a UUID: {}", sim.core_id);
        assert_eq!(&sim.core_id[14..15], "4", "a v4 UUID: {}", sim.core_id);
    }
    assert_ne!(first.core_id, second.core_id);
}

#[test]
fn the_help_lists_every_fault_kind_with_its_meaning() {
    let output = Command::new(binary()).arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for kind in FaultKind::ALL {
        assert!(
            help.lines().any(|line| {
                line.trim_start().starts_with(kind.name()) && line.ends_with(&kind.meaning())
            }),
            "{} is not listed with its meaning:\n{help}",
            kind.name()
        );
    }
}

#[test]
fn sigterm_kills_the_programs_removes_the_sockets_and_exits_zero() {
    let mut sim = start_process(Options {
        shells: 1,
        readers: 1,
        ..Options::agents(1)
    });
    let pid = sim.pid();
    let children: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .map(|p| p.parse().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(children.len(), 3, "the agent, the shell and the reader");

    // SAFETY: signals our own child process, not yet reaped.
    #[expect(unsafe_code, reason = "SIGTERM to the simulator this test started")]
    unsafe {
        libc::kill(pid as i32, libc::SIGTERM)
    };
    let status = eventually("hc-sim to exit", || sim.try_wait().unwrap());
    assert!(status.success(), "exit status {status:?}");
    assert!(!sim.socket.exists() && !sim.control.exists());
    for child in children {
        eventually("the programs to be gone", || {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
            (stat.is_empty() || stat.contains(") Z ")).then_some(())
        });
    }
}

#[test]
fn a_stopped_simulator_restarts_on_the_same_socket_with_a_new_core_id() {
    let sim = start_process(idle_records(1));
    let (socket, old_core) = (sim.socket.clone(), sim.core_id.clone());
    let dir = sim.stop();
    assert!(!dir.path().join(SOCKET_FILE).exists(), "removed on SIGTERM");

    let sim = start_process_in(dir, idle_records(2));
    assert_eq!(sim.socket, socket);
    assert_ne!(sim.core_id, old_core);
    let mut client = Client::connect(&socket);
    let hello = client.result("hc.hello", hello_params(1));
    assert_eq!(hello["core_id"], sim.core_id.as_str());
    let listed = client.result("terminal.list", json!({ "include_finished": true }));
    assert_eq!(listed["terminals"].as_array().unwrap().len(), 2);
}

#[test]
fn a_crashed_simulator_leaves_a_stale_socket_that_a_restart_replaces() {
    let sim = start_process(idle_records(1));
    let old_core = sim.core_id.clone();
    let dir = sim.crash();
    let socket = dir.path().join(SOCKET_FILE);
    assert!(socket.exists(), "a crash cleans nothing up");
    let refused = UnixStream::connect(&socket).unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);

    let sim = start_process_in(dir, idle_records(1));
    assert_eq!(sim.socket, socket);
    assert_ne!(sim.core_id, old_core);
    greeted_client(&sim);
}
