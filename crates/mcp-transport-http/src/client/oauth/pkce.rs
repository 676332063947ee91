//! PKCE (RFC 7636) with S256, and the random `state`.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// 32 random bytes, base64url: 43 characters of the unreserved set.
pub(crate) fn random_token() -> String {
    let mut bytes = [0u8; 32];
    // The OS's generator does not fail on the platforms tokio supports; if it ever did, a
    // flow with a guessable verifier must not start.
    getrandom::fill(&mut bytes).expect("the operating system's random number generator failed");
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Whether `a` and `b` are equal, in a time that depends on their lengths only (a `state`
/// compared with the one sent must not tell how much of it a guess got right).
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    std::hint::black_box(a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y))) == 0
}

/// A verifier and its S256 challenge.
pub(crate) struct Pkce {
    pub(crate) verifier: String,
    pub(crate) challenge: String,
}

impl Pkce {
    pub(crate) fn new() -> Self {
        let verifier = random_token();
        let challenge = challenge_of(&verifier);
        Pkce { verifier, challenge }
    }
}

/// `BASE64URL(SHA256(verifier))`.
fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_7636_appendix_b() {
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let p = Pkce::new();
        assert_eq!(p.verifier.len(), 43);
        assert_ne!(Pkce::new().verifier, p.verifier);
    }
}
