//! Validated tokens by their SHA-256, each until its `exp`: a steady
//! client pays for one signature check, not one per request. Bounded, so a
//! stream of distinct valid tokens cannot grow it without limit; the token
//! itself is never kept.

use crate::lock::held;
use std::collections::HashMap;
use std::sync::Mutex;

use super::TokenVerdict;

/// Tokens remembered at most.
pub(super) const MAX_ENTRIES: usize = 1024;

#[derive(Default)]
pub(super) struct TokenCache {
    entries: Mutex<HashMap<[u8; 32], (TokenVerdict, u64)>>,
}

impl TokenCache {
    /// The verdict on a token seen before, while it has not expired.
    pub(super) fn get(&self, digest: &[u8; 32], now: u64) -> Option<TokenVerdict> {
        let mut entries = held(&self.entries);
        match entries.get(digest) {
            Some((verdict, exp)) if now < *exp => Some(verdict.clone()),
            Some(_) => {
                entries.remove(digest);
                None
            }
            None => None,
        }
    }

    /// Remembers a verdict until `exp` (seconds since the epoch). When full,
    /// expired entries go first, then the one closest to expiry.
    pub(super) fn put(&self, digest: [u8; 32], verdict: TokenVerdict, exp: u64, now: u64) {
        if exp <= now {
            return;
        }
        let mut entries = held(&self.entries);
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(&digest) {
            entries.retain(|_, (_, e)| *e > now);
            if entries.len() >= MAX_ENTRIES
                && let Some(soonest) = entries.iter().min_by_key(|(_, (_, e))| *e).map(|(k, _)| *k)
            {
                entries.remove(&soonest);
            }
        }
        entries.insert(digest, (verdict, exp));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_the_cache_stays_bounded() {
        let cache = TokenCache::default();
        cache.put([1; 32], TokenVerdict::NoScope, 100, 50);
        assert_eq!(cache.get(&[1; 32], 99), Some(TokenVerdict::NoScope));
        assert_eq!(cache.get(&[1; 32], 100), None, "expired at exp");
        for i in 0..(MAX_ENTRIES + 10) {
            let mut digest = [0; 32];
            digest[..8].copy_from_slice(&(i as u64).to_le_bytes());
            cache.put(digest, TokenVerdict::NoScope, 1_000 + i as u64, 0);
        }
        assert_eq!(cache.entries.lock().unwrap().len(), MAX_ENTRIES);
        // The soonest to expire went first.
        let mut first = [0; 32];
        first[..8].copy_from_slice(&0u64.to_le_bytes());
        assert_eq!(cache.get(&first, 0), None);
    }
}
