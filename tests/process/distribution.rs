//! What the project publishes about itself: `server.json` for the MCP
//! registry, valid against the registry's published schema (fetched,
//! pinned, by `scripts/registry-schema.sh`) and true to the crate and the
//! binary it describes.

use std::path::Path;

use serde_json::Value;

use crate::support::run_adapter;

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
    assert_eq!(server["packages"].as_array().map(Vec::len), Some(1));
    assert_eq!(package["registryType"], "cargo");
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
