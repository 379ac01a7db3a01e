//! Who is calling, as the transport proved it, and whether they may send.
//! The HTTP gate puts a [`Caller`] on each authenticated request; stdio has
//! one caller, the host that launched the process. Tools read it to hide
//! `send_prompt` from readers and to refuse it to them, and the audit line
//! records it. It never holds a token.

use serde::Serialize;

/// Longest `sub` or `client_id` kept: identifiers, not documents.
const MAX_ID_CHARS: usize = 256;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    who: Who,
    may_send: bool,
}

/// How the caller proved itself, as the audit line names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Who {
    /// The MCP host that launched this process over stdio.
    Stdio,
    /// `HERDR_MCP_TOKEN`.
    Token,
    /// `HERDR_MCP_READ_TOKEN`.
    ReadToken,
    /// An HTTP request that reached a tool without a proven caller: it
    /// never should, and may not send.
    Unproven,
    /// An access token from the operator's identity provider.
    #[serde(rename = "oauth")]
    OAuth {
        #[serde(skip_serializing_if = "Option::is_none")]
        sub: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        client_id: Option<String>,
    },
}

impl Caller {
    pub fn stdio() -> Caller {
        Caller {
            who: Who::Stdio,
            may_send: true,
        }
    }

    pub fn token() -> Caller {
        Caller {
            who: Who::Token,
            may_send: true,
        }
    }

    pub fn read_token() -> Caller {
        Caller {
            who: Who::ReadToken,
            may_send: false,
        }
    }

    /// An HTTP request that carries no proven caller.
    pub fn unproven() -> Caller {
        Caller {
            who: Who::Unproven,
            may_send: false,
        }
    }

    /// An identity-provider caller: its subject and client as the token
    /// names them, bounded (the audit line escapes them, as every field).
    pub fn oauth(sub: Option<&str>, client_id: Option<&str>, may_send: bool) -> Caller {
        let id = |s: &str| s.chars().take(MAX_ID_CHARS).collect::<String>();
        Caller {
            who: Who::OAuth {
                sub: sub.map(id),
                client_id: client_id.map(id),
            },
            may_send,
        }
    }

    /// Whether this caller may use `send_prompt` at all (the send rules
    /// still apply to every send).
    pub fn may_send(&self) -> bool {
        self.may_send
    }

    pub fn who(&self) -> &Who {
        &self.who
    }

    /// Whose share of a shared bound this caller draws on, in words a
    /// refusal can name: the token it holds, or its identity provider's
    /// subject (its client when the token names no subject). Escaped.
    pub fn share(&self) -> String {
        let id = |s: &str| crate::escape::printable(s).into_owned();
        match &self.who {
            Who::Stdio => "the stdio host".to_owned(),
            Who::Token => "HERDR_MCP_TOKEN".to_owned(),
            Who::ReadToken => "HERDR_MCP_READ_TOKEN".to_owned(),
            Who::Unproven => "unproven callers".to_owned(),
            Who::OAuth { sub: Some(sub), .. } => format!("OAuth subject {}", id(sub)),
            Who::OAuth {
                sub: None,
                client_id: Some(client),
            } => format!("OAuth client {}", id(client)),
            Who::OAuth { .. } => "OAuth callers without a subject".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_serialise_without_secrets_and_bounded() {
        let caller = Caller::oauth(Some("user\u{1b}[31m"), Some("client-1"), false);
        assert!(!caller.may_send());
        assert_eq!(
            serde_json::to_value(caller.who()).unwrap(),
            serde_json::json!({"kind": "oauth", "sub": "user\u{1b}[31m", "client_id": "client-1"})
        );
        assert_eq!(
            serde_json::to_value(Caller::read_token().who()).unwrap(),
            serde_json::json!({"kind": "read-token"})
        );
        let long = "x".repeat(1000);
        let Who::OAuth { sub, .. } = Caller::oauth(Some(&long), None, true).who().clone() else {
            panic!("oauth")
        };
        assert_eq!(sub.unwrap().len(), MAX_ID_CHARS);
    }
}
