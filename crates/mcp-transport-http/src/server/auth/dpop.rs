//! DPoP-bound access tokens at the resource server (RFC 9449 §7, feature `auth-dpop`): the
//! proof of each request checked against the token's `cnf.jkt`, the request, the time and the
//! proofs seen before.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, Method};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use mcp_jsonrpc::sync::MutexExt as _;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// How far a proof's `iat` may be from now, by default.
const DEFAULT_WINDOW: Duration = Duration::from_secs(60);

/// How many proofs the replay cache holds, by default.
const DEFAULT_CAPACITY: usize = 65_536;

/// The longest `jti` taken.
const MAX_JTI: usize = 256;

/// How the endpoint checks DPoP-bound tokens ([`AuthConfig::dpop`](super::AuthConfig::dpop)).
/// A token whose claims have `cnf.jkt` must come as `Authorization: DPoP <token>` with one
/// `DPoP` proof whose key has that thumbprint, for this request's method and URL, `iat` within
/// the window, `ath` the token's hash, and a `jti` not seen within the window; a bearer token
/// (no `cnf`) still comes as `Bearer`. Cloning shares the replay cache.
#[derive(Clone, Debug)]
pub struct DpopConfig {
    window: Duration,
    replay: Arc<ReplayCache>,
}

impl Default for DpopConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl DpopConfig {
    /// Proofs within a minute of now, 65 536 remembered.
    pub fn new() -> Self {
        DpopConfig { window: DEFAULT_WINDOW, replay: Arc::new(ReplayCache::new(DEFAULT_CAPACITY)) }
    }

    /// How far a proof's `iat` may be from now (default 60 s). A proof is remembered for
    /// twice that, so that it cannot be replayed while it is acceptable.
    pub fn window(mut self, window: Duration) -> Self {
        self.window = window;
        self
    }

    /// How many proofs the replay cache holds (default 65 536). When it is full of proofs
    /// still within the window, new proofs are refused until some age out: none is ever
    /// forgotten while it could be replayed.
    pub fn replay_capacity(mut self, capacity: usize) -> Self {
        self.replay = Arc::new(ReplayCache::new(capacity.max(1)));
        self
    }

    /// Checks the proof of a request (`headers`, `method`, `path`, on the resource's origin
    /// `origin`) that carries `token`, bound to the key of thumbprint `jkt`. Why not, else.
    pub(crate) fn check(
        &self,
        headers: &HeaderMap,
        method: &Method,
        origin: &str,
        path: &str,
        token: &str,
        jkt: &str,
    ) -> Result<(), &'static str> {
        let mut proofs = headers.get_all("dpop").iter();
        let (Some(proof), None) = (proofs.next(), proofs.next()) else {
            return Err("one DPoP proof header is required");
        };
        let proof = proof.to_str().map_err(|_| "the DPoP proof is not visible ASCII")?;
        let raw_header = proof.split('.').next().and_then(|h| URL_SAFE_NO_PAD.decode(h).ok());
        let raw_header: Value =
            raw_header.and_then(|h| serde_json::from_slice(&h).ok()).ok_or("the DPoP proof is not a JWT")?;
        if raw_header["typ"] != "dpop+jwt" {
            return Err("the DPoP proof's typ is not dpop+jwt");
        }
        if raw_header["jwk"].get("d").is_some() {
            return Err("the DPoP proof's jwk holds a private key");
        }
        let header = jsonwebtoken::decode_header(proof).map_err(|_| "the DPoP proof is not a JWT")?;
        if matches!(header.alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) {
            return Err("the DPoP proof is not signed with an asymmetric key");
        }
        let jwk: Jwk = header.jwk.ok_or("the DPoP proof has no jwk")?;
        let thumbprint = jwk.thumbprint(ThumbprintHash::SHA256).map_err(|_| "the DPoP proof's jwk is not usable")?;
        if thumbprint != jkt {
            return Err("the DPoP proof's key is not the one the token is bound to");
        }
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| "the DPoP proof's jwk is not usable")?;
        let mut validation = Validation::new(header.alg);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        let claims = jsonwebtoken::decode::<Value>(proof, &key, &validation)
            .map_err(|_| "the DPoP proof's signature does not verify")?
            .claims;
        if claims["htm"].as_str() != Some(method.as_str()) {
            return Err("the DPoP proof is for another method");
        }
        let htu = claims["htu"].as_str().and_then(|u| url::Url::parse(u).ok()).ok_or("the DPoP proof has no htu")?;
        if htu.origin().ascii_serialization() != origin
            || htu.path().trim_end_matches('/') != path.trim_end_matches('/')
        {
            return Err("the DPoP proof is for another URL");
        }
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let iat = claims["iat"].as_u64().ok_or("the DPoP proof has no iat")?;
        if now.abs_diff(iat) > self.window.as_secs() {
            return Err("the DPoP proof is too old or from the future");
        }
        if claims["ath"].as_str() != Some(URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())).as_str()) {
            return Err("the DPoP proof is for another access token");
        }
        let jti = claims["jti"].as_str().filter(|j| !j.is_empty() && j.len() <= MAX_JTI);
        let jti = jti.ok_or("the DPoP proof has no valid jti")?;
        let mut seen = Sha256::new();
        seen.update(jkt.as_bytes());
        seen.update([0]);
        seen.update(jti.as_bytes());
        self.replay.insert(seen.finalize().into(), now, now + 2 * self.window.as_secs())
    }
}

/// The proofs seen (their hash), and the order they came in with when each may be forgotten.
type Seen = (HashSet<[u8; 32]>, VecDeque<([u8; 32], u64)>);

/// The proofs seen, each until it could no longer be accepted; bounded.
#[derive(Debug)]
struct ReplayCache {
    capacity: usize,
    seen: Mutex<Seen>,
}

impl ReplayCache {
    fn new(capacity: usize) -> Self {
        ReplayCache { capacity, seen: Mutex::new((HashSet::new(), VecDeque::new())) }
    }

    /// Remembers a proof until `until`; refused if it was seen, or if the cache is full of
    /// proofs still remembered at `now`.
    fn insert(&self, proof: [u8; 32], now: u64, until: u64) -> Result<(), &'static str> {
        let mut guard = self.seen.lock_unpoisoned();
        let (set, order) = &mut *guard;
        while let Some((old, _)) = order.front().filter(|(_, until)| *until < now) {
            set.remove(old);
            order.pop_front();
        }
        if set.contains(&proof) {
            return Err("the DPoP proof was used before");
        }
        if set.len() >= self.capacity {
            return Err("too many DPoP proofs within the window; try again shortly");
        }
        set.insert(proof);
        order.push_back((proof, until));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replay_cache_forgets_nothing_it_could_be_replayed_with() {
        let cache = ReplayCache::new(2);
        assert!(cache.insert([1; 32], 100, 220).is_ok());
        assert!(cache.insert([1; 32], 101, 221).is_err(), "a replay");
        assert!(cache.insert([2; 32], 102, 222).is_ok());
        // Full of proofs still within their time: refused, nothing evicted.
        assert!(cache.insert([3; 32], 103, 223).is_err());
        assert!(cache.insert([1; 32], 104, 224).is_err(), "still remembered");
        // Once the first has aged out there is room, and it is forgotten.
        assert!(cache.insert([3; 32], 221, 341).is_ok());
        assert!(cache.insert([1; 32], 221, 341).is_err(), "the cache is full again");
        assert_eq!(cache.seen.lock_unpoisoned().0.len(), 2);
    }
}
