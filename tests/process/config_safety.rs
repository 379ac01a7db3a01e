//! A config holds send authority, so one that someone else could write or
//! replace is refused: at start, on SIGHUP, and by allow/revoke. Links are
//! followed and the real file and its directories are judged.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;

use crate::support::{run_adapter, write_config};

/// Another user's uid (`nobody` on most systems).
const OTHER_UID: u32 = 65_534;

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::chown(path, Some(uid), None)
        .unwrap_or_else(|e| panic!("chown {}: {e}", path.display()));
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Every command that reads a config refuses this one with exit 2 and one
/// line naming the path and `why`, and leaves the file unchanged.
fn refused_everywhere(config: &Path, why: &str) {
    let before = std::fs::read(config).unwrap();
    let config_arg = config.to_str().unwrap();
    for args in [
        vec!["serve", "--config", config_arg],
        vec!["inspect-core", "--config", config_arg],
        vec!["allow", "--config", config_arg, "t1"],
        vec!["revoke", "--config", config_arg, "t1"],
    ] {
        let (code, stdout, stderr) = run_adapter(&args, &[]);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {stderr}");
        assert!(
            lines[0].contains(config_arg) && lines[0].contains(why),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(std::fs::read(config).unwrap(), before, "the config changed");
}

#[test]
fn a_config_in_a_directory_others_can_write_is_refused_unless_sticky() {
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    let socket = dir.path().join("hc.sock");
    let config = write_config(&open, &json!({"socketPath": socket, "coreId": "c1"}));
    chmod(&open, 0o777);
    refused_everywhere(&config, "without the sticky bit");
    chmod(&open, 0o775);
    refused_everywhere(&config, "writable by group or others");
    // With the sticky bit (as /tmp), only the file's owner can replace it.
    chmod(&open, 0o1777);
    let (code, _, stderr) =
        run_adapter(&["inspect-core", "--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 1, "the config passes, hc is absent: {stderr}");
    assert!(stderr.contains("no hc socket"), "{stderr}");
}

#[test]
fn a_group_writable_config_is_refused_through_a_link_too() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &json!({"socketPath": "/run/hc.sock"}));
    chmod(&config, 0o620);
    refused_everywhere(&config, "chmod 600");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&config, &link).unwrap();
    refused_everywhere(&link, "really");
}

#[test]
fn a_config_owned_by_someone_else_is_refused() {
    if !is_root() {
        eprintln!("skipped: only root can give a file to another user");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let theirs = write_config(dir.path(), &json!({"socketPath": "/run/hc.sock"}));
    chmod(&theirs, 0o644);
    chown(&theirs, OTHER_UID);
    refused_everywhere(&theirs, &format!("owned by uid {OTHER_UID}"));
    // A link of ours to their file does not make it ours.
    let link = dir.path().join("mine.json");
    std::os::unix::fs::symlink(&theirs, &link).unwrap();
    refused_everywhere(&link, &format!("owned by uid {OTHER_UID}"));
    // Nor does a file of ours in their directory, which they can replace.
    let their_dir = dir.path().join("theirs");
    std::fs::create_dir(&their_dir).unwrap();
    let inside = write_config(&their_dir, &json!({"socketPath": "/run/hc.sock"}));
    chown(&their_dir, OTHER_UID);
    refused_everywhere(&inside, "its directory");
}
