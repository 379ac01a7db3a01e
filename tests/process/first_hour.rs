//! What a newcomer's first mistakes are answered with: the command meant
//! by a typo, the flag meant by a misplaced one, where `serve` takes what
//! its flags would have said, and the folder `init` needs for a socket
//! that is not there yet.

use crate::support::run_adapter;

/// Runs the adapter with `args` and returns its exit code and stderr.
fn refused(args: &[&str]) -> (i32, String) {
    let (code, stdout, stderr) = run_adapter(args, &[]);
    assert_eq!(stdout, "", "{args:?}: a refusal prints nothing on stdout");
    (code, stderr)
}

#[test]
fn a_mistyped_command_is_answered_with_the_one_meant() {
    for (typed, meant) in [("alow", "allow"), ("server", "serve"), ("doctr", "doctor")] {
        let (code, said) = refused(&[typed]);
        assert_eq!(code, 2, "{typed}: {said}");
        assert!(
            said.contains(&format!(
                "unrecognized subcommand '{typed}'; tip: a similar subcommand exists: '{meant}'"
            )),
            "{typed}: {said}"
        );
        assert_eq!(said.lines().count(), 1, "{said}");
    }
}

#[test]
fn a_send_mode_given_as_a_flag_is_answered_with_mode() {
    for (flag, mode) in [("--normal", "normal"), ("--idle-only", "idle-only")] {
        let (code, said) = refused(&["allow", flag, "t1"]);
        assert_eq!(code, 2, "{said}");
        assert!(
            said.contains(&format!(
                "`--mode {mode}`: herdr-core-mcp allow --mode {mode} ADDRESS"
            )),
            "{said}"
        );
        assert!(
            !said.contains("-- "),
            "clap's `-- {flag}` tip leads the wrong way: {said}"
        );
    }
}

#[test]
fn serve_flags_are_answered_with_the_variable_or_key_that_sets_them() {
    let cases = [
        (
            vec!["serve", "--token", "s3cret"],
            "HERDR_MCP_TOKEN (full) and HERDR_MCP_READ_TOKEN",
        ),
        (
            vec!["serve", "--token=s3cret"],
            "HERDR_MCP_TOKEN (full) and HERDR_MCP_READ_TOKEN",
        ),
        (
            vec!["serve", "--socket", "/run/hc.sock"],
            "hc's socket is socketPath in the config",
        ),
        (
            vec!["serve", "--port", "9000"],
            "the port is http.port in the config",
        ),
    ];
    for (args, names) in cases {
        let (code, said) = refused(&args);
        assert_eq!(code, 2, "{args:?}: {said}");
        assert!(said.contains("serve takes only --config: "), "{said}");
        assert!(said.contains(names), "{args:?}: {said}");
        assert!(
            !said.contains("s3cret"),
            "a token given on the command line is not repeated: {said}"
        );
    }
}

#[test]
fn init_names_the_folder_a_socket_that_is_not_there_yet_needs() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let runtime = dir.path().join("run");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir(&runtime).unwrap();
    let env = [
        ("HOME", home.to_str().unwrap()),
        ("XDG_RUNTIME_DIR", runtime.to_str().unwrap()),
        ("XDG_CONFIG_HOME", ""),
    ];
    let (code, stdout, stderr) = run_adapter(&["init"], &env);
    assert_eq!(code, 0, "{stderr}");
    let folder = runtime.join("herdr-core");
    let socket = folder.join("hc.sock");
    assert!(
        stdout.contains(&format!(
            "note: nothing listens at {} yet, and its folder {} does not exist",
            socket.display(),
            folder.display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("  mkdir -m 700 {}\n", folder.display())),
        "{stdout}"
    );
    // With the folder there, the note names only the socket.
    std::fs::create_dir(&folder).unwrap();
    let config = dir.path().join("second.json");
    let (code, stdout, stderr) = run_adapter(&["init", "--config", config.to_str().unwrap()], &env);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!(
            "note: nothing listens at {} yet: start hc",
            socket.display()
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("mkdir"), "{stdout}");
}
