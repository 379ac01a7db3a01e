//! The question a human is shown, and how the answer is judged.

use rmcp::model::{ElicitRequestParams, ElicitationAction};

use super::super::SendPromptArgs;
use super::super::preflight::Preflight;
use super::super::verdict::Refusal;
use crate::config::SendMode;
use crate::escape::printable;

/// The question, shown to the human: the target and the exact prompt,
/// escaped, with its length.
pub(super) fn message(args: &SendPromptArgs, preflight: &Preflight, mode: SendMode) -> String {
    let shown = |v: &Option<String>| printable(v.as_deref().unwrap_or("-")).into_owned();
    format!(
        "Send this prompt to terminal {address}?\n\
         program: {program}\ntitle: {title}\ncwd: {cwd}\nsend mode: {mode}\n\
         prompt ({chars} characters, as a JSON string): {text}\n\
         Confirm only if you want exactly this typed into that terminal and submitted.",
        address = printable(&args.address),
        program = shown(&preflight.program),
        title = shown(&preflight.title),
        cwd = shown(&preflight.cwd),
        mode = mode.as_str(),
        chars = args.text.chars().count(),
        // Quotes and line breaks escaped too, so the prompt cannot pass
        // for more of the question.
        text = printable(&serde_json::to_string(&args.text).expect("a string encodes")),
    )
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
