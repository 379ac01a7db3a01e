//! Sends a human confirms: an approval with `"confirm": true` makes every
//! prompt to its lifetime wait for the human's answer, asked through the
//! MCP client by elicitation (form mode). Two eras ask differently:
//!
//! - a session the server can send requests to (stdio, before 2026-07-28)
//!   gets `elicitation/create` during the call, bounded by
//!   `confirmTimeoutMs`;
//! - a 2026-07-28 request gets an input-required result and retries with
//!   the answer (multi round-trip requests). The request state is sealed by
//!   this process's key, bound to the caller, the address, the `created_ms`
//!   argument and the text's digest, expires after `confirmTimeoutMs`, and
//!   opens once.
//!
//! A legacy request over stateless HTTP cannot be asked anything, nor can a
//! client without form elicitation: nothing is sent (fail closed). Whatever
//! the era, an accepted answer is followed by a fresh preflight and every
//! check again before the one dispatch.

use std::time::Duration;

use rmcp::model::{
    ElicitRequest, ElicitationAction, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, ProgressToken, RequestStateError, SealOptions,
};
use rmcp::service::{Peer, RequestContext, ServiceError};
use rmcp::{RoleServer, model::ProtocolVersion};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::SendPromptArgs;
use super::preflight::Preflight;
use super::verdict::Refusal;
pub(crate) use crate::audit::{ConfirmVia, Confirmation};
use crate::caller::Caller;
use crate::config::SendMode;
use crate::escape::printable;
use crate::hc::CoreId;
use crate::mcp::state::{Confirmations, Full, MAX_OUTSTANDING, MAX_OUTSTANDING_PER_CALLER};

/// The key of the one input request in an input-required result.
const ANSWER_KEY: &str = "confirm";

mod form;
mod progress;
use form::{judge, message, request};
pub(crate) use progress::Timeouts;
use progress::keep_informed;

/// What the human confirmed: one lifetime on one core.
#[derive(Debug, Clone)]
pub(super) struct Confirmed {
    pub core_id: CoreId,
    pub created_ms: i64,
    pub confirmation: Confirmation,
}

/// Who can be asked in this request, and how.
pub(crate) struct Asking {
    channel: Channel,
    /// The client's name and version, escaped.
    client: Option<String>,
    /// The request's progress token, when it asked for progress.
    progress: Option<ProgressToken>,
    /// Who progress notifications go to (none in unit tests).
    peer: Option<Peer<RoleServer>>,
    /// How often progress goes out while a human reads or hc holds a send.
    every: Duration,
}

/// What the progress says while the human reads.
const CONFIRMING: &str = "waiting for the human to confirm the prompt";

enum Channel {
    /// A session: `elicitation/create` to this peer; `form` when the client
    /// declared form elicitation.
    Session { peer: Peer<RoleServer>, form: bool },
    /// A 2026-07-28 request: input-required; `retry` when this call is the
    /// client's retry with an answer.
    InputRequired { form: bool, retry: Option<Retry> },
    /// A legacy request over stateless HTTP: no way to ask.
    Nobody,
}

/// The state and answers a 2026-07-28 client echoed back.
struct Retry {
    state: Option<String>,
    responses: Option<InputResponses>,
}

impl Asking {
    /// The asking channel of one `tools/call`, from its request context
    /// and the state and answers a 2026-07-28 retry echoed back.
    pub(crate) fn new(
        context: &RequestContext<RoleServer>,
        state: Option<String>,
        responses: Option<InputResponses>,
        every: Duration,
    ) -> Asking {
        let peer = context.peer.clone();
        let progress_peer = Some(peer.clone());
        let version = context.protocol_version();
        let capabilities = context.client_capabilities();
        let client = context
            .client_info()
            .map(|c| format!("{} {}", c.name, c.version));
        let over_http = context.extensions.get::<http::request::Parts>().is_some();
        let progress = context.meta.get_progress_token();
        let form = capabilities
            .as_ref()
            .and_then(|c| c.elicitation.as_ref())
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        let channel = if version.is_some_and(|v| v >= ProtocolVersion::V_2026_07_28) {
            let retry =
                (state.is_some() || responses.is_some()).then_some(Retry { state, responses });
            Channel::InputRequired { form, retry }
        } else if over_http {
            Channel::Nobody
        } else {
            Channel::Session { peer, form }
        };
        Asking {
            channel,
            client: client.map(|c| printable(&c).into_owned()),
            progress,
            peer: progress_peer,
            every,
        }
    }

    /// A channel that can never ask (the unit tests' caller).
    #[cfg(test)]
    pub(crate) fn nobody() -> Asking {
        Asking {
            channel: Channel::Nobody,
            client: None,
            progress: None,
            peer: None,
            every: Duration::from_secs(5),
        }
    }

    /// Runs `work` (at most `timeout`), sending progress on `what` every
    /// few seconds meanwhile when the request asked for progress.
    pub(crate) async fn informing<T>(
        &self,
        work: impl Future<Output = T>,
        what: &str,
        timeout: Duration,
    ) -> T {
        let (Some(peer), Some(token)) = (&self.peer, &self.progress) else {
            return work.await;
        };
        tokio::select! {
            biased;
            out = work => out,
            () = keep_informed(peer, Some(token), self.every, timeout, what) => unreachable!("informs until dropped"),
        }
    }

    /// Whether this call is a 2026-07-28 retry carrying an answer.
    pub(super) fn is_retry(&self) -> bool {
        matches!(self.channel, Channel::InputRequired { retry: Some(_), .. })
    }
}

/// What the human is asked to confirm: this call's prompt to the lifetime
/// the preflight saw, in the approval's mode.
#[derive(Clone, Copy)]
pub(super) struct Question<'a> {
    pub args: &'a SendPromptArgs,
    pub caller: &'a Caller,
    pub preflight: &'a Preflight,
    pub mode: SendMode,
}

/// What one question to the human came to, when it did not end the attempt.
pub(super) enum Asked {
    /// Ask again after the pass (a 2026-07-28 client retries).
    Pending(Box<InputRequiredResult>),
    /// The human confirmed.
    Confirmed(Confirmed),
}

/// What a request state holds (signed, not secret).
#[derive(Debug, Serialize, Deserialize)]
struct Sealed {
    nonce: String,
    core_id: String,
    created_ms: i64,
}

/// What binds a request state to its call: the caller, the address, the
/// `created_ms` argument and the text.
fn binding(args: &SendPromptArgs, caller: &Caller) -> Vec<u8> {
    let who = serde_json::to_string(caller.who()).expect("a caller encodes");
    let digest = Sha256::digest(args.text.as_bytes());
    let mut bound =
        format!("{who}\u{0}{}\u{0}{:?}\u{0}", args.address, args.created_ms).into_bytes();
    bound.extend_from_slice(&digest);
    bound
}

/// Asks the human to confirm `args` to the lifetime `preflight` saw.
pub(super) async fn ask(
    confirmations: &Confirmations,
    asking: &Asking,
    question: &Question<'_>,
    timeouts: Timeouts,
    ct: &CancellationToken,
) -> Result<Asked, Refusal> {
    let Question {
        args,
        caller,
        preflight,
        mode,
    } = *question;
    let confirmed = |via| Confirmed {
        core_id: preflight.core_id.clone(),
        created_ms: preflight.created_ms,
        confirmation: Confirmation {
            via,
            client: asking.client.clone(),
        },
    };
    match &asking.channel {
            Channel::Session { peer, form: true } => {
                let timeout = timeouts.call;
                let asked =
                    peer.create_elicitation_with_timeout(request(message(args, preflight, mode)), Some(timeout));
                let answer = tokio::select! {
                    biased;
                    () = ct.cancelled() => return Err(Refusal::Cancelled),
                    () = keep_informed(peer, asking.progress.as_ref(), asking.every, timeout, CONFIRMING) => unreachable!("informs until dropped"),
                    answer = asked => answer,
                };
                match answer {
                    Ok(answer) => judge(answer.action, answer.content.as_ref())
                        .map(|()| Asked::Confirmed(confirmed(ConfirmVia::Elicitation))),
                    Err(ServiceError::Timeout { .. }) => Err(Refusal::ConfirmationTimeout {
                        timeout,
                        key: "confirmCallTimeoutMs",
                    }),
                    Err(e) => Err(Refusal::ConfirmationUnavailable {
                        why: format!("the client did not answer the question: {e}"),
                    }),
                }
            }
            Channel::InputRequired {
                form: true,
                retry: None,
            } => pending_question(confirmations, args, caller, preflight, mode, timeouts.state)
                .map(|q| Asked::Pending(Box::new(q))),
            Channel::InputRequired { retry: Some(_), .. } => {
                unreachable!("a retry is answered before the preflight")
            }
            Channel::Session { form: false, .. } | Channel::InputRequired { form: false, .. } => {
                Err(Refusal::ConfirmationUnavailable {
                    why: "the client did not declare form elicitation, so it cannot ask a human".into(),
                })
            }
            Channel::Nobody => Err(Refusal::ConfirmationUnavailable {
                why: "a stateless HTTP request before MCP 2026-07-28 cannot be asked anything: use stdio, or a client speaking 2026-07-28".into(),
            }),
        }
}

/// The input-required result of a first 2026-07-28 call.
fn pending_question(
    confirmations: &Confirmations,
    args: &SendPromptArgs,
    caller: &Caller,
    preflight: &Preflight,
    mode: SendMode,
    timeout: Duration,
) -> Result<InputRequiredResult, Refusal> {
    let nonce = confirmations
            .hand_out(caller.share(), timeout)
            .map_err(|full| Refusal::ConfirmationUnavailable {
                why: match full {
                    Full::Share(share) => format!(
                        "the share of {share} is full: {MAX_OUTSTANDING_PER_CALLER} of its questions are already waiting for an answer; answer them, or wait until they expire (confirmTimeoutMs)"
                    ),
                    Full::All => format!(
                        "{MAX_OUTSTANDING} questions of all callers are already waiting for an answer"
                    ),
                },
            })?;
    let sealed = Sealed {
        nonce,
        core_id: preflight.core_id.to_string(),
        created_ms: preflight.created_ms,
    };
    let payload = serde_json::to_vec(&sealed).expect("a request state encodes");
    let bound = binding(args, caller);
    let state = confirmations.codec().seal_with(
        &payload,
        &SealOptions::new().associated_data(&bound).ttl(timeout),
    );
    let mut requests = InputRequests::new();
    requests.insert(
        ANSWER_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(request(message(args, preflight, mode)))),
    );
    Ok(InputRequiredResult::new(Some(requests), Some(state)))
}

/// The human's answer in a 2026-07-28 retry, checked against the
/// sealed state: confirmed once, for this caller and call only.
pub(super) fn answered(
    confirmations: &Confirmations,
    asking: &Asking,
    args: &SendPromptArgs,
    caller: &Caller,
    timeout: Duration,
) -> Result<Confirmed, Refusal> {
    let Channel::InputRequired {
        retry: Some(Retry { state, responses }),
        ..
    } = &asking.channel
    else {
        unreachable!("only a retry is answered")
    };
    let invalid = |why: &str| Refusal::ConfirmationInvalid {
        why: why.to_owned(),
    };
    let state = state
        .as_deref()
        .ok_or_else(|| invalid("the retry carries answers but no requestState"))?;
    let payload = confirmations
            .codec()
            .open_with(state, &binding(args, caller))
            .map_err(|e| match e {
                RequestStateError::Expired => Refusal::ConfirmationTimeout {
                    timeout,
                    key: "confirmTimeoutMs",
                },
                _ => invalid("its requestState is not one this process sealed for this caller, address, created_ms and text"),
            })?;
    let sealed: Sealed = serde_json::from_slice(&payload)
        .map_err(|_| invalid("its requestState does not hold a confirmation"))?;
    // Redeemed once: a replayed retry finds its nonce gone.
    if !confirmations.redeem(&sealed.nonce) {
        return Err(invalid("this confirmation was already used"));
    }
    let answer = responses
        .as_ref()
        .and_then(|r| r.get(ANSWER_KEY))
        .ok_or_else(|| invalid("the retry carries no answer to the confirmation"))?;
    let action: ElicitationAction = answer
        .get("action")
        .cloned()
        .and_then(|a| serde_json::from_value(a).ok())
        .ok_or_else(|| invalid("the answer has no valid action"))?;
    judge(action, answer.get("content"))?;
    let core_id = CoreId::try_from(sealed.core_id)
        .map_err(|_| invalid("its requestState names no valid core"))?;
    Ok(Confirmed {
        core_id,
        created_ms: sealed.created_ms,
        confirmation: Confirmation {
            via: ConfirmVia::InputRequired,
            client: asking.client.clone(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hc::wire::TerminalStatus;

    fn ask(confirmations: &Confirmations, caller: &Caller, n: usize) -> Result<(), Refusal> {
        let args = SendPromptArgs {
            address: "t1".into(),
            text: format!("prompt {n}"),
            created_ms: None,
            follow_ms: None,
        };
        let preflight = Preflight {
            core_id: CoreId::try_from("c1".to_owned()).unwrap(),
            created_ms: 5,
            status: TerminalStatus::Idle,
            finished: false,
            program: None,
            title: None,
            cwd: None,
            context: Default::default(),
            machine: None,
        };
        pending_question(
            confirmations,
            &args,
            caller,
            &preflight,
            SendMode::IdleOnly,
            Duration::from_secs(60),
        )
        .map(|_| ())
    }

    #[test]
    fn one_caller_fills_its_own_share_of_questions_not_everyones() {
        let confirmations = Confirmations::default();
        let greedy = Caller::oauth(Some("greedy"), Some("bot"), true);
        for n in 0..MAX_OUTSTANDING_PER_CALLER {
            ask(&confirmations, &greedy, n).expect("within the share");
        }
        let Err(Refusal::ConfirmationUnavailable { why }) =
            ask(&confirmations, &greedy, MAX_OUTSTANDING_PER_CALLER)
        else {
            panic!("the share is full")
        };
        assert!(
            why.contains("the share of OAuth subject greedy is full"),
            "{why}"
        );
        // Another subject, and the token, are still asked.
        ask(
            &confirmations,
            &Caller::oauth(Some("ana"), Some("bot"), true),
            0,
        )
        .unwrap();
        ask(&confirmations, &Caller::token(), 0).unwrap();
    }

    #[test]
    fn the_process_wide_bound_holds_beside_the_shares() {
        let confirmations = Confirmations::default();
        let mut asked = 0;
        for subject in 0.. {
            let caller = Caller::oauth(Some(&format!("s{subject}")), None, true);
            for n in 0..MAX_OUTSTANDING_PER_CALLER {
                match ask(&confirmations, &caller, n) {
                    Ok(()) => asked += 1,
                    Err(Refusal::ConfirmationUnavailable { why }) => {
                        assert_eq!(asked, MAX_OUTSTANDING);
                        assert!(why.contains("of all callers"), "{why}");
                        return;
                    }
                    Err(other) => panic!("{other}"),
                }
            }
        }
    }
}
