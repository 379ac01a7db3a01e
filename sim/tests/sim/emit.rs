//! Control `emit`: text put on a terminal's screen as if its program had
//! printed it, stamped with the wall clock once the screen holds it.

use std::time::{SystemTime, UNIX_EPOCH};

use hc_sim::testing::{Error, Options, Simulator};
use serde_json::{Value, json};

use crate::support::{greeted_client, record, screen, start, text};

fn unix_us() -> u64 {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    u64::try_from(since_epoch.as_micros()).unwrap()
}

/// The error object of an `emit` that must be refused.
fn refused_emit(sim: &Simulator, address: &str) -> Value {
    match sim.try_control("emit", json!({ "address": address, "text": "x" })) {
        Err(Error::Refused { error, .. }) => error,
        other => panic!("emit to {address} was not refused: {other:?}"),
    }
}

#[test]
fn emitted_text_is_on_the_screen_by_its_stamp() {
    let sim = start(Options {
        agents: 1,
        shells: 1,
        readers: 1,
        ..Options::default()
    });
    let mut client = greeted_client(&sim);
    for address in ["t1", "t2", "t3"] {
        let line = format!("EMITTED-ON-{address}");
        let before_us = unix_us();
        let emitted = sim.control(
            "emit",
            json!({ "address": address, "text": format!("\r\n{line}\r\n") }),
        );
        let after_us = unix_us();
        let stamp = emitted["emitted_unix_us"]
            .as_u64()
            .unwrap_or_else(|| panic!("no stamp in {emitted}"));
        assert!(
            (before_us..=after_us).contains(&stamp),
            "{before_us} <= {stamp} <= {after_us}"
        );
        let read = screen(&mut client, address);
        assert!(text(&read).contains(&line), "{address}: {read}");
    }
    assert!(sim.writes().is_empty(), "emitting is output, not input");
}

#[test]
fn emitted_text_takes_the_path_of_program_output() {
    let sim = start(Options {
        shells: 1,
        ..Options::default()
    });
    let mut client = greeted_client(&sim);
    sim.control(
        "emit",
        json!({
            "address": "t1",
            "text": "\x1b]7501;state=working:app=fake\x1b\\\x1b[1mBOLD-LINE\x1b[0m",
        }),
    );
    let after = record(&mut client, "t1");
    assert_eq!(after["status"], "working", "the status report was parsed");
    assert_eq!(after["program"], "fake");
    let read = screen(&mut client, "t1");
    let shown = text(&read);
    assert!(shown.contains("BOLD-LINE"), "{shown:?}");
    assert!(
        !shown.contains("7501") && !shown.contains("[1m"),
        "sequences were interpreted, not shown: {shown:?}"
    );
}

#[test]
fn emit_is_refused_without_a_screen_a_program_or_a_terminal() {
    let sim = start(Options {
        shells: 1,
        idle_records: 1,
        ..Options::default()
    });
    let idle = refused_emit(&sim, "t2");
    assert_eq!(idle["code"], -32602);
    let detail = idle["data"]["detail"].as_str().unwrap();
    assert!(detail.contains("t2 is an idle record"), "{detail}");

    assert_eq!(refused_emit(&sim, "tz")["code"], -32001, "not_found");

    sim.control("kill", json!({ "address": "t1" }));
    let finished = refused_emit(&sim, "t1");
    assert_eq!(finished["message"], "finished");
}
