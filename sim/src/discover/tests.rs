//! Each style describes the same core: the five methods, results that
//! name what this core sends, and only the words that style uses.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::*;
use crate::sim::SimOptions;

fn sim(style: DiscoverStyle, evidence: bool, if_guard: bool) -> Sim {
    Sim::new(SimOptions {
        own_program: PathBuf::from("/bin/true"),
        agent_delay: Duration::ZERO,
        shell_program: PathBuf::from("/bin/sh"),
        cwd: PathBuf::from("/"),
        input_log: None,
        faults: Vec::new(),
        slow_reply: Duration::ZERO,
        evidence,
        version: "0.1.20".to_owned(),
        discover: true,
        discover_style: style,
        if_guard,
        draft_protect: Duration::ZERO,
        keyboard_quiet: Duration::ZERO,
        machines: Vec::new(),
        status_reasons: true,
    })
    .unwrap()
}

fn names(document: &Value) -> Vec<&str> {
    document["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect()
}

/// The fields a record of this core carries, as a live reply shows them.
fn record_fields(evidence: bool) -> Vec<String> {
    let mut fields: Vec<String> = served::record(&sim(DiscoverStyle::Model, evidence, true))
        .into_iter()
        .map(|f| f.name)
        .collect();
    fields.sort();
    fields
}

#[test]
fn every_style_names_the_five_methods_and_the_version_played() {
    for style in [
        DiscoverStyle::Model,
        DiscoverStyle::Terse,
        DiscoverStyle::Refs,
        DiscoverStyle::RequiredExtra,
        DiscoverStyle::WiderField,
        DiscoverStyle::RefCycle,
    ] {
        let document = document(&sim(style, false, true));
        assert_eq!(names(&document), DESCRIBED.map(Method::name), "{style:?}");
        assert_eq!(document["info"]["version"], "0.1.20", "{style:?}");
    }
}

#[test]
fn terse_lists_required_names_without_properties_and_no_force() {
    for evidence in [false, true] {
        let document = document(&sim(DiscoverStyle::Terse, evidence, true));
        let text = document.to_string();
        assert!(!text.contains("properties"), "{text}");
        assert!(!text.contains("\"force\""), "{text}");
        let get = &document["methods"][2];
        let mut required: Vec<String> = get["result"]["schema"]["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_owned())
            .collect();
        required.sort();
        assert_eq!(required, record_fields(evidence));
        let hello = &document["methods"][0]["params"];
        let required: Vec<&str> = hello
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["required"] == true)
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(required, ["generation"]);
    }
}

#[test]
fn refs_points_at_components_with_type_lists_for_nullable_fields() {
    let document = document(&sim(DiscoverStyle::Refs, false, true));
    for method in document["methods"].as_array().unwrap() {
        assert!(method["result"]["schema"]["$ref"].is_string(), "{method}");
        assert_eq!(method["paramStructure"], "by-name");
        for param in method["params"].as_array().unwrap() {
            assert!(param["$ref"].is_string(), "{param}");
        }
    }
    let record = &document["components"]["schemas"]["Record"]["allOf"][1]["properties"];
    assert_eq!(
        record["finished_ms"]["type"],
        serde_json::json!(["integer", "null"])
    );
    assert_eq!(document["x-additional-params"], false);
}

#[test]
fn the_wrong_styles_are_wrong_in_one_way_each_and_no_guard_drops_if() {
    let extra = document(&sim(DiscoverStyle::RequiredExtra, false, true));
    assert_eq!(
        extra["components"]["contentDescriptors"]["session"]["required"],
        true
    );
    let wider = document(&sim(DiscoverStyle::WiderField, false, true));
    assert_eq!(
        wider["components"]["schemas"]["Lifetime"]["properties"]["created_ms"]["type"],
        serde_json::json!(["integer", "string"])
    );
    let cycle = document(&sim(DiscoverStyle::RefCycle, false, true));
    assert_eq!(
        cycle["components"]["schemas"]["Record"]["$ref"],
        "#/components/schemas/TerminalRecord"
    );
    for style in [
        DiscoverStyle::Model,
        DiscoverStyle::Terse,
        DiscoverStyle::Refs,
    ] {
        let send = &document(&sim(style, false, false))["methods"][4]["params"];
        assert!(!send.to_string().contains("\"if\""), "{style:?}: {send}");
    }
}
