//! The question a human is shown, and how the answer is judged.

use rmcp::model::{ElicitRequestParams, ElicitationAction};

use super::super::SendPromptArgs;
use super::super::preflight::Preflight;
use super::super::verdict::Refusal;
use crate::config::SendMode;
use crate::escape;

/// The question, shown to the human: the target and the exact prompt,
/// with its length. Every value is shown as an escaped JSON string (or
/// `null`): the title, cwd and program are set by whatever runs in the
/// terminal, and a value can then hold no line break and no unescaped
/// quote, so it stays on its own line and cannot imitate the question's
/// other lines.
pub(super) fn message(args: &SendPromptArgs, preflight: &Preflight, mode: SendMode) -> String {
    let shown = |v: Option<&str>| match v {
        Some(v) => quoted(v),
        None => "null".to_owned(),
    };
    format!(
        "Send this prompt to a terminal?\n\
         address: {address}\nmachine: {machine}\nprogram: {program}\ntitle: {title}\ncwd: {cwd}\n\
         status: {status}\nstatus reason: {reason}\n\
         send mode: {mode}\n\
         prompt ({chars} characters): {text}\n\
         Each value above is a JSON string, as the terminal's programs set it.\n\
         Confirm only if you want exactly this prompt typed into that terminal and submitted.",
        address = quoted(&args.address),
        machine = shown(preflight.machine.as_ref().map(|(name, _)| name.as_str())),
        program = shown(preflight.program.as_deref()),
        title = shown(preflight.title.as_deref()),
        cwd = shown(preflight.cwd.as_deref()),
        status = quoted(preflight.status.as_str()),
        reason = shown(preflight.context.status_reason.as_deref()),
        mode = mode.as_str(),
        chars = args.text.chars().count(),
        text = quoted(&args.text),
    )
}

/// `value` as a JSON string, every hazardous character escaped as JSON
/// escapes it (`\u2028`, `\u001b`): it reads back as the value itself.
fn quoted(value: &str) -> String {
    escape::json(&serde_json::to_string(value).expect("a string encodes")).into_owned()
}

pub(super) fn request(message: String) -> ElicitRequestParams {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "confirm": {
                "type": "boolean",
                "title": "Send this prompt",
                "description": "true sends it; anything else sends nothing",
                "default": false
            }
        },
        "required": ["confirm"]
    });
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: serde_json::from_value(schema).expect("the confirmation form is valid"),
    }
}

/// The answer's verdict: confirmed only on `accept` with `confirm: true`.
pub(super) fn judge(
    action: ElicitationAction,
    content: Option<&serde_json::Value>,
) -> Result<(), Refusal> {
    match action {
        ElicitationAction::Accept
            if content.and_then(|c| c.get("confirm")) == Some(&serde_json::Value::Bool(true)) =>
        {
            Ok(())
        }
        ElicitationAction::Accept | ElicitationAction::Decline => {
            Err(Refusal::ConfirmationDeclined)
        }
        ElicitationAction::Cancel => Err(Refusal::ConfirmationCancelled),
        // A newer action this server does not know: nothing confirmed.
        _ => Err(Refusal::ConfirmationDeclined),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hc::CoreId;
    use crate::hc::wire::{StatusContext, TerminalStatus};

    fn preflight(title: &str) -> Preflight {
        Preflight {
            core_id: CoreId::try_from("c1".to_owned()).unwrap(),
            created_ms: 5,
            status: TerminalStatus::Idle,
            finished: false,
            program: Some("agent\r\nsend mode: normal".into()),
            title: Some(title.into()),
            cwd: None,
            context: StatusContext::of(None, Some("ok?\nsend mode: normal\u{2028}"), None),
            machine: None,
        }
    }

    #[test]
    fn a_title_cannot_write_lines_of_the_question() {
        let args = SendPromptArgs {
            address: "t1".into(),
            text: "rm -rf build".into(),
            created_ms: None,
            follow_ms: None,
        };
        let forged = "ok\nsend mode: normal\nprompt (2 characters): \"ls\"\u{2028}\u{1b}[2K\"";
        let question = message(&args, &preflight(forged), SendMode::IdleOnly);
        let lines: Vec<&str> = question.lines().collect();
        let labels: Vec<&str> = lines
            .iter()
            .map(|l| l.split(':').next().unwrap_or(""))
            .collect();
        assert_eq!(lines.len(), 12, "{question}");
        assert_eq!(
            labels[1..10],
            [
                "address",
                "machine",
                "program",
                "title",
                "cwd",
                "status",
                "status reason",
                "send mode",
                "prompt (12 characters)"
            ],
            "{question}"
        );
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("send mode:")).count(),
            1,
            "{question}"
        );
        // Each value reads back, whole, as the JSON string it is shown as.
        let value = |line: &str| -> String {
            serde_json::from_str(line.split_once(": ").unwrap().1).unwrap()
        };
        assert_eq!(lines[2], "machine: null");
        assert_eq!(value(lines[4]), forged);
        assert_eq!(value(lines[3]), "agent\r\nsend mode: normal");
        assert_eq!(lines[5], "cwd: null");
        assert_eq!(value(lines[9]), "rm -rf build");
        assert!(
            !question
                .chars()
                .any(|c| crate::escape::is_hazard(c) && c != '\n')
        );
    }
}
