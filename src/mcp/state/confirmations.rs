//! The confirmations' state: the key that seals a 2026-07-28 question's
//! request state (made at each start, so a state of another process never
//! opens), and the questions handed out and not yet answered, each counted
//! against its caller's share, so one caller asking question after
//! question fills its own share, not everyone's. What a question says and
//! how an answer is judged is `send_prompt`'s.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::RequestStateCodec;

use crate::lock::held;

/// Request states not yet redeemed that are remembered at most; beyond it a
/// new question is refused rather than a redeemed one forgotten.
pub(crate) const MAX_OUTSTANDING: usize = 4096;
/// Of those, what one caller (a token, an OAuth subject) may hold.
pub(crate) const MAX_OUTSTANDING_PER_CALLER: usize = 64;

/// The process's sealing key and the questions not yet answered.
pub(crate) struct Confirmations {
    codec: RequestStateCodec,
    /// Nonces handed out and not yet redeemed, with their expiry and whose
    /// share they count against.
    outstanding: Mutex<HashMap<String, Outstanding>>,
}

/// A question handed out and not yet answered.
struct Outstanding {
    expiry: Instant,
    share: String,
}

/// Why no question could be handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Full {
    /// This share holds [`MAX_OUTSTANDING_PER_CALLER`] already.
    Share(String),
    /// All callers together hold [`MAX_OUTSTANDING`].
    All,
}

impl Default for Confirmations {
    fn default() -> Confirmations {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the system's random source is readable");
        Confirmations {
            codec: RequestStateCodec::try_new(key.to_vec()).expect("a 32-byte key is long enough"),
            outstanding: Mutex::new(HashMap::new()),
        }
    }
}

impl Confirmations {
    /// The key that seals and opens request states.
    pub(crate) fn codec(&self) -> &RequestStateCodec {
        &self.codec
    }

    /// A new question's nonce, counted against `share` for `timeout`; or
    /// why none can be handed out now.
    pub(crate) fn hand_out(&self, share: String, timeout: Duration) -> Result<String, Full> {
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).expect("the system's random source is readable");
        let nonce: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
        let mut outstanding = held(&self.outstanding);
        let now = Instant::now();
        outstanding.retain(|_, asked| asked.expiry > now);
        let mine = outstanding.values().filter(|q| q.share == share).count();
        if mine >= MAX_OUTSTANDING_PER_CALLER {
            return Err(Full::Share(share));
        }
        if outstanding.len() >= MAX_OUTSTANDING {
            return Err(Full::All);
        }
        outstanding.insert(
            nonce.clone(),
            Outstanding {
                expiry: now + timeout,
                share,
            },
        );
        Ok(nonce)
    }

    /// Redeems `nonce` once: false when it was never handed out, or was
    /// redeemed already.
    pub(crate) fn redeem(&self, nonce: &str) -> bool {
        held(&self.outstanding).remove(nonce).is_some()
    }
}
