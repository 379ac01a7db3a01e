//! doctor's checks of the HTTP transport: the tokens (against the running
//! serve of this config, when one listens), the hosts and the port, and
//! OAuth mode's issuer, resource and scopes.

use std::path::Path;

use super::{Checkup, pid_list};
use crate::config::{HttpAuth, HttpConfig, OAuthConfig, is_loopback};
use crate::escape::printable;
use crate::transport::http::auth::tokens::{BearerToken, TokenError};

pub(super) async fn check_http(report: &mut Checkup, http: &HttpConfig, path: &Path) {
    // The serves of this config, looked up once for the token and port lines.
    let serving = crate::ops::serves::serving(path);
    let port = http.port();
    // Only the serves of this config that hold the port are named.
    let holders: Vec<u32> = serving
        .iter()
        .copied()
        .filter(|pid| crate::ops::serves::listening_ports(*pid).contains(&port))
        .collect();
    match http.auth() {
        HttpAuth::Token => match BearerToken::from_env() {
            // A serve of this config runs with its own token: this shell
            // simply does not have it.
            Err(TokenError::Missing) if !serving.is_empty() => report.fail(
                "token",
                format!(
                    "HERDR_MCP_TOKEN is not set in this shell, but a serve of this config is running (pid {}) with its own: to check that token, export it here from where your service reads it; do not make a new one",
                    pid_list(&serving)
                ),
            ),
            Ok(full) => {
                report.ok("token", "HERDR_MCP_TOKEN is set and looks generated");
                if !holders.is_empty() {
                    check_token_with_serve(report, "token", "HERDR_MCP_TOKEN", port, &holders)
                        .await;
                }
                match BearerToken::read_from_env(&full) {
                    Ok(Some(_)) => {
                        report.ok(
                            "read token",
                            "HERDR_MCP_READ_TOKEN is set, differs, and looks generated",
                        );
                        if !holders.is_empty() {
                            check_token_with_serve(
                                report,
                                "read token",
                                "HERDR_MCP_READ_TOKEN",
                                port,
                                &holders,
                            )
                            .await;
                        }
                    }
                    Ok(None) => {}
                    Err(e) => report.fail("read token", e.to_string()),
                }
            }
            Err(e) => report.fail("token", e.to_string()),
        },
        HttpAuth::OAuth(oauth) => check_oauth(report, http, oauth).await,
    }
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
    match std::net::TcpListener::bind(("127.0.0.1", port)) {
        Ok(_) => report.ok("port", format!("127.0.0.1:{port} is free for serve")),
        Err(_) if !holders.is_empty() => report.ok(
            "port",
            format!(
                "127.0.0.1:{port} is held by the running serve of this config (pid {})",
                pid_list(&holders)
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

/// How long the running serve has to answer doctor's one request.
const SERVE_ANSWER: std::time::Duration = std::time::Duration::from_secs(3);

/// Asks the running serve of this config (`holders`, on `port`) whether it
/// takes the token in `variable`: one authenticated `initialize`, which
/// changes nothing. The token is sent only there, over loopback, and never
/// printed.
async fn check_token_with_serve(
    report: &mut Checkup,
    check: &str,
    variable: &str,
    port: u16,
    holders: &[u32],
) {
    let Ok(token) = std::env::var(variable) else {
        return;
    };
    let pids = pid_list(holders);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"herdr-core-mcp doctor","version":"{}"}}}}}}"#,
        crate::mcp::PROTOCOL_VERSIONS[0],
        env!("CARGO_PKG_VERSION")
    );
    let answered = reqwest::Client::builder()
        .timeout(SERVE_ANSWER)
        .build()
        .expect("an HTTP client with static settings builds")
        .post(format!("http://127.0.0.1:{port}/mcp"))
        .bearer_auth(token)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body)
        .send()
        .await;
    match answered.map(|r| r.status().as_u16()) {
        Ok(200) => report.ok(
            check,
            format!("the running serve of this config (pid {pids}) accepts {variable}"),
        ),
        Ok(401) => report.fail(
            check,
            format!(
                "the running serve of this config (pid {pids}) refuses this {variable}: it runs with another one; export the one your service reads (its EnvironmentFile, say) here, and do not make a new one"
            ),
        ),
        Ok(403) => report.note(
            check,
            format!(
                "{variable} could not be checked against the running serve (pid {pids}): it refused Host 127.0.0.1:{port} (see the hosts line)"
            ),
        ),
        Ok(status) => report.note(
            check,
            format!(
                "{variable} could not be checked against the running serve (pid {pids}): it answered HTTP {status}"
            ),
        ),
        Err(e) => report.note(
            check,
            format!(
                "{variable} could not be checked against the running serve (pid {pids}): {}",
                e.without_url()
            ),
        ),
    }
}

/// OAuth mode: the issuer's metadata and keys as `serve` fetches them, the
/// resource clients are told, and the scopes.
async fn check_oauth(report: &mut Checkup, http: &HttpConfig, oauth: &OAuthConfig) {
    match crate::transport::http::auth::oauth::probe(oauth).await {
        Ok(keys) => {
            report.ok(
                "issuer",
                format!(
                    "{} publishes its metadata and {} usable signing key(s)",
                    printable(oauth.issuer()),
                    keys.usable()
                ),
            );
            if keys.ignored() > 0 {
                report.note(
                    "keys",
                    format!(
                        "the key set has {} more entries than the {} that are read: tokens signed with a key past the {}th are refused; trim the set at the IdP",
                        keys.ignored(),
                        crate::transport::http::auth::oauth::MAX_KEYS,
                        crate::transport::http::auth::oauth::MAX_KEYS
                    ),
                );
            }
            for kid in keys.ambiguous() {
                report.fail(
                    "keys",
                    format!(
                        "two keys of the set carry the kid {}, so tokens naming it are refused: give each key its own kid at the IdP",
                        printable(kid)
                    ),
                );
            }
        }
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
    if !https && is_loopback(resource) {
        // serve accepts it, for trying oauth mode on this machine.
        report.note(
            "resource",
            format!("{resource} is plain http on this machine: fine for a client here (testing); remote clients refuse it, so give them an https resource behind your proxy"),
        );
    } else if !https {
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
