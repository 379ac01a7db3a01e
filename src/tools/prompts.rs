//! MCP prompts, the slash commands a host offers its user: `dispatch` (send
//! one task to an agent and follow it to its end), `triage` (what the
//! blocked and failed terminals are waiting for) and `fleet` (one table of
//! every terminal). A prompt only asks the model to call the tools; it
//! sends nothing itself, and every rule of the tools still holds.
//! `complete` offers the live approved addresses for `dispatch`'s
//! `address`, prefix-filtered and bounded.

use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CompleteResult, CompletionInfo, PromptMessage, Role};
use rmcp::{ErrorData, prompt, prompt_router};
use schemars::JsonSchema;
use serde::Deserialize;

use super::Tools;
use super::server::HerdrServer;
use super::text::MAX_PROMPT_CHARS;
use crate::config::TerminalLifetime;
use crate::hc::wire::check_address;

/// The prompt whose `address` is completed.
pub(crate) const DISPATCH: &str = "dispatch";

/// `dispatch`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct DispatchArgs {
    /// The approved terminal of the agent, e.g. "t1".
    pub address: String,
    /// The task, as the agent should read it.
    pub task: String,
}

// `#[prompt]` adds a public, undocumented `*_prompt_attr` function per
// prompt; the prompts themselves are documented here.
#[allow(missing_docs)]
#[prompt_router]
impl HerdrServer {
    /// Send one task to an approved agent, wait until it is done, blocked or
    /// failed, read its screen and summarise; never resend on `unknown`.
    #[prompt(
        name = "dispatch",
        description = "Send one task to an approved agent terminal, wait until it is done, blocked or failed, then read its screen and summarise. Never resends."
    )]
    async fn dispatch(
        &self,
        Parameters(args): Parameters<DispatchArgs>,
    ) -> Result<Vec<PromptMessage>, ErrorData> {
        check_address(&args.address)
            .map_err(|why| ErrorData::invalid_params(format!("address {why}"), None))?;
        let chars = args.task.chars().count();
        if chars == 0 || chars > MAX_PROMPT_CHARS {
            return Err(ErrorData::invalid_params(
                format!("task must have 1 to {MAX_PROMPT_CHARS} characters, got {chars}"),
                None,
            ));
        }
        let address = serde_json::to_string(&args.address).expect("a string encodes");
        let task = serde_json::to_string(&args.task).expect("a string encodes");
        Ok(vec![PromptMessage::new_text(
            Role::User,
            format!(
                "Dispatch one task to the agent in terminal {address}, using the herdr-core tools:\n\
                 1. Call send_prompt with address {address} and text {task}.\n\
                 2. If its outcome is `not_sent`, tell me its reason and stop. If it is `unknown`, the input may have landed: call read_output for {address}, tell me what the screen shows, and do NOT send again.\n\
                 3. If it is `sent`, call wait_for_status with targets [{{\"address\": {address}, \"after_seq\": <its core_status_seq>}}] and until [\"done\", \"blocked\", \"error\"]. On `timeout`, call it again the same way, as long as the task needs.\n\
                 4. Then call read_output for {address} and summarise for me what the agent did and what it says. If it is `blocked`, show me what it is asking and let me decide: never answer it yourself."
            ),
        )])
    }

    /// The terminals that are blocked or failed, and what each is waiting
    /// for; nothing is sent.
    #[prompt(
        name = "triage",
        description = "List the blocked and failed terminals and read each screen: what is each waiting for, or what failed? Sends nothing."
    )]
    async fn triage(&self) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(
            Role::User,
            "Triage the herdr-core terminals: call list_sessions (every page). For each terminal whose status is `blocked` or `error`, call read_output and tell me, terminal by terminal, what it is waiting for or what failed, quoting the screen briefly. Do not call send_prompt, and never answer a prompt or a dialog for me: the decisions are mine.",
        )]
    }

    /// One table of every terminal: status, approval and send mode.
    #[prompt(
        name = "fleet",
        description = "One table of every terminal: address, program, status, whether it may be prompted, and its send mode. Sends nothing."
    )]
    async fn fleet(&self) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(
            Role::User,
            "Show the herdr-core fleet: call list_sessions (every page) and give me one table with a row per terminal: address, program, status, send_approved, send_mode. Do not call send_prompt.",
        )]
    }
}

/// Most addresses one completion offers.
const MAX_COMPLETIONS: usize = 32;

impl HerdrServer {
    /// The prompts, built once per process like the tools.
    pub(crate) fn prompts() -> PromptRouter<HerdrServer> {
        Self::prompt_router()
    }
}

/// The live approved addresses that start with `prefix`, for `dispatch`'s
/// `address`; nothing for any other argument.
pub(crate) async fn complete(
    tools: &Tools,
    prompt: &str,
    argument: &str,
    prefix: &str,
) -> Result<CompleteResult, ErrorData> {
    let values = if prompt == DISPATCH && argument == "address" {
        approved_addresses(tools, prefix).await
    } else {
        Vec::new()
    };
    let info = CompletionInfo::with_all_values(values)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(CompleteResult::new(info))
}

/// The addresses of live terminals approved now, starting with `prefix`,
/// at most [`MAX_COMPLETIONS`]. hc unreachable or the config invalid: none.
async fn approved_addresses(tools: &Tools, prefix: &str) -> Vec<String> {
    let loaded = tools.app().loaded();
    let Ok(config) = loaded.approvals() else {
        return Vec::new();
    };
    let Ok(listed) = tools.app().client().list(false).await else {
        return Vec::new();
    };
    let core = &listed.core.core_id;
    listed
        .value
        .terminals
        .iter()
        .filter(|t| !t.is_finished() && t.address.starts_with(prefix))
        .filter(|t| {
            config.is_send_approved(
                core,
                &TerminalLifetime {
                    address: t.address.clone(),
                    created_ms: t.created_ms,
                },
            )
        })
        .map(|t| t.address.clone())
        .take(MAX_COMPLETIONS)
        .collect()
}
