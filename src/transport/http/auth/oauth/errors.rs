//! Why a token was refused ([`Rejection`], mapped from `jsonwebtoken`'s
//! errors by [`rejection`]), and why the issuer's keys could not be learnt
//! ([`KeysError`]). Each says what happened, never a token or a claim.

use super::fetch::FetchError;

/// Why a token was refused: the log line says this, never the token or a
/// claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// It is longer than [`MAX_TOKEN_BYTES`](super::MAX_TOKEN_BYTES) bytes.
    #[error("the token is over 8 KiB")]
    TooLong,
    /// It is not shaped like a JWS, and no introspection is configured.
    #[error("the token is not a JWS (three base64url parts) and no introspection is configured")]
    NotJws,
    /// Its JOSE header does not decode, or is a JWE's (`enc`).
    #[error(
        "the token's header cannot be read, or names an algorithm that is never accepted (none, or an encrypted JWE)"
    )]
    Header,
    /// Its `alg` is not one of `http.auth.algorithms`.
    #[error("the token's algorithm is not in http.auth.algorithms")]
    Algorithm,
    /// It has a `typ` other than `at+jwt`.
    #[error("the token's typ is not at+jwt")]
    Type,
    /// Its header has `crit`.
    #[error("the token has a crit header this server does not understand")]
    Critical,
    /// Its header has no `kid`.
    #[error("the token names no kid")]
    NoKid,
    /// No key set of the issuer has been fetched yet.
    #[error("the issuer's keys are not known yet (the IdP has not answered)")]
    KeysNotKnown,
    /// No key of the issuer's key set has its `kid`.
    #[error("the token's kid is not in the issuer's key set")]
    UnknownKid,
    /// The key its `kid` names is for another algorithm, or unusable.
    #[error("the token's algorithm does not match its key")]
    KeyMismatch,
    /// Its signature does not verify.
    #[error("the token's signature does not verify")]
    Signature,
    /// Its `iss` is not `http.auth.issuer`.
    #[error("the token's iss is not the configured issuer")]
    Issuer,
    /// No `aud` of it is in `http.auth.audience`.
    #[error("the token's aud does not name this resource (a token for another resource)")]
    Audience,
    /// Its `exp` has passed, beyond the clock skew.
    #[error("the token has expired")]
    Expired,
    /// Its `nbf` is ahead, beyond the clock skew.
    #[error("the token is not valid yet (nbf)")]
    NotYetValid,
    /// Its `iat` is ahead, beyond the clock skew.
    #[error("the token was issued in the future (iat)")]
    IssuedInFuture,
    /// A JWT without `exp`, `iss` or `aud`.
    #[error("the token lacks a required claim (exp, iss or aud)")]
    MissingClaim,
    /// Its claims, or an introspection answer's, cannot be read as the
    /// expected types.
    #[error("the token's claims cannot be read")]
    Claims,
    /// Introspection answered that it is not `active`.
    #[error("introspection says the token is not active")]
    Inactive,
    /// The introspection request failed.
    #[error("introspection failed (the IdP did not answer)")]
    IntrospectionFailed,
    /// Two keys of the issuer's key set have its `kid`.
    #[error("two keys of the issuer's key set carry the token's kid, so it names no key")]
    AmbiguousKid,
    /// Its peer passed its introspection rate ([`PER_PEER_PER_SECOND`](super::PER_PEER_PER_SECOND) a
    /// second).
    #[error(
        "too many unverified opaque tokens from this address: each costs the IdP a round trip; retry in a second"
    )]
    IntrospectionRateLimited,
    /// [`MAX_INTROSPECTIONS`](super::MAX_INTROSPECTIONS) introspections are already under way.
    #[error("the IdP is asked about as many opaque tokens as it may be at once; retry in a second")]
    IntrospectionBusy,
    /// Only the IdP can check it (introspection, or a refetch of the keys),
    /// and the connection may not wait on it ([`Reach::LocalOnly`](super::Reach::LocalOnly)).
    #[error(
        "connections are crowded, and this token can be checked only by asking the IdP; retry in a second"
    )]
    NeedsIdp,
}

impl Rejection {
    /// A refusal that says nothing of the token, only that it could not be
    /// checked now: answered 429 or 503 with `Retry-After`, not 401, so a
    /// client keeps its token and retries.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            Rejection::IntrospectionRateLimited
                | Rejection::IntrospectionBusy
                | Rejection::NeedsIdp
        )
    }
}

/// Why the issuer's keys could not be learnt (discovery, then the key
/// set); each message says what to fix at the IdP or in `http.auth`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeysError {
    /// `http.auth.issuer` is not a URL.
    #[error("issuer {issuer:?} is not a URL: {source}")]
    IssuerNotUrl {
        /// The configured issuer.
        issuer: String,
        /// Why it does not parse.
        #[source]
        source: url::ParseError,
    },
    /// Neither metadata location (RFC 8414, OpenID discovery) answered.
    #[error(
        "no metadata for issuer {issuer}: {tried}; check that the identity provider runs and that http.auth.issuer is exactly its issuer URL"
    )]
    NoMetadata {
        /// The configured issuer, escaped.
        issuer: String,
        /// Each location tried, and what it answered.
        tried: String,
    },
    /// The metadata names another issuer.
    #[error(
        "the metadata at {url} names issuer {named}, not the configured {issuer}: set http.auth.issuer to exactly the issuer your IdP reports"
    )]
    IssuerMismatch {
        /// Where the metadata was read.
        url: String,
        /// The issuer it names, escaped (`(none)` when absent).
        named: String,
        /// The configured issuer, escaped.
        issuer: String,
    },
    /// The metadata has no `jwks_uri`.
    #[error("the metadata at {url} has no jwks_uri: set http.auth.jwksUri")]
    NoJwksUri {
        /// Where the metadata was read.
        url: String,
    },
    /// The metadata's `jwks_uri` is not a URL.
    #[error("the metadata at {url} has an unusable jwks_uri ({source})")]
    BadJwksUri {
        /// Where the metadata was read.
        url: String,
        /// Why it does not parse.
        #[source]
        source: url::ParseError,
    },
    /// The metadata's `jwks_uri` is plain http to another host.
    #[error("the metadata at {url} names a jwks_uri that is not https: {jwks_uri}")]
    JwksNotHttps {
        /// Where the metadata was read.
        url: String,
        /// The key set's location it names.
        jwks_uri: String,
    },
    /// The key set could not be fetched.
    #[error("fetching the key set {jwks_uri}: {source}")]
    Fetch {
        /// The key set's location.
        jwks_uri: String,
        /// What the fetch met.
        #[source]
        source: FetchError,
    },
    /// The key set holds no key a token could be checked with.
    #[error(
        "the key set {jwks_uri} has no usable signing key (RSA, EC or OKP with a kid of its own)"
    )]
    NoUsableKey {
        /// The key set's location.
        jwks_uri: String,
    },
}

/// The refusal for a token `jsonwebtoken` would not verify.
pub(super) fn rejection(kind: &jsonwebtoken::errors::ErrorKind) -> Rejection {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::InvalidSignature => Rejection::Signature,
        K::InvalidIssuer => Rejection::Issuer,
        K::InvalidAudience => Rejection::Audience,
        K::ExpiredSignature => Rejection::Expired,
        K::ImmatureSignature => Rejection::NotYetValid,
        K::MissingRequiredClaim(_) => Rejection::MissingClaim,
        K::InvalidAlgorithm | K::InvalidAlgorithmName => Rejection::Algorithm,
        K::InvalidKeyFormat | K::InvalidRsaKey(_) | K::InvalidEcdsaKey | K::InvalidEddsaKey => {
            Rejection::KeyMismatch
        }
        K::Json(_) | K::Base64(_) | K::Utf8(_) => Rejection::Claims,
        _ => Rejection::Signature,
    }
}
