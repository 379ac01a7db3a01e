//! The bearer token: read only from `HERDR_MCP_TOKEN`, refused when it is
//! short or looks like a placeholder, kept only as a SHA-256 digest, never
//! printed, and compared in constant time over fixed-length digests.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The only place the token comes from.
pub(crate) const TOKEN_ENV: &str = "HERDR_MCP_TOKEN";
/// The optional token for the read tools only (same strength rules).
pub(crate) const READ_TOKEN_ENV: &str = "HERDR_MCP_READ_TOKEN";
/// Shortest token accepted: 32 bytes, what `openssl rand -base64 32` gives before encoding.
pub(crate) const MIN_TOKEN_BYTES: usize = 32;
/// Fewer distinct characters than this is a repeated or typed value, not a
/// random one (32 random bytes in hex or base64 practically always have more).
pub(crate) const MIN_DISTINCT_CHARS: usize = 12;
/// A run of this many consecutive characters (`abcdefgh`, `12345678`,
/// `hgfedcba`) is typed, not drawn.
const MAX_RUN: usize = 8;
/// Shannon entropy per character below this is not random (random hex has
/// about 3.8 bits, base64 about 4.9).
const MIN_ENTROPY_BITS: f64 = 3.0;
/// Substrings that mark a copied example rather than a generated secret,
/// matched after lower-casing and removing `-`, `_`, `.` and spaces. Each is
/// 6 characters or more (or an angle bracket, which neither hex nor base64
/// has), so a random token practically never contains one.
const PLACEHOLDER_MARKERS: [&str; 10] = [
    "changeme",
    "example",
    "placeholder",
    "yourtoken",
    "replaceme",
    "tokenhere",
    "secret",
    "xxxxxx",
    "<",
    ">",
];

/// Why `HERDR_MCP_TOKEN` was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// It is not set, or empty.
    #[error(
        "{TOKEN_ENV} is not set; the HTTP transport needs a bearer token: export {TOKEN_ENV}=\"$(openssl rand -base64 32)\""
    )]
    Missing,
    /// It is not valid UTF-8.
    #[error("{TOKEN_ENV} is not valid UTF-8; generate one with: openssl rand -base64 32")]
    NotUtf8,
    /// It has fewer than [`MIN_TOKEN_BYTES`] bytes (its length).
    #[error(
        "{TOKEN_ENV} is {0} bytes; at least 32 are required: generate one with openssl rand -base64 32"
    )]
    TooShort(usize),
    /// It holds a marker of a copied example (`changeme`, `example`, ...).
    #[error(
        "{TOKEN_ENV} looks like a placeholder, not a secret: generate one with openssl rand -base64 32"
    )]
    Placeholder,
    /// It is not random (which test it failed).
    #[error("{TOKEN_ENV} is not random ({0}): generate one with openssl rand -base64 32")]
    LowEntropy(&'static str),
}

impl TokenError {
    /// The problem in a few words, without the variable's name.
    fn problem(&self) -> String {
        match self {
            TokenError::Missing => "it is empty".to_owned(),
            TokenError::NotUtf8 => "it is not valid UTF-8".to_owned(),
            TokenError::TooShort(n) => format!("it is {n} bytes; at least 32 are required"),
            TokenError::Placeholder => "it looks like a placeholder, not a secret".to_owned(),
            TokenError::LowEntropy(why) => format!("it is not random ({why})"),
        }
    }
}

/// Why `HERDR_MCP_READ_TOKEN` was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadTokenError {
    /// It breaks a rule `HERDR_MCP_TOKEN` is held to (which, in a few words).
    #[error(
        "{READ_TOKEN_ENV} is refused: {0}: generate one with openssl rand -base64 32, or unset it"
    )]
    Weak(String),
    /// It equals `HERDR_MCP_TOKEN`.
    #[error(
        "{READ_TOKEN_ENV} equals {TOKEN_ENV}, so readers could send: give it its own value (openssl rand -base64 32)"
    )]
    Same,
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
    /// `HERDR_MCP_TOKEN`, validated.
    pub fn from_env() -> Result<BearerToken, TokenError> {
        match std::env::var(TOKEN_ENV) {
            Ok(value) => BearerToken::new(&value),
            Err(std::env::VarError::NotPresent) => Err(TokenError::Missing),
            Err(std::env::VarError::NotUnicode(_)) => Err(TokenError::NotUtf8),
        }
    }

    /// `HERDR_MCP_READ_TOKEN`, when it is set: held to the same rules, and
    /// different from `full`.
    pub fn read_from_env(full: &BearerToken) -> Result<Option<BearerToken>, ReadTokenError> {
        let value = match std::env::var(READ_TOKEN_ENV) {
            Ok(value) => value,
            Err(std::env::VarError::NotPresent) => return Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(ReadTokenError::Weak(TokenError::NotUtf8.problem()));
            }
        };
        let read = BearerToken::new(&value).map_err(|e| ReadTokenError::Weak(e.problem()))?;
        if read.digest == full.digest {
            return Err(ReadTokenError::Same);
        }
        Ok(Some(read))
    }

    /// `token`, when it is strong enough: at least [`MIN_TOKEN_BYTES`] bytes,
    /// no placeholder, and random-looking.
    pub fn new(token: &str) -> Result<BearerToken, TokenError> {
        if token.is_empty() {
            return Err(TokenError::Missing);
        }
        if token.len() < MIN_TOKEN_BYTES {
            return Err(TokenError::TooShort(token.len()));
        }
        let normal: String = token
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
            .flat_map(char::to_lowercase)
            .collect();
        if PLACEHOLDER_MARKERS.iter().any(|m| normal.contains(m)) {
            return Err(TokenError::Placeholder);
        }
        if longest_run(&normal) >= MAX_RUN {
            return Err(TokenError::LowEntropy("a run of consecutive characters"));
        }
        let mut distinct: Vec<char> = token.chars().collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() < MIN_DISTINCT_CHARS {
            return Err(TokenError::LowEntropy("fewer than 12 distinct characters"));
        }
        if entropy_bits(token) < MIN_ENTROPY_BITS {
            return Err(TokenError::LowEntropy(
                "under 3 bits of entropy per character",
            ));
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

/// The longest run of characters whose code points go up (or down) by one
/// each step.
fn longest_run(text: &str) -> usize {
    let codes: Vec<i64> = text.chars().map(|c| i64::from(u32::from(c))).collect();
    let mut longest = usize::from(!codes.is_empty());
    for step in [1, -1] {
        let mut run = 1;
        for pair in codes.windows(2) {
            run = if pair[1] - pair[0] == step {
                run + 1
            } else {
                1
            };
            longest = longest.max(run);
        }
    }
    longest
}

/// Shannon entropy of the character distribution, in bits per character.
fn entropy_bits(text: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in text.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let total = text.chars().count() as f64;
    counts
        .values()
        .map(|&n| {
            let p = n as f64 / total;
            -p * p.log2()
        })
        .sum()
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
            "your_token_here_7f3a9c2e1b5d8f4a6c0e",
            "REPLACE_ME_WITH_A_RANDOM_TOKEN_9f8e7d6c",
            "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx",
            "PUT-YOUR-SECRET-TOKEN-GOES-HERE-2a9f4c1e",
            "my.Secret.Value.For.The.Server.Q7z",
            "Your Token Here 1f9e2d8c3b7a4e6f5d0c",
        ] {
            assert_eq!(
                BearerToken::new(placeholder).unwrap_err(),
                TokenError::Placeholder,
                "{placeholder}"
            );
        }
        for typed in [
            "abcdefghijklmnopqrstuvwxyz012345",
            "Zq8vN2xR5tB7wK1m12345678P4sD9fH3",
            "Zq8vN2xR5tB7wK1mzyxwvutsP4sD9fH3",
            &"abcdefghijk".repeat(4),
            "aaaaaaaabbbbbbbbccccccccdddddddd0123456789ab",
        ] {
            assert!(
                matches!(BearerToken::new(typed), Err(TokenError::LowEntropy(_))),
                "{typed}: {:?}",
                BearerToken::new(typed)
            );
        }
    }

    /// The bytes `openssl rand 32` would give, from a fixed seed so the
    /// test is the same every run.
    fn random_bytes(seed: u64) -> [u8; 32] {
        Sha256::digest(seed.to_le_bytes()).into()
    }

    #[test]
    fn generated_tokens_pass_hex_and_base64_alike() {
        use base64::Engine;
        for seed in 0..10_000 {
            let bytes = random_bytes(seed);
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
            for token in [hex, b64] {
                assert!(
                    BearerToken::new(&token).is_ok(),
                    "{token}: {:?}",
                    BearerToken::new(&token)
                );
            }
        }
    }

    #[test]
    fn runs_and_entropy_measure_what_they_say() {
        assert_eq!(longest_run("xabcdy"), 4);
        assert_eq!(longest_run("98765"), 5);
        assert_eq!(longest_run("a"), 1);
        assert!((entropy_bits("abab") - 1.0).abs() < 1e-9);
        assert!((entropy_bits("abcd") - 2.0).abs() < 1e-9);
    }
}
