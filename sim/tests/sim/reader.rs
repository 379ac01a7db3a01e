//! The line reader: a program without bracketed paste, idle at its prompt.
//! It shows what a multi-line prompt does to such a program: each line of
//! a paste is an Enter, so line 2 answers whatever line 1 started.

use hc_sim::testing::Options;

use crate::support::{
    greeted_client, record, screen, send_params, start, text, wait_for_screen, wait_for_status,
};

fn readers(n: usize) -> Options {
    Options {
        readers: n,
        ..Options::default()
    }
}

#[test]
fn a_reader_is_idle_at_its_prompt_and_quotes_a_line_back() {
    let sim = start(readers(1));
    let mut client = greeted_client(&sim);
    let first = record(&mut client, "t1");
    assert_eq!(first["program"], "reader");
    assert_eq!(first["status"], "idle", "the ready line waits for it");
    assert_eq!(screen(&mut client, "t1")["text"], "reader>");

    let spawned = sim.spawn("reader");
    assert_eq!(spawned["address"], "t2");
    assert_eq!(spawned["program"], "reader");
    assert_eq!(spawned["status"], "idle");

    client.result(
        "terminal.send",
        send_params("t1", "plain words", Some("idle")),
    );
    let read = wait_for_screen(&mut client, "t1", "the line quoted back", |read| {
        text(read).contains("line: plain words") && text(read).ends_with("reader>")
    });
    assert_eq!(read["status"], "idle");
    assert_eq!(
        read["status_seq"], first["status_seq"],
        "a plain line never leaves idle"
    );
}

#[test]
fn a_multi_line_prompt_feeds_its_second_line_to_what_the_first_started() {
    let sim = start(readers(1));
    let mut client = greeted_client(&sim);
    let before = wait_for_status(&mut client, "t1", "idle");

    let sent = client.result(
        "terminal.send",
        send_params("t1", "ask\nSECOND-LINE", Some("idle")),
    );
    assert_eq!(sent["accepted"], true);

    let read = wait_for_screen(&mut client, "t1", "the answer, then the prompt", |read| {
        read["status"] == "idle"
            && text(read).contains("answered: SECOND-LINE")
            && text(read).ends_with("reader>")
    });
    let shown = text(&read);
    assert!(
        !shown.contains("line: SECOND-LINE"),
        "line 2 never reached the prompt as a command: {shown:?}"
    );
    let asked = shown
        .find("question: answer?")
        .expect("the question is shown");
    let answered = shown
        .find("answered: SECOND-LINE")
        .expect("the answer is shown");
    assert!(asked < answered, "asked, then answered: {shown:?}");
    assert_eq!(
        read["status_seq"],
        before["status_seq"].as_u64().unwrap() + 2,
        "working while it asked, idle again at its prompt"
    );
    assert_eq!(sim.writes_to("t1"), 1, "it was one send");
}
