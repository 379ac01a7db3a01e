//! One send attempt, top to bottom: `check_input` (text and config, no I/O)
//! → the audit file writable → (a 2026-07-28 retry: its answer opened) →
//! the per-terminal lock → `preflight` (`terminal.get`) → `check_target`
//! (core, lifetime, approval, mode; no I/O) → (an approval that asks for
//! confirmation: the human asked with the lock released, then the lock, the
//! preflight and every check again) → `dispatch` (the one `terminal.send`)
//! → [`classify`]. Every step before dispatch can only refuse, so a refusal
//! is NOT SENT by construction.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::confirm::{self, Asked, Asking, Confirmation, Confirmed, Question, Timeouts};
use super::preflight::{Preflight, preflight};
use super::verdict::{Refusal, Verdict, classify};
use super::{Known, SendPrompt, SendPromptArgs};
use crate::app::Loaded;
use crate::caller::Caller;
use crate::config::{Config, SendMode, TerminalLifetime};
use crate::hc::wire::{SendGuard, TerminalStatus};
use crate::hc::{CoreId, SendRequest};
use crate::mcp::text::{MAX_PROMPT_CHARS, first_line_control, forbidden_control};

/// What passed every check before dispatch: the approved lifetime to send
/// to, and the status hc is to compare atomically with the write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Cleared {
    pub lifetime: TerminalLifetime,
    pub guard: Option<SendGuard>,
    /// The approval's mode (its own, else the top-level one).
    pub mode: SendMode,
    /// The approval asks a human before each prompt.
    pub confirm: bool,
}

/// A finished attempt: what the preflight saw (if it ran), the guard it
/// was dispatched with (if it was), and the verdict.
#[derive(Debug)]
pub(super) struct Attempt {
    pub preflight: Option<Preflight>,
    pub guard: Option<SendGuard>,
    /// The mode the target's approval gave, once it was cleared.
    pub mode: Option<SendMode>,
    /// How the human confirmed it, when one did.
    pub confirmation: Option<Confirmation>,
    pub verdict: Verdict,
}

impl Attempt {
    fn refused(preflight: Option<Preflight>, refusal: Refusal) -> Attempt {
        Attempt {
            preflight,
            guard: None,
            mode: None,
            confirmation: None,
            verdict: Verdict::NotSent(refusal),
        }
    }
}

pub(super) async fn attempt(
    send: &SendPrompt,
    loaded: &Loaded,
    args: &SendPromptArgs,
    caller: &Caller,
    asking: &Asking,
    ct: &CancellationToken,
    known: &Known,
) -> Attempt {
    known.learn(|facts| facts.address = Some(args.address.clone()));
    // The transport refuses such a caller first (HTTP 403); this holds
    // whatever the path.
    if !caller.may_send() {
        return Attempt::refused(None, Refusal::InsufficientScope);
    }
    let (config, core_id) = match check_input(args, loaded) {
        Ok(checked) => checked,
        Err(refusal) => return Attempt::refused(None, refusal),
    };
    // Retries any audit line still outstanding: no send goes unaudited.
    if !send.app.audit().ready() {
        return Attempt::refused(None, Refusal::AuditUnavailable);
    }
    let timeout = config.confirm_timeout();
    let timeouts = Timeouts {
        state: timeout,
        call: config.confirm_call_timeout(),
    };
    let mut confirmed: Option<Confirmed> = None;
    if asking.is_retry() {
        match confirm::answered(&send.confirmations, asking, args, caller, timeout) {
            Ok(answer) => confirmed = Some(answer),
            Err(refusal) => return Attempt::refused(None, refusal),
        }
    }
    // At most two passes: the second after the human confirmed.
    loop {
        let serialized = tokio::select! {
            biased;
            () = ct.cancelled() => return Attempt::refused(None, Refusal::Cancelled),
            guard = send.locks.lock(&args.address) => guard,
        };
        let preflight = tokio::select! {
            biased;
            () = ct.cancelled() => return Attempt::refused(None, Refusal::Cancelled),
            found = preflight(send.app.client(), &args.address) => match found {
                Ok(preflight) => preflight,
                Err(refusal) => return Attempt::refused(None, refusal),
            },
        };
        known.learn(|facts| {
            facts.core_id = Some(preflight.core_id.to_string());
            facts.created_ms = Some(preflight.created_ms);
            facts.preflight_status = Some(preflight.status);
        });
        let cleared = match check_target(config, core_id, args, &preflight) {
            Ok(cleared) => cleared,
            Err(refusal) => return refused_with_mode(config, args, preflight, refusal),
        };
        known.learn(|facts| facts.send_mode = Some(cleared.mode));
        let refuse = |preflight, refusal| Attempt {
            mode: Some(cleared.mode),
            ..Attempt::refused(Some(preflight), refusal)
        };
        if cleared.confirm {
            match &confirmed {
                // What the human confirmed must be what is live now.
                Some(answer)
                    if answer.core_id != preflight.core_id
                        || answer.created_ms != preflight.created_ms =>
                {
                    let refusal = Refusal::LifetimeMismatch {
                        address: args.address.clone(),
                        expected: answer.created_ms,
                        actual: preflight.created_ms,
                    };
                    return refuse(preflight, refusal);
                }
                Some(_) => {}
                // A human is never asked about a prompt the mode would
                // refuse whatever the answer: idle-only sends only to an
                // idle terminal.
                None if cleared.mode == SendMode::IdleOnly
                    && preflight.status != TerminalStatus::Idle =>
                {
                    let refusal = Refusal::StatusNotAllowed {
                        status: preflight.status,
                        mode: cleared.mode,
                        flag: config.operator_flag().to_owned(),
                    };
                    return refuse(preflight, refusal);
                }
                None => {
                    // Nobody waits on this terminal's lock while a human reads.
                    drop(serialized);
                    let question = Question {
                        args,
                        caller,
                        preflight: &preflight,
                        mode: cleared.mode,
                    };
                    let asked =
                        confirm::ask(&send.confirmations, asking, &question, timeouts, ct).await;
                    match asked {
                        Ok(Asked::Confirmed(answer)) => {
                            confirmed = Some(answer);
                            continue;
                        }
                        Ok(Asked::Pending(question)) => {
                            return refuse(preflight, Refusal::ConfirmationPending(question));
                        }
                        Err(refusal) => return refuse(preflight, refusal),
                    }
                }
            }
        }
        if ct.is_cancelled() {
            return refuse(preflight, Refusal::Cancelled);
        }
        let Cleared {
            lifetime,
            guard,
            mode,
            confirm,
        } = cleared;
        let request = SendRequest {
            address: &lifetime.address,
            text: &args.text,
            guard,
        };
        // Not raced with the cancellation: once dispatch may begin, only
        // hc's answer (or the send timeout) settles the outcome.
        known.learn(|facts| facts.dispatching = true);
        let client = send.app.client();
        let answer = asking
            .informing(
                client.send(request, core_id),
                "waiting for hc to deliver the prompt (hc holds a send while the terminal's input holds the user's draft)",
                client.send_timeout(),
            )
            .await;
        let verdict = classify(answer.map(|a| a.value), lifetime.created_ms);
        drop(serialized);
        return Attempt {
            preflight: Some(preflight),
            guard,
            mode: Some(mode),
            confirmation: confirmed.filter(|_| confirm).map(|c| c.confirmation),
            verdict,
        };
    }
}

/// Refused after the approval was found (a mode, a line control): the
/// answer names the approval's mode.
fn refused_with_mode(
    config: &Config,
    args: &SendPromptArgs,
    preflight: Preflight,
    refusal: Refusal,
) -> Attempt {
    let lifetime = TerminalLifetime {
        address: args.address.clone(),
        created_ms: preflight.created_ms,
    };
    let mode = config
        .approval(&preflight.core_id, &lifetime)
        .map(|a| a.mode(config.send_mode()));
    Attempt {
        mode,
        ..Attempt::refused(Some(preflight), refusal)
    }
}

/// The text is sendable and the config allows sends at all. A TAB or LF is
/// refused here, before any hc call, unless some approval at the address
/// takes multi-line prompts (`check_target` then decides on the live one).
fn check_input<'a>(
    args: &SendPromptArgs,
    loaded: &'a Loaded,
) -> Result<(&'a Config, &'a CoreId), Refusal> {
    let text = &args.text;
    if text.is_empty() {
        return Err(Refusal::TextEmpty);
    }
    let chars = text.chars().count();
    if chars > MAX_PROMPT_CHARS {
        return Err(Refusal::TextTooLong { chars });
    }
    if let Some((index, character)) = forbidden_control(text) {
        return Err(Refusal::ControlCharacter { index, character });
    }
    let config = loaded.for_sends().map_err(|why| Refusal::ConfigInvalid {
        why: Arc::clone(why),
    })?;
    let flag = || config.operator_flag().to_owned();
    super::machine::shown(config.machines(), &args.address).map_err(Refusal::Machine)?;
    let core_id = config
        .core_id()
        .ok_or_else(|| Refusal::NoCoreId { flag: flag() })?;
    if let Some((index, character)) = first_line_control(text)
        && !config.multiline_possible(&args.address)
    {
        return Err(Refusal::LineControl {
            index,
            character,
            flag: flag(),
        });
    }
    Ok((config, core_id))
}

/// Core identity, lifetime, approval and mode, on what the preflight saw.
fn check_target(
    config: &Config,
    core_id: &CoreId,
    args: &SendPromptArgs,
    preflight: &Preflight,
) -> Result<Cleared, Refusal> {
    if preflight.core_id != *core_id {
        return Err(Refusal::CoreIdMismatch {
            live: preflight.core_id.clone(),
            configured: core_id.clone(),
            flag: config.operator_flag().to_owned(),
        });
    }
    if let Some(expected) = args.created_ms
        && expected != preflight.created_ms
    {
        return Err(Refusal::LifetimeMismatch {
            address: args.address.clone(),
            expected,
            actual: preflight.created_ms,
        });
    }
    if preflight.finished {
        return Err(Refusal::Finished {
            address: args.address.clone(),
        });
    }
    let lifetime = TerminalLifetime {
        address: args.address.clone(),
        created_ms: preflight.created_ms,
    };
    let Some(approval) = config.approval(&preflight.core_id, &lifetime) else {
        return Err(Refusal::NotApproved {
            address: lifetime.address,
            created_ms: lifetime.created_ms,
            status: preflight.status,
            flag: config.operator_flag().to_owned(),
        });
    };
    if let Some((machine, seen)) = &preflight.machine {
        let approved = config.approved_machine_core(&lifetime);
        super::machine::check(machine, seen, approved, config.operator_flag())
            .map_err(Refusal::Machine)?;
    }
    if let Some((index, character)) = first_line_control(&args.text)
        && !approval.multiline
    {
        return Err(Refusal::LineControl {
            index,
            character,
            flag: config.operator_flag().to_owned(),
        });
    }
    let mode = approval.mode(config.send_mode());
    let guard = guard_for(mode, preflight.status)?;
    Ok(Cleared {
        lifetime,
        guard,
        mode,
        confirm: approval.confirm,
    })
}

/// The send mode's table: which preflight statuses may be sent to, and
/// with which atomic guard.
fn guard_for(mode: SendMode, status: TerminalStatus) -> Result<Option<SendGuard>, Refusal> {
    match (mode, status) {
        (SendMode::IdleOnly, _) | (SendMode::Normal, TerminalStatus::Idle) => {
            Ok(Some(SendGuard::Idle))
        }
        (SendMode::Normal, TerminalStatus::Done) => Ok(None),
        (SendMode::Normal, status) => Err(Refusal::StatusNotAllowed {
            status,
            mode,
            flag: String::new(),
        }),
    }
}

#[cfg(test)]
mod tests {
    //! The send gate as tables, no socket: one row per rule and per boundary of
    //! `check_input` (text and config), `check_target` (core, lifetime,
    //! approval, characters, mode) and `guard_for` (the send-mode table).

    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::config::{ConfigError, Invalid, RawConfig};

    pub(super) const CORE: &str = "core-a";
    /// The approved lifetimes: t1 one-line, t2 multi-line.
    pub(super) const APPROVED: &str = r#"[
    {"address": "t1", "created_ms": 100},
    {"address": "t2", "created_ms": 200, "multiline": true}
]"#;

    fn config(extra: &str) -> Config {
        let text =
            format!(r#"{{"socketPath": "/run/hc.sock", "sendAllowlist": {APPROVED}{extra}}}"#);
        let path = Path::new("/test/config.json");
        Config::validate(path, RawConfig::parse(path, &text).unwrap()).unwrap()
    }

    fn with_core() -> Loaded {
        Loaded::Valid(Arc::new(config(&format!(r#", "coreId": "{CORE}""#))))
    }

    pub(super) fn args(address: &str, text: &str) -> SendPromptArgs {
        SendPromptArgs {
            address: address.into(),
            text: text.into(),
            created_ms: None,
            follow_ms: None,
        }
    }

    fn core(id: &str) -> CoreId {
        CoreId::try_from(id.to_owned()).unwrap()
    }

    /// `check_input`'s refusal as its reason code and the index/character it
    /// names, or "ok".
    fn input(loaded: &Loaded, address: &str, text: &str) -> String {
        match check_input(&args(address, text), loaded) {
            Ok(_) => "ok".into(),
            Err(Refusal::ControlCharacter { index, character })
            | Err(Refusal::LineControl {
                index, character, ..
            }) => {
                format!("control_character {index} U+{:04X}", u32::from(character))
            }
            Err(refusal) => refusal.code().as_str().into(),
        }
    }

    #[test]
    fn check_input_refuses_text_by_each_rule_and_boundary() {
        let loaded = with_core();
        let rows: [(&str, String, &str); 17] = [
            ("empty", String::new(), "text_empty"),
            ("one character", "a".into(), "ok"),
            ("16,000 characters", "é".repeat(16_000), "ok"),
            ("16,001 characters", "é".repeat(16_001), "text_too_long"),
            ("NUL", "a\0".into(), "control_character 1 U+0000"),
            ("ESC", "\x1b[2J".into(), "control_character 0 U+001B"),
            ("CR", "a\rb".into(), "control_character 1 U+000D"),
            (
                "unit separator",
                "\x1f".into(),
                "control_character 0 U+001F",
            ),
            ("DEL", "\x7f".into(), "control_character 0 U+007F"),
            ("first C1", "\u{80}".into(), "control_character 0 U+0080"),
            ("CSI (C1)", "ab\u{9b}".into(), "control_character 2 U+009B"),
            ("last C1", "\u{9f}".into(), "control_character 0 U+009F"),
            ("NBSP after C1", "\u{a0}".into(), "ok"),
            ("space", " ".into(), "ok"),
            (
                "TAB to a one-line address",
                "a\tb".into(),
                "control_character 1 U+0009",
            ),
            (
                "LF to a one-line address",
                "a\nb".into(),
                "control_character 1 U+000A",
            ),
            (
                "ESC wins over LF",
                "\n\x1b".into(),
                "control_character 1 U+001B",
            ),
        ];
        for (what, text, expected) in rows {
            assert_eq!(input(&loaded, "t1", &text), expected, "{what}");
        }
        // An address with a multi-line approval passes on to check_target.
        assert_eq!(input(&loaded, "t2", "a\nb\tc"), "ok");
    }

    #[test]
    fn check_input_refuses_when_the_config_cannot_send() {
        let no_core = Loaded::Valid(Arc::new(config("")));
        assert_eq!(input(&no_core, "t1", "hi"), "no_core_id");
        let refused = Loaded::Refused {
            why: Arc::new(ConfigError::Invalid {
                path: "/test/config.json".into(),
                invalid: Invalid {
                    key: "coreId".into(),
                    problem: "must be 1-128 printable ASCII characters".into(),
                },
            }),
            last_valid: Arc::new(config(&format!(r#", "coreId": "{CORE}""#))),
        };
        assert_eq!(input(&refused, "t1", "hi"), "config_invalid");
        // The text is judged first.
        assert_eq!(input(&no_core, "t1", ""), "text_empty");
    }

    fn preflight(core_id: &str, created_ms: i64, status: TerminalStatus) -> Preflight {
        Preflight {
            core_id: core(core_id),
            created_ms,
            status,
            finished: false,
            program: None,
            title: None,
            cwd: None,
            context: Default::default(),
            machine: None,
        }
    }

    /// `check_target`'s outcome: the guard it clears with, or the refusal code.
    fn target(mode: &str, args: &SendPromptArgs, preflight: &Preflight) -> String {
        let config = config(&format!(r#", "coreId": "{CORE}", "sendMode": "{mode}""#));
        match check_target(&config, &core(CORE), args, preflight) {
            Ok(Cleared {
                lifetime, guard, ..
            }) => {
                assert_eq!(lifetime.address, args.address);
                assert_eq!(lifetime.created_ms, preflight.created_ms);
                format!("cleared guard={}", guard.map_or("none", SendGuard::as_str))
            }
            Err(refusal) => refusal.code().as_str().into(),
        }
    }

    #[test]
    fn check_target_refuses_by_core_lifetime_approval_and_characters() {
        use TerminalStatus::Idle;
        let one_line = args("t1", "hi");
        let named = |created_ms| SendPromptArgs {
            created_ms: Some(created_ms),
            ..args("t1", "hi")
        };
        let mut finished = preflight(CORE, 100, Idle);
        finished.finished = true;
        let rows: [(&str, SendPromptArgs, Preflight, &str); 10] = [
            (
                "approved, idle",
                one_line.clone(),
                preflight(CORE, 100, Idle),
                "cleared guard=idle",
            ),
            (
                "another core",
                one_line.clone(),
                preflight("core-b", 100, Idle),
                "core_id_mismatch",
            ),
            (
                "created_ms named and live",
                named(100),
                preflight(CORE, 100, Idle),
                "cleared guard=idle",
            ),
            (
                "created_ms named, another lifetime",
                named(99),
                preflight(CORE, 100, Idle),
                "lifetime_mismatch",
            ),
            ("finished", one_line.clone(), finished, "finished"),
            (
                "a new lifetime at an approved address",
                one_line.clone(),
                preflight(CORE, 101, Idle),
                "not_approved",
            ),
            (
                "an address never approved",
                args("t3", "hi"),
                preflight(CORE, 100, Idle),
                "not_approved",
            ),
            (
                "LF to a multi-line lifetime",
                args("t2", "a\nb"),
                preflight(CORE, 200, Idle),
                "cleared guard=idle",
            ),
            (
                "TAB to a multi-line lifetime",
                args("t2", "a\tb"),
                preflight(CORE, 200, Idle),
                "cleared guard=idle",
            ),
            (
                "LF to a one-line lifetime",
                args("t1", "a\nb"),
                preflight(CORE, 100, Idle),
                "control_character",
            ),
        ];
        for (what, args, preflight, expected) in rows {
            assert_eq!(target("idle-only", &args, &preflight), expected, "{what}");
        }
    }

    #[test]
    fn guard_for_is_the_send_mode_table() {
        use SendMode::{IdleOnly, Normal};
        use TerminalStatus::*;
        let rows = [
            (IdleOnly, Idle, "guard=idle"),
            (IdleOnly, Done, "guard=idle"),
            (IdleOnly, Working, "guard=idle"),
            (IdleOnly, Blocked, "guard=idle"),
            (IdleOnly, Error, "guard=idle"),
            (IdleOnly, Unknown, "guard=idle"),
            (Normal, Idle, "guard=idle"),
            (Normal, Done, "guard=none"),
            (Normal, Working, "status_not_allowed"),
            (Normal, Blocked, "status_not_allowed"),
            (Normal, Error, "status_not_allowed"),
            (Normal, Unknown, "status_not_allowed"),
        ];
        for (mode, status, expected) in rows {
            let got = match guard_for(mode, status) {
                Ok(guard) => format!("guard={}", guard.map_or("none", SendGuard::as_str)),
                Err(refusal) => refusal.code().as_str().into(),
            };
            assert_eq!(got, expected, "{mode:?} {status:?}");
            // check_target applies the same table.
            let via_target = target(
                mode.as_str(),
                &args("t1", "hi"),
                &preflight(CORE, 100, status),
            );
            assert_eq!(via_target.trim_start_matches("cleared "), expected);
        }
    }
}

#[cfg(test)]
mod io_tests {
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
            let listener =
                std::os::unix::net::UnixListener::bind(dir.path().join("hc.sock")).unwrap();
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

    /// The send tool over `core`, t1 and t2 approved, its audit stream
    /// captured.
    fn tools_at(core: &Core) -> (Arc<SendPrompt>, AuditLines) {
        let socket = serde_json::to_string(&core.0.path().join("hc.sock")).unwrap();
        let text = format!(
            r#"{{"socketPath": {socket}, "timeoutMs": 100, "coreId": "{CORE}", "sendAllowlist": {APPROVED}}}"#
        );
        let path = Path::new("/test/config.json");
        let config = Config::validate(path, RawConfig::parse(path, &text).unwrap()).unwrap();
        let lines = AuditLines::default();
        let audit = crate::audit::Audit::open(Box::new(lines.clone()), None).unwrap();
        let app = crate::app::App::new(config, audit);
        (
            Arc::new(SendPrompt::new(Arc::new(app), CancellationToken::new())),
            lines,
        )
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

    async fn attempt_by(tools: &SendPrompt, caller: &Caller, text: &str) -> Attempt {
        let loaded = tools.app.loaded();
        let ct = CancellationToken::new();
        attempt(
            tools,
            &loaded,
            &args("t1", text),
            caller,
            &Asking::nobody(),
            &ct,
            &Known::default(),
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
                None,
            )
            .await
            .expect("answered");
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
}
