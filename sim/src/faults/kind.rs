//! The fault kinds and a configured fault (`kind[:method]`): their names,
//! their one-line meanings and the `--help` text built from them, so the
//! help cannot drift from the code.

use std::fmt;
use std::str::FromStr;

use super::{
    ID_MISMATCH_OFFSET, OVERSIZED_REPLY_BYTES, WRONG_FRAMING, WRONG_GENERATION, WRONG_VERSION,
};
use crate::wire::{self, Method};

/// Every fault the simulator can inject. What each does is [`FaultKind::meaning`],
/// which `hc-sim --help` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// `hc.hello` claims another version.
    WrongVersion,
    /// `hc.hello` claims another generation.
    WrongGeneration,
    /// `hc.hello` claims another framing.
    WrongFraming,
    /// The reply carries another id.
    IdMismatch,
    /// The reply is cut short: not JSON.
    MalformedJson,
    /// A notification line comes before the reply.
    Notification,
    /// The reply is valid but huge.
    OversizedReply,
    /// The reply never ends.
    EndlessReply,
    /// No reply; the connection stays open.
    NoReply,
    /// The connection closes instead of replying.
    DropAfterDispatch,
    /// The reply comes late.
    SlowReply,
}

impl FaultKind {
    /// Every kind, in the order `--help` lists them.
    pub const ALL: [FaultKind; 11] = [
        FaultKind::WrongVersion,
        FaultKind::WrongGeneration,
        FaultKind::WrongFraming,
        FaultKind::IdMismatch,
        FaultKind::MalformedJson,
        FaultKind::Notification,
        FaultKind::OversizedReply,
        FaultKind::EndlessReply,
        FaultKind::NoReply,
        FaultKind::DropAfterDispatch,
        FaultKind::SlowReply,
    ];

    /// The kind's name in `--fault` and control `set_faults`.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::WrongVersion => "wrong-version",
            FaultKind::WrongGeneration => "wrong-generation",
            FaultKind::WrongFraming => "wrong-framing",
            FaultKind::IdMismatch => "id-mismatch",
            FaultKind::MalformedJson => "malformed-json",
            FaultKind::Notification => "notification",
            FaultKind::OversizedReply => "oversized-reply",
            FaultKind::EndlessReply => "endless-reply",
            FaultKind::NoReply => "no-reply",
            FaultKind::DropAfterDispatch => "drop-after-dispatch",
            FaultKind::SlowReply => "slow-reply",
        }
    }

    /// What the fault does to a reply, in one line (built from the same
    /// constants the fault uses, so the help cannot drift from the code).
    pub fn meaning(self) -> String {
        match self {
            FaultKind::WrongVersion => {
                format!("a successful hc.hello claims version {WRONG_VERSION}")
            }
            FaultKind::WrongGeneration => {
                format!("a successful hc.hello claims generation {WRONG_GENERATION}")
            }
            FaultKind::WrongFraming => {
                format!("a successful hc.hello claims framing {WRONG_FRAMING}")
            }
            FaultKind::IdMismatch => format!(
                "the reply's id is another one (+{ID_MISMATCH_OFFSET}, or \"-mismatch\" appended)"
            ),
            FaultKind::MalformedJson => {
                "the reply line stops right after \"result\": (not JSON)".to_string()
            }
            FaultKind::Notification => format!(
                "a {} notification line comes before the reply",
                wire::STATUS_NOTIFICATION
            ),
            FaultKind::OversizedReply => format!(
                "the reply's result is a {} MiB string",
                OVERSIZED_REPLY_BYTES / (1024 * 1024)
            ),
            FaultKind::EndlessReply => {
                "the reply streams bytes with no newline until the peer leaves".to_string()
            }
            FaultKind::NoReply => "no reply is sent; the connection is still served".to_string(),
            FaultKind::DropAfterDispatch => {
                "the connection closes instead of replying (post-dispatch loss)".to_string()
            }
            FaultKind::SlowReply => "the reply waits --slow-reply-ms before it goes".to_string(),
        }
    }

    /// Faults that change the reply's content rather than its delivery.
    pub(super) fn rewrites(self) -> bool {
        matches!(
            self,
            FaultKind::WrongVersion
                | FaultKind::WrongGeneration
                | FaultKind::WrongFraming
                | FaultKind::IdMismatch
        )
    }
}

/// One configured fault: a kind, on one method or (without) on every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// What the fault does.
    pub kind: FaultKind,
    /// The one method it applies to; `None`: every call.
    pub method: Option<Method>,
}

impl FromStr for Fault {
    type Err = String;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let (kind_name, method_name) = match spec.split_once(':') {
            Some((kind, method)) => (kind, Some(method)),
            None => (spec, None),
        };
        let kind = FaultKind::ALL
            .into_iter()
            .find(|kind| kind.name() == kind_name)
            .ok_or_else(|| {
                let known: Vec<_> = FaultKind::ALL.map(FaultKind::name).into();
                format!("unknown fault `{kind_name}`; known: {}", known.join(", "))
            })?;
        let method = match method_name {
            None => None,
            Some(name) => Some(Method::from_name(name).ok_or_else(|| {
                let known: Vec<_> = Method::ALL.map(Method::name).into();
                format!(
                    "unknown method `{name}` in fault `{spec}`; known: {}",
                    known.join(", ")
                )
            })?),
        };
        Ok(Fault { kind, method })
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.method {
            Some(method) => write!(f, "{}:{}", self.kind.name(), method.name()),
            None => f.write_str(self.kind.name()),
        }
    }
}

/// The `--help` text of `--fault`: every kind with its meaning, and what
/// METHOD may name.
pub fn long_help() -> String {
    let width = FaultKind::ALL
        .iter()
        .map(|kind| kind.name().len())
        .max()
        .unwrap_or(0);
    let mut help = String::from(
        "Inject a fault, on one method or on every call; repeatable.\n\
         The call is always carried out first (a faulted terminal.send has\n\
         written its input), then its reply is faulted.\n\nKIND is one of:\n",
    );
    for kind in FaultKind::ALL {
        help.push_str(&format!("  {:width$}  {}\n", kind.name(), kind.meaning()));
    }
    let methods: Vec<_> = Method::ALL.map(Method::name).into();
    help.push_str(&format!(
        "\n:METHOD limits the fault to one of\n{};\n\
         without it the fault applies to every call, hc.hello and unknown\n\
         methods included.",
        methods.join(", ")
    ));
    help
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_with_and_without_a_method() {
        let fault: Fault = "slow-reply:terminal.send".parse().unwrap();
        assert_eq!(fault.kind, FaultKind::SlowReply);
        assert_eq!(fault.method, Some(Method::Send));
        assert_eq!(fault.to_string(), "slow-reply:terminal.send");
        assert_eq!("no-reply".parse::<Fault>().unwrap().method, None);
        assert!("no-reply:terminal.kill".parse::<Fault>().is_err());
        assert!("sleepy".parse::<Fault>().is_err());
    }

    #[test]
    fn the_help_names_every_kind_with_its_meaning() {
        let help = long_help();
        for kind in FaultKind::ALL {
            let line = format!("{}  {}", kind.name(), kind.meaning());
            assert!(
                help.lines()
                    .any(|shown| shown.trim_start().starts_with(kind.name())
                        && shown.ends_with(&kind.meaning())),
                "{line} missing from:\n{help}"
            );
        }
    }
}
