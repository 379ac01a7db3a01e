//! The send mode: how `send_prompt` guards its input. Its own room, since
//! both the raw config and the allowlist speak of it.

use serde::{Deserialize, Serialize};

/// How `send_prompt` guards its input, an operator setting (never a tool
/// argument): `idle-only` sends only into an idle terminal, with hc's
/// atomic `if: "idle"` guard; `normal` also into a done one, where hc has
/// no atomic guard.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SendMode {
    /// Only into an idle terminal, with hc's atomic `if: "idle"` guard.
    #[default]
    IdleOnly,
    /// Into an idle or done terminal; `done` has no atomic guard in hc.
    Normal,
}

impl SendMode {
    /// The mode as the config spells it: `idle-only` or `normal`.
    pub fn as_str(self) -> &'static str {
        match self {
            SendMode::IdleOnly => "idle-only",
            SendMode::Normal => "normal",
        }
    }
}
