//! The bearer token: read only from `HERDR_MCP_TOKEN`, refused when it is
//! short or looks like a placeholder, kept only as a SHA-256 digest, never
//! printed, and compared in constant time over fixed-length digests.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The only place the token comes from.
pub const TOKEN_ENV: &str = "HERDR_MCP_TOKEN";
/// Shortest token accepted: 32 bytes, what `openssl rand -base64 32` gives before encoding.
pub const MIN_TOKEN_BYTES: usize = 32;
/// Fewer distinct characters than this is a repeated or typed value, not a
/// random one (32 random bytes in hex or base64 always have more).
pub const MIN_DISTINCT_CHARS: usize = 12;
/// Substrings that mark a copied example rather than a generated secret.
const PLACEHOLDER_MARKERS: [&str; 7] = [
    "change-me",
    "changeme",
    "example",
    "placeholder",
    "your-token",
    "<",
    ">",
];

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error(
        "{TOKEN_ENV} is not set; the HTTP transport needs a bearer token: export {TOKEN_ENV}=\"$(openssl rand -base64 32)\""
    )]
    Missing,
    #[error("{TOKEN_ENV} is not valid UTF-8; generate one with: openssl rand -base64 32")]
    NotUtf8,
    #[error(
        "{TOKEN_ENV} is {0} bytes; at least 32 are required: generate one with openssl rand -base64 32"
    )]
    TooShort(usize),
    #[error(
        "{TOKEN_ENV} looks like a placeholder, not a secret: generate one with openssl rand -base64 32"
    )]
    Placeholder,
    #[error(
        "{TOKEN_ENV} has fewer than 12 distinct characters, so it is not random: generate one with openssl rand -base64 32"
    )]
    LowEntropy,
}

/// A validated token, held only as its digest.
#[derive(Clone)]
pub struct BearerToken {
    digest: [u8; 32],
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken([redacted])")
    }
}

impl BearerToken {
    pub fn from_env() -> Result<BearerToken, TokenError> {
        match std::env::var(TOKEN_ENV) {
            Ok(value) => BearerToken::new(&value),
            Err(std::env::VarError::NotPresent) => Err(TokenError::Missing),
            Err(std::env::VarError::NotUnicode(_)) => Err(TokenError::NotUtf8),
        }
    }

    pub fn new(token: &str) -> Result<BearerToken, TokenError> {
        if token.is_empty() {
            return Err(TokenError::Missing);
        }
        if token.len() < MIN_TOKEN_BYTES {
            return Err(TokenError::TooShort(token.len()));
        }
        let lower = token.to_ascii_lowercase();
        if PLACEHOLDER_MARKERS.iter().any(|m| lower.contains(m)) {
            return Err(TokenError::Placeholder);
        }
        let mut distinct: Vec<char> = token.chars().collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() < MIN_DISTINCT_CHARS {
            return Err(TokenError::LowEntropy);
        }
        Ok(BearerToken {
            digest: Sha256::digest(token.as_bytes()).into(),
        })
    }

    /// Constant-time check of a presented token (any length).
    pub fn matches(&self, presented: &[u8]) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented).into();
        digest.ct_eq(&self.digest).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "q3Zk9VbX1mR7tY2uW8pL4nC6sD0fG5hJ";

    #[test]
    fn a_random_token_is_accepted_and_matched_exactly() {
        let token = BearerToken::new(GOOD).unwrap();
        assert!(token.matches(GOOD.as_bytes()));
        assert!(!token.matches(&GOOD.as_bytes()[..31]));
        assert!(!token.matches(format!("{GOOD}x").as_bytes()));
        assert_eq!(format!("{token:?}"), "BearerToken([redacted])");
    }

    #[test]
    fn weak_tokens_fail_closed() {
        assert_eq!(BearerToken::new("").unwrap_err(), TokenError::Missing);
        assert_eq!(
            BearerToken::new(&GOOD[..31]).unwrap_err(),
            TokenError::TooShort(31)
        );
        for placeholder in [
            "change-me-change-me-0123456789abcdef",
            "CHANGEME0123456789abcdefghijklmnop",
            "an-example-token-0123456789abcdefgh",
            "placeholder-0123456789abcdefghijklm",
            "your-token-0123456789abcdefghijklmn",
            "<token>0123456789abcdefghijklmnopqr",
        ] {
            assert_eq!(
                BearerToken::new(placeholder).unwrap_err(),
                TokenError::Placeholder,
                "{placeholder}"
            );
        }
        assert_eq!(
            BearerToken::new(&"abcdefghijk".repeat(4)).unwrap_err(),
            TokenError::LowEntropy
        );
    }
}
