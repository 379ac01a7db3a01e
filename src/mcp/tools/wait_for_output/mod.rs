//! `wait_for_output`: waits on what a terminal shows, for any terminal,
//! including the many that never report a status: until a regular
//! expression is found in a line of the screen, and/or the screen has stayed
//! unchanged for `quiet_ms`. The first complete read is the baseline; only
//! screens that differ from it count, and screens hc marks incomplete never
//! end a wait. One round of the wait engine is one `terminal.get` (finished,
//! gone, another lifetime) and one `terminal.read` with `lines: 0`; the
//! pattern is then matched off the async workers (`matcher`).

mod matcher;
mod output;
mod watch;

use std::time::Duration;

use crate::mcp::arguments::address;
use regex::Regex;
use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::time::Instant;

pub use matcher::{LineMatcher, POLL_BUDGET, compile};
pub(crate) use output::{WaitForOutputOutput, WaitOutputOutcome};

use super::wait::{self, Ended, Limits};
use crate::app::App;
use crate::mcp::error::{ToolError, structured};
use crate::mcp::state::Matchers;
use crate::mcp::text::read_limit;
use watch::OutputWatch;

const QUIET_MS_RANGE: std::ops::RangeInclusive<u64> = 100..=60_000;
const TIMEOUT_MS_RANGE: std::ops::RangeInclusive<u64> = 100..=600_000;
const DEFAULT_TIMEOUT_MS: u64 = 50_000;
/// Default screen tail returned.
pub(crate) const DEFAULT_OUTPUT_CHARS: u32 = 4_000;
/// Between polls the screen is read at least this often relative to
/// `quiet_ms`, so a quiet period is judged on several reads.
const QUIET_READS: u32 = 4;

/// `wait_for_output`'s arguments: one terminal, and `pattern` and/or
/// `quiet_ms` to wait for.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitForOutputArgs {
    /// Terminal address from list_sessions, e.g. "t1" or "machine/t7".
    #[serde(deserialize_with = "address")]
    #[schemars(length(min = 1, max = 128))]
    pub address: String,
    /// The terminal's created_ms: the wait ends with `lifetime_mismatch` if
    /// the terminal at `address` is another lifetime.
    pub created_ms: Option<i64>,
    /// A regular expression (Rust regex syntax, linear-time), at most 1000
    /// characters and 64 KiB compiled (8 KiB with a Unicode word boundary
    /// such as \b; (?-u:\b) is the ASCII one), searched in each line of
    /// the screen. Only screens that
    /// differ from the one at the start of the wait count, but a line that
    /// was already visible matches as soon as anything else on the screen
    /// changes: pick text that only the awaited output contains.
    pub pattern: Option<String>,
    /// The screen must stay unchanged this long, 100-60000 ms. Alone: wait
    /// for at least one change, then this much quiet. With pattern: the
    /// pattern is on the screen AND it has then been quiet this long.
    #[schemars(range(min = 100, max = 60000))]
    pub quiet_ms: Option<u64>,
    /// Longest wait, 100-600000 ms (never above the operator's waitMaxMs).
    /// Default 50000: under the 60 s many hosts give one tool call. Keep it
    /// under your host's limit, and call again to wait longer.
    #[schemars(range(min = 100, max = 600000), extend("default" = DEFAULT_TIMEOUT_MS))]
    pub timeout_ms: Option<u64>,
    /// At most this many characters of the screen returned (its END),
    /// 1-32768. Default 4000.
    #[schemars(range(min = 1, max = 32768), extend("default" = DEFAULT_OUTPUT_CHARS))]
    pub max_chars: Option<u32>,
}

/// The validated arguments.
pub(super) struct OutputPlan {
    address: String,
    created_ms: Option<i64>,
    pattern: Option<Regex>,
    quiet: Option<Duration>,
    timeout: Duration,
    max_chars: usize,
}

impl OutputPlan {
    fn new(args: WaitForOutputArgs, wait_max: Duration) -> Result<OutputPlan, ToolError> {
        let invalid = |argument, problem: String| Err(ToolError::invalid(argument, problem));
        if args.pattern.is_none() && args.quiet_ms.is_none() {
            return invalid(
                "pattern",
                "or quiet_ms (or both) must be given: there is nothing to wait for".into(),
            );
        }
        let pattern = match &args.pattern {
            Some(p) => Some(
                matcher::compile(p).map_err(|e| ToolError::invalid("pattern", e.to_string()))?,
            ),
            None => None,
        };
        let quiet = match args.quiet_ms {
            Some(ms) if !QUIET_MS_RANGE.contains(&ms) => {
                return invalid(
                    "quiet_ms",
                    format!("must be between 100 and 60000, got {ms}"),
                );
            }
            ms => ms.map(Duration::from_millis),
        };
        let timeout_ms = args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if !TIMEOUT_MS_RANGE.contains(&timeout_ms) {
            return invalid(
                "timeout_ms",
                format!("must be between 100 and 600000, got {timeout_ms}"),
            );
        }
        let max_chars = match read_limit(args.max_chars, DEFAULT_OUTPUT_CHARS) {
            Ok(max_chars) => max_chars,
            Err(problem) => return invalid("max_chars", problem),
        };
        Ok(OutputPlan {
            address: args.address,
            created_ms: args.created_ms,
            pattern,
            quiet,
            timeout: Duration::from_millis(timeout_ms).min(wait_max),
            max_chars,
        })
    }

    /// The engine's bounds: the poll interval never grows past a quarter of
    /// `quiet_ms`.
    fn limits(&self, progress: Duration) -> Limits {
        let mut limits = Limits::new(self.timeout, progress);
        if let Some(quiet) = self.quiet {
            limits.max_interval = limits.max_interval.min(quiet / QUIET_READS);
        }
        limits
    }
}

/// One `wait_for_output` call: checks the arguments, then reads the screen
/// through `app` until it matches (on one of `matchers`) or settles, or
/// the wait ends otherwise.
pub(crate) async fn run(
    app: &App,
    matchers: &Matchers,
    progress: Duration,
    args: WaitForOutputArgs,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ToolError> {
    app.check_shown(&args.address)?;
    let plan = OutputPlan::new(args, app.loaded().config().wait_max())?;
    let started = Instant::now();
    let mut watch = OutputWatch::new(&plan, matchers);
    let ended = wait::run(app.client(), &mut watch, plan.limits(progress), context).await?;
    let outcome = match ended {
        Ended::Done(outcome) => outcome,
        Ended::Timeout => WaitOutputOutcome::Timeout,
    };
    let output = watch.output(outcome, started.elapsed());
    let text = output::render(&output);
    Ok(structured(&output, text, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(pattern: Option<&str>, quiet_ms: Option<u64>) -> WaitForOutputArgs {
        WaitForOutputArgs {
            address: "t1".into(),
            created_ms: None,
            pattern: pattern.map(str::to_owned),
            quiet_ms,
            timeout_ms: None,
            max_chars: None,
        }
    }

    fn refusal(args: WaitForOutputArgs) -> String {
        match OutputPlan::new(args, Duration::from_secs(600)) {
            Err(e @ ToolError::InvalidArgs { .. }) => e.to_string(),
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("accepted"),
        }
    }

    #[test]
    fn bad_arguments_are_refused_naming_them() {
        assert!(refusal(args(None, None)).contains("pattern or quiet_ms"));
        assert!(refusal(args(Some("(unclosed"), None)).contains("regular expression"));
        assert!(refusal(args(Some(&"a".repeat(1_001)), None)).contains("1001 characters"));
        assert!(refusal(args(Some("x{1000}{1000}{1000}"), None)).contains("pattern is too large"));
        assert!(refusal(args(None, Some(99))).contains("quiet_ms"));
        assert!(refusal(args(None, Some(60_001))).contains("quiet_ms"));
        let mut late = args(Some("x"), None);
        late.timeout_ms = Some(600_001);
        assert!(refusal(late).contains("timeout_ms"));
        let mut wide = args(Some("x"), None);
        wide.max_chars = Some(0);
        assert!(refusal(wide).contains("max_chars"));
    }

    #[test]
    fn the_operator_caps_the_timeout_and_quiet_caps_the_interval() {
        let mut long = args(None, Some(400));
        long.timeout_ms = Some(600_000);
        let plan = OutputPlan::new(long, Duration::from_secs(30)).unwrap();
        assert_eq!(plan.timeout, Duration::from_secs(30));
        assert_eq!(
            plan.limits(Duration::from_secs(5)).max_interval,
            Duration::from_millis(100)
        );
    }

    #[test]
    fn a_pathological_pattern_costs_linear_time() {
        // `(a*)*b` backtracks exponentially in engines that backtrack; here
        // ten times the line takes about ten times as long.
        let pattern = matcher::compile("(a*)*b").unwrap();
        let time = |n: usize| {
            let line = "a".repeat(n);
            let started = std::time::Instant::now();
            assert!(!pattern.is_match(&line));
            started.elapsed()
        };
        time(1_000);
        let short = time(20_000);
        let long = time(200_000);
        assert!(long < Duration::from_secs(1), "{long:?}");
        assert!(
            long < short * 100 + Duration::from_millis(20),
            "not linear: {short:?} then {long:?}"
        );
    }
}
