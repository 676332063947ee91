//! DPoP-bound access tokens at the resource server (RFC 9449 §7, feature `auth-dpop`): the
//! proof of each request checked against the token's `cnf.jkt`, the request, the time and the
//! proofs seen before; and, if asked, the nonces the endpoint hands out (§9).

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
///
/// With [`DpopConfig::require_nonce`], proofs must also carry a nonce the endpoint issued
/// (RFC 9449 §9).
#[derive(Clone, Debug)]
pub struct DpopConfig {
    window: Duration,
    replay: Arc<ReplayCache>,
    nonces: Option<Arc<NonceKey>>,
}

/// Why a proof was refused: the proof itself (`invalid_dpop_proof`), or its nonce
/// (`use_dpop_nonce`: the client sends it again with the endpoint's current nonce).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    Proof(&'static str),
    Nonce(&'static str),
}

impl From<&'static str> for Refusal {
    fn from(why: &'static str) -> Self {
        Refusal::Proof(why)
    }
}

impl Default for DpopConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl DpopConfig {
    /// Proofs within a minute of now, 65 536 remembered.
    pub fn new() -> Self {
        DpopConfig { window: DEFAULT_WINDOW, replay: Arc::new(ReplayCache::new(DEFAULT_CAPACITY)), nonces: None }
    }

    /// Requires a nonce the endpoint issued in each proof (RFC 9449 §9). A proof without one,
    /// or with one that is not the endpoint's or is too old, is answered with 401
    /// `WWW-Authenticate: DPoP error="use_dpop_nonce"` and a fresh `DPoP-Nonce`; every answer
    /// of the endpoint carries the current nonce. A nonce is a MAC of the number of the
    /// `period` it was issued in (at least a second) under a random secret of this config
    /// (its clones share it): nothing is stored, and a nonce is accepted in its period and the
    /// next, so between one and two periods. Another config's nonces (or a restarted
    /// process's) are refused; give the instances of a fleet one [`DpopConfig::nonce_secret`].
    pub fn require_nonce(mut self, period: Duration) -> Self {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).expect("the operating system's random number generator failed");
        let period = period.as_secs().max(1);
        self.nonces = Some(Arc::new(NonceKey { secret, period }));
        self
    }

    /// The secret the nonces of [`DpopConfig::require_nonce`] are made with, instead of a
    /// random one (call it after): instances that share it accept each other's nonces.
    pub fn nonce_secret(mut self, secret: [u8; 32]) -> Self {
        if let Some(nonces) = &mut self.nonces {
            *nonces = Arc::new(NonceKey { secret, period: nonces.period });
        }
        self
    }

    /// The nonce the endpoint hands out now, if it requires nonces.
    pub fn nonce(&self) -> Option<String> {
        self.nonce_at(SystemTime::now())
    }

    /// The nonce the endpoint hands out at `at`, if it requires nonces.
    pub fn nonce_at(&self, at: SystemTime) -> Option<String> {
        let key = self.nonces.as_ref()?;
        Some(key.nonce(at.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() / key.period))
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
    ) -> Result<(), Refusal> {
        let mut proofs = headers.get_all("dpop").iter();
        let (Some(proof), None) = (proofs.next(), proofs.next()) else {
            return Err(Refusal::Proof("one DPoP proof header is required"));
        };
        let proof = proof.to_str().map_err(|_| "the DPoP proof is not visible ASCII")?;
        let raw_header = proof.split('.').next().and_then(|h| URL_SAFE_NO_PAD.decode(h).ok());
        let raw_header: Value =
            raw_header.and_then(|h| serde_json::from_slice(&h).ok()).ok_or("the DPoP proof is not a JWT")?;
        if raw_header["typ"] != "dpop+jwt" {
            return Err(Refusal::Proof("the DPoP proof's typ is not dpop+jwt"));
        }
        if raw_header["jwk"].get("d").is_some() {
            return Err(Refusal::Proof("the DPoP proof's jwk holds a private key"));
        }
        let header = jsonwebtoken::decode_header(proof).map_err(|_| "the DPoP proof is not a JWT")?;
        if matches!(header.alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) {
            return Err(Refusal::Proof("the DPoP proof is not signed with an asymmetric key"));
        }
        let jwk: Jwk = header.jwk.ok_or("the DPoP proof has no jwk")?;
        let thumbprint = jwk.thumbprint(ThumbprintHash::SHA256).map_err(|_| "the DPoP proof's jwk is not usable")?;
        if thumbprint != jkt {
            return Err(Refusal::Proof("the DPoP proof's key is not the one the token is bound to"));
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
            return Err(Refusal::Proof("the DPoP proof is for another method"));
        }
        let htu = claims["htu"].as_str().and_then(|u| url::Url::parse(u).ok()).ok_or("the DPoP proof has no htu")?;
        if htu.origin().ascii_serialization() != origin
            || htu.path().trim_end_matches('/') != path.trim_end_matches('/')
        {
            return Err(Refusal::Proof("the DPoP proof is for another URL"));
        }
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let iat = claims["iat"].as_u64().ok_or("the DPoP proof has no iat")?;
        if now.abs_diff(iat) > self.window.as_secs() {
            return Err(Refusal::Proof("the DPoP proof is too old or from the future"));
        }
        if claims["ath"].as_str() != Some(URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())).as_str()) {
            return Err(Refusal::Proof("the DPoP proof is for another access token"));
        }
        if let Some(nonces) = &self.nonces {
            match claims["nonce"].as_str() {
                None => return Err(Refusal::Nonce("the DPoP proof must carry the server's nonce")),
                Some(nonce) if !nonces.accepts(nonce, now) => {
                    return Err(Refusal::Nonce("the DPoP proof's nonce is not the server's current one"));
                }
                Some(_) => {}
            }
        }
        let jti = claims["jti"].as_str().filter(|j| !j.is_empty() && j.len() <= MAX_JTI);
        let jti = jti.ok_or("the DPoP proof has no valid jti")?;
        let mut seen = Sha256::new();
        seen.update(jkt.as_bytes());
        seen.update([0]);
        seen.update(jti.as_bytes());
        Ok(self.replay.insert(seen.finalize().into(), now, now + 2 * self.window.as_secs())?)
    }
}

/// The secret and period of an endpoint's nonces.
struct NonceKey {
    secret: [u8; 32],
    /// Seconds.
    period: u64,
}

impl std::fmt::Debug for NonceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NonceKey").field("period", &self.period).finish_non_exhaustive()
    }
}

/// The bytes of a nonce's MAC kept.
const NONCE_MAC: usize = 16;

impl NonceKey {
    /// The MAC of period `number`, to finish.
    fn mac(&self, number: u64) -> hmac::Hmac<Sha256> {
        use hmac::Mac as _;
        let mut mac = hmac::Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC takes keys of any length");
        mac.update(b"dpop-nonce");
        mac.update(&number.to_be_bytes());
        mac
    }

    /// The nonce of period `number`: the number and its MAC, base64url.
    fn nonce(&self, number: u64) -> String {
        use hmac::Mac as _;
        let full = self.mac(number).finalize().into_bytes();
        let mut bytes = [0u8; 8 + NONCE_MAC];
        bytes[..8].copy_from_slice(&number.to_be_bytes());
        bytes[8..].copy_from_slice(&full[..NONCE_MAC]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// Whether `nonce` is this key's, of the period of `now` or the one before.
    fn accepts(&self, nonce: &str, now: u64) -> bool {
        let Ok(bytes) = URL_SAFE_NO_PAD.decode(nonce) else { return false };
        let Ok(bytes) = <[u8; 8 + NONCE_MAC]>::try_from(bytes.as_slice()) else { return false };
        let number = u64::from_be_bytes(bytes[..8].try_into().expect("eight bytes"));
        let current = now / self.period;
        if number != current && number.checked_add(1) != Some(current) {
            return false;
        }
        use hmac::Mac as _;
        // In constant time.
        self.mac(number).verify_truncated_left(&bytes[8..]).is_ok()
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
    fn a_nonce_is_accepted_in_its_period_and_the_next_only_and_by_its_key_only() {
        let key = NonceKey { secret: [7; 32], period: 60 };
        let other = NonceKey { secret: [8; 32], period: 60 };
        let now = 6_000_030;
        let current = key.nonce(now / 60);
        assert!(key.accepts(&current, now));
        assert!(key.accepts(&current, now + 60), "the next period");
        assert!(!key.accepts(&current, now + 120), "two periods on");
        assert!(!key.accepts(&key.nonce(now / 60 + 1), now), "from the future");
        assert!(!other.accepts(&current, now), "another key's");
        let bytes = URL_SAFE_NO_PAD.decode(&current).unwrap();
        let mut earlier = bytes.clone();
        earlier[..8].copy_from_slice(&(now / 60 - 1).to_be_bytes());
        assert!(!key.accepts(&URL_SAFE_NO_PAD.encode(&earlier), now), "another period under the same MAC");
        let mut tampered = bytes;
        tampered[20] ^= 1;
        assert!(!key.accepts(&URL_SAFE_NO_PAD.encode(&tampered), now), "a MAC changed");
        for garbage in ["", "x", "%%%", &current[..10]] {
            assert!(!key.accepts(garbage, now), "{garbage:?}");
        }
    }

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
