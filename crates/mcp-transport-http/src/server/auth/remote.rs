//! The verifiers that ask the authorization server over HTTP (features `auth` and `client`,
//! which brings reqwest): [`HttpJwks`], a key set fetched and cached, and
//! [`IntrospectionVerifier`], token introspection (RFC 7662) with a short cache.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use futures_util::FutureExt as _;
use futures_util::future::{BoxFuture, Shared};
use hashbrown::HashMap;
use mcp_jsonrpc::sync::MutexExt as _;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::jwt::{JwkSet, JwksSource, JwtVerifier, principal_of};
use super::{Principal, TokenError, TokenVerifier};
use crate::client::request::{client_secret_basic, read_bounded};
use bytes::Bytes;
use tokio::time::Instant;

/// Reads a response body of at most `max` bytes.
async fn bounded_body(response: reqwest::Response, max: usize) -> Result<Bytes, TokenError> {
    read_body(response, max).await.map_err(|why| TokenError::Unavailable(why.into()))
}

/// Reads a response body of at most `max` bytes; why not otherwise.
async fn read_body(mut response: reqwest::Response, max: usize) -> Result<Bytes, String> {
    match read_bounded(&mut response, max).await {
        Ok(Some(body)) => Ok(body),
        Ok(None) => Err(format!("the answer is larger than {max} bytes")),
        Err(e) => Err(e.to_string()),
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

/// How long one fetch of a key set may take, its discovery included, whatever the HTTP
/// client's own timeouts: a fetch that never ends would otherwise stop every later one.
const FETCH_BOUND: Duration = Duration::from_secs(60);

/// A key set fetched from a URL (the authorization server's `jwks_uri`, given, or found in
/// the issuer's metadata with [`HttpJwks::discover`]) and cached: fetched again after the
/// refresh interval (default 10 minutes), or when a token names a key the set lacks. A fetch
/// begins at most once per minimum interval (default 30 s), whether the last one succeeded or
/// failed, so that tokens with made-up key ids cannot make the server fetch on every request,
/// nor a failing endpoint be asked again at once. One fetch runs at a time, shared by every
/// token that waits for it; only tokens that need it wait (those of a key the set lacks, and
/// every token while there is no set yet): the others are verified with the cached set, which
/// serves on while a refresh fails or hangs. Without any set, tokens are answered with 503
/// ([`TokenError::Unavailable`]). The document is read up to a bound (default 256 KiB); a
/// fetch, discovery included, ends after 60 s at most.
pub struct HttpJwks {
    location: Location,
    client: reqwest::Client,
    refresh_interval: Duration,
    min_refresh: Duration,
    max_bytes: usize,
    /// Shared with the fetch under way, which stores what it got.
    state: Arc<Mutex<JwksState>>,
}

/// Where a key set is.
#[derive(Debug, Clone)]
enum Location {
    /// At this URL.
    Url(String),
    /// At the `jwks_uri` of this issuer's metadata (RFC 8414, OpenID Connect discovery).
    Issuer(String),
}

/// The outcome of a fetch, as every waiter gets it.
type Fetched = Result<Arc<JwkSet>, Arc<str>>;
/// A fetch under way, which any number of verifications may wait for.
type Flight = Shared<BoxFuture<'static, Fetched>>;

/// What an [`HttpJwks`] knows.
#[derive(Default)]
struct JwksState {
    /// The last key set fetched, and when.
    set: Option<(Arc<JwkSet>, Instant)>,
    /// When the last fetch began, whatever came of it.
    attempted: Option<Instant>,
    /// Why the last fetch failed, if it did.
    failure: Option<Arc<str>>,
    /// The fetch under way.
    flight: Option<Flight>,
}

impl std::fmt::Debug for HttpJwks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpJwks")
            .field("location", &self.location)
            .field("refresh_interval", &self.refresh_interval)
            .field("min_refresh_interval", &self.min_refresh)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

/// The issuer given to [`HttpJwks::discover`] or [`JwtVerifier::from_issuer`] is not an
/// absolute `https` URL without query or fragment (`http` is accepted for a loopback host
/// only).
#[derive(Debug, Clone, thiserror::Error)]
#[error("the issuer must be an https URL (http for a loopback host only) without query or fragment: {0:?}")]
pub struct InvalidIssuer(String);

impl HttpJwks {
    /// The key set at `url`, fetched when first needed.
    pub fn new(url: impl Into<String>) -> HttpJwks {
        HttpJwks::at(Location::Url(url.into()))
    }

    /// The key set of the authorization server `issuer`, found through its metadata when
    /// first needed: RFC 8414 (`/.well-known/oauth-authorization-server`), then OpenID Connect
    /// discovery (`/.well-known/openid-configuration`), with the issuer's path inserted after
    /// the well-known prefix (and, for OpenID Connect, appended as well) when it has one. The
    /// metadata's `issuer` must be `issuer` exactly, and its `jwks_uri` an `https` URL (`http`
    /// for a loopback host only). The metadata is read again with every fetch of the set, so a
    /// moved `jwks_uri` is followed. Refused at once when `issuer` is not an `https` URL
    /// (`http` for a loopback host only) without query or fragment.
    pub fn discover(issuer: impl Into<String>) -> Result<HttpJwks, InvalidIssuer> {
        let issuer = issuer.into();
        let url = url::Url::parse(&issuer).map_err(|_| InvalidIssuer(issuer.clone()))?;
        if !secure(&url) || url.query().is_some() || url.fragment().is_some() || issuer.contains('#') {
            return Err(InvalidIssuer(issuer));
        }
        Ok(HttpJwks::at(Location::Issuer(issuer)))
    }

    fn at(location: Location) -> HttpJwks {
        HttpJwks {
            location,
            client: default_client(),
            refresh_interval: Duration::from_secs(600),
            min_refresh: Duration::from_secs(30),
            max_bytes: 256 << 10,
            state: Arc::default(),
        }
    }
    /// The HTTP client to fetch with (default: a 10 s timeout, no redirects).
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = client;
        self
    }
    /// How long a fetched set is used before it is fetched again (default 10 minutes). The
    /// set serves on while the new one is fetched.
    pub fn refresh_interval(mut self, every: Duration) -> Self {
        self.refresh_interval = every;
        self
    }
    /// The shortest time between the beginnings of two fetches (default 30 s): for a token
    /// naming a key the set lacks, after a failed fetch, and for a stale set.
    pub fn min_refresh_interval(mut self, every: Duration) -> Self {
        self.min_refresh = every;
        self
    }
    /// The largest key set (or metadata) document read, in bytes (default 256 KiB).
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    async fn current(&self, refresh: bool) -> Result<Arc<JwkSet>, TokenError> {
        let (cached, flight) = {
            let mut state = self.state.lock_unpoisoned();
            let now = Instant::now();
            let may_fetch = state.attempted.is_none_or(|at| now.duration_since(at) >= self.min_refresh);
            match state.set.clone() {
                Some((set, fetched)) => {
                    let stale = now.duration_since(fetched) >= self.refresh_interval;
                    if (stale || refresh) && may_fetch && state.flight.is_none() {
                        let _under_way = self.launch(&mut state, now);
                    }
                    match &state.flight {
                        // A token of a key the set lacks waits for the fetch under way.
                        Some(flight) if refresh => (Some(set), flight.clone()),
                        _ => return Ok(set),
                    }
                }
                None => match &state.flight {
                    Some(flight) => (None, flight.clone()),
                    None if may_fetch => (None, self.launch(&mut state, now)),
                    None => {
                        let why = state.failure.as_deref().unwrap_or("no key set yet");
                        return Err(TokenError::Unavailable(format!("the key set cannot be had: {why}").into()));
                    }
                },
            }
        };
        match (flight.await, cached) {
            (Ok(set), _) => Ok(set),
            // The keys fetched before serve on.
            (Err(_), Some(set)) => Ok(set),
            (Err(why), None) => Err(TokenError::Unavailable(why.to_string().into())),
        }
    }

    /// Starts a fetch in its own task (it ends, and stores what it got, even if nobody waits
    /// for it any more), recorded in `state` as under way.
    fn launch(&self, state: &mut JwksState, now: Instant) -> Flight {
        state.attempted = Some(now);
        let (location, client, max_bytes) = (self.location.clone(), self.client.clone(), self.max_bytes);
        let shared = self.state.clone();
        let task = tokio::spawn(async move {
            // Clears the fetch under way however the task ends (it may be aborted).
            let _landed = Landed(shared.clone());
            let fetched = match tokio::time::timeout(FETCH_BOUND, fetch_set(&client, &location, max_bytes)).await {
                Ok(fetched) => fetched,
                Err(_) => Err(format!("fetching the key set took longer than {} s", FETCH_BOUND.as_secs()).into()),
            };
            let mut state = shared.lock_unpoisoned();
            match &fetched {
                Ok(set) => {
                    state.set = Some((set.clone(), Instant::now()));
                    state.failure = None;
                }
                Err(why) => {
                    tracing::warn!(location = ?location, error = %why, "fetching the key set failed; the keys fetched before (if any) serve on");
                    state.failure = Some(why.clone());
                }
            }
            fetched
        });
        let flight = async move {
            match task.await {
                Ok(fetched) => fetched,
                Err(e) => Err(format!("the fetch of the key set ended early: {e}").into()),
            }
        };
        let flight = flight.boxed().shared();
        state.flight = Some(flight.clone());
        flight
    }
}

/// Clears the fetch under way of an [`HttpJwks`] when its task ends.
struct Landed(Arc<Mutex<JwksState>>);

impl Drop for Landed {
    fn drop(&mut self) {
        self.0.lock_unpoisoned().flight = None;
    }
}

/// Fetches the key set at `location`.
async fn fetch_set(client: &reqwest::Client, location: &Location, max_bytes: usize) -> Fetched {
    let url = match location {
        Location::Url(url) => url.clone(),
        Location::Issuer(issuer) => discover_jwks_uri(client, issuer, max_bytes).await?,
    };
    let response = client.get(&url).send().await.map_err(|e| failed(&url, e))?;
    let response = response.error_for_status().map_err(|e| failed(&url, e))?;
    let body = read_body(response, max_bytes).await.map_err(|e| failed(&url, e))?;
    serde_json::from_slice::<JwkSet>(&body).map(Arc::new).map_err(|e| failed(&url, e))
}

fn failed(url: &str, error: impl std::fmt::Display) -> Arc<str> {
    format!("{url}: {error}").into()
}

/// The `jwks_uri` of the metadata of `issuer` (see [`HttpJwks::discover`]).
async fn discover_jwks_uri(client: &reqwest::Client, issuer: &str, max_bytes: usize) -> Result<String, Arc<str>> {
    let parsed = url::Url::parse(issuer).map_err(|e| failed(issuer, e))?;
    for url in metadata_urls(&parsed) {
        let url = url.as_str();
        let response = client
            .get(url)
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| failed(url, e))?;
        let status = response.status();
        if status.is_client_error() {
            // Not there: the next place.
            continue;
        }
        if !status.is_success() {
            return Err(failed(url, format!("answered {status}")));
        }
        let body = read_body(response, max_bytes).await.map_err(|e| failed(url, e))?;
        let metadata: Map<String, Value> = serde_json::from_slice(&body).map_err(|e| failed(url, e))?;
        let named = metadata.get("issuer").and_then(Value::as_str);
        if named != Some(issuer) {
            return Err(failed(url, format!("the metadata names the issuer {named:?}, not {issuer:?}")));
        }
        let Some(jwks_uri) = metadata.get("jwks_uri").and_then(Value::as_str) else { continue };
        if !url::Url::parse(jwks_uri).is_ok_and(|u| secure(&u)) {
            return Err(failed(url, format!("the jwks_uri {jwks_uri:?} is no https URL (http on a loopback host)")));
        }
        return Ok(jwks_uri.to_owned());
    }
    Err(format!("no metadata of the issuer {issuer} names a jwks_uri").into())
}

/// The URLs of an issuer's metadata, in the order of the specification: with a path, RFC 8414
/// with the path inserted, OpenID Connect with it inserted, then appended; without one,
/// RFC 8414 then OpenID Connect.
fn metadata_urls(issuer: &url::Url) -> Vec<url::Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |path: String| {
        let mut url = issuer.clone();
        url.set_path(&path);
        url.set_query(None);
        url.set_fragment(None);
        url
    };
    let mut urls = vec![
        at(format!("/.well-known/oauth-authorization-server{path}")),
        at(format!("/.well-known/openid-configuration{path}")),
    ];
    if !path.is_empty() {
        urls.push(at(format!("{path}/.well-known/openid-configuration")));
    }
    urls
}

/// Whether `url` is `https`, or `http` on a loopback host.
fn secure(url: &url::Url) -> bool {
    let loopback = match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => return false,
    };
    url.scheme() == "https" || (url.scheme() == "http" && loopback)
}

impl JwksSource for HttpJwks {
    fn keys(&self, refresh: bool) -> BoxFuture<'_, Result<Arc<JwkSet>, TokenError>> {
        Box::pin(self.current(refresh))
    }
}

impl JwtVerifier {
    /// Tokens of `issuer` for `audience`, signed by a key of the issuer's key set, found
    /// through its metadata ([`HttpJwks::discover`]; features `auth` and `client`).
    pub fn from_issuer(issuer: impl Into<String>, audience: impl Into<String>) -> Result<JwtVerifier, InvalidIssuer> {
        let issuer = issuer.into();
        let jwks = HttpJwks::discover(issuer.clone())?;
        Ok(JwtVerifier::new(issuer, audience, jwks))
    }
}

/// The clock skew tolerated on an introspected token's `nbf`, as [`JwtVerifier`]'s default.
const NBF_LEEWAY: Duration = Duration::from_secs(30);

/// Verifies opaque (or any) access tokens by asking the authorization server's introspection
/// endpoint (RFC 7662), authenticated with client credentials (`client_secret_basic`). A token
/// is valid when the answer is `active`, its `aud` contains the resource (a token without
/// `aud` is refused: it could be for anyone), its `exp`, if any, is in the future, and its
/// `nbf`, if any, is not (with 30 s of clock skew). Answers are cached for a short time
/// (default 60 s, never past the token's `exp`), keyed by the SHA-256 of the token (the token
/// itself is not kept), at most 10,000 of them.
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
        let now = SystemTime::now();
        if principal.expires_at.is_some_and(|exp| exp <= now) {
            return Err(TokenError::Expired);
        }
        let not_before = principal.claims.get("nbf").and_then(Value::as_u64);
        if not_before.is_some_and(|nbf| SystemTime::UNIX_EPOCH + Duration::from_secs(nbf) > now + NBF_LEEWAY) {
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
    fn audience(&self) -> Option<&str> {
        Some(&self.resource)
    }
}
