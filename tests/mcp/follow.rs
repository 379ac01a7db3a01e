//! `send_prompt` with `follow_ms` where it meets the rest of a call: its
//! progress notifications while it follows, a cancel that stops the follow
//! and never the send, and a confirmed send followed after the human's
//! yes. (Its outcomes are in `status_reasons`, a terminal of another
//! machine in `machines`.)

use std::sync::{Arc, Mutex};
use std::time::Duration;

use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ProgressNotificationParam,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};

use crate::support::in_process::{Served, stdio_with};
use crate::support::mcp::{self, call, is_error, structured, text};
use crate::support::waits::{agents, assert_polling_stopped, wait_status};
use crate::support::world::approve_all;
use crate::support::{Sim, SimOptions, eventually};

/// A client whose human says yes to every question, and which records
/// the questions and the progress notifications it gets.
#[derive(Clone, Default)]
struct Human {
    questions: Arc<Mutex<Vec<String>>>,
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Human {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(capabilities, Implementation::new("follow-test", "0"))
            .with_protocol_version(ProtocolVersion::V_2025_06_18)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let asked = serde_json::to_value(&request).unwrap_or_default();
        let message = asked["message"].as_str().unwrap_or_default().to_owned();
        self.questions.lock().unwrap().push(message);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true})))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

/// `options`' simulator, every terminal approved in normal mode (with
/// confirmation when `confirm`), and the adapter in this process.
async fn world(options: SimOptions, confirm: bool) -> (Sim, Human, Served<Human>) {
    let sim = Sim::start(options);
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    let mut allowlist = approve_all(&hc).await;
    for entry in allowlist.as_array_mut().unwrap() {
        entry["confirm"] = json!(confirm);
    }
    let config = sim.config(json!({
        "coreId": sim.core_id,
        "sendMode": "normal",
        "sendAllowlist": allowlist,
    }));
    let human = Human::default();
    let served = stdio_with(human.clone(), &config).await;
    (sim, human, served)
}

#[tokio::test]
async fn progress_arrives_while_following_and_a_cancel_stops_the_follow_not_the_send() {
    // The agent works on a task for a minute: the turn runs past the cancel.
    let (sim, human, served) = world(agents(1, 60_000), false).await;
    let args = json!({"address": "t1", "text": "a long task", "follow_ms": 60000});
    let handle = mcp::start_call(&served.client, "send_prompt", args).await;

    // The follow tells how the turn goes: t1 working, under the call's token.
    let progress = eventually("a progress notification of the turn", async || {
        human
            .progress
            .lock()
            .unwrap()
            .iter()
            .find(|p| {
                p.message
                    .as_deref()
                    .is_some_and(|m| m.contains("t1: working"))
            })
            .cloned()
    })
    .await;
    assert_eq!(progress.progress_token, handle.progress_token);
    assert_eq!(
        sim.writes_to("t1"),
        1,
        "the prompt landed before the follow"
    );

    handle
        .cancel(Some("the host gave up".into()))
        .await
        .expect("cancel");
    assert_polling_stopped(&sim, "terminal.get").await;
    // The send stands: one line, sent; nothing typed again.
    let lines = served.audit.lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("\"outcome\":\"sent\""), "{}", lines[0]);
    assert_eq!(sim.writes_to("t1"), 1);

    // The server goes on: the next call answers.
    let listed = call(&served.client, "list_sessions", json!({})).await;
    assert!(!is_error(&listed), "{}", text(&listed));
}

#[tokio::test]
async fn a_confirmed_send_is_followed_after_the_human_s_yes() {
    let (sim, human, served) = world(agents(1, 100), true).await;
    let result = call(
        &served.client,
        "send_prompt",
        json!({"address": "t1", "text": "a confirmed task", "follow_ms": 20000}),
    )
    .await;
    assert!(!is_error(&result), "{}", text(&result));
    let out: &Value = structured(&result);
    assert_eq!(out["outcome"], "sent", "{out}");
    assert_eq!(out["turn"]["state"], "ended", "{out}");
    assert_eq!(out["turn"]["status"], "done", "{out}");
    assert!(
        out["turn"]["status_seq"].as_u64() > out["core_status_seq"].as_u64(),
        "{out}"
    );
    let questions = human.questions.lock().unwrap().clone();
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(questions[0].contains("a confirmed task"), "{questions:?}");
    assert_eq!(sim.writes_to("t1"), 1);
}
