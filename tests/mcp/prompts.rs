//! The MCP prompts (`dispatch`, `triage`, `fleet`) and the completion of
//! `dispatch`'s `address`, through rmcp's client against the simulator.

use rmcp::model::GetPromptRequestParams;
use serde_json::{Map, Value, json};

use crate::support::SimOptions;
use crate::support::world::World;

/// The text of a prompt's messages.
fn text_of(result: &rmcp::model::GetPromptResult) -> String {
    result
        .messages
        .iter()
        .filter_map(|m| m.content.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn arguments(value: Value) -> Map<String, Value> {
    value.as_object().expect("arguments object").clone()
}

#[tokio::test]
async fn prompts_are_listed_fetched_and_dispatch_completes_approved_addresses() {
    let options = SimOptions {
        agents: 2,
        ..SimOptions::default()
    };
    // t1 and t2 approved.
    let world = World::new(options, json!({})).await;
    let listed = world.client.list_all_prompts().await.expect("prompts/list");
    let mut names: Vec<&str> = listed.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["dispatch", "fleet", "triage"], "{listed:?}");
    let mut pinned = serde_json::to_value(&listed).unwrap();
    pinned
        .as_array_mut()
        .unwrap()
        .sort_by_key(|p| p["name"].as_str().unwrap_or_default().to_owned());
    insta::assert_json_snapshot!("prompts_list", pinned);

    let dispatch = world
        .client
        .get_prompt(
            GetPromptRequestParams::new("dispatch")
                .with_arguments(arguments(json!({"address": "t1", "task": "run the tests"}))),
        )
        .await
        .expect("prompts/get dispatch");
    let text = text_of(&dispatch);
    for expected in [
        r#"send_prompt with address "t1", text "run the tests" and follow_ms 50000"#,
        "wait_for_status",
        "after_seq",
        "do NOT send again",
        "never answer it yourself",
    ] {
        assert!(text.contains(expected), "{expected:?} missing: {text}");
    }
    // A prompt sends nothing by itself.
    assert_eq!(world.sim.writes_to("t1"), 0);

    let bad = world
        .client
        .get_prompt(
            GetPromptRequestParams::new("dispatch")
                .with_arguments(arguments(json!({"address": "t1\u{1b}[2J", "task": "x"}))),
        )
        .await;
    assert!(bad.is_err(), "a control character in the address: {bad:?}");

    for (name, forbids) in [
        ("triage", "Do not call send_prompt"),
        ("fleet", "Do not call send_prompt"),
    ] {
        let got = world
            .client
            .get_prompt(GetPromptRequestParams::new(name))
            .await
            .unwrap_or_else(|e| panic!("prompts/get {name}: {e}"));
        let text = text_of(&got);
        assert!(
            text.contains("list_sessions") && text.contains(forbids),
            "{name}: {text}"
        );
    }

    let completed = world
        .client
        .complete_prompt_argument("dispatch", "address", "t", None)
        .await
        .expect("completion/complete");
    let mut values = completed.values.clone();
    values.sort_unstable();
    assert_eq!(values, ["t1", "t2"], "{completed:?}");
    let narrowed = world
        .client
        .complete_prompt_argument("dispatch", "address", "t2", None)
        .await
        .expect("completion/complete");
    assert_eq!(narrowed.values, ["t2"]);
    let other = world
        .client
        .complete_prompt_argument("dispatch", "task", "t", None)
        .await
        .expect("completion/complete");
    assert!(other.values.is_empty(), "{other:?}");

    // Only approved terminals are offered.
    let unapproved = World::new(SimOptions::agents(1), json!({"sendAllowlist": []})).await;
    let none = unapproved
        .client
        .complete_prompt_argument("dispatch", "address", "", None)
        .await
        .expect("completion/complete");
    assert!(none.values.is_empty(), "{none:?}");
}
