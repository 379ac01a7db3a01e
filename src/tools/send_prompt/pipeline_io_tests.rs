//! The attempt against a real socket nobody answers: what reaches hc, and
//! the audit line of each caller that may not send.

use std::path::Path;
use std::sync::Arc;

use rmcp::model::CallToolResponse;

use super::super::confirm::Asking;
use super::tests::{APPROVED, CORE, args};
use super::*;
use crate::config::RawConfig;

/// Where hc would listen: a real socket nobody accepts on, so every
/// connection made to it waits in its backlog and is counted there.
struct Core(tempfile::TempDir, std::os::unix::net::UnixListener);

impl Core {
    fn bind() -> Core {
        let dir = tempfile::tempdir().unwrap();
        let listener = std::os::unix::net::UnixListener::bind(dir.path().join("hc.sock")).unwrap();
        listener.set_nonblocking(true).unwrap();
        Core(dir, listener)
    }

    /// Connections made to the socket since the last count.
    fn connections(&self) -> usize {
        let mut n = 0;
        loop {
            match self.1.accept() {
                Ok(_) => n += 1,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return n,
                Err(e) => panic!("accept: {e}"),
            }
        }
    }
}

/// The audit stream, captured.
#[derive(Clone, Default)]
struct AuditLines(Arc<std::sync::Mutex<Vec<u8>>>);

impl AuditLines {
    fn lines(&self) -> Vec<serde_json::Value> {
        let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl std::io::Write for AuditLines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The tools over `core`, t1 and t2 approved, their audit stream captured.
fn tools_at(core: &Core) -> (Arc<Tools>, AuditLines) {
    let socket = serde_json::to_string(&core.0.path().join("hc.sock")).unwrap();
    let text = format!(
        r#"{{"socketPath": {socket}, "timeoutMs": 100, "coreId": "{CORE}", "sendAllowlist": {APPROVED}}}"#
    );
    let path = Path::new("/test/config.json");
    let config = Config::validate(path, RawConfig::parse(path, &text).unwrap()).unwrap();
    let lines = AuditLines::default();
    let audit = crate::audit::Audit::open(Box::new(lines.clone()), None).unwrap();
    let app = crate::app::App::new(config, audit);
    (Arc::new(Tools::new(Arc::new(app))), lines)
}

/// Every kind of caller that may not send.
fn readers() -> [(&'static str, Caller); 3] {
    [
        ("read token", Caller::read_token()),
        ("unproven", Caller::unproven()),
        (
            "oauth without the send scope",
            Caller::oauth(Some("reader"), Some("client-1"), false),
        ),
    ]
}

async fn attempt_by(tools: &Tools, caller: &Caller, text: &str) -> Attempt {
    let loaded = tools.app().loaded();
    let ct = CancellationToken::new();
    attempt(
        tools,
        &loaded,
        &args("t1", text),
        caller,
        &Asking::nobody(),
        &ct,
    )
    .await
}

#[tokio::test]
async fn attempt_refuses_a_reader_first_and_never_calls_hc() {
    let core = Core::bind();
    let (tools, audit) = tools_at(&core);
    // Sendable text, and text a later check would refuse: the scope is
    // judged before anything else.
    for (who, caller) in readers() {
        for text in ["hi", "", "a\x1b"] {
            let got = attempt_by(&tools, &caller, text).await;
            assert!(
                matches!(got.verdict, Verdict::NotSent(Refusal::InsufficientScope)),
                "{who} {text:?}: {:?}",
                got.verdict
            );
            assert_eq!(got.verdict.code().as_str(), "insufficient_scope");
            assert!(got.preflight.is_none() && got.guard.is_none() && got.mode.is_none());
        }
    }
    assert_eq!(core.connections(), 0, "a reader's attempt reached hc");
    // The attempt writes no line of its own: the tool writes its one line.
    assert!(audit.lines().is_empty());
}

#[tokio::test]
async fn the_same_attempt_from_a_sender_does_reach_hc() {
    // The control of the test above: the socket does see a call. hc never
    // answers the handshake, so the preflight times out.
    let core = Core::bind();
    let (tools, _audit) = tools_at(&core);
    let got = attempt_by(&tools, &Caller::token(), "hi").await;
    assert_eq!(got.verdict.code().as_str(), "preflight_failed");
    assert!(core.connections() >= 1);
}

#[tokio::test]
async fn send_prompt_from_a_reader_is_not_sent_with_one_audit_line() {
    for (who, caller) in readers() {
        let core = Core::bind();
        let (tools, audit) = tools_at(&core);
        let args = serde_json::json!({
            "address": "t1", "text": "a private prompt", "created_ms": 100,
        });
        let expected_caller = serde_json::to_value(caller.who()).unwrap();
        let response = super::super::run(
            tools,
            args.as_object().unwrap().clone(),
            caller,
            Asking::nobody(),
            CancellationToken::new(),
        )
        .await;
        let CallToolResponse::Complete(result) = response else {
            panic!("{who}: not a complete result");
        };
        assert_eq!(result.is_error, Some(true), "{who}");
        let output = result.structured_content.expect("structured output");
        assert_eq!(output["outcome"], "not_sent", "{who}");
        assert_eq!(output["reason_code"], "insufficient_scope", "{who}");
        assert_eq!(output["preflight_status"], serde_json::Value::Null);
        let text = &result.content[0].as_text().expect("text").text;
        assert!(
            text.starts_with("NOT SENT: ") && text.contains("[insufficient_scope]"),
            "{who}: {text}"
        );
        assert_eq!(core.connections(), 0, "{who}: reached hc");
        let lines = audit.lines();
        assert_eq!(lines.len(), 1, "{who}: {lines:?}");
        let line = &lines[0];
        assert_eq!(line["outcome"], "not_sent", "{who}");
        assert_eq!(line["reason"], "insufficient_scope", "{who}");
        assert_eq!(line["address"], "t1");
        assert_eq!(line["created_ms"], 100);
        assert_eq!(line["core_id"], serde_json::Value::Null);
        assert_eq!(line["caller"], expected_caller, "{who}");
        assert!(!line.to_string().contains("private prompt"));
    }
}
