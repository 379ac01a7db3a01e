//! `allow` of a lifetime already approved: what the new approval changes,
//! said line by line, and the one thing it keeps unless told otherwise: a
//! human confirmation (`--no-confirm` removes it). A weaker approval is
//! never made by accident.

use crate::config::RawLifetime;

/// Carries the confirmation of the approval among `entries` of the same
/// lifetime as `entry` into it (unless `no_confirm`), and says what
/// changes; nothing when there is no such approval.
pub(super) fn carry_over(
    entries: &[RawLifetime],
    entry: &mut RawLifetime,
    no_confirm: bool,
) -> String {
    match entries
        .iter()
        .find(|e| e.address == entry.address && e.created_ms == entry.created_ms)
    {
        Some(previous) => changes(previous, entry, no_confirm),
        None => String::new(),
    }
}

fn changes(previous: &RawLifetime, entry: &mut RawLifetime, no_confirm: bool) -> String {
    let mut said = String::new();
    if previous.confirm && !entry.confirm {
        if no_confirm {
            said.push_str("removes the human confirmation this terminal had (--no-confirm)\n");
        } else {
            entry.confirm = true;
            said.push_str(
                "keeps the human confirmation this terminal had (allow --no-confirm removes it)\n",
            );
        }
    }
    let mode = |e: &RawLifetime| {
        e.send_mode.map_or("the config's sendMode".to_owned(), |m| {
            m.as_str().to_owned()
        })
    };
    if previous.send_mode != entry.send_mode {
        said.push_str(&format!(
            "send mode changes from {} to {}\n",
            mode(previous),
            mode(entry)
        ));
    }
    if previous.machine_core_id.is_some() && previous.machine_core_id != entry.machine_core_id {
        said.push_str(&format!(
            "the machine's core changes from {} to {}: the earlier approval no longer reached it\n",
            previous.machine_core_id.as_deref().unwrap_or("-"),
            entry.machine_core_id.as_deref().unwrap_or("unknown")
        ));
    }
    if previous.multiline && !entry.multiline {
        said.push_str("multi-line prompts are no longer allowed (allow --multiline keeps them)\n");
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SendMode;

    fn lifetime(multiline: bool, send_mode: Option<SendMode>, confirm: bool) -> RawLifetime {
        RawLifetime {
            machine_core_id: None,
            address: "t2".into(),
            created_ms: 1,
            multiline,
            send_mode,
            confirm,
        }
    }

    #[test]
    fn a_confirmation_is_kept_unless_removed_and_every_change_is_said() {
        let previous = lifetime(true, Some(SendMode::Normal), true);
        let mut entry = lifetime(false, None, false);
        let said = changes(&previous, &mut entry, false);
        assert!(entry.confirm);
        assert!(said.contains("keeps the human confirmation"), "{said}");
        assert!(
            said.contains("send mode changes from normal to the config's sendMode"),
            "{said}"
        );
        assert!(
            said.contains("multi-line prompts are no longer allowed"),
            "{said}"
        );
        let mut entry = lifetime(false, Some(SendMode::Normal), false);
        let said = changes(&previous, &mut entry, true);
        assert!(!entry.confirm);
        assert!(said.contains("removes the human confirmation"), "{said}");
        assert!(!said.contains("send mode"), "{said}");
    }
}
