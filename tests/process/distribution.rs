//! What the project publishes about itself: `server.json` for the MCP
//! registry, valid against the registry's published schema (fetched,
//! pinned, by `scripts/registry-schema.sh`) and true to the crate and the
//! binary it describes; the MCP Bundle's manifest, true to what the server
//! lists.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::world::World;
use crate::support::{SimOptions, run_adapter};

fn repo_file(path: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; scripts/registry-schema.sh fetches the schema",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn server_json_is_valid_for_the_registry_and_true_to_the_crate() {
    let server = repo_file("server.json");
    let schema = repo_file(".interop/registry-schema/2025-12-11/server.schema.json");
    assert_eq!(
        server["$schema"], schema["$id"],
        "server.json names the schema it is checked against"
    );
    let validator = jsonschema::validator_for(&schema).expect("the registry's schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&server)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "server.json is not valid: {errors:#?}");
    // The schema knows no crate: what it describes must be this one.
    assert_eq!(server["version"], env!("CARGO_PKG_VERSION"));
    let package = &server["packages"][0];
    assert_eq!(server["packages"].as_array().map(Vec::len), Some(5));
    assert_eq!(package["registryType"], "cargo");
    // Beside the crate, the two bundles scripts/dist.sh makes, as release
    // assets of this version, each with its SHA-256; then the npm and PyPI
    // packages (packages.rs).
    let repository = env!("CARGO_PKG_REPOSITORY");
    let version = env!("CARGO_PKG_VERSION");
    for (bundle, platform) in server["packages"].as_array().unwrap()[1..3]
        .iter()
        .zip(["linux-x64", "linux-arm64"])
    {
        assert_eq!(bundle["registryType"], "mcpb", "{bundle}");
        assert_eq!(
            bundle["identifier"],
            format!(
                "{repository}/releases/download/v{version}/herdr-core-mcp-{version}-{platform}.mcpb"
            )
        );
        assert_eq!(bundle["version"], version);
        assert_eq!(bundle["transport"]["type"], "stdio");
        assert_eq!(
            bundle["fileSha256"].as_str().map(str::len),
            Some(64),
            "{bundle}"
        );
    }
    assert_eq!(package["identifier"], env!("CARGO_PKG_NAME"));
    assert_eq!(package["version"], env!("CARGO_PKG_VERSION"));
    // A server bound to 127.0.0.1 has no remote for the registry to list.
    assert!(server.get("remotes").is_none(), "{server}");
    assert_eq!(package["transport"]["type"], "stdio");
    // The command line it declares is one the binary takes.
    let arguments = package["packageArguments"].as_array().unwrap();
    assert_eq!(arguments[0]["value"], "serve", "{server}");
    let (code, help, _) = run_adapter(&["serve", "--help"], &[]);
    assert_eq!(code, 0);
    for named in arguments.iter().filter(|a| a["type"] == "named") {
        let flag = named["name"].as_str().unwrap();
        assert!(help.contains(flag), "serve takes no {flag}: {help}");
    }
}

#[tokio::test]
async fn the_bundle_manifest_lists_what_the_server_lists_and_holds_no_secret() {
    let manifest = repo_file("packaging/mcpb/manifest.json");
    assert_eq!(manifest["manifest_version"], "0.3");
    assert_eq!(manifest["name"], env!("CARGO_PKG_NAME"));
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    let server = &manifest["server"];
    assert_eq!(server["type"], "binary");
    assert_eq!(server["entry_point"], "server/herdr-core-mcp");
    assert_eq!(
        server["mcp_config"],
        json!({
            "command": "${__dirname}/server/herdr-core-mcp",
            "args": ["serve", "--config", "${user_config.config_file}"],
        }),
        "the bundle runs serve with the config the user picks, and sets no environment"
    );
    let user_config = manifest["user_config"].as_object().unwrap();
    assert_eq!(user_config.keys().collect::<Vec<_>>(), ["config_file"]);
    assert_eq!(user_config["config_file"]["type"], "file");
    assert_eq!(user_config["config_file"].get("sensitive"), None);

    let world = World::new(SimOptions::agents(1), json!({})).await;
    let tools = world.client.list_all_tools().await.expect("tools/list");
    let listed: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description}))
        .collect();
    assert_eq!(manifest["tools"], json!(listed), "the manifest's tools");
    let prompts = world.client.list_all_prompts().await.expect("prompts/list");
    for (named, prompt) in manifest["prompts"].as_array().unwrap().iter().zip(&prompts) {
        assert_eq!(named["name"], prompt.name);
        assert_eq!(named["description"], json!(prompt.description));
        let arguments: Vec<&str> = prompt
            .arguments
            .iter()
            .flatten()
            .map(|a| a.name.as_str())
            .collect();
        let named_arguments: Vec<&str> = named["arguments"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect())
            .unwrap_or_default();
        assert_eq!(named_arguments, arguments, "{}", prompt.name);
    }
    assert_eq!(
        manifest["prompts"].as_array().map(Vec::len),
        Some(prompts.len())
    );
}
