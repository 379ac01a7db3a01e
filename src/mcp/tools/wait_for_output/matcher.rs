//! The pattern of `wait_for_output`: what is accepted, and how it is
//! matched without delaying anyone else.
//!
//! The regex crate matches in linear time, but the constant is the size
//! of the compiled pattern when its lazy DFA gives up (a Unicode word
//! boundary on non-ASCII text, or a DFA cache that thrashes) and a slower
//! engine takes over. So, from the measurement in VALIDATION.md ("Pattern
//! costs"): the compiled program is capped at [`PROGRAM_BYTES`], and at
//! [`UNICODE_BOUNDARY_PROGRAM_BYTES`] when the pattern holds a Unicode word
//! boundary (`\b`, `\B`, `\<`, `\>` and the like; `(?-u:\b)` is the cheap
//! ASCII one). Matching then runs on a blocking thread, one at a time for
//! the whole server ([`Matchers`]), never on the async workers; one poll
//! matches for at most [`POLL_BUDGET`] and leaves the rest of the screen to
//! the next poll; and a line already matched on the previous screen is not
//! matched again.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use regex::{Regex, RegexBuilder};
use regex_syntax::hir::{Hir, HirKind, Look};

use crate::mcp::state::Matchers;

/// Longest pattern accepted, in characters.
pub(crate) const MAX_PATTERN_CHARS: usize = 1_000;
/// Compiled-program cap of a pattern: `\w+` (50 KB compiled) fits, and the
/// costliest pattern that fits matched a 20×120 hostile screen in under
/// 40 ms.
pub(super) const PROGRAM_BYTES: usize = 64 * 1024;
/// Compiled-program cap of a pattern with a Unicode word boundary, which
/// costs about eight times as much per byte on non-ASCII text:
/// `(?i)\b(error|warning|failed)\b` (2 KB) fits.
pub(super) const UNICODE_BOUNDARY_PROGRAM_BYTES: usize = 8 * 1024;
/// Lazy-DFA cache of one pattern: past it the DFA starts afresh or gives
/// way to a slower engine, whose cost the caps above bound.
const DFA_CACHE_BYTES: usize = 256 * 1024;
/// Matching time one poll may spend; the lines not reached are matched at
/// the next poll. With the caps above one line costs a few milliseconds at
/// worst, so a poll's matching stays under 50 ms.
pub const POLL_BUDGET: Duration = Duration::from_millis(25);

/// Why a pattern is refused.
#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    /// It is longer than [`MAX_PATTERN_CHARS`] characters.
    #[error("has {chars} characters; at most {MAX_PATTERN_CHARS}")]
    TooLong {
        /// Its length, in characters.
        chars: usize,
    },
    /// It does not parse as a regular expression (the parser's message).
    #[error("is not a valid regular expression: {0}")]
    Invalid(String),
    /// Its compiled program is over its size cap.
    #[error(
        "is too large once compiled (over {limit} bytes{}): use fewer or smaller repetitions, or ASCII classes such as (?-u:\\w) or [[:alnum:]] instead of \\w",
        if *.unicode_boundary { ", the limit for a pattern with a Unicode word boundary; (?-u:\\b) is an ASCII word boundary and is allowed in larger patterns" } else { "" }
    )]
    TooLarge {
        /// The cap, in bytes.
        limit: usize,
        /// Whether it holds a Unicode word boundary, which lowers the cap.
        unicode_boundary: bool,
    },
}

/// `pattern` compiled within its size cap.
pub fn compile(pattern: &str) -> Result<Regex, PatternError> {
    let chars = pattern.chars().count();
    if chars > MAX_PATTERN_CHARS {
        return Err(PatternError::TooLong { chars });
    }
    let hir = regex_syntax::parse(pattern).map_err(|e| PatternError::Invalid(e.to_string()))?;
    let unicode_boundary = has_unicode_word_boundary(&hir);
    let limit = if unicode_boundary {
        UNICODE_BOUNDARY_PROGRAM_BYTES
    } else {
        PROGRAM_BYTES
    };
    RegexBuilder::new(pattern)
        .size_limit(limit)
        .dfa_size_limit(DFA_CACHE_BYTES)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => PatternError::TooLarge {
                limit,
                unicode_boundary,
            },
            other => PatternError::Invalid(other.to_string()),
        })
}

fn has_unicode_word_boundary(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Look(look) => matches!(
            look,
            Look::WordUnicode
                | Look::WordUnicodeNegate
                | Look::WordStartUnicode
                | Look::WordEndUnicode
                | Look::WordStartHalfUnicode
                | Look::WordEndHalfUnicode
        ),
        HirKind::Repetition(repetition) => has_unicode_word_boundary(&repetition.sub),
        HirKind::Capture(capture) => has_unicode_word_boundary(&capture.sub),
        HirKind::Concat(all) | HirKind::Alternation(all) => {
            all.iter().any(has_unicode_word_boundary)
        }
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => false,
    }
}

/// The first matching line of a screen, as far as a scan got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// Row and text of the first matching line, if one was reached.
    pub found: Option<(usize, String)>,
    /// Every line above `found` (or every line, when none matched) was
    /// matched; false when the budget ran out first.
    pub whole: bool,
}

/// A pattern and what it concluded of the lines of the last screen.
#[derive(Debug, Clone)]
pub struct LineMatcher {
    pattern: Regex,
    known: HashMap<String, bool>,
}

impl LineMatcher {
    /// A matcher of `pattern` that knows no line yet.
    pub fn new(pattern: Regex) -> LineMatcher {
        LineMatcher {
            pattern,
            known: HashMap::new(),
        }
    }

    /// Scans `screen` top to bottom for the first matching line, for at
    /// most `budget` (or until `stop`) past the first line it matches, so
    /// every scan makes progress; a line seen on the last screen scanned is
    /// not matched again. Afterwards only this screen's lines are
    /// remembered.
    pub fn scan(&mut self, screen: &str, budget: Duration, stop: &AtomicBool) -> Scan {
        let started = Instant::now();
        let mut progressed = false;
        let mut known = HashMap::with_capacity(self.known.len());
        let mut scan = Scan {
            found: None,
            whole: true,
        };
        for (row, line) in screen.lines().enumerate() {
            let matched = match self.known.remove(line).or_else(|| known.get(line).copied()) {
                Some(matched) => matched,
                None if stop.load(Ordering::Relaxed)
                    || (progressed && started.elapsed() >= budget) =>
                {
                    scan.whole = false;
                    break;
                }
                None => {
                    progressed = true;
                    self.pattern.is_match(line)
                }
            };
            known.insert(line.to_owned(), matched);
            if matched {
                scan.found = Some((row, line.to_owned()));
                break;
            }
        }
        self.known = known;
        scan
    }
}

/// [`LineMatcher::scan`] on a blocking thread, when one of the shared
/// matching threads is free. Dropping the future stops the scan at the
/// next line; the matcher is then lost, and with it what it knew.
pub(crate) async fn scan_off_workers(
    matchers: &Matchers,
    mut matcher: LineMatcher,
    screen: String,
) -> (LineMatcher, Scan) {
    let permit = matchers.place().await;
    let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
    let flag = Arc::clone(&stop.0);
    let scanned = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let scan = matcher.scan(&screen, POLL_BUDGET, &flag);
        (matcher, scan)
    });
    scanned.await.expect("matching never panics")
}

/// Tells a scan to stop when the wait that asked for it is gone.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(pattern: &str) -> String {
        compile(pattern).expect_err("refused").to_string()
    }

    #[test]
    fn patterns_are_refused_past_their_size_caps() {
        assert!(refused(&"a".repeat(1_001)).contains("1001 characters"));
        assert!(refused("(unclosed").contains("not a valid regular expression"));
        let stalling = refused(r"(?:é?\b?){3500}[^é\x{301}]");
        assert!(stalling.contains("8192 bytes"), "{stalling}");
        assert!(stalling.contains(r"(?-u:\b)"), "{stalling}");
        assert!(refused(r"\w+\s+\w+").contains("65536 bytes"));
        assert!(refused(r"(?:é?\b?){29}[^é\x{301}]").contains("8192 bytes"));
        assert!(refused(r"(?:[\w\W]?){62}[^é\x{301}]").contains("65536 bytes"));
        assert!(refused(r"x{1000}{1000}{1000}").contains("too large"));
    }

    #[test]
    fn everyday_patterns_are_accepted() {
        for pattern in [
            r"\bdone\b",
            r"(?i)\b(error|warning|failed)\b",
            r"\w+",
            r"\d+ tests? passed",
            r"^reply: .*sparrow",
            r"(?-u:\b)\w+(?-u:\b)",
            r"(?:a?(?-u:\b)?){300}[^a]",
            // The costly shapes the integration test runs, at their caps.
            r"(?:é?\b?){28}[^é\x{301}]",
            r"(?:[\w\W]?){61}[^é\x{301}]",
        ] {
            compile(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        }
    }

    #[test]
    fn a_unicode_boundary_counts_wherever_it_sits() {
        let parsed = |p| regex_syntax::parse(p).unwrap();
        assert!(has_unicode_word_boundary(&parsed(r"(a|(?:b\B)+)")));
        assert!(has_unicode_word_boundary(&parsed(r"\<x\>")));
        assert!(!has_unicode_word_boundary(&parsed(r"(?-u:\b)x")));
        assert!(!has_unicode_word_boundary(&parsed(r"^x$")));
    }

    #[test]
    fn a_scan_finds_the_first_matching_line_and_remembers_only_this_screen() {
        let mut matcher = LineMatcher::new(compile("b").unwrap());
        let stop = AtomicBool::new(false);
        let scan = matcher.scan("a\nb1\nb2", Duration::from_secs(1), &stop);
        assert_eq!(scan.found, Some((1, "b1".to_owned())));
        assert!(scan.whole);
        assert_eq!(
            matcher.known.len(),
            2,
            "lines below the match are not matched"
        );
        let scan = matcher.scan("c\nc", Duration::from_secs(1), &stop);
        assert_eq!(
            scan,
            Scan {
                found: None,
                whole: true
            }
        );
        assert_eq!(matcher.known.len(), 1);
        assert!(!matcher.known.contains_key("a"));
    }

    #[test]
    fn a_spent_budget_leaves_the_rest_for_the_next_scan() {
        let mut matcher = LineMatcher::new(compile("z").unwrap());
        let stop = AtomicBool::new(false);
        // A spent budget still matches one new line per scan; lines
        // already known cost nothing.
        let scan = matcher.scan("a\nb\nz", Duration::ZERO, &stop);
        assert_eq!(
            scan,
            Scan {
                found: None,
                whole: false
            }
        );
        assert_eq!(matcher.known.len(), 1);
        let scan = matcher.scan("a\nb\nz", Duration::ZERO, &stop);
        assert_eq!(
            scan,
            Scan {
                found: None,
                whole: false
            }
        );
        assert_eq!(matcher.known.len(), 2);
        let scan = matcher.scan("a\nb\nz", Duration::ZERO, &stop);
        assert_eq!(scan.found, Some((2, "z".to_owned())));
        assert!(scan.whole);
    }

    #[test]
    fn a_stopped_scan_matches_nothing_new() {
        let mut matcher = LineMatcher::new(compile("a").unwrap());
        let scan = matcher.scan("a", Duration::from_secs(1), &AtomicBool::new(true));
        assert_eq!(
            scan,
            Scan {
                found: None,
                whole: false
            }
        );
    }
}
