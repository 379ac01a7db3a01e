//! `doctor`: the operator's check of a setup, one line per check with `ok`
//! or `FAIL` and the fix: the config (parse, ownership, permissions), the
//! token and the port for HTTP, the socket, the handshake pins, `coreId`,
//! and each approval (live or stale). Read-only: it writes nothing and
//! sends nothing.

use std::path::Path;

use crate::config::{Config, HttpAuth, HttpConfig, OAuthConfig, Transport};
use crate::escape::printable;
use crate::hc::wire::{PINNED_FRAMING, PINNED_GENERATION, PINNED_VERSION, TerminalRecord};
use crate::hc::{CoreError, HcClient};
use crate::transport::auth::BearerToken;

/// What `doctor` prints, and how many checks failed.
#[derive(Debug, Default)]
pub struct Report {
    pub text: String,
    pub failed: usize,
}

impl Report {
    fn line(&mut self, mark: &str, check: &str, detail: &str) {
        self.text
            .push_str(&format!("{mark:<4} {check:<10} {}\n", printable(detail)));
    }

    fn ok(&mut self, check: &str, detail: impl AsRef<str>) {
        self.line("ok", check, detail.as_ref());
    }

    fn fail(&mut self, check: &str, detail: impl AsRef<str>) {
        self.failed += 1;
        self.line("FAIL", check, detail.as_ref());
    }

    /// A check that could not run because an earlier one failed.
    fn skip(&mut self, check: &str, why: &str) {
        self.line("--", check, &format!("not checked: {why}"));
    }
}

pub async fn run(path: &Path) -> Report {
    let mut report = Report::default();
    let config = match Config::load(path) {
        Ok(config) => config,
        Err(e) => {
            report.fail("config", e.to_string());
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
    if let Transport::Http(http) = config.transport() {
        check_http(&mut report, http, path).await;
    }
    let client = HcClient::new(config.socket_path(), config.timeout());
    let listed = client.list(true).await;
    client.close();
    match listed {
        Ok(listed) => {
            report.ok(
                "socket",
                format!("hc answers at {}", config.socket_path().display()),
            );
            report.ok(
                "handshake",
                format!(
                    "hc {PINNED_VERSION}, generation {PINNED_GENERATION}, framing {PINNED_FRAMING}"
                ),
            );
            check_core(&mut report, &config, listed.core.core_id.as_str());
            check_approvals(&mut report, &config, &listed.value);
        }
        Err(e) => {
            match e {
                CoreError::HandshakePin { .. } | CoreError::HandshakeRefused { .. } => {
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
            report.skip("approvals", "hc did not answer");
        }
    }
    report
}

async fn check_http(report: &mut Report, http: &HttpConfig, path: &Path) {
    match http.auth() {
        HttpAuth::Token => match BearerToken::from_env() {
            Ok(full) => {
                report.ok("token", "HERDR_MCP_TOKEN is set and looks generated");
                match BearerToken::read_from_env(&full) {
                    Ok(Some(_)) => report.ok(
                        "read token",
                        "HERDR_MCP_READ_TOKEN is set, differs, and looks generated",
                    ),
                    Ok(None) => {}
                    Err(e) => report.fail("read token", e.to_string()),
                }
            }
            Err(e) => report.fail("token", e.to_string()),
        },
        HttpAuth::OAuth(oauth) => check_oauth(report, http, oauth).await,
    }
    let port = http.port();
    let suffix = format!(":{port}");
    if http.allowed_hosts().iter().any(|h| h.ends_with(&suffix)) {
        report.ok("hosts", format!("http.allowedHosts names port {port}"));
    } else {
        report.fail(
            "hosts",
            format!(
                "no http.allowedHosts entry ({}) names port {port}, so requests get 403: add \"127.0.0.1:{port}\" (and the Host your proxy sends)",
                http.allowed_hosts().join(", ")
            ),
        );
    }
    let serving = super::reload::serving(path);
    match std::net::TcpListener::bind(("127.0.0.1", port)) {
        Ok(_) => report.ok("port", format!("127.0.0.1:{port} is free for serve")),
        Err(_) if !serving.is_empty() => report.ok(
            "port",
            format!(
                "127.0.0.1:{port} is in use by the running serve of this config (pid {})",
                serving
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        Err(e) => report.fail(
            "port",
            format!(
                "127.0.0.1:{port} cannot be bound ({e}): stop what uses it (a serve already running?) or pick another http.port"
            ),
        ),
    }
}

/// OAuth mode: the issuer's metadata and keys as `serve` fetches them, the
/// resource clients are told, and the scopes.
async fn check_oauth(report: &mut Report, http: &HttpConfig, oauth: &OAuthConfig) {
    match crate::transport::oauth::probe(oauth).await {
        Ok(keys) => report.ok(
            "issuer",
            format!(
                "{} publishes its metadata and {keys} signing key(s)",
                printable(oauth.issuer())
            ),
        ),
        Err(e) => report.fail(
            "issuer",
            format!("{e} (serve still starts, and refuses every token until the keys are known)"),
        ),
    }
    let resource = oauth.resource();
    let authority = match resource.port() {
        Some(port) => format!("{}:{port}", resource.host_str().unwrap_or("")),
        None => resource.host_str().unwrap_or("").to_owned(),
    };
    let https = resource.scheme() == "https";
    if !https {
        report.fail(
            "resource",
            format!("{resource} is not https: remote clients refuse it; only a client on this machine can use it"),
        );
    } else if http.allowed_hosts().contains(&authority) {
        report.ok(
            "resource",
            format!(
                "clients connect to {resource}; your proxy forwards it to /mcp and {} to /.well-known/oauth-protected-resource/mcp, with Host {authority}",
                oauth.metadata_url()
            ),
        );
    } else {
        report.fail(
            "resource",
            format!(
                "{resource} names host {authority}, which http.allowedHosts does not list: add \"{authority}\" if your proxy forwards that Host (or have it send one that is listed)"
            ),
        );
    }
    report.ok(
        "scopes",
        format!(
            "{} reads; {} also sends (your IdP must issue both, and let registered clients ask for {} later)",
            oauth.read_scope(),
            oauth.send_scope(),
            oauth.send_scope()
        ),
    );
}

fn check_core(report: &mut Report, config: &Config, live: &str) {
    match config.core_id() {
        Some(id) if id.as_str() == live => report.ok("coreId", format!("matches hc's core_id {live}")),
        Some(id) => report.fail(
            "coreId",
            format!(
                "is {id}, but hc is now core {live} (hc restarted): nothing can be sent; approve again with herdr-core-mcp allow ADDRESS (it updates coreId)"
            ),
        ),
        None => report.fail(
            "coreId",
            format!(
                "not set, so nothing can be sent: approve a terminal of core {live} with herdr-core-mcp allow ADDRESS"
            ),
        ),
    }
}

fn check_approvals(report: &mut Report, config: &Config, terminals: &[TerminalRecord]) {
    let mut approvals: Vec<_> = config.approvals().collect();
    approvals.sort_by(|(a, _), (b, _)| (a.created_ms, &a.address).cmp(&(b.created_ms, &b.address)));
    if approvals.is_empty() {
        report.fail(
            "approvals",
            "none, so nothing can be sent: approve a terminal with herdr-core-mcp allow ADDRESS",
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
        match live {
            Some(t) if !t.is_finished() => report.ok(
                "approval",
                format!("{what} is live: {}", t.program.as_deref().unwrap_or("-")),
            ),
            Some(_) => report.fail(
                "approval",
                format!(
                    "{what} has finished: remove it with herdr-core-mcp revoke {} --created-ms {}",
                    lifetime.address, lifetime.created_ms
                ),
            ),
            None => report.fail(
                "approval",
                format!(
                    "{what} names no terminal of this core (stale): remove it with herdr-core-mcp revoke {} --created-ms {}",
                    lifetime.address, lifetime.created_ms
                ),
            ),
        }
    }
}
