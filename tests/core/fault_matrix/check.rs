//! The judgement: every attempt against the input log and its round's
//! faults.

use super::*;

/// The input log once it has stopped changing: a write the adapter timed
/// out on may land after the call returned.
pub(super) async fn settled_writes(sim: &Sim) -> Vec<Value> {
    let mut last = sim.writes();
    let mut stable_since = Instant::now();
    let deadline = Instant::now() + crate::support::PATIENCE;
    while stable_since.elapsed() < SETTLE {
        assert!(Instant::now() < deadline, "the input log never settled");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = sim.writes();
        if now.len() != last.len() {
            last = now;
            stable_since = Instant::now();
        }
    }
    last
}

/// Checks every attempt against the log and the round's faults; returns the
/// counts as text.
pub(super) fn check(
    seed: u64,
    plan: &[Vec<String>],
    attempts: &[Attempt],
    writes: &[Value],
) -> String {
    assert_eq!(attempts.len(), ATTEMPTS, "seed {seed:#x}");
    let mut by_sha: HashMap<&str, Vec<&Value>> = HashMap::new();
    for write in writes {
        let sha = write["sha256"].as_str().expect("sha256 in the input log");
        by_sha.entry(sha).or_default().push(write);
    }
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_mode: BTreeMap<String, usize> = BTreeMap::new();
    let mut unknown_written = 0;
    let mut attributed = 0;
    // Attempts in rounds whose faults all hit before the write (hc.hello,
    // terminal.get) or calls send_prompt never makes.
    let mut before_write = (0, 0);
    for attempt in attempts {
        let faults = &plan[attempt.round];
        let pre_write_only =
            !faults.is_empty() && !faults.iter().any(|f| applies_to(f, "terminal.send"));
        if pre_write_only {
            before_write.0 += 1;
            before_write.1 += usize::from(attempt.outcome() == "unknown");
        }
        let context = || {
            format!(
                "seed {seed:#x} round {} faults {faults:?} mode {}: {} -> {}",
                attempt.round, attempt.mode, attempt.args, attempt.out
            )
        };
        let landed = by_sha
            .get(attempt.sha256.as_str())
            .map_or(&[][..], Vec::as_slice);
        attributed += landed.len();
        assert!(
            landed.len() <= 1,
            "written {} times: {}",
            landed.len(),
            context()
        );
        for write in landed {
            assert_eq!(write["address"], attempt.args["address"], "{}", context());
        }
        match attempt.outcome() {
            "sent" => {
                assert_eq!(landed.len(), 1, "sent but not written: {}", context());
                assert_eq!(attempt.reason_code(), "accepted", "{}", context());
                assert_eq!(
                    landed[0]["created_ms"],
                    attempt.out["created_ms"],
                    "{}",
                    context()
                );
                assert!(
                    !send_reply_corrupted(faults),
                    "sent without a valid reply: {}",
                    context()
                );
            }
            "not_sent" => {
                assert!(landed.is_empty(), "not_sent but written: {}", context());
                let reason = attempt.reason_code();
                assert!(
                    reason == "status_mismatch" || PRE_DISPATCH_REASONS.contains(&reason),
                    "not_sent for an unexpected reason: {}",
                    context()
                );
            }
            "unknown" => {
                unknown_written += landed.len();
                assert_eq!(
                    attempt.reason_code(),
                    "post_dispatch_failure",
                    "{}",
                    context()
                );
                // An intact reply (no fault on the send, or only a slow or
                // content-neutral one) leaves a timeout as the only way to
                // not know.
                if !send_reply_corrupted(faults) {
                    let reason = attempt.out["reason"].as_str().unwrap_or_default();
                    assert!(
                        reason.contains("did not answer terminal.send within"),
                        "unknown without a send-stage fault or a timeout: {}",
                        context()
                    );
                }
            }
            other => panic!("outcome {other:?}: {}", context()),
        }
        *outcomes.entry(attempt.outcome().to_owned()).or_default() += 1;
        *reasons
            .entry(format!("{}/{}", attempt.outcome(), attempt.reason_code()))
            .or_default() += 1;
        *by_mode
            .entry(format!("{} {}", attempt.mode, attempt.outcome()))
            .or_default() += 1;
    }
    assert_eq!(
        attributed,
        writes.len(),
        "seed {seed:#x}: the log has writes no attempt made: {writes:?}"
    );
    assert_eq!(
        writes.len(),
        outcomes.get("sent").copied().unwrap_or(0) + unknown_written,
        "seed {seed:#x}: every write is a sent or an unknown"
    );
    for outcome in ["sent", "not_sent", "unknown"] {
        assert!(
            outcomes.get(outcome).copied().unwrap_or(0) > 0,
            "seed {seed:#x}: no {outcome} outcome at all: {outcomes:?}"
        );
    }
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for faults in plan {
        for fault in faults {
            *kinds.entry(kind_of(fault)).or_default() += 1;
        }
    }
    assert_eq!(kinds.len(), FAULT_KINDS.len(), "seed {seed:#x}: {kinds:?}");
    let clean = plan.iter().filter(|f| f.is_empty()).count();
    let corrupted = plan.iter().filter(|f| send_reply_corrupted(f)).count();
    let mut text = format!(
        "fault matrix: seed {seed:#x}, {} attempts in {} rounds ({clean} clean, {corrupted} with no valid send reply)\n\
         writes: {} (of which {unknown_written} behind an unknown)\n\
         outcomes: {outcomes:?}\n",
        attempts.len(),
        plan.len(),
        writes.len(),
    );
    text.push_str(&format!("by mode: {by_mode:?}\n"));
    text.push_str(&format!("by reason: {reasons:?}\n"));
    text.push_str(&format!(
        "faults only before the write: {} attempts, {} unknown (each a terminal.send timeout)\n",
        before_write.0, before_write.1
    ));
    text.push_str(&format!("fault kinds (rounds): {kinds:?}\n"));
    text
}
