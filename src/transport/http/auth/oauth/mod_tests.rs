//! Unit tests of the resource server's own helpers.

use super::*;

#[test]
fn only_compact_jws_is_taken_for_a_jwt() {
    assert!(is_jws_shaped("eyJh.eyJz.c2ln"));
    assert!(
        !is_jws_shaped("eyJh.eyJz.c2ln.aXY.dGFn"),
        "a JWE has five parts"
    );
    assert!(!is_jws_shaped("opaque-token-value"));
    assert!(!is_jws_shaped("eyJh.eyJz.c2l+"), "not base64url");
}
