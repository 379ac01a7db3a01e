//! `allow` of a lifetime already approved: what the new approval changes,
//! said line by line, and the one thing it keeps unless told otherwise: a
//! human confirmation (`--no-confirm` removes it). A weaker approval is
//! never made by accident.

use serde_json::{Value, json};

/// Carries the confirmation of the approval among `entries` of the same
/// lifetime as `entry` into it (unless `no_confirm`), and says what
/// changes; nothing when there is no such approval.
pub(super) fn carry_over(entries: &[Value], entry: &mut Value, no_confirm: bool) -> String {
    let same = |e: &&Value| {
        e.get("address") == entry.get("address") && e.get("created_ms") == entry.get("created_ms")
    };
    match entries.iter().find(same) {
        Some(previous) => changes(&previous.clone(), entry, no_confirm),
        None => String::new(),
    }
}

fn changes(previous: &Value, entry: &mut Value, no_confirm: bool) -> String {
    let mut said = String::new();
    let flag = |e: &Value, key: &str| e.get(key).and_then(Value::as_bool) == Some(true);
    if flag(previous, "confirm") && !flag(entry, "confirm") {
        if no_confirm {
            said.push_str("removes the human confirmation this terminal had (--no-confirm)\n");
        } else {
            entry["confirm"] = json!(true);
            said.push_str(
                "keeps the human confirmation this terminal had (allow --no-confirm removes it)\n",
            );
        }
    }
    let mode = |e: &Value| {
        e.get("sendMode")
            .and_then(Value::as_str)
            .map_or("the config's sendMode".to_owned(), str::to_owned)
    };
    if previous.get("sendMode") != entry.get("sendMode") {
        said.push_str(&format!(
            "send mode changes from {} to {}\n",
            mode(previous),
            mode(entry)
        ));
    }
    if flag(previous, "multiline") && !flag(entry, "multiline") {
        said.push_str("multi-line prompts are no longer allowed (allow --multiline keeps them)\n");
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confirmation_is_kept_unless_removed_and_every_change_is_said() {
        let previous = json!({"address": "t2", "created_ms": 1, "confirm": true,
            "sendMode": "normal", "multiline": true});
        let mut entry = json!({"address": "t2", "created_ms": 1});
        let said = changes(&previous, &mut entry, false);
        assert_eq!(entry["confirm"], json!(true));
        assert!(said.contains("keeps the human confirmation"), "{said}");
        assert!(
            said.contains("send mode changes from normal to the config's sendMode"),
            "{said}"
        );
        assert!(
            said.contains("multi-line prompts are no longer allowed"),
            "{said}"
        );
        let mut entry = json!({"address": "t2", "created_ms": 1, "sendMode": "normal"});
        let said = changes(&previous, &mut entry, true);
        assert_eq!(entry.get("confirm"), None);
        assert!(said.contains("removes the human confirmation"), "{said}");
        assert!(!said.contains("send mode"), "{said}");
    }
}
