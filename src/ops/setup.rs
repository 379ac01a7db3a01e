//! `init` (a first, private config and the next steps) and `status` (this
//! user's running serves).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::serves;
use crate::config::{Config, ConfigError, RawConfig, RawHttp, RawTransport, Transport};
use crate::escape::{printable, readable_ms};

/// Where hc's socket usually is when `--socket` is not given: under the
/// user's runtime directory, where the systemd units put it.
const DEFAULT_SOCKET: &str = "herdr-core/hc.sock";
/// The port `init --transport http` writes, and the next steps name.
const INIT_HTTP_PORT: u16 = 8765;

/// Why `init` wrote nothing; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// `--socket` was given as a relative path.
    #[error("--socket must be an absolute path, got {0}")]
    RelativeSocket(String),
    /// No `--socket`, and no runtime folder to find hc's socket under.
    #[error(
        "XDG_RUNTIME_DIR is not set, so there is no usual place for hc's socket: pass --socket PATH"
    )]
    NoRuntimeDir,
    /// A folder of the config's path could not be made.
    #[error("cannot create {dir}: {source}")]
    CreateFolder {
        /// The folder, as shown.
        dir: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The nearest existing folder of the config's path cannot be resolved.
    #[error("cannot resolve {dir}: {source}")]
    Resolve {
        /// The folder, as shown.
        dir: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A folder above the config is one every later command would refuse.
    #[error(transparent)]
    UnsafeFolder(ConfigError),
    /// A file is already there; it is never overwritten.
    #[error("{0} already exists and is left as it is: edit it, or pass --config with another path")]
    Exists(String),
    /// The config could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The config, as shown.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Writes a new private config at `path` (folders it creates 0700, the
/// file 0600, never over an existing file) and returns the next steps.
pub(crate) fn init(
    path: &Path,
    socket: Option<PathBuf>,
    transport: RawTransport,
    config_flag: Option<&Path>,
) -> Result<String, SetupError> {
    let socket = match socket {
        Some(socket) if socket.is_absolute() => socket,
        Some(socket) => {
            return Err(SetupError::RelativeSocket(
                printable(&socket.display().to_string()).into_owned(),
            ));
        }
        None => std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_absolute())
            .map(|d| d.join(DEFAULT_SOCKET))
            .ok_or(SetupError::NoRuntimeDir)?,
    };
    let http = transport == RawTransport::Http;
    let mut config = RawConfig::first(socket.clone(), transport);
    if http {
        config.http = Some(RawHttp {
            port: Some(u64::from(INIT_HTTP_PORT)),
            ..RawHttp::default()
        });
    }
    let shown = printable(&path.display().to_string()).into_owned();
    // Before any folder is made: the nearest one that exists, and those
    // above it, must be safe, or a later command would refuse the config.
    refuse_unsafe_folder(path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| SetupError::CreateFolder {
                dir: printable(&dir.display().to_string()).into_owned(),
                source,
            })?;
    }
    let mut text = serde_json::to_string_pretty(&config).expect("a JSON document encodes");
    text.push('\n');
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut file| {
            file.write_all(text.as_bytes())
                .and_then(|()| file.sync_all())
        });
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(SetupError::Exists(shown));
        }
        Err(source) => {
            return Err(SetupError::Write {
                path: shown,
                source,
            });
        }
    }
    let flag = config_flag.map_or(String::new(), |p| {
        format!(" --config {}", printable(&p.display().to_string()))
    });
    let mut out = format!(
        "wrote {shown} (mode 0600): socketPath {}\nnext:\n  herdr-core-mcp inspect-core{flag}       # the core and its terminals (check socketPath if it fails)\n  herdr-core-mcp allow{flag} ADDRESS      # approve a terminal; add --mode normal for follow-up prompts\n  herdr-core-mcp doctor{flag}             # every line ok\n",
        printable(&socket.display().to_string())
    );
    out.push_str(&socket_note(&socket));
    let bin = std::env::current_exe()
        .ok()
        .map_or_else(|| "herdr-core-mcp".to_owned(), |p| host_command(&p));
    let config_path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let config_path = config_path.display();
    if http {
        out.push_str(&format!(
            "then serve it (HTTP on 127.0.0.1:{INIT_HTTP_PORT}) with a token from the environment:\n  export HERDR_MCP_TOKEN=\"$(openssl rand -base64 32)\"\n  herdr-core-mcp serve{flag}\nand add it to an MCP host, e.g.:\n  claude mcp add --transport http herdr-core http://127.0.0.1:{INIT_HTTP_PORT}/mcp --header \"Authorization: Bearer $HERDR_MCP_TOKEN\"\n"
        ));
    } else {
        out.push_str(&format!(
            "then add it to your MCP host, which starts it over stdio, e.g.:\n  claude mcp add herdr-core -- {bin} serve --config {config_path}\n"
        ));
    }
    Ok(out)
}

/// How an MCP host should start this binary at `exe`: the path itself, or
/// the package runner's command when `exe` is a copy that runner keeps in
/// its cache (npx's `_npx` folder, uv's cache), which it may replace or
/// remove at any time.
fn host_command(exe: &Path) -> String {
    let path = exe.display().to_string();
    if path.contains("/_npx/") || path.contains("/node_modules/@herdr-core-mcp/") {
        "npx -y herdr-core-mcp".to_owned()
    } else if path.contains("/uv/archive-v") || path.contains("/uv/tools/") {
        "uvx herdr-core-mcp".to_owned()
    } else {
        path
    }
}

/// What `init` says when nothing listens at the socket yet: the folder to
/// create when it is missing too (hc makes both when it starts; the bundled
/// simulator, or anything else put there by hand, needs the folder).
fn socket_note(socket: &Path) -> String {
    if std::fs::symlink_metadata(socket).is_ok() {
        return String::new();
    }
    let shown = printable(&socket.display().to_string()).into_owned();
    let simulator = format!("target/release/examples/hc-sim --socket {shown}");
    match socket.parent().filter(|dir| !dir.exists()) {
        Some(dir) => {
            let dir = printable(&dir.display().to_string()).into_owned();
            format!(
                "note: nothing listens at {shown} yet, and its folder {dir} does not exist: start hc (it makes both), or to try the bundled simulator there, create the folder first:\n  mkdir -m 700 {dir}\n  {simulator} &\n"
            )
        }
        None => format!(
            "note: nothing listens at {shown} yet: start hc, or to try the bundled simulator there:\n  {simulator} &\n"
        ),
    }
}

/// A config in a folder that someone else owns or may write would be
/// refused by every later command (they could replace it, and with it the
/// send authority): refuse it now, with the very message they would give.
/// Folders still to be made are judged by the nearest one that exists.
fn refuse_unsafe_folder(path: &Path) -> Result<(), SetupError> {
    let mut dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => dir,
        None => Path::new("."),
    };
    while !dir.exists() {
        dir = dir.parent().unwrap_or(Path::new("/"));
    }
    let resolved_dir = std::fs::canonicalize(dir).map_err(|source| SetupError::Resolve {
        dir: printable(&dir.display().to_string()).into_owned(),
        source,
    })?;
    let resolved = resolved_dir.join(path.file_name().unwrap_or_default());
    crate::config::check_directories(&resolved, crate::config::current_uid()).map_err(|why| {
        SetupError::UnsafeFolder(ConfigError::Unsafe {
            path: path.to_path_buf(),
            resolved,
            why,
        })
    })
}

/// This user's running serves: pid, transport, the machines it shows
/// (each with its state, as the core it speaks to lists them), port, since
/// when, which copy of this program (its version and path), and config.
pub(crate) async fn status(json: bool) -> String {
    let mut rows: Vec<Value> = Vec::new();
    for serve in serves::all_serves() {
        let loaded = serve.config.as_deref().map(Config::load);
        let transport = match &loaded {
            Some(Ok(config)) => match config.transport() {
                Transport::Stdio => "stdio",
                Transport::Http(_) => "http",
            },
            _ => "?",
        };
        let machines = match &loaded {
            Some(Ok(config)) => machines_of(config).await,
            _ => "?".to_owned(),
        };
        rows.push(json!({
            "pid": serve.pid,
            "config": serve.config.as_ref().map(|c| printable(&c.display().to_string()).into_owned()),
            "transport": transport,
            "machines": machines,
            "ports": serves::listening_ports(serve.pid),
            "started_ms": serves::started_s(serve.pid).map(|s| s * 1000),
            "version": serve.copy.version,
            "exe": serve.copy.path.as_ref().map(|p| printable(&p.display().to_string()).into_owned()),
        }));
    }
    if json {
        let mut text = serde_json::to_string_pretty(&json!({"serves": rows}))
            .expect("a JSON document encodes");
        text.push('\n');
        return text;
    }
    if rows.is_empty() {
        return "no serve of herdr-core-mcp is running for this user\n".to_owned();
    }
    let mut cells = vec![
        [
            "PID",
            "TRANSPORT",
            "MACHINES",
            "PORT",
            "SINCE",
            "VERSION",
            "EXE",
            "CONFIG",
        ]
        .map(str::to_owned),
    ];
    for row in rows {
        let ports: Vec<String> = row["ports"]
            .as_array()
            .map(|p| p.iter().map(Value::to_string).collect())
            .unwrap_or_default();
        cells.push([
            row["pid"].to_string(),
            row["transport"].as_str().unwrap_or("?").to_owned(),
            row["machines"].as_str().unwrap_or("?").to_owned(),
            if ports.is_empty() {
                "-".to_owned()
            } else {
                ports.join(",")
            },
            row["started_ms"]
                .as_i64()
                .map_or("?".to_owned(), readable_ms),
            row["version"].as_str().unwrap_or("?").to_owned(),
            row["exe"].as_str().unwrap_or("?").to_owned(),
            row["config"].as_str().unwrap_or("?").to_owned(),
        ]);
    }
    aligned(&cells)
}

/// The machines a serve of `config` shows: its scope, then each machine
/// its core lists, with its state (`-` when none; `?` when hc could not be
/// asked).
async fn machines_of(config: &Config) -> String {
    let client = config.hc_client();
    let asked = super::machines::ask(&client).await;
    client.close();
    let listed = match &asked {
        super::machines::Machines::None => "-".to_owned(),
        super::machines::Machines::Failed(_) => "?".to_owned(),
        super::machines::Machines::Listed(machines) if machines.is_empty() => "-".to_owned(),
        super::machines::Machines::Listed(machines) => machines
            .iter()
            .map(|m| {
                let hidden = if config.machines().shows(Some(&m.name)) {
                    ""
                } else {
                    " hidden"
                };
                format!("{} {}{hidden}", printable(&m.name), m.state)
            })
            .collect::<Vec<_>>()
            .join(", "),
    };
    format!("{}: {listed}", config.machines().describe())
}

/// `rows` as a table: each column as wide as its widest cell, the last one
/// left as it is.
fn aligned<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0; N];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<width$} ", width = widths[i]));
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_in_a_package_runner_cache_is_named_by_its_runner_command() {
        let command = |path: &str| host_command(Path::new(path));
        assert_eq!(
            command(
                "/home/a/.npm/_npx/3f2a/node_modules/@herdr-core-mcp/linux-x64/bin/herdr-core-mcp"
            ),
            "npx -y herdr-core-mcp"
        );
        assert_eq!(
            command("/home/a/.cache/uv/archive-v0/AbC/bin/herdr-core-mcp"),
            "uvx herdr-core-mcp"
        );
        assert_eq!(
            command("/home/a/.local/bin/herdr-core-mcp"),
            "/home/a/.local/bin/herdr-core-mcp"
        );
    }

    #[test]
    fn the_status_table_keeps_its_columns_whatever_a_cell_holds() {
        let row = |pid: &str, since: &str, config: &str| {
            [pid, "http", "8765", since, config].map(str::to_owned)
        };
        let table = aligned(&[
            ["PID", "TRANSPORT", "PORT", "SINCE", "CONFIG"].map(str::to_owned),
            row("7", "2026-12-02 00:16:28.123 UTC (long)", "/a.json"),
            row("123456789", "?", "/b.json"),
        ]);
        let starts: Vec<usize> = table
            .lines()
            .map(|line| line.rfind('/').or_else(|| line.find("CONFIG")).unwrap())
            .collect();
        assert_eq!(starts.len(), 3, "{table}");
        assert!(starts.iter().all(|s| *s == starts[0]), "{table}");
    }
}
