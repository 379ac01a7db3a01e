//! Fault modes (`--fault KIND[:METHOD]`, control `set_faults`): which faults
//! are on, which apply to a call, and how a reply is delivered under them.
//! A call is always carried out first (a `terminal.send` writes and logs its
//! input), then its reply is rewritten and delivered, or not, as the faults
//! say. The reply itself is built elsewhere (`methods`).

use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::wire::{self, Method, RpcError, hello_fields};

/// Size of the result string of an `oversized-reply`: far past any sane cap.
const OVERSIZED_REPLY_BYTES: usize = 100 * 1024 * 1024;
/// Bytes per write while streaming an oversized or endless reply.
const STREAM_CHUNK_BYTES: usize = 64 * 1024;
/// Added to a numeric id by `id-mismatch`.
const ID_MISMATCH_OFFSET: i64 = 1000;
/// What the `wrong-*` faults claim instead of the truth.
const WRONG_VERSION: &str = "0.1.14";
const WRONG_GENERATION: u64 = 2;
const WRONG_FRAMING: &str = "json-seq";

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
    fn rewrites(self) -> bool {
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
    pub kind: FaultKind,
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

/// The faults in force; replaceable at run time.
#[derive(Debug, Default)]
pub struct FaultSet {
    faults: Mutex<Vec<Fault>>,
}

/// What the faults in force do to one call's reply: every matching rewrite,
/// then the first matching delivery fault (in configuration order).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Plan {
    rewrites: Vec<FaultKind>,
    pub delivery: Option<FaultKind>,
}

impl FaultSet {
    pub fn new(faults: Vec<Fault>) -> Self {
        FaultSet {
            faults: Mutex::new(faults),
        }
    }

    pub fn replace(&self, faults: Vec<Fault>) {
        *self
            .faults
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = faults;
    }

    /// The plan for a call of `method` (`None`: a method hc does not have,
    /// which only method-less faults match).
    pub fn plan(&self, method: Option<Method>) -> Plan {
        let faults = self
            .faults
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut plan = Plan::default();
        for fault in faults
            .iter()
            .filter(|fault| fault.method.is_none() || fault.method == method)
        {
            if fault.kind.rewrites() {
                plan.rewrites.push(fault.kind);
            } else if plan.delivery.is_none() {
                plan.delivery = Some(fault.kind);
            }
        }
        plan
    }
}

impl Plan {
    /// Applies the rewrites to a reply; the `wrong-*` ones touch only a
    /// successful `hc.hello` result.
    pub fn rewrite(
        &self,
        method: Option<Method>,
        id: &mut Value,
        reply: &mut Result<Value, RpcError>,
    ) {
        for kind in &self.rewrites {
            let hello = match reply {
                Ok(Value::Object(result)) if method == Some(Method::Hello) => Some(result),
                _ => None,
            };
            match (kind, hello) {
                (FaultKind::WrongVersion, Some(result)) => {
                    result.insert(hello_fields::VERSION.into(), WRONG_VERSION.into());
                }
                (FaultKind::WrongGeneration, Some(result)) => {
                    result.insert(hello_fields::GENERATION.into(), WRONG_GENERATION.into());
                }
                (FaultKind::WrongFraming, Some(result)) => {
                    result.insert(hello_fields::FRAMING.into(), WRONG_FRAMING.into());
                }
                (FaultKind::IdMismatch, _) => *id = mismatched(id),
                _ => {}
            }
        }
    }
}

fn mismatched(id: &Value) -> Value {
    match id {
        Value::Number(number) => match number.as_i64() {
            Some(n) => n.wrapping_add(ID_MISMATCH_OFFSET).into(),
            None => format!("{number}-mismatch").into(),
        },
        Value::String(text) => format!("{text}-mismatch").into(),
        _ => ID_MISMATCH_OFFSET.into(),
    }
}

/// What the connection does after a reply was delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Close,
}

/// What a delivery needs besides the reply.
pub struct Delivery<'a> {
    pub slow_reply: Duration,
    /// Params of the notification line the `notification` fault sends first.
    pub notification: &'a (dyn Fn() -> Value + Sync),
}

/// Writes `reply` to `writer` as the delivery fault (if any) says. An error
/// means the peer is gone.
pub async fn deliver<W: AsyncWrite + Unpin>(
    writer: &mut W,
    delivery: Option<FaultKind>,
    id: &Value,
    reply: &Result<Value, RpcError>,
    context: &Delivery<'_>,
) -> std::io::Result<Flow> {
    let line = wire::response_line(id, reply);
    match delivery {
        Some(FaultKind::MalformedJson) => {
            let truncated = format!("{}\n", wire::result_prefix(id));
            writer.write_all(truncated.as_bytes()).await?;
        }
        Some(FaultKind::Notification) => {
            let params = (context.notification)();
            let notification = wire::notification_line(wire::STATUS_NOTIFICATION, params);
            writer.write_all(notification.as_bytes()).await?;
            writer.write_all(line.as_bytes()).await?;
        }
        Some(FaultKind::OversizedReply) => {
            writer.write_all(wire::result_prefix(id).as_bytes()).await?;
            writer.write_all(b"\"").await?;
            let chunk = vec![b'x'; STREAM_CHUNK_BYTES];
            for _ in 0..OVERSIZED_REPLY_BYTES / STREAM_CHUNK_BYTES {
                writer.write_all(&chunk).await?;
            }
            writer.write_all(b"\"}\n").await?;
        }
        Some(FaultKind::EndlessReply) => {
            writer.write_all(wire::result_prefix(id).as_bytes()).await?;
            let chunk = vec![b'x'; STREAM_CHUNK_BYTES];
            loop {
                writer.write_all(&chunk).await?;
            }
        }
        Some(FaultKind::NoReply) => {}
        Some(FaultKind::DropAfterDispatch) => return Ok(Flow::Close),
        Some(FaultKind::SlowReply) => {
            tokio::time::sleep(context.slow_reply).await;
            writer.write_all(line.as_bytes()).await?;
        }
        // Rewriting faults never decide the delivery: a plain reply.
        None | Some(_) => writer.write_all(line.as_bytes()).await?,
    }
    writer.flush().await?;
    Ok(Flow::Continue)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn wrong_version_rewrites_only_the_hello_result() {
        let set = FaultSet::new(vec!["wrong-version".parse().unwrap()]);
        let mut id = json!(1);
        let mut reply = Ok(json!({ "version": "0.1.15" }));
        set.plan(Some(Method::Hello))
            .rewrite(Some(Method::Hello), &mut id, &mut reply);
        assert_eq!(reply.unwrap()["version"], WRONG_VERSION);
        let mut reply = Ok(json!({ "version": "0.1.15" }));
        set.plan(Some(Method::List))
            .rewrite(Some(Method::List), &mut id, &mut reply);
        assert_eq!(reply.unwrap()["version"], "0.1.15");
    }

    #[test]
    fn a_method_fault_leaves_other_methods_alone() {
        let set = FaultSet::new(vec!["no-reply:terminal.send".parse().unwrap()]);
        assert_eq!(
            set.plan(Some(Method::Send)).delivery,
            Some(FaultKind::NoReply)
        );
        assert_eq!(set.plan(Some(Method::Hello)).delivery, None);
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

    #[test]
    fn id_mismatch_moves_numbers_and_strings() {
        assert_eq!(mismatched(&json!(7)), json!(1007));
        assert_eq!(mismatched(&json!("a")), json!("a-mismatch"));
    }
}
