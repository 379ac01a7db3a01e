//! The fuzz targets' committed seeds in fuzz/corpus/ (and every crash input
//! once fixed and added there) replayed through the same entry points as
//! `scripts/fuzz.sh`, on every test run, on the stable toolchain.

use std::path::Path;

use herdr_core_mcp::fuzzing;

fn replay(target: &str, entry: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut inputs = 0;
    for file in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = file.expect("a corpus entry").path();
        let data = std::fs::read(&path).expect("a corpus file");
        if std::panic::catch_unwind(|| entry(&data)).is_err() {
            panic!("{target} fails on {}", path.display());
        }
        inputs += 1;
    }
    assert!(inputs > 0, "no seeds in {}", dir.display());
}

#[test]
fn hc_reply_seeds_hold() {
    replay("hc_reply", fuzzing::hc_reply);
}

#[test]
fn hc_conn_seeds_hold() {
    replay("hc_conn", fuzzing::hc_conn);
}

#[test]
fn config_seeds_hold() {
    replay("config", fuzzing::config);
}

#[test]
fn tool_args_seeds_hold() {
    replay("tool_args", fuzzing::tool_args);
}

/// Found by the `config` target (fuzz/corpus/config/finding_origin_with_path):
/// `http.allowedOrigins` accepts values that no `Origin` header can ever
/// equal (an Origin is exactly scheme://host[:port]), so a client the
/// operator meant to allow is refused with 403 forever, and the config's own
/// message ("no path") is not enforced.
#[test]
fn an_allowed_origin_no_origin_header_can_match_is_refused() {
    let path = Path::new("/test/config.json");
    for origin in [
        "https://mcp.example.net/mcp",
        "https://xtransp/or.example",
        "https://",
        "http://host?x=1",
        "https://host#frag",
    ] {
        let text = serde_json::json!({
            "socketPath": "/run/hc.sock",
            "transport": "http",
            "http": {"allowedOrigins": [origin]},
        })
        .to_string();
        let validated = herdr_core_mcp::RawConfig::parse(path, &text)
            .and_then(|raw| herdr_core_mcp::Config::validate(path, raw));
        let error = validated.expect_err(origin).to_string();
        assert!(
            error.contains("http.allowedOrigins[0]"),
            "{origin}: {error}"
        );
    }
}
