//! The man page's sections that are written out here: ENVIRONMENT,
//! FILES, EXIT STATUS, VERSION, EXAMPLES and SEE ALSO.

use clap::Command;
use clap_mangen::roff::{Inline, Roff, bold, italic, roman};

pub(super) fn environment(page: &mut Roff, command: &Command) {
    page.control("SH", ["ENVIRONMENT"]);
    let mut vars: Vec<(&str, &str)> = vec![
        (
            "HERDR_MCP_TOKEN",
            "The bearer token HTTP clients must send, in token mode (the default for \
             \"transport\": \"http\"): it allows every tool. At least 32 bytes; read by serve \
             and doctor, never taken from a command line or the config. Not needed for stdio.",
        ),
        (
            "HERDR_MCP_READ_TOKEN",
            "Optional second bearer token, different from HERDR_MCP_TOKEN and held to the \
             same rules, that allows only the read tools (list_sessions, read_output, \
             wait_for_status, wait_for_output).",
        ),
        (
            "the variables http.auth.introspection names",
            "In OAuth mode with token introspection, the config's clientIdEnv and \
             clientSecretEnv name the variables holding this server's client credentials; \
             serve refuses to start (exit 2) when one is unset or empty.",
        ),
        (
            "HERDR_MCP_TEST_PACE",
            "Test-only: a debug build of serve divides its timers (the watcher's tick, \
             progress, the HTTP head and body deadlines) by this number, so the test suite \
             runs quickly; a release build, which is what you install, ignores it.",
        ),
        (
            "RUST_LOG",
            "Log levels (default info); logs go to stderr. Other crates are capped at warn \
             whatever it says, and nothing of a screen, a prompt or a token is logged.",
        ),
        (
            "XDG_CONFIG_HOME",
            "The default config is $XDG_CONFIG_HOME/herdr-core-mcp/config.json when it is \
             an absolute path.",
        ),
        (
            "HOME",
            "Otherwise the default config is ~/.config/herdr-core-mcp/config.json. With \
             neither, a command without --config fails (exit 2).",
        ),
        (
            "LISTEN_FDS, LISTEN_PID",
            "Socket activation (systemd.socket(5)): with LISTEN_FDS=1 and LISTEN_PID naming \
             this process, serve takes the listening TCP socket on descriptor 3 and binds \
             nothing itself; without a matching LISTEN_PID the sockets are ignored, as \
             systemd's rule says. That socket must listen on 127.0.0.1 and the config's \
             http.port; any other, or one that does not listen, is refused (exit 2).",
        ),
        (
            "HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY",
            "In OAuth mode, the requests to the identity provider (metadata, keys, \
             introspection) go through these proxies, as curl's do; the lower-case names \
             work too.",
        ),
        (
            "SSL_CERT_FILE, SSL_CERT_DIR",
            "In OAuth mode, the CA certificates that the identity provider's https \
             certificate is checked against, instead of the system's.",
        ),
    ];
    if command.find_subcommand("init").is_some() {
        vars.push((
            "XDG_RUNTIME_DIR",
            "Where init puts hc's socket when --socket is not given: \
             $XDG_RUNTIME_DIR/herdr-core/hc.sock. Without it (and without --socket) init \
             fails.",
        ));
    }
    for (var, text) in &vars {
        page.control("TP", []);
        if var.starts_with(|c: char| c.is_ascii_uppercase()) {
            let names: Vec<Inline> = var
                .split(", ")
                .enumerate()
                .flat_map(|(i, name)| {
                    let sep = (i > 0).then(|| roman(", "));
                    sep.into_iter().chain([bold(name)])
                })
                .collect();
            page.text(names);
        } else {
            page.text([roman(*var)]);
        }
        page.text([roman(*text)]);
    }
}

pub(super) fn files(page: &mut Roff) {
    page.control("SH", ["FILES"]);
    let files: &[(&str, &str)] = &[
        (
            "$XDG_CONFIG_HOME/herdr-core-mcp/config.json, else ~/.config/herdr-core-mcp/config.json",
            "The config (JSON) when no --config is given: hc's socketPath, the transport, the \
             coreId and the approved lifetimes (sendAllowlist) that allow and revoke rewrite, \
             and the http settings. It must be a regular file owned by you (or root) that \
             nobody else can write, in directories nobody else can change.",
        ),
        (
            "the config's socketPath",
            "hc's Unix socket, e.g. /run/user/UID/herdr-core/hc.sock.",
        ),
        (
            "the config's auditLog",
            "If set, every send attempt's audit line (content-free JSON) is appended to it as \
             well as written to stderr. It must be a regular file owned by you, mode 0600.",
        ),
        (
            "~/.config/systemd/user/herdr-core-mcp.service, herdr-core-mcp.socket",
            "The systemd user units (from examples/ in the source): serve over HTTP, and \
             optionally socket activation on 127.0.0.1:8765.",
        ),
        (
            "~/.config/herdr-core-mcp/token.env",
            "The example unit's EnvironmentFile (mode 0600): HERDR_MCP_TOKEN=...",
        ),
    ];
    for (path, text) in files {
        page.control("TP", []);
        if path.starts_with(['$', '~']) {
            page.text([italic(*path)]);
        } else {
            page.text([roman(*path)]);
        }
        page.text([roman(*text)]);
    }
}

pub(super) fn exit_status(page: &mut Roff) {
    page.control("SH", ["EXIT STATUS"]);
    let codes: &[(&str, &str)] = &[
        ("0", "Success; for doctor, every check passed."),
        (
            "1",
            "A failure while running, such as: hc could not be reached or refused, allow found no \
             live terminal at ADDRESS, doctor found a failing check, reload found no serve \
             to signal, the HTTP port could not be bound, or stdout could not be written.",
        ),
        (
            "2",
            "A usage or config error, which retrying cannot fix, such as: bad arguments, a refused \
             config (doctor too, after its report), a missing or weak token, OAuth credentials missing, an audit log that \
             cannot be opened, an inherited socket on the wrong address, or no --config and \
             no home to find the default in. The example systemd unit does not restart on it.",
        ),
    ];
    for (code, text) in codes {
        page.control("TP", []);
        page.text([bold(*code)]);
        page.text([roman(*text)]);
    }
}

/// The long version, one fact a line.
pub(super) fn version(page: &mut Roff, command: &Command) {
    page.control("SH", ["VERSION"]);
    let long = command
        .get_long_version()
        .or(command.get_version())
        .map(|v| v.to_string())
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned());
    for (i, line) in long.lines().enumerate() {
        if i > 0 {
            page.control("br", []);
        }
        page.text([roman(line)]);
    }
}

pub(super) fn examples(page: &mut Roff) {
    page.control("SH", ["EXAMPLES"]);
    let examples: &[(&str, &[&str])] = &[
        (
            "See the core and its terminals, approve agent terminal t1 for send_prompt, then \
             check the whole setup:",
            &[
                "herdr-core-mcp inspect-core",
                "herdr-core-mcp allow t1",
                "herdr-core-mcp doctor",
            ],
        ),
        (
            "Show what approving t1 would write, with another config:",
            &["herdr-core-mcp allow --dry-run --config ~/hc-test.json t1"],
        ),
        (
            "Make every running serve of the default config reload it:",
            &["herdr-core-mcp reload"],
        ),
        (
            "Serve MCP over HTTP (the config says \"transport\": \"http\"), the token read \
             from a 0600 file rather than a command line:",
            &["(set -a && . ~/.config/herdr-core-mcp/token.env && exec herdr-core-mcp serve)"],
        ),
        (
            "Install the completions and this page for your user:",
            &[
                "herdr-core-mcp completions bash > ~/.local/share/bash-completion/completions/herdr-core-mcp",
                "herdr-core-mcp completions zsh > ~/.zfunc/_herdr-core-mcp",
                "herdr-core-mcp completions fish > ~/.config/fish/completions/herdr-core-mcp.fish",
                "herdr-core-mcp man > ~/.local/share/man/man1/herdr-core-mcp.1",
            ],
        ),
        (
            "Socket activation with the example units installed in ~/.config/systemd/user \
             (enable the socket, not the service):",
            &[
                "systemctl --user daemon-reload",
                "systemctl --user enable --now herdr-core-mcp.socket",
            ],
        ),
    ];
    for (i, (what, lines)) in examples.iter().enumerate() {
        if i > 0 {
            page.control("PP", []);
        }
        page.text([roman(*what)]);
        page.control("PP", []);
        page.control("RS", ["4"]);
        page.control("EX", []);
        for line in *lines {
            page.text([roman(*line)]);
        }
        page.control("EE", []);
        page.control("RE", []);
    }
}

/// Only pages that exist (systemd's, on Debian in the systemd package).
pub(super) fn see_also(page: &mut Roff) {
    page.control("SH", ["SEE ALSO"]);
    let pages = [
        ("systemctl", "1"),
        ("systemd.exec", "5"),
        ("systemd.service", "5"),
        ("systemd.socket", "5"),
    ];
    let mut line = Vec::new();
    for (i, (name, section)) in pages.iter().enumerate() {
        if i > 0 {
            line.push(roman(", "));
        }
        line.push(bold(*name));
        line.push(roman(format!("({section})")));
    }
    page.text(line);
}
