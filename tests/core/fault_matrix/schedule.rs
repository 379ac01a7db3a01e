//! The fault schedule: which faults each round switches on, drawn from a
//! seeded generator so a run can be replayed.

use super::*;

/// Every fault kind of the contract (section 7), as the simulator names them.
pub(super) const FAULT_KINDS: [&str; 11] = [
    "wrong-version",
    "wrong-generation",
    "wrong-framing",
    "id-mismatch",
    "malformed-json",
    "notification",
    "oversized-reply",
    "endless-reply",
    "no-reply",
    "drop-after-dispatch",
    "slow-reply",
];
/// Faults that rewrite a reply's content instead of deciding its delivery.
pub(super) const REWRITES: [&str; 4] = [
    "wrong-version",
    "wrong-generation",
    "wrong-framing",
    "id-mismatch",
];
/// Deliveries after which no valid reply reaches the adapter.
pub(super) const CORRUPTING: [&str; 6] = [
    "malformed-json",
    "notification",
    "oversized-reply",
    "endless-reply",
    "no-reply",
    "drop-after-dispatch",
];
/// Methods a fault is pinned to in the coverage rounds: before the write
/// (a new connection's handshake, the preflight), the write itself, every
/// call (empty).
pub(super) const COVERAGE_METHODS: [&str; 4] = ["hc.hello", "terminal.get", "terminal.send", ""];
/// Methods for the random rounds: also those `send_prompt` never calls.
pub(super) const RANDOM_METHODS: [&str; 6] = [
    "hc.hello",
    "terminal.get",
    "terminal.send",
    "",
    "terminal.list",
    "terminal.read",
];
/// SplitMix64: small, seedable, good enough to schedule faults.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(super) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    pub(super) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

pub(super) fn seed() -> u64 {
    match std::env::var("FAULT_SEED") {
        Ok(text) => {
            let text = text.trim();
            let parsed = match text.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => text.parse(),
            };
            parsed.unwrap_or_else(|e| panic!("FAULT_SEED={text:?} is not a u64: {e}"))
        }
        Err(_) => DEFAULT_SEED,
    }
}

pub(super) fn spec(kind: &str, method: &str) -> String {
    if method.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}:{method}")
    }
}

pub(super) fn kind_of(spec: &str) -> &str {
    spec.split_once(':').map_or(spec, |(kind, _)| kind)
}

pub(super) fn applies_to(spec: &str, method: &str) -> bool {
    spec.split_once(':').is_none_or(|(_, m)| m == method)
}

/// Whether no valid `terminal.send` reply can reach the adapter under
/// `faults`: any id rewrite, or a corrupting first delivery fault (the
/// simulator applies only the first matching one, in configuration order).
pub(super) fn send_reply_corrupted(faults: &[String]) -> bool {
    let on_send: Vec<&str> = faults
        .iter()
        .filter(|f| applies_to(f, "terminal.send"))
        .map(|f| kind_of(f))
        .collect();
    let first_delivery = on_send.iter().find(|k| !REWRITES.contains(k));
    on_send.contains(&"id-mismatch") || first_delivery.is_some_and(|k| CORRUPTING.contains(k))
}

/// The size of each round (attempts per adapter), adding up to [`ATTEMPTS`].
pub(super) fn round_sizes(rng: &mut Rng) -> Vec<usize> {
    let span = PER_ADAPTER_ROUND.end() - PER_ADAPTER_ROUND.start() + 1;
    let mut sizes = Vec::new();
    let mut left = ATTEMPTS / MODES.len();
    while left > 0 {
        let size = (PER_ADAPTER_ROUND.start() + rng.below(span)).min(left);
        sizes.push(size);
        left -= size;
    }
    sizes
}

/// The faults of each round: one round per (kind, method) of the coverage
/// set, the rest alternately clean and with 2-3 random faults, in random
/// order.
pub(super) fn schedule(rng: &mut Rng, rounds: usize) -> Vec<Vec<String>> {
    let mut plan: Vec<Vec<String>> = FAULT_KINDS
        .iter()
        .flat_map(|k| COVERAGE_METHODS.iter().map(move |m| vec![spec(k, m)]))
        .collect();
    assert!(
        plan.len() <= rounds,
        "{} coverage rounds but only {rounds} rounds",
        plan.len()
    );
    let mut extra = 0;
    while plan.len() < rounds {
        if extra % 2 == 0 {
            plan.push(Vec::new());
        } else {
            let n = 2 + rng.below(2);
            plan.push(
                (0..n)
                    .map(|_| {
                        let kind = rng.pick(&FAULT_KINDS);
                        spec(kind, rng.pick(&RANDOM_METHODS))
                    })
                    .collect(),
            );
        }
        extra += 1;
    }
    rng.shuffle(&mut plan);
    plan
}
