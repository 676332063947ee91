//! The verifiers that ask the authorization server over HTTP (features `auth` and `client`,
//! which brings reqwest): [`HttpJwks`], a key set fetched and cached, and
//! [`IntrospectionVerifier`], token introspection (RFC 7662) with a short cache.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::BoxFuture;
use hashbrown::HashMap;
use mcp_jsonrpc::sync::MutexExt as _;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::{JwkSet, JwksSource, Principal, TokenError, TokenVerifier, principal_of};
use crate::client::request::{client_secret_basic, read_bounded};
use bytes::Bytes;

/// Reads a response body of at most `max` bytes.
async fn bounded_body(mut response: reqwest::Response, max: usize) -> Result<Bytes, TokenError> {
    match read_bounded(&mut response, max).await.map_err(unavailable)? {
        Some(body) => Ok(body),
        None => Err(TokenError::Unavailable(format!("the answer is larger than {max} bytes").into())),
    }
}

fn unavailable(error: impl std::error::Error + Send + Sync + 'static) -> TokenError {
    TokenError::Unavailable(Box::new(error))
}

/// The default HTTP client of these verifiers: a 10 s timeout, no redirects.
fn default_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

/// A key set fetched from a URL (the authorization server's `jwks_uri`) and cached: fetched
/// again after the refresh interval (default 10 minutes), or when a token names a key the set
/// lacks (at most once per 30 s, so that tokens with made-up key ids cannot make the server
/// fetch on every request). A failed fetch keeps the keys it had; without any, tokens are
/// answered with 503 ([`TokenError::Unavailable`]). The document is read up to a bound
/// (default 256 KiB).
pub struct HttpJwks {
    url: String,
    client: reqwest::Client,
    refresh_interval: Duration,
    min_refresh: Duration,
    max_bytes: usize,
    cached: tokio::sync::Mutex<Option<(Arc<JwkSet>, Instant)>>,
}

impl std::fmt::Debug for HttpJwks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpJwks")
            .field("url", &self.url)
            .field("refresh_interval", &self.refresh_interval)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

impl HttpJwks {
    /// The key set at `url`, fetched when first needed.
    pub fn new(url: impl Into<String>) -> HttpJwks {
        HttpJwks {
            url: url.into(),
            client: default_client(),
            refresh_interval: Duration::from_secs(600),
            min_refresh: Duration::from_secs(30),
            max_bytes: 256 << 10,
            cached: tokio::sync::Mutex::new(None),
        }
    }
    /// The HTTP client to fetch with (default: a 10 s timeout, no redirects).
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = client;
        self
    }
    /// How long a fetched set is used before it is fetched again (default 10 minutes).
    pub fn refresh_interval(mut self, every: Duration) -> Self {
        self.refresh_interval = every;
        self
    }
    /// The shortest time between two fetches for an unknown key id (default 30 s).
    pub fn min_refresh_interval(mut self, every: Duration) -> Self {
        self.min_refresh = every;
        self
    }
    /// The largest key set document read, in bytes (default 256 KiB).
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    async fn fetch(&self) -> Result<Arc<JwkSet>, TokenError> {
        let response = self.client.get(&self.url).send().await.map_err(unavailable)?;
        let response = response.error_for_status().map_err(unavailable)?;
        let body = bounded_body(response, self.max_bytes).await?;
        serde_json::from_slice::<JwkSet>(&body).map(Arc::new).map_err(unavailable)
    }

    async fn current(&self, refresh: bool) -> Result<Arc<JwkSet>, TokenError> {
        let mut cached = self.cached.lock().await;
        if let Some((set, fetched)) = cached.as_ref() {
            let age = fetched.elapsed();
            if age < self.refresh_interval && !(refresh && age >= self.min_refresh) {
                return Ok(set.clone());
            }
        }
        match self.fetch().await {
            Ok(set) => {
                *cached = Some((set.clone(), Instant::now()));
                Ok(set)
            }
            Err(error) => match cached.as_mut() {
                Some((set, fetched)) => {
                    tracing::warn!(url = %self.url, error = %error, "fetching the key set failed; the keys fetched before are kept");
                    // Try again after the shortest interval, not at once on every token.
                    *fetched = Instant::now() - self.refresh_interval.saturating_sub(self.min_refresh);
                    Ok(set.clone())
                }
                None => Err(error),
            },
        }
    }
}

impl JwksSource for HttpJwks {
    fn keys(&self, refresh: bool) -> BoxFuture<'_, Result<Arc<JwkSet>, TokenError>> {
        Box::pin(self.current(refresh))
    }
}

/// Verifies opaque (or any) access tokens by asking the authorization server's introspection
/// endpoint (RFC 7662), authenticated with client credentials (`client_secret_basic`). A token
/// is valid when the answer is `active`, its `aud` contains the resource (a token without
/// `aud` is refused: it could be for anyone), and its `exp`, if any, is in the future. Answers
/// are cached for a short time (default 60 s, never past the token's `exp`), keyed by the
/// SHA-256 of the token (the token itself is not kept), at most 10,000 of them.
pub struct IntrospectionVerifier {
    endpoint: String,
    client_id: String,
    client_secret: String,
    resource: String,
    client: reqwest::Client,
    cache_ttl: Duration,
    max_cached: usize,
    max_bytes: usize,
    cache: Mutex<HashMap<[u8; 32], (CachedAnswer, Instant)>>,
}

/// What an introspection said of a token.
#[derive(Clone)]
enum CachedAnswer {
    Valid(Arc<Principal>),
    Invalid,
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("resource", &self.resource)
            .field("cache_ttl", &self.cache_ttl)
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// Introspection at `endpoint` as the client `client_id`/`client_secret`, for tokens of
    /// `resource` (the resource URI of [`AuthConfig::new`](super::AuthConfig::new)).
    pub fn new(
        endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        resource: impl Into<String>,
    ) -> IntrospectionVerifier {
        IntrospectionVerifier {
            endpoint: endpoint.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            resource: resource.into(),
            client: default_client(),
            cache_ttl: Duration::from_secs(60),
            max_cached: 10_000,
            max_bytes: 64 << 10,
            cache: Mutex::new(HashMap::new()),
        }
    }
    /// The HTTP client to ask with (default: a 10 s timeout, no redirects).
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = client;
        self
    }
    /// How long an answer is reused (default 60 s; zero: never). A revoked token is accepted
    /// for up to this long.
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl;
        self
    }
    /// The most answers cached (default 10,000).
    pub fn max_cached(mut self, entries: usize) -> Self {
        self.max_cached = entries;
        self
    }

    async fn introspect(&self, token: &str) -> Result<Principal, TokenError> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(answer) = self.cached(&key) {
            return match answer {
                CachedAnswer::Valid(principal) => Ok(Principal::clone(&principal)),
                CachedAnswer::Invalid => Err(TokenError::Invalid("inactive token".to_owned())),
            };
        }
        let form = [("token", token), ("token_type_hint", "access_token")];
        let request = self.client.post(&self.endpoint).header(http::header::ACCEPT, "application/json");
        let request = client_secret_basic(request, &self.client_id, &self.client_secret);
        let response = request.form(&form).send().await.map_err(unavailable)?;
        let response = response.error_for_status().map_err(unavailable)?;
        let body = bounded_body(response, self.max_bytes).await?;
        let answer: Map<String, Value> = serde_json::from_slice(&body).map_err(unavailable)?;
        let verdict = self.judge(answer);
        let ttl = match &verdict {
            Ok(principal) => principal
                .expires_at
                .and_then(|exp| exp.duration_since(SystemTime::now()).ok())
                .map_or(self.cache_ttl, |left| left.min(self.cache_ttl)),
            Err(_) => self.cache_ttl,
        };
        let cached = match &verdict {
            Ok(principal) => Some(CachedAnswer::Valid(Arc::new(principal.clone()))),
            Err(TokenError::Invalid(_)) => Some(CachedAnswer::Invalid),
            Err(_) => None,
        };
        if let Some(answer) = cached {
            self.remember(key, answer, ttl);
        }
        verdict
    }

    /// The principal of an introspection answer, if it says the token is good for us.
    fn judge(&self, answer: Map<String, Value>) -> Result<Principal, TokenError> {
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Err(TokenError::Invalid("inactive token".to_owned()));
        }
        let principal = principal_of(answer);
        if !principal.audience.contains(&self.resource) {
            return Err(TokenError::WrongAudience);
        }
        if principal.expires_at.is_some_and(|exp| exp <= SystemTime::now()) {
            return Err(TokenError::Expired);
        }
        Ok(principal)
    }

    fn cached(&self, key: &[u8; 32]) -> Option<CachedAnswer> {
        let cache = self.cache.lock_unpoisoned();
        let (answer, until) = cache.get(key)?;
        (Instant::now() < *until).then(|| answer.clone())
    }

    fn remember(&self, key: [u8; 32], answer: CachedAnswer, ttl: Duration) {
        if ttl.is_zero() || self.max_cached == 0 {
            return;
        }
        let mut cache = self.cache.lock_unpoisoned();
        if cache.len() >= self.max_cached {
            let now = Instant::now();
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= self.max_cached {
                cache.clear();
            }
        }
        cache.insert(key, (answer, Instant::now() + ttl));
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
        Box::pin(self.introspect(token))
    }
}
