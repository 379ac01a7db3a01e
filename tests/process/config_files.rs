//! Config files that are not what they seem: a FIFO at the config's path
//! (every command used to block forever opening it), a key given twice
//! (the last one silently won, and `allow` rewrote the file without the
//! first), and `init` into a folder every later command would refuse.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use crate::support::commands::{adapter, finished_within, stderr_of};

#[tokio::test]
async fn a_fifo_named_as_the_config_is_refused_at_once_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    // A folder anyone may write, as /tmp is (sticky), holding a FIFO.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let fifo = dir.path().join("config.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let config = fifo.to_str().unwrap();
    // doctor reports it as its failing config check.
    let doctor = finished_within(
        adapter(&["doctor", "--config", config]),
        Duration::from_secs(10),
    )
    .await;
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(2), "{report}");
    assert!(report.contains("is a FIFO, not a regular file"), "{report}");
    for args in [
        vec!["serve", "--config", config],
        vec!["allow", "--config", config, "t1"],
        vec!["revoke", "--config", config, "t1"],
        vec!["reload", "--config", config],
        vec!["inspect-core", "--config", config],
    ] {
        let output = finished_within(adapter(&args), Duration::from_secs(10)).await;
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {stderr}");
        assert!(
            lines[0].contains("is a FIFO, not a regular file"),
            "{args:?}: {stderr}"
        );
    }
}

#[tokio::test]
async fn a_key_given_twice_is_refused_naming_both_lines_and_the_file_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    let text = format!(
        "{{\n  \"socketPath\": \"{}\",\n  \"sendMode\": \"idle-only\",\n  \"sendMode\": \"normal\"\n}}\n",
        dir.path().join("hc.sock").display()
    );
    std::fs::write(&path, &text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let config = path.to_str().unwrap();
    for args in [
        vec!["serve", "--config", config],
        vec!["allow", "--config", config, "t1"],
        vec!["revoke", "--config", config, "--all"],
    ] {
        let output = finished_within(adapter(&args), Duration::from_secs(10)).await;
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("`sendMode` is given twice (lines 3 and 4)"),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[tokio::test]
async fn init_refuses_a_folder_that_later_commands_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let path = open.join("config.json");
    let config = path.to_str().unwrap();
    let socket = dir.path().join("hc.sock");
    let init = finished_within(
        adapter(&[
            "init",
            "--config",
            config,
            "--socket",
            socket.to_str().unwrap(),
        ]),
        Duration::from_secs(10),
    )
    .await;
    let refused = stderr_of(&init);
    assert_eq!(init.status.code(), Some(2), "{refused}");
    assert!(!path.exists(), "init wrote a config it would refuse");
    // A config put there by hand gets the very same refusal.
    std::fs::write(&path, format!("{{\"socketPath\": {socket:?}}}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let later = finished_within(
        adapter(&["inspect-core", "--config", config]),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(later.status.code(), Some(2));
    assert_eq!(refused, stderr_of(&later));
    assert!(
        refused.contains("writable by group or others without the sticky bit"),
        "{refused}"
    );
}
