//! The npm and PyPI packages (`npx -y herdr-core-mcp`, `uvx
//! herdr-core-mcp`): every package the project publishes says the crate's
//! version, and `server.json` lists them as it lists the crate, so a host
//! that finds any of them runs the same `serve`. What `scripts/dist.sh`
//! builds from them, `scripts/dist-check.sh` and
//! `scripts/registry-check.sh` check.

use std::path::Path;

use serde_json::Value;

const LAUNCHER: &str = "packaging/npm/herdr-core-mcp/package.json";
const PLATFORMS: [(&str, &str); 2] = [("linux-x64", "x64"), ("linux-arm64", "arm64")];

fn text(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(path: &str) -> Value {
    serde_json::from_str(&text(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn platform_file(platform: &str) -> String {
    format!("packaging/npm/{platform}/package.json")
}

/// The `server.json` entry of one registry.
fn listed(server: &Value, registry: &str) -> Value {
    let found: Vec<&Value> = server["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["registryType"] == registry)
        .collect();
    assert_eq!(found.len(), 1, "server.json lists {registry} once");
    found[0].clone()
}

#[test]
fn every_package_says_the_crate_version() {
    let version = env!("CARGO_PKG_VERSION");
    let server = json("server.json");
    assert_eq!(server["version"], version, "server.json");
    for package in server["packages"].as_array().unwrap() {
        assert_eq!(package["version"], version, "server.json: {package}");
    }
    assert_eq!(json("packaging/mcpb/manifest.json")["version"], version);
    let files = [LAUNCHER.to_owned()]
        .into_iter()
        .chain(PLATFORMS.map(|(platform, _)| platform_file(platform)));
    for file in files {
        let package = json(&file);
        assert_eq!(package["version"], version, "{file}");
        for (name, pinned) in package["optionalDependencies"]
            .as_object()
            .into_iter()
            .flatten()
        {
            assert_eq!(pinned, version, "{file}: {name} is pinned exactly");
        }
    }
    // maturin takes the version from Cargo.toml: pyproject.toml names none.
    let pyproject = text("pyproject.toml");
    assert!(
        pyproject.lines().any(|l| l == r#"dynamic = ["version"]"#),
        "pyproject.toml takes its version from Cargo.toml"
    );
    assert!(
        !pyproject.lines().any(|l| l.starts_with("version")),
        "pyproject.toml names a version of its own"
    );
}

#[test]
fn server_json_lists_npm_and_pypi_as_it_lists_the_crate() {
    let server = json("server.json");
    let cargo = listed(&server, "cargo");
    for (registry, base) in [
        ("npm", "https://registry.npmjs.org"),
        ("pypi", "https://pypi.org"),
    ] {
        let package = listed(&server, registry);
        assert_eq!(package["identifier"], env!("CARGO_PKG_NAME"), "{package}");
        assert_eq!(package["registryBaseUrl"], base, "{package}");
        assert_eq!(package["transport"]["type"], "stdio", "{package}");
        assert_eq!(
            package["packageArguments"], cargo["packageArguments"],
            "{registry} runs serve as the crate does"
        );
    }

    // The registry checks that each package names the server: npm's
    // mcpName, the PyPI page's mcp-name line.
    let name = server["name"].as_str().unwrap();
    let launcher = json(LAUNCHER);
    assert_eq!(launcher["name"], listed(&server, "npm")["identifier"]);
    assert_eq!(launcher["mcpName"], name);
    let pyproject = text("pyproject.toml");
    assert!(pyproject.contains(r#"name = "herdr-core-mcp""#));
    assert!(
        pyproject.contains(r#"bindings = "bin""#),
        "the wheel holds the binary"
    );
    let readme = pyproject
        .lines()
        .find_map(|l| l.strip_prefix("readme = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("pyproject.toml names its readme");
    assert!(
        text(readme).contains(&format!("mcp-name: {name}")),
        "{readme}"
    );

    // The launcher runs one platform package's binary; npm installs only
    // the one whose os and cpu match, and runs no install script anywhere.
    assert_eq!(launcher["bin"]["herdr-core-mcp"], "bin/herdr-core-mcp.js");
    assert!(launcher.get("dependencies").is_none(), "{launcher}");
    let optional = launcher["optionalDependencies"].as_object().unwrap();
    assert_eq!(optional.len(), PLATFORMS.len());
    for (platform, cpu) in PLATFORMS {
        let file = platform_file(platform);
        let package = json(&file);
        let package_name = format!("@herdr-core-mcp/{platform}");
        assert_eq!(package["name"], package_name.as_str(), "{file}");
        assert!(optional.contains_key(&package_name), "{package_name}");
        assert_eq!(package["os"], serde_json::json!(["linux"]), "{file}");
        assert_eq!(package["cpu"], serde_json::json!([cpu]), "{file}");
        assert!(package.get("scripts").is_none(), "{file}");
    }
    assert!(launcher.get("scripts").is_none(), "{launcher}");
}
