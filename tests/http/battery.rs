//! The hostile-request battery: a table of raw requests (in `rows`), each
//! with the status it must get and the checks its reply must pass, run
//! against one spawned adapter. Every refusal is due to the one thing its
//! row changes from a valid request.

mod rows;

use std::fmt::Write as _;
use std::time::Instant;

use serde_json::{Value, json};

use crate::support::http::response::{Reply, exchange};
use crate::support::http::{OK_ORIGIN, spawn_http};
use crate::support::mcp::TEST_TOKEN;
use crate::support::{Sim, SimOptions};

/// The status a row must get.
#[derive(Debug, Clone, Copy)]
enum Expect {
    Status(u16),
    /// A 4xx, or a 200 whose body is a JSON-RPC error.
    Rejected,
    /// Anything but 2xx, and the connection is closed afterwards.
    NotSuccessAndClosed,
}

/// Extra checks beyond the status; `Cache-Control: no-store` and the
/// absence of any `Access-Control-*` header are checked on every row.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Check {
    /// Exactly one `WWW-Authenticate: Bearer`.
    Challenge,
    /// No `WWW-Authenticate` at all.
    NoChallenge,
    /// The JSON-RPC result of the `initialize` request (id 1).
    Initialized,
    /// `Allow: POST` (the only method of `/mcp`).
    AllowPost,
    /// The server closes the connection after answering.
    Closes,
    /// hyper itself refuses malformed framing before any service runs, so
    /// the gate cannot add `Cache-Control` there (empty 400, no content).
    ParserRefusal,
    /// A JSON-RPC error body with this code and `"id": null`.
    RpcError(i64),
    /// A tool result with `isError` for request id 1.
    ToolError,
    /// The initialize result names this protocol revision.
    Negotiated(&'static str),
}

struct Row {
    name: &'static str,
    request: Vec<u8>,
    expect: Expect,
    checks: &'static [Check],
}

fn row(
    name: &'static str,
    request: impl Into<Vec<u8>>,
    expect: Expect,
    checks: &'static [Check],
) -> Row {
    Row {
        name,
        request: request.into(),
        expect,
        checks,
    }
}

/// Checks one reply against its row; the error says what broke.
fn judge(row: &Row, reply: &Reply) -> Result<(), String> {
    judge_status(row.expect, reply)?;
    judge_every_reply(row, reply)?;
    for check in row.checks {
        judge_check(check, reply)?;
    }
    Ok(())
}

/// The status (and, for a refusal, the close) the row expects.
fn judge_status(expect: Expect, reply: &Reply) -> Result<(), String> {
    let status = reply.status;
    match expect {
        Expect::Status(code) if status != code => return Err(format!("expected {code}")),
        Expect::Rejected => {
            let json_rpc_error =
                status == 200 && reply.json().is_some_and(|v| v.get("error").is_some());
            if !(400..500).contains(&status) && !json_rpc_error {
                return Err("expected a 4xx or a JSON-RPC error".into());
            }
        }
        Expect::NotSuccessAndClosed => {
            if (200..300).contains(&status) {
                return Err("expected a refusal".into());
            }
            if !reply.closed {
                return Err("connection left open".into());
            }
        }
        Expect::Status(_) => {}
    }
    Ok(())
}

/// What every reply must show: `Cache-Control: no-store` (unless hyper
/// refused it first), no CORS header, a close after a refusal, and a 413
/// that names the limit.
fn judge_every_reply(row: &Row, reply: &Reply) -> Result<(), String> {
    let status = reply.status;
    if !row.checks.contains(&Check::ParserRefusal) && reply.all("cache-control") != ["no-store"] {
        return Err(format!(
            "Cache-Control is {:?}, not [no-store]",
            reply.all("cache-control")
        ));
    }
    if let Some((name, _)) = reply
        .headers
        .iter()
        .find(|(n, _)| n.to_ascii_lowercase().starts_with("access-control-"))
    {
        return Err(format!("CORS header {name} present"));
    }
    const CLOSING: [u16; 8] = [400, 401, 403, 404, 405, 408, 413, 431];
    if CLOSING.contains(&status)
        && !reply
            .all("connection")
            .iter()
            .any(|v| v.eq_ignore_ascii_case("close"))
    {
        return Err(format!("a {status} without Connection: close"));
    }
    if status == 413 {
        let body = reply.json().ok_or("a 413 without a JSON body")?;
        let message = body["error"]["message"].as_str().unwrap_or_default();
        if body["error"]["code"] != -32600 || !message.contains("65536") {
            return Err(format!("a 413 that does not name the limit: {body}"));
        }
    }
    Ok(())
}

/// One of the row's extra checks.
fn judge_check(check: &Check, reply: &Reply) -> Result<(), String> {
    let challenges = reply.all("www-authenticate");
    match check {
        Check::Challenge if challenges != ["Bearer"] => {
            return Err(format!("WWW-Authenticate is {challenges:?}, not [Bearer]"));
        }
        Check::NoChallenge if !challenges.is_empty() => {
            return Err(format!("unexpected WWW-Authenticate {challenges:?}"));
        }
        Check::Initialized => {
            let body = reply.json().ok_or("body is not JSON")?;
            if body["id"] != 1 || body["result"]["protocolVersion"] != "2025-06-18" {
                return Err(format!("not the initialize result: {body}"));
            }
        }
        Check::RpcError(code) => {
            let body = reply.json().ok_or("body is not JSON")?;
            let null_id = body
                .as_object()
                .is_some_and(|o| o.get("id") == Some(&Value::Null));
            if body["error"]["code"] != *code || !null_id {
                return Err(format!("not a {code} error with a null id: {body}"));
            }
        }
        Check::ToolError => {
            let body = reply.json().ok_or("body is not JSON")?;
            if body["id"] != 1 || body["result"]["isError"] != true {
                return Err(format!("not an isError tool result: {body}"));
            }
        }
        Check::Negotiated(version) => {
            let body = reply.json().ok_or("body is not JSON")?;
            if body["result"]["protocolVersion"] != *version {
                return Err(format!(
                    "negotiated {}, not {version}",
                    body["result"]["protocolVersion"]
                ));
            }
        }
        Check::AllowPost if reply.all("allow") != ["POST"] => {
            return Err(format!("Allow is {:?}", reply.all("allow")));
        }
        Check::Closes if !reply.closed => return Err("connection left open".into()),
        _ => {}
    }
    Ok(())
}

#[tokio::test]
async fn hostile_request_battery() {
    let sim = Sim::start(SimOptions::default());
    let adapter = spawn_http(&sim, json!({"http": {"allowedOrigins": [OK_ORIGIN]}})).await;
    let rows = rows::battery(adapter.port);
    assert!(rows.len() >= 50, "only {} rows", rows.len());
    let mut names: Vec<&str> = rows.iter().map(|r| r.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), rows.len(), "row names must be unique");
    let mut table = String::new();
    let mut failures = Vec::new();
    for row in &rows {
        let await_close = row.checks.contains(&Check::Closes)
            || matches!(row.expect, Expect::NotSuccessAndClosed);
        let started = Instant::now();
        let (observed, verdict) = match exchange(adapter.port, &row.request, await_close).await {
            Ok(reply) => (reply.summary(), judge(row, &reply)),
            Err(e) => ("-".to_owned(), Err(e)),
        };
        let millis = started.elapsed().as_millis();
        let mark = match &verdict {
            Ok(()) => "ok".to_owned(),
            Err(why) => {
                failures.push(row.name);
                format!("FAIL: {why}")
            }
        };
        let expect = match row.expect {
            Expect::Status(code) => code.to_string(),
            Expect::Rejected => "4xx|rpc-err".into(),
            Expect::NotSuccessAndClosed => "!2xx+close".into(),
        };
        let _ = writeln!(
            table,
            "{:<46} {:>11} {:>5}ms  {:<60} {mark}",
            row.name, expect, millis, observed
        );
    }
    println!("{} rows\n{table}", rows.len());
    let log = std::fs::read_to_string(&adapter.stderr_log).unwrap_or_default();
    assert!(!log.contains(TEST_TOKEN), "the token reached the log");
    assert!(
        failures.is_empty(),
        "{} of {} rows failed: {failures:?}\n{table}",
        failures.len(),
        rows.len()
    );
}
