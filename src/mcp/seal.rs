//! The per-process key that seals what the adapter hands a client to give
//! back unchanged (`list_sessions` cursors, `since` tokens): the payload
//! and an HMAC-SHA256 tag over it and its purpose, base64url. A token that
//! was edited, cut short, made up, made for another purpose or by another
//! run of the adapter does not open.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Bytes of the tag kept: 128 bits, far past guessing.
const TAG_BYTES: usize = 16;

/// The secret that seals tokens, new at every start.
pub(crate) struct SealKey([u8; 32]);

impl SealKey {
    pub(crate) fn random() -> SealKey {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source is available");
        SealKey(key)
    }

    /// `payload` sealed for `purpose`.
    pub(crate) fn seal(&self, purpose: &str, payload: &[u8]) -> String {
        let mut sealed = Vec::with_capacity(payload.len() + TAG_BYTES);
        sealed.extend_from_slice(payload);
        sealed.extend_from_slice(&self.tag(purpose, payload)[..TAG_BYTES]);
        URL_SAFE_NO_PAD.encode(sealed)
    }

    /// What [`seal`](Self::seal) sealed for `purpose`; `None` for anything
    /// else or a token longer than `max_chars`.
    pub(crate) fn open(&self, purpose: &str, token: &str, max_chars: usize) -> Option<Vec<u8>> {
        if token.len() > max_chars {
            return None;
        }
        let mut sealed = URL_SAFE_NO_PAD.decode(token).ok()?;
        let split = sealed.len().checked_sub(TAG_BYTES)?;
        let tag = sealed.split_off(split);
        let mut mac = self.mac(purpose);
        mac.update(&sealed);
        mac.verify_truncated_left(&tag).ok()?;
        Some(sealed)
    }

    /// A short keyed digest of `bytes` for `purpose`: equal inputs give
    /// equal digests in this run, and nobody without the key can make two
    /// inputs collide.
    pub(crate) fn digest(&self, purpose: &str, bytes: &[u8]) -> [u8; 8] {
        let tag = self.tag(purpose, bytes);
        let mut digest = [0u8; 8];
        digest.copy_from_slice(&tag[..8]);
        digest
    }

    fn tag(&self, purpose: &str, payload: &[u8]) -> [u8; 32] {
        let mut mac = self.mac(purpose);
        mac.update(payload);
        mac.finalize().into_bytes().into()
    }

    /// An HMAC that has taken `purpose`, length first, so no purpose and
    /// payload run into another's.
    fn mac(&self, purpose: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(&(purpose.len() as u64).to_be_bytes());
        mac.update(purpose.as_bytes());
        mac
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_opens_only_unchanged_for_its_purpose_under_its_key() {
        let key = SealKey::random();
        let token = key.seal("cursor", b"payload");
        assert_eq!(
            key.open("cursor", &token, 100).as_deref(),
            Some(&b"payload"[..])
        );
        let mut edited = token.clone().into_bytes();
        edited[2] = if edited[2] == b'A' { b'B' } else { b'A' };
        for bad in [
            String::new(),
            "garbage!".into(),
            String::from_utf8(edited).unwrap(),
            token[..token.len() - 1].to_owned(),
            token[1..].to_owned(),
            SealKey::random().seal("cursor", b"payload"),
        ] {
            assert_eq!(key.open("cursor", &bad, 100), None, "{bad}");
        }
        assert_eq!(key.open("since", &token, 100), None);
        assert_eq!(key.open("cursor", &token, token.len() - 1), None);
    }
}
