//! `doctor`: the operator's check of a setup, one line per check with `ok`,
//! `FAIL` (and the fix) or `note`: the config (parse, ownership,
//! permissions), `auditLog` as `serve` would open it, the token (or the
//! OAuth issuer) and the port for HTTP, the socket, the handshake pins,
//! `coreId`, and each approval (live or stale). A read-only setup (no
//! `coreId`, no approvals) is healthy: notes, not failures. Read-only: it
//! writes nothing and sends nothing.

mod http;

use std::path::Path;

use super::machines::{Block, Machines};
use crate::config::{Config, Transport};
use crate::escape::printable;
use crate::hc::CoreError;
use crate::hc::wire::{PINNED_FRAMING, PINNED_GENERATION, PINNED_VERSION, TerminalRecord};

/// What `doctor` found: one entry per check, and how many failed.
#[derive(Debug, Default)]
pub(crate) struct Checkup {
    entries: Vec<(&'static str, String, String)>,
    pub failed: usize,
    /// The config itself was refused (unreadable, unsafe, invalid): a
    /// config error, exit 2 as for every other command.
    pub config_refused: bool,
    /// `--config` as the operator gave it, repeated in the fixes shown.
    config_flag: String,
}

impl Checkup {
    fn line(&mut self, mark: &'static str, check: &str, detail: &str) {
        self.entries
            .push((mark, check.to_owned(), printable(detail).into_owned()));
    }

    fn ok(&mut self, check: &str, detail: impl AsRef<str>) {
        self.line("ok", check, detail.as_ref());
    }

    fn fail(&mut self, check: &str, detail: impl AsRef<str>) {
        self.failed += 1;
        self.line("FAIL", check, detail.as_ref());
    }

    /// Worth knowing, and not a failure.
    fn note(&mut self, check: &str, detail: impl AsRef<str>) {
        self.line("note", check, detail.as_ref());
    }

    /// A check that could not run because an earlier one failed.
    fn skip(&mut self, check: &str, why: &str) {
        self.line("--", check, &format!("not checked: {why}"));
    }

    /// One line per check.
    pub(crate) fn text(&self) -> String {
        self.entries
            .iter()
            .map(|(mark, check, detail)| format!("{mark:<4} {check:<10} {detail}\n"))
            .collect()
    }

    /// `--json`: `{"checks": [{"status", "check", "detail"}], "failed"}`.
    pub(crate) fn json(&self) -> String {
        let checks: Vec<serde_json::Value> = self
            .entries
            .iter()
            .map(|(mark, check, detail)| {
                let status = match *mark {
                    "FAIL" => "fail",
                    "--" => "skipped",
                    other => other,
                };
                serde_json::json!({"status": status, "check": check, "detail": detail})
            })
            .collect();
        let mut text = serde_json::to_string_pretty(
            &serde_json::json!({"checks": checks, "failed": self.failed}),
        )
        .expect("a JSON document encodes");
        text.push('\n');
        text
    }
}

pub(crate) async fn run(path: &Path, config_flag: Option<&Path>) -> Checkup {
    let mut report = Checkup {
        config_flag: config_flag.map_or(String::new(), |p| {
            format!(" --config {}", printable(&p.display().to_string()))
        }),
        ..Checkup::default()
    };
    let config = match Config::load(path) {
        Ok(config) => config,
        Err(e) => {
            report.fail("config", e.to_string());
            report.config_refused = true;
            for check in ["socket", "handshake", "coreId", "approvals"] {
                report.skip(check, "the config did not load");
            }
            return report;
        }
    };
    report.ok(
        "config",
        format!(
            "{} is valid, and nobody but you (or root) can change it",
            path.display()
        ),
    );
    if let Some(file) = config.audit_log() {
        match crate::audit::Audit::check_file(file) {
            Ok(()) => report.ok(
                "auditLog",
                format!("{} can be appended to, privately", file.display()),
            ),
            Err(e) => report.fail("auditLog", format!("{e} (serve refuses to start with it)")),
        }
    }
    if let Transport::Http(http) = config.transport() {
        http::check_http(&mut report, http, path).await;
    }
    report.ok("versions", accepted_versions(&config));
    for pid in super::serves::serving(path) {
        let flag = report.config_flag.clone();
        match super::started::needing_restart(pid, &config) {
            Some(keys) if !keys.is_empty() => report.fail(
                "serve",
                format!(
                    "serve (pid {pid}) runs with other {} than the file says, which a reload cannot change: restart it (herdr-core-mcp reload{flag} applies every other key)",
                    keys.join(", ")
                ),
            ),
            Some(_) => report.ok("serve", format!("serve (pid {pid}) runs with the file's settings")),
            None => {}
        }
    }
    let client = config.hc_client();
    let listed = client.list(true).await;
    let machines = match &listed {
        Ok(_) => Some(super::machines::ask(&client).await),
        Err(_) => None,
    };
    client.close();
    match listed {
        Ok(listed) => {
            report.ok(
                "socket",
                format!("hc answers at {}", config.socket_path().display()),
            );
            let core = &listed.core;
            report.ok(
                "handshake",
                format!(
                    "hc {}{}, generation {PINNED_GENERATION}, framing {PINNED_FRAMING}",
                    printable(&core.version),
                    if core.version == PINNED_VERSION {
                        " (built in)"
                    } else {
                        " (accepted in hcVersions)"
                    }
                ),
            );
            check_core(&mut report, &config, listed.core.core_id.as_str());
            let machines = machines.unwrap_or(Machines::None);
            for line in machines.lines(&config) {
                match &machines {
                    Machines::Failed(_) => report.note("machines", line),
                    _ => report.ok("machines", line),
                }
            }
            check_approvals(&mut report, &config, &listed.value.terminals, &machines);
        }
        Err(e) => {
            match e {
                CoreError::HandshakePin { .. }
                | CoreError::HandshakeRefused { .. }
                | CoreError::Unaccepted { .. } => {
                    report.ok(
                        "socket",
                        format!("hc answers at {}", config.socket_path().display()),
                    );
                    report.fail("handshake", e.to_string());
                }
                _ => {
                    report.fail("socket", e.to_string());
                    report.skip("handshake", "hc did not answer");
                }
            }
            report.skip("coreId", "hc did not answer");
            report.skip("machines", "hc did not answer");
            report.skip("approvals", "hc did not answer");
        }
    }
    report
}

/// The versions this config speaks: the built-in one, and each accepted
/// with when it was checked, whether a document binds it, and whether
/// sends to it leave `force` out.
fn accepted_versions(config: &Config) -> String {
    let mut said = format!("hc {PINNED_VERSION} (built in)");
    for entry in config.hc_versions() {
        let mut bound = match &entry.document_sha256 {
            Some(sha) => format!("its document {}…", &sha[..12]),
            None => "no document".to_owned(),
        };
        if entry
            .params_omitted
            .contains(&crate::config::OmittedParam::Force)
        {
            bound.push_str(", sends without `force`");
        }
        said.push_str(&format!(
            ", hc {} (accepted {}, {bound})",
            printable(&entry.version),
            crate::escape::readable_ms(i64::try_from(entry.checked_ms).unwrap_or(i64::MAX))
        ));
    }
    said
}

pub(super) fn pid_list(pids: &[u32]) -> String {
    pids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_core(report: &mut Checkup, config: &Config, live: &str) {
    match config.core_id() {
        Some(id) if id.as_str() == live => {
            report.ok("coreId", format!("matches hc's core_id {live}"))
        }
        Some(id) => {
            let flag = report.config_flag.clone();
            report.fail(
                "coreId",
                format!(
                    "is {id}, but hc is now core {live} (hc restarted): nothing can be sent; approve again with herdr-core-mcp allow{flag} ADDRESS (it updates coreId)"
                ),
            )
        }
        // A read-only setup: reading works, and nothing can be sent.
        None => {
            let flag = report.config_flag.clone();
            report.note(
                "coreId",
                format!(
                    "not set: a read-only setup (nothing can be sent); to send, approve a terminal of core {live} with herdr-core-mcp allow{flag} ADDRESS"
                ),
            )
        }
    }
}

fn check_approvals(
    report: &mut Checkup,
    config: &Config,
    terminals: &[TerminalRecord],
    machines: &Machines,
) {
    let mut approvals: Vec<_> = config.approvals().collect();
    approvals.sort_by(|(a, _), (b, _)| (a.created_ms, &a.address).cmp(&(b.created_ms, &b.address)));
    let flag = report.config_flag.clone();
    if approvals.is_empty() {
        report.note(
            "approvals",
            format!("none: nothing can be sent (reading works); approve a terminal with herdr-core-mcp allow{flag} ADDRESS"),
        );
        return;
    }
    for (lifetime, approval) in approvals {
        let live = terminals
            .iter()
            .find(|t| t.address == lifetime.address && t.created_ms == lifetime.created_ms);
        let what = format!(
            "{} (created_ms {}{})",
            lifetime.address,
            lifetime.created_ms,
            if approval.multiline {
                ", multi-line"
            } else {
                ""
            }
        );
        let again = format!(
            "; approve it again with herdr-core-mcp allow{flag} {}",
            lifetime.address
        );
        match (machines.blocks(config, lifetime), live) {
            (Some(Block::Fails(why)), _) => {
                report.fail("approval", format!("{what} {why}{again}"));
                continue;
            }
            (Some(Block::Unknown(why)), None) => {
                report.note("approval", format!("{what} cannot be checked now: {why}"));
                continue;
            }
            _ => {}
        }
        match live {
            Some(t) if !t.is_finished() => report.ok(
                "approval",
                format!("{what} is live: {}", t.program.as_deref().unwrap_or("-")),
            ),
            Some(_) => report.fail(
                "approval",
                format!(
                    "{what} has finished: remove it with herdr-core-mcp revoke{flag} {} --created-ms {}",
                    lifetime.address, lifetime.created_ms
                ),
            ),
            None => report.fail(
                "approval",
                format!(
                    "{what} names no terminal of this core (stale): remove it with herdr-core-mcp revoke{flag} {} --created-ms {}",
                    lifetime.address, lifetime.created_ms
                ),
            ),
        }
    }
}
