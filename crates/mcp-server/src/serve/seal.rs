//! The sealing of `requestState` (2026-07-28 input-required round trips): HMAC-SHA256 with the
//! server's keys, the first of which seals and every one of which opens (rotation).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

/// The keys that seal `requestState`: the first seals, all open (rotation).
#[derive(Clone)]
pub(crate) struct StateKeys {
    keys: Arc<Vec<Vec<u8>>>,
    pub(crate) ttl: Duration,
}

impl std::fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateKeys").field("keys", &self.keys.len()).field("ttl", &self.ttl).finish()
    }
}

type HmacSha256 = Hmac<Sha256>;

impl StateKeys {
    /// Keys given by the application (the first seals); at least one.
    pub(crate) fn new(keys: Vec<Vec<u8>>, ttl: Duration) -> Self {
        StateKeys { keys: Arc::new(keys), ttl }
    }

    /// A random key of this process: state sealed here opens only here.
    pub(crate) fn random(ttl: Duration) -> Self {
        let mut key = vec![0u8; 32];
        getrandom::fill(&mut key).expect("the OS random number generator failed");
        StateKeys::new(vec![key], ttl)
    }

    fn mac(key: &[u8], data: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
        mac.update(data);
        mac
    }

    /// `v1.0.<payload>.<tag>`: the payload base64url JSON (`aud`, `exp`, `req`, `answers`: see
    /// `InputRounds::outcome` in `serve::stateless`), the tag base64url HMAC-SHA256, with the first key, over
    /// everything before it. The `0` is fixed: [`open`](Self::open) ignores it and tries every
    /// key (rotation), so no key index is written or read.
    pub(crate) fn seal(&self, payload: &Value) -> String {
        let body = format!("v1.0.{}", URL_SAFE_NO_PAD.encode(payload.to_string()));
        let tag = Self::mac(&self.keys[0], body.as_bytes()).finalize().into_bytes();
        format!("{body}.{}", URL_SAFE_NO_PAD.encode(tag))
    }

    pub(crate) fn open(&self, state: &str) -> Option<Value> {
        let (body, tag) = state.rsplit_once('.')?;
        let mut parts = body.splitn(3, '.');
        let (Some("v1"), Some(_index), Some(payload)) = (parts.next(), parts.next(), parts.next()) else {
            return None;
        };
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        // Any of the keys: rotation keeps older keys opening what they sealed.
        self.keys.iter().find(|key| Self::mac(key, body.as_bytes()).verify_slice(&tag).is_ok())?;
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sealed_state_opens_only_with_a_key_that_sealed_it() {
        let old = StateKeys::new(vec![b"old key".to_vec()], Duration::from_secs(60));
        let rotated = StateKeys::new(vec![b"new key".to_vec(), b"old key".to_vec()], Duration::from_secs(60));
        let foreign = StateKeys::new(vec![b"someone else".to_vec()], Duration::from_secs(60));
        let payload = json!({"answers": {"a": 1}});
        let state = old.seal(&payload);
        assert_eq!(old.open(&state), Some(payload.clone()));
        assert_eq!(rotated.open(&state), Some(payload.clone()), "rotation keeps old keys opening");
        assert_eq!(foreign.open(&state), None);
        assert_eq!(old.open(&format!("{state}-TAMPERED")), None);
        let mut bytes = state.clone().into_bytes();
        let i = bytes.len() / 2;
        bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
        assert_eq!(old.open(&String::from_utf8(bytes).unwrap()), None);
        assert_eq!(rotated.open(&rotated.seal(&payload)), Some(payload));
    }
}
