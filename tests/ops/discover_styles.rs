//! A core that describes itself in its own words: the simulator plays hc
//! 0.1.20 whose `rpc.discover` document is worded as the model is
//! (`model`), tersely (`terse`: results as `required` lists, optional
//! params, no `force`) or through `$ref`s into `components` (`refs`). Each
//! is accepted by `inspect-core --check-contract --accept` and then served:
//! the tools list, read and send, and a send to the terse core leaves
//! `force` out. A document wrong in one way each (a required param no
//! client sends, a needed field of a wider type, a `$ref` cycle) is
//! refused, naming its rule. Real simulator processes, the real binary.

use std::path::Path;

use hc_sim::DiscoverStyle;
use serde_json::{Value, json};

use crate::support::{Sim, SimOptions, mcp, run_adapter};

/// `inspect-core` with `args` on the config at `config`.
fn inspect(config: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["inspect-core", "--config", config.to_str().unwrap()];
    all.extend_from_slice(args);
    run_adapter(&all, &[])
}

/// hc 0.1.20 with one agent, describing itself in `style`.
fn core(style: DiscoverStyle) -> Sim {
    Sim::process(SimOptions {
        agents: 1,
        version: Some("0.1.20".to_owned()),
        discover_style: Some(style),
        ..SimOptions::default()
    })
}

/// Checks and accepts the core, approves t1, and prompts it through a
/// serve of the real binary: the `hcVersions` entry written, what the
/// check printed, and the simulator's record of the one write.
async fn accepted_then_sent(style: DiscoverStyle) -> (Value, String, Value) {
    let sim = core(style);
    let config = sim.config(json!({}));
    let (code, out, err) = inspect(&config, &["--check-contract", "--accept"]);
    assert_eq!(code, 0, "{style:?}: {out}{err}");
    assert!(out.contains("accepted hc 0.1.20"), "{style:?}: {out}");
    assert!(
        out.contains("none of which would make a call fail"),
        "{style:?}: {out}"
    );
    assert!(
        out.contains("guard: shown by the core's own document"),
        "{style:?}: {out}"
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let entry = written["hcVersions"][0].clone();
    let (code, out2, err) =
        run_adapter(&["allow", "--config", config.to_str().unwrap(), "t1"], &[]);
    assert_eq!(code, 0, "{style:?}: {out2}{err}");

    let client = mcp::stdio(&config, &sim.dir.path().join("serve.err")).await;
    mcp::until_listed(&client, "t1", "idle").await;
    let read = mcp::call(&client, "read_output", json!({"address": "t1"})).await;
    assert!(!mcp::is_error(&read), "{style:?}: {read:?}");
    let sent = mcp::send_prompt(&client, "t1", "hello from a core in its own words").await;
    assert_eq!(sent["outcome"], "sent", "{style:?}: {sent}");
    assert_eq!(sim.writes_to("t1"), 1, "{style:?}");
    (entry, out, sim.writes()[0].clone())
}

#[tokio::test]
async fn a_core_in_the_models_words_is_accepted_and_sent_to_with_force() {
    let (entry, _, write) = accepted_then_sent(DiscoverStyle::Model).await;
    assert_eq!(entry["guard"], "document", "{entry}");
    assert!(entry.get("params_omitted").is_none(), "{entry}");
    assert_eq!(write["force_present"], true, "{write}");
}

#[tokio::test]
async fn a_terse_core_is_accepted_and_sends_to_it_leave_force_out() {
    let (entry, out, write) = accepted_then_sent(DiscoverStyle::Terse).await;
    assert_eq!(entry["params_omitted"], json!(["force"]), "{entry}");
    assert!(
        out.contains("[params sent] terminal.send params.force: not declared"),
        "{out}"
    );
    assert!(
        out.contains("[results read] terminal.list result.terminals[].created_ms: not promised by the document; seen in all 1 records of 1 replies"),
        "{out}"
    );
    assert!(out.contains("its sends leave out `force`"), "{out}");
    assert_eq!(write["force_present"], false, "{write}");
}

#[tokio::test]
async fn a_core_of_refs_and_components_is_accepted_and_sent_to() {
    let (entry, out, write) = accepted_then_sent(DiscoverStyle::Refs).await;
    assert_eq!(entry["guard"], "document", "{entry}");
    assert!(entry.get("params_omitted").is_none(), "{entry}");
    assert!(
        out.contains(
            "[document] terminal.get result.cwd: typed string there, null or string in the model"
        ),
        "a narrower type is a note for the model: {out}"
    );
    assert_eq!(write["force_present"], true, "{write}");
}

#[test]
fn each_wrong_description_is_refused_naming_its_rule() {
    for (style, rule, line) in [
        (
            DiscoverStyle::RequiredExtra,
            "param-required-not-sent",
            "! [params sent] terminal.send params.session: required by the document; the adapter never sends it",
        ),
        (
            DiscoverStyle::WiderField,
            "field-wider",
            "! [results read] terminal.get result.created_ms: typed integer or string there: the adapter decodes integer only",
        ),
        (
            DiscoverStyle::RefCycle,
            "unreadable-needed",
            "leads back to a schema it came from (a cycle): a field the adapter needs depends on it",
        ),
    ] {
        let sim = core(style);
        let config = sim.config(json!({}));
        let before = std::fs::read_to_string(&config).unwrap();
        let (code, out, err) = inspect(&config, &["--check-contract", "--accept"]);
        assert_eq!(code, 1, "{style:?}: {out}{err}");
        assert!(out.contains(line), "{style:?}: {out}");
        assert!(err.contains("accepted nothing"), "{style:?}: {err}");
        assert!(
            err.contains(&format!("by the rule(s) {rule} (")),
            "{style:?}: {err}"
        );
        assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
        assert_eq!(sim.calls("terminal.send"), 0, "{style:?}");
    }
}
