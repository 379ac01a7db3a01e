//! The signature check behind `jsonwebtoken`: ring's, the library the
//! HTTPS client (rustls) already links for the IdP's metadata and keys,
//! installed as `jsonwebtoken`'s process-wide provider. A second
//! cryptography stack (RustCrypto's RSA, P-256, P-384 and Ed25519 crates)
//! was most of the 0.5 MB the stripped binary lost when this replaced it.
//!
//! Verification only: this program never signs a token, so the provider's
//! signer and key utilities answer an error. Each algorithm the config may
//! accept maps to ring's verification of it; HMAC is refused here as the
//! config refuses it. RSA keys must have 2,048 to 8,192 bits (ring's
//! bounds; a 1,024-bit key, which RustCrypto would take, is refused as a
//! key that does not fit).

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{Error, ErrorKind};
use jsonwebtoken::jwk::{EllipticCurve, ThumbprintHash};
use jsonwebtoken::signature::{self, Verifier};
use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::signature::{self as ring_signature, RsaParameters, VerificationAlgorithm};

/// RSA moduli ring verifies with: shorter keys are no longer safe.
const RSA_MODULUS_BITS: std::ops::RangeInclusive<usize> = 2048..=8192;

/// `jsonwebtoken`'s provider backed by ring: verification only.
static RING: CryptoProvider = CryptoProvider {
    signer_factory: no_signer,
    verifier_factory: verifier,
    key_utils: KeyUtils {
        rsa_pub_components_from_private_key: |_| Err(signs_nothing()),
        rsa_pub_components_from_public_key: |_| Err(signs_nothing()),
        ec_pub_components_from_private_key: no_ec_components,
        ed_pub_components_from_private_key: no_ed_components,
        compute_digest: digest,
    },
};

/// Makes ring the process's provider: the binary's first step, so every
/// command it runs checks signatures with ring, whatever else was built
/// in. A provider set already stays (it can be set only once).
pub(crate) fn install() {
    let _ = CryptoProvider::install_default(&RING);
}

/// Makes ring the provider when there is none yet: the resource server's
/// safety net for whoever builds one without [`install`]. The tests, whose
/// build also has RustCrypto's provider (they sign tokens with it), keep
/// that one in their own process; both verify the tests' keys alike
/// (`tests/oauth/signatures.rs` checks the binary's, which is ring).
pub(super) fn install_if_none() {
    if CryptoProvider::try_get_default().is_none() {
        install();
    }
}

/// What checks one algorithm's signatures.
#[derive(Clone, Copy)]
enum Scheme {
    /// RSA, which ring also checks from a JWK's modulus and exponent.
    Rsa(&'static RsaParameters),
    Other(&'static dyn VerificationAlgorithm),
}

impl Scheme {
    /// ring's algorithm for a key in the form it reads itself.
    fn algorithm(self) -> &'static dyn VerificationAlgorithm {
        match self {
            Scheme::Rsa(parameters) => parameters,
            Scheme::Other(algorithm) => algorithm,
        }
    }
}

/// The verifier for `algorithm` with `key`: an error for HMAC, for a key
/// of another family, or for an RSA modulus outside ring's bounds.
fn verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>, Error> {
    use ring_signature as r;
    let scheme = match algorithm {
        Algorithm::RS256 => Scheme::Rsa(&r::RSA_PKCS1_2048_8192_SHA256),
        Algorithm::RS384 => Scheme::Rsa(&r::RSA_PKCS1_2048_8192_SHA384),
        Algorithm::RS512 => Scheme::Rsa(&r::RSA_PKCS1_2048_8192_SHA512),
        Algorithm::PS256 => Scheme::Rsa(&r::RSA_PSS_2048_8192_SHA256),
        Algorithm::PS384 => Scheme::Rsa(&r::RSA_PSS_2048_8192_SHA384),
        Algorithm::PS512 => Scheme::Rsa(&r::RSA_PSS_2048_8192_SHA512),
        Algorithm::ES256 => Scheme::Other(&r::ECDSA_P256_SHA256_FIXED),
        Algorithm::ES384 => Scheme::Other(&r::ECDSA_P384_SHA384_FIXED),
        Algorithm::EdDSA => Scheme::Other(&r::ED25519),
        // HMAC, and any algorithm a later jsonwebtoken adds.
        _ => return Err(ErrorKind::InvalidAlgorithm.into()),
    };
    if key.family() != algorithm.family() {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    let check = match (scheme, key.kind()) {
        (Scheme::Rsa(parameters), DecodingKeyKind::RsaModulusExponent { n, e }) => {
            let bits = significant_bits(n);
            if !RSA_MODULUS_BITS.contains(&bits) {
                return Err(ErrorKind::InvalidRsaKey(format!(
                    "a {bits}-bit modulus ({} to {} are accepted)",
                    RSA_MODULUS_BITS.start(),
                    RSA_MODULUS_BITS.end()
                ))
                .into());
            }
            Check::RsaParts {
                parameters,
                n: n.clone(),
                e: e.clone(),
            }
        }
        (scheme, DecodingKeyKind::SecretOrDer(bytes)) => Check::Unparsed(
            ring_signature::UnparsedPublicKey::new(scheme.algorithm(), bytes.clone()),
        ),
        (Scheme::Other(_), DecodingKeyKind::RsaModulusExponent { .. }) => {
            return Err(ErrorKind::InvalidKeyFormat.into());
        }
    };
    Ok(Box::new(RingVerifier {
        algorithm: *algorithm,
        check,
    }))
}

/// Bits of a big-endian unsigned number, leading zeros left out.
fn significant_bits(number: &[u8]) -> usize {
    match number.iter().position(|&b| b != 0) {
        Some(first) => (number.len() - first) * 8 - number[first].leading_zeros() as usize,
        None => 0,
    }
}

/// A key as ring checks it.
enum Check {
    /// RSA from its modulus and exponent (a JWK).
    RsaParts {
        parameters: &'static RsaParameters,
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// Any other key, in the form ring reads: an RSA public key's DER, an
    /// uncompressed EC point, an Ed25519 public key.
    Unparsed(ring_signature::UnparsedPublicKey<Vec<u8>>),
}

struct RingVerifier {
    algorithm: Algorithm,
    check: Check,
}

impl Verifier<Vec<u8>> for RingVerifier {
    fn verify(&self, message: &[u8], signature: &Vec<u8>) -> Result<(), signature::Error> {
        let verified = match &self.check {
            Check::RsaParts { parameters, n, e } => ring_signature::RsaPublicKeyComponents { n, e }
                .verify(parameters, message, signature),
            Check::Unparsed(key) => key.verify(message, signature),
        };
        verified.map_err(|_| signature::Error::new())
    }
}

impl JwtVerifier for RingVerifier {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

fn signs_nothing() -> Error {
    ErrorKind::Provider("this program verifies tokens and never signs one".to_owned()).into()
}

fn no_signer(_: &Algorithm, _: &EncodingKey) -> Result<Box<dyn JwtSigner>, Error> {
    Err(signs_nothing())
}

fn no_ec_components(_: &[u8], _: Algorithm) -> Result<(EllipticCurve, Vec<u8>, Vec<u8>), Error> {
    Err(signs_nothing())
}

fn no_ed_components(_: &[u8], _: &EllipticCurve) -> Result<Vec<u8>, Error> {
    Err(signs_nothing())
}

/// A JWK thumbprint's digest.
fn digest(data: &[u8], hash: ThumbprintHash) -> Result<Vec<u8>, Error> {
    let algorithm = match hash {
        ThumbprintHash::SHA256 => &ring::digest::SHA256,
        ThumbprintHash::SHA384 => &ring::digest::SHA384,
        ThumbprintHash::SHA512 => &ring::digest::SHA512,
        _ => return Err(ErrorKind::UnsupportedAlgorithm.into()),
    };
    Ok(ring::digest::digest(algorithm, data).as_ref().to_vec())
}

#[cfg(test)]
mod tests {
    //! ring's checks against tokens another implementation signed
    //! (RustCrypto's, through `jsonwebtoken`'s own provider, which the tests
    //! build with): every accepted algorithm verifies its own signature,
    //! and refuses a changed message, a changed signature and a key of
    //! another kind; HMAC is refused outright, and so are RSA keys under
    //! 2,048 bits.

    use jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER as RUST_CRYPTO;
    use ring::rand::SystemRandom;
    use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair};

    use super::*;

    /// A 2,048-bit RSA key made for these tests alone (PKCS#1).
    const RSA_2048: &str = include_str!("testdata/rsa-2048.pem");
    /// A 1,024-bit RSA key made for these tests alone (PKCS#1).
    const RSA_1024: &str = include_str!("testdata/rsa-1024.pem");

    const MESSAGE: &[u8] = b"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjb29yZGluYXRvciJ9";

    fn sign(algorithm: Algorithm, key: &EncodingKey, message: &[u8]) -> Vec<u8> {
        (RUST_CRYPTO.signer_factory)(&algorithm, key)
            .unwrap()
            .try_sign(message)
            .unwrap()
    }

    /// The public half of a PKCS#1 RSA key, as a JWK would give it.
    fn rsa_public(pem: &str) -> DecodingKey {
        let private = EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap();
        let (n, e) =
            (RUST_CRYPTO.key_utils.rsa_pub_components_from_private_key)(private.as_bytes())
                .unwrap();
        DecodingKey::from_rsa_raw_components(&n, &e)
    }

    fn checks(algorithm: Algorithm, key: &DecodingKey, message: &[u8], signature: &[u8]) -> bool {
        verifier(&algorithm, key)
            .unwrap()
            .verify(message, &signature.to_vec())
            .is_ok()
    }

    /// Verifies its own signature; refuses one bit changed in the message
    /// or in the signature.
    fn holds(algorithm: Algorithm, key: &DecodingKey, signature: &[u8]) {
        assert!(checks(algorithm, key, MESSAGE, signature), "{algorithm:?}");
        let mut message = MESSAGE.to_vec();
        message[10] ^= 1;
        assert!(
            !checks(algorithm, key, &message, signature),
            "{algorithm:?}"
        );
        let mut forged = signature.to_vec();
        forged[signature.len() / 2] ^= 1;
        assert!(!checks(algorithm, key, MESSAGE, &forged), "{algorithm:?}");
    }

    #[test]
    fn rsa_signatures_of_every_rsa_algorithm_verify_and_forgeries_do_not() {
        let private = EncodingKey::from_rsa_pem(RSA_2048.as_bytes()).unwrap();
        let public = rsa_public(RSA_2048);
        for algorithm in [
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ] {
            holds(algorithm, &public, &sign(algorithm, &private, MESSAGE));
        }
        // RS256's signature is no PS256 signature, nor RS384's.
        let rs256 = sign(Algorithm::RS256, &private, MESSAGE);
        assert!(!checks(Algorithm::PS256, &public, MESSAGE, &rs256));
        assert!(!checks(Algorithm::RS384, &public, MESSAGE, &rs256));
    }

    #[test]
    fn ec_and_ed25519_signatures_verify_and_forgeries_do_not() {
        let random = SystemRandom::new();
        for (algorithm, ring_algorithm) in [
            (
                Algorithm::ES256,
                &ring_signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            ),
            (
                Algorithm::ES384,
                &ring_signature::ECDSA_P384_SHA384_FIXED_SIGNING,
            ),
        ] {
            let pkcs8 = EcdsaKeyPair::generate_pkcs8(ring_algorithm, &random).unwrap();
            let pair = EcdsaKeyPair::from_pkcs8(ring_algorithm, pkcs8.as_ref(), &random).unwrap();
            let point = pair.public_key().as_ref();
            let half = (point.len() - 1) / 2;
            let public = DecodingKey::from_ec_components(
                &base64_url(&point[1..=half]),
                &base64_url(&point[1 + half..]),
            )
            .unwrap();
            let private = EncodingKey::from_ec_der(pkcs8.as_ref());
            holds(algorithm, &public, &sign(algorithm, &private, MESSAGE));
        }
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&random).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let public =
            DecodingKey::from_ed_components(&base64_url(pair.public_key().as_ref())).unwrap();
        let private = EncodingKey::from_ed_der(pkcs8.as_ref());
        holds(
            Algorithm::EdDSA,
            &public,
            &sign(Algorithm::EdDSA, &private, MESSAGE),
        );
    }

    #[test]
    fn hmac_a_key_of_another_family_and_a_short_rsa_key_are_refused() {
        let secret = DecodingKey::from_secret(b"a shared secret anyone could mint with").unwrap();
        for algorithm in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
            let refused = verifier(&algorithm, &secret).err().unwrap();
            assert_eq!(refused.kind(), &ErrorKind::InvalidAlgorithm);
        }
        let rsa = rsa_public(RSA_2048);
        let refused = verifier(&Algorithm::ES256, &rsa).err().unwrap();
        assert_eq!(refused.kind(), &ErrorKind::InvalidKeyFormat);
        let short = rsa_public(RSA_1024);
        let refused = verifier(&Algorithm::RS256, &short).err().unwrap();
        assert!(
            matches!(refused.kind(), ErrorKind::InvalidRsaKey(why) if why.contains("1024-bit")),
            "{refused:?}"
        );
    }

    #[test]
    fn the_provider_signs_nothing() {
        let private = EncodingKey::from_rsa_pem(RSA_2048.as_bytes()).unwrap();
        let refused = (RING.signer_factory)(&Algorithm::RS256, &private)
            .err()
            .unwrap();
        assert!(matches!(refused.kind(), ErrorKind::Provider(_)));
    }

    #[test]
    fn bits_are_counted_without_leading_zeros() {
        assert_eq!(significant_bits(&[]), 0);
        assert_eq!(significant_bits(&[0, 0]), 0);
        assert_eq!(significant_bits(&[0, 1]), 1);
        assert_eq!(significant_bits(&[0x80, 0]), 16);
        assert_eq!(significant_bits(&[0, 0x7f, 0xff]), 15);
    }

    fn base64_url(bytes: &[u8]) -> String {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }
}
