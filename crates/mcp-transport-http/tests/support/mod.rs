//! What the auth tests share: a P-256 key made for them, its public half as a JWKS, the issuer
//! and resource their tokens name.

use std::time::{SystemTime, UNIX_EPOCH};

/// A P-256 key made for these tests only (PKCS #8).
pub const TEST_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQghUFvbYOhF21dai8c
ZDUQa2ryO43NZ260Wm61J5j0ZgehRANCAAQ+0Vgh9G2skW6mmkkoJjiMvcL3jsvF
OHloBujxuf3XPIK/Gw289cdqa3wxYrRvr9hJFOyUl2sx9EqwryJAj/e1
-----END PRIVATE KEY-----
";

/// Its public half as a JWKS.
pub const TEST_JWKS: &str = r#"{"keys": [{"kty": "EC", "crv": "P-256", "kid": "test-key", "use": "sig",
    "x": "PtFYIfRtrJFupppJKCY4jL3C947LxTh5aAbo8bn91zw",
    "y": "gr8bDbz1x2prfDFitG-v2EkU7JSXazH0SrCvIkCP97U"}]}"#;

/// The issuer the tokens name.
pub const ISSUER: &str = "https://auth.example.com";
/// The resource (audience) the tokens are for.
pub const RESOURCE: &str = "https://mcp.example.com/mcp";

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}
