//! The soak's clients: each picks a tool by a seeded roll (30% read_output,
//! 20% list_sessions following cursors, 25% send_prompt, 85% of them to
//! approved agents, 13% wait_for_status, 12% wait_for_output), calls it
//! over its own keep-alive
//! HTTP connection, and checks the answer: HTTP 200, a JSON-RPC result for
//! its id, and an outcome the contract allows for that call. Anything else
//! is a protocol error.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::json;

use crate::Res;
use crate::http::HttpClient;
use crate::stdio::check_response;

/// What the whole run saw.
#[derive(Default)]
pub struct Tally {
    pub outcomes: BTreeMap<String, u64>,
    pub calls: u64,
    pub rate_limited: u64,
    pub errors: Vec<String>,
    pub error_count: u64,
}

impl Tally {
    pub fn merge(&mut self, other: Tally) {
        for (k, v) in other.outcomes {
            *self.outcomes.entry(k).or_default() += v;
        }
        self.calls += other.calls;
        self.rate_limited += other.rate_limited;
        self.error_count += other.error_count;
        for e in other.errors {
            if self.errors.len() < 5 {
                self.errors.push(e);
            }
        }
    }

    fn error(&mut self, e: String) {
        self.error_count += 1;
        if self.errors.len() < 5 {
            self.errors.push(e);
        }
    }
}

/// The terminals the clients pick from.
pub struct Targets {
    pub approved: Vec<String>,
    pub unapproved: Vec<String>,
    pub all: Vec<String>,
}

/// xorshift64*: deterministic per client from the printed seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, from: &'a [String]) -> &'a str {
        &from[self.below(from.len())]
    }
}

/// One client: a weighted mix of the five tools until `deadline`.
pub async fn client(
    port: u16,
    token: &str,
    targets: &Targets,
    seed: u64,
    index: usize,
    deadline: Instant,
) -> Tally {
    let mut rng = Rng(seed.max(1));
    let mut http = HttpClient::new(port, token);
    let mut tally = Tally::default();
    let mut cursor: Option<String> = None;
    let mut sent = 0u64;
    while Instant::now() < deadline {
        let roll = rng.below(100);
        let (tool, arguments, approved) = match roll {
            0..30 => {
                let max_chars = [100, 2000, 32768][rng.below(3)];
                (
                    "read_output",
                    json!({"address": rng.pick(&targets.all), "max_chars": max_chars}),
                    false,
                )
            }
            30..50 => {
                let mut args =
                    json!({"limit": 1 + rng.below(30), "include_finished": rng.below(2) == 0});
                if let Some(c) = cursor.take() {
                    args = json!({"cursor": c});
                }
                ("list_sessions", args, false)
            }
            50..75 => {
                sent += 1;
                let approved = rng.below(100) < 85;
                let address = if approved {
                    rng.pick(&targets.approved)
                } else {
                    rng.pick(&targets.unapproved)
                };
                (
                    "send_prompt",
                    json!({"address": address, "text": format!("soak {index}-{sent}: summarise the log")}),
                    approved,
                )
            }
            75..88 => {
                let timeout_ms = 1000 + rng.below(2000);
                let target = rng.pick(&targets.approved);
                (
                    "wait_for_status",
                    json!({"targets": [{"address": target}], "until": ["done", "idle"], "timeout_ms": timeout_ms, "include_output": rng.below(3) == 0}),
                    false,
                )
            }
            _ => {
                let timeout_ms = 500 + rng.below(1500);
                // Mostly the agents the prompts go to (their screens
                // change); now and then any terminal (most never change).
                let target = if rng.below(4) == 0 {
                    rng.pick(&targets.all)
                } else {
                    rng.pick(&targets.approved)
                };
                // A pattern for the agents' replies, a quiet period, or both.
                let arguments = match rng.below(3) {
                    0 => {
                        json!({"address": target, "pattern": "^reply: soak", "timeout_ms": timeout_ms})
                    }
                    1 => {
                        json!({"address": target, "quiet_ms": 100 + rng.below(400), "timeout_ms": timeout_ms})
                    }
                    _ => {
                        json!({"address": target, "pattern": "reply", "quiet_ms": 200, "timeout_ms": timeout_ms, "max_chars": 500})
                    }
                };
                ("wait_for_output", arguments, false)
            }
        };
        let (status, id) = match http.call_tool(tool, &arguments.to_string()).await {
            Ok(answer) => answer,
            Err(e) => {
                tally.error(format!("{tool}: {e}"));
                continue;
            }
        };
        match status {
            200 => {}
            429 => {
                tally.rate_limited += 1;
                continue;
            }
            other => {
                tally.error(format!("{tool}: HTTP {other}: {}", http.text()));
                continue;
            }
        }
        tally.calls += 1;
        match judge(tool, http.text(), id, approved) {
            Ok((outcome, next)) => {
                *tally
                    .outcomes
                    .entry(format!("{tool} {outcome}"))
                    .or_default() += 1;
                if next.is_some() {
                    cursor = next;
                }
            }
            Err(e) => tally.error(format!("{tool} {arguments}: {e}")),
        }
    }
    tally
}

/// Checks one answer; returns the outcome label and any next cursor.
fn judge(tool: &str, body: &str, id: u64, approved: bool) -> Res<(String, Option<String>)> {
    let result = check_response(body, id)?;
    let sc = &result["structuredContent"];
    let failed = result["isError"] == true;
    match tool {
        "send_prompt" => {
            let outcome = sc["outcome"].as_str().unwrap_or("?");
            let reason = sc["reason_code"].as_str().unwrap_or("?");
            let fine = match (approved, outcome, reason) {
                (true, "sent", _) => !failed,
                (true, "not_sent", "status_not_allowed" | "status_mismatch") => failed,
                (false, "not_sent", "not_approved") => failed,
                _ => false,
            };
            if !fine {
                return Err(format!("unexpected send outcome {outcome}/{reason}: {sc}"));
            }
            Ok((format!("{outcome}/{reason}"), None))
        }
        "wait_for_output" => {
            let outcome = sc["outcome"].as_str().unwrap_or("?");
            if failed || !matches!(outcome, "matched" | "settled" | "timeout") {
                return Err(format!("unexpected output wait outcome: {body}"));
            }
            Ok((outcome.to_owned(), None))
        }
        "wait_for_status" => {
            let outcome = sc["outcome"].as_str().unwrap_or("?");
            if failed || !matches!(outcome, "reached" | "timeout") {
                return Err(format!("unexpected wait outcome: {body}"));
            }
            Ok((outcome.to_owned(), None))
        }
        _ => {
            if failed || sc.is_null() {
                return Err(format!("tool failed: {body}"));
            }
            let next = sc["next_cursor"].as_str().map(str::to_owned);
            Ok(("ok".to_owned(), next))
        }
    }
}
