//! The systemd units, verified by systemd-analyze.

use std::process::Command;

use serde_json::json;

use super::{repo_file, run, text, tool};
use crate::support::{adapter_bin, write_config};

fn unit(name: &str) -> String {
    std::fs::read_to_string(repo_file(&format!("examples/{name}"))).unwrap()
}

/// The unit's settings (not comments), as `Key=value` lines.
fn settings(unit: &str) -> Vec<&str> {
    unit.lines()
        .map(str::trim)
        .filter(|l| l.contains('=') && !l.starts_with('#') && !l.starts_with(';'))
        .collect()
}

#[test]
fn the_service_starts_without_hcs_folder_and_says_private_tmp_hides_tmp() {
    let service = unit("herdr-core-mcp.service");
    let paths: Vec<&str> = settings(&service)
        .into_iter()
        .filter(|l| l.starts_with("ReadWritePaths="))
        .collect();
    assert_eq!(paths, ["ReadWritePaths=-%t/herdr-core"]);
    assert!(settings(&service).contains(&"PrivateTmp=yes"));
    assert!(
        service.contains("PrivateTmp=yes gives the service its own empty /tmp"),
        "the unit must say what PrivateTmp hides"
    );
}

#[test]
fn the_socket_listens_where_serve_would() {
    // serve takes an inherited socket only on 127.0.0.1:<http.port>; the
    // unit's is the port of a config that does not name one.
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &json!({"socketPath": dir.path().join("hc.sock"), "transport": "http"}),
    );
    let loaded = herdr_core_mcp::Config::load(&config).expect("a minimal http config");
    let herdr_core_mcp::Transport::Http(http) = loaded.transport() else {
        panic!("not http")
    };
    let socket = unit("herdr-core-mcp.socket");
    let listen: Vec<&str> = settings(&socket)
        .into_iter()
        .filter(|l| l.starts_with("ListenStream="))
        .collect();
    assert_eq!(listen, [format!("ListenStream=127.0.0.1:{}", http.port())]);
    assert!(settings(&socket).contains(&"WantedBy=sockets.target"));
}

#[test]
fn systemd_analyze_verifies_both_units() {
    let analyze = tool("systemd-analyze");
    // A home where the units' %h/.local/bin/herdr-core-mcp is this build,
    // and a runtime directory (%t) for the user manager's view.
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join(".local/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(adapter_bin(), bin.join("herdr-core-mcp")).unwrap();
    let runtime = home.path().join("run");
    std::fs::create_dir(&runtime).unwrap();
    let units = home.path().join("units");
    std::fs::create_dir(&units).unwrap();
    for name in ["herdr-core-mcp.service", "herdr-core-mcp.socket"] {
        std::fs::copy(repo_file(&format!("examples/{name}")), units.join(name)).unwrap();
    }
    let out = run(Command::new(analyze)
        .args(["--user", "verify"])
        .arg(units.join("herdr-core-mcp.socket"))
        .arg(units.join("herdr-core-mcp.service"))
        .env("HOME", home.path())
        .env("XDG_RUNTIME_DIR", &runtime)
        .env_remove("XDG_CONFIG_HOME")
        .env("SYSTEMD_LOG_COLOR", "0"));
    // verify exits 0 on an unknown key or a bad value: any line is a finding.
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success() && said.trim().is_empty(),
        "systemd-analyze --user verify: {:?}\n{said}",
        out.status
    );
}
