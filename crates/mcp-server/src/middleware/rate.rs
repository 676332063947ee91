//! Rate limiting: a token bucket (`governor`'s GCRA) per principal, session or client address
//! (feature `rate-limit`).
//!
//! The specification asks servers to rate-limit tool invocations but names no error for it: a
//! request over its rate is answered with the JSON-RPC server error [`RATE_LIMITED`] (-32000,
//! in the range JSON-RPC leaves to implementations and MCP does not use), message
//! `rate limited`, and `data: {"retryAfterMs": N}`, the milliseconds after which a request of
//! the same key is allowed again.

use mcp_types::Request as _;
use std::num::NonZeroU32;
use std::time::Duration;

use futures_util::future::BoxFuture;
use governor::RateLimiter;
use governor::clock::{Clock as _, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use mcp_jsonrpc::{ErrorObject, Reply};
use mcp_types::ErrorCode;

use super::{McpRequest, MethodKind, Middleware, Next, RequestCx};

/// `governor`'s quota: a rate and a burst.
pub use governor::Quota;

/// The code of the error a request over its rate is answered with.
pub const RATE_LIMITED: i64 = -32000;

/// What a bucket is kept for. A request without the key (no principal, say) shares one bucket
/// with every other request without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RateKey {
    /// The principal of the request's access token (feature `auth`): its issuer, subject and
    /// client.
    Principal,
    /// The session: the HTTP session (`Mcp-Session-Id`), else the connection (stdio; each
    /// request of the stateless revision has one of its own, so key those by principal or
    /// address instead).
    Session,
    /// The client's IP address (over HTTP, when the endpoint knows it).
    ClientAddress,
}

type Keyed = RateLimiter<String, DefaultKeyedStateStore<String>, DefaultClock>;

/// The most keys kept before the idle ones are dropped.
const DEFAULT_MAX_KEYS: usize = 10_000;

/// A token bucket per key: `burst` requests at once, refilled at `per_second` requests a
/// second. Over its rate a request is answered with [`RATE_LIMITED`] and a retry hint.
///
/// The keyed state is bounded: when it holds `max_keys` keys, the buckets that are full again
/// (idle long enough to have refilled) are dropped; if it is still full, new keys share one
/// bucket until some are.
#[derive(Debug)]
pub struct RateLimit {
    key: RateKey,
    limiter: Keyed,
    max_keys: usize,
    tool_calls_only: bool,
}

impl RateLimit {
    /// `per_second` requests a second per key, in bursts of up to `burst`.
    pub fn new(key: RateKey, per_second: NonZeroU32, burst: NonZeroU32) -> RateLimit {
        RateLimit::with_quota(key, Quota::per_second(per_second).allow_burst(burst))
    }

    /// A `governor` quota per key (`Quota::per_minute`, `Quota::with_period`, ...).
    pub fn with_quota(key: RateKey, quota: Quota) -> RateLimit {
        RateLimit { key, limiter: RateLimiter::keyed(quota), max_keys: DEFAULT_MAX_KEYS, tool_calls_only: false }
    }

    /// The most keys kept (10,000 by default).
    pub fn max_keys(mut self, max: usize) -> RateLimit {
        self.max_keys = max.max(1);
        self
    }

    /// Limits `tools/call` only (every method the layers see by default).
    pub fn tool_calls_only(mut self) -> RateLimit {
        self.tool_calls_only = true;
        self
    }

    /// The key of a request.
    fn key_of(&self, cx: &RequestCx<'_>) -> String {
        let key = match self.key {
            RateKey::Principal => principal(cx),
            RateKey::Session => Some(match cx.session_id() {
                Some(id) => format!("s:{id}"),
                None => format!("c:{}", cx.connection()),
            }),
            RateKey::ClientAddress => address(cx),
        };
        key.unwrap_or_default()
    }

    /// Takes a token of `key`'s bucket: the wait before one is there, if none is.
    fn check(&self, mut key: String) -> Result<(), Duration> {
        if self.limiter.len() >= self.max_keys {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
            if self.limiter.len() >= self.max_keys {
                // Full of active keys: the overflow shares one bucket.
                key = "\u{0}overflow".to_owned();
            }
        }
        self.limiter.check_key(&key).map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }
}

#[cfg(feature = "auth")]
fn principal(cx: &RequestCx<'_>) -> Option<String> {
    let p = cx.principal().filter(|p| p.subject.is_some() || p.client_id.is_some())?;
    Some(format!(
        "p:{}\u{0}{}\u{0}{}",
        p.issuer.as_deref().unwrap_or(""),
        p.subject.as_deref().unwrap_or(""),
        p.client_id.as_deref().unwrap_or("")
    ))
}

#[cfg(not(feature = "auth"))]
fn principal(_: &RequestCx<'_>) -> Option<String> {
    None
}

#[cfg(feature = "http")]
fn address(cx: &RequestCx<'_>) -> Option<String> {
    cx.client_address().map(|a| format!("a:{a}"))
}

#[cfg(not(feature = "http"))]
fn address(_: &RequestCx<'_>) -> Option<String> {
    None
}

/// The error of a request over its rate, retried after `wait`.
pub fn rate_limited(wait: Duration) -> ErrorObject {
    // Rounded up: a client that waits this long finds a token.
    let ms = u64::try_from(wait.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX).max(1);
    ErrorObject::with_data(ErrorCode::from(RATE_LIMITED), "rate limited", serde_json::json!({ "retryAfterMs": ms }))
}

impl Middleware for RateLimit {
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        // The handshake is not counted: a session could not start once its bucket is empty.
        let handshake = req.method() == mcp_types::InitializeRequest::METHOD;
        if handshake || (self.tool_calls_only && req.kind() != MethodKind::CallTool) {
            return next.run(req);
        }
        match self.check(self.key_of(&req.cx())) {
            Ok(()) => next.run(req),
            Err(wait) => {
                tracing::debug!(method = req.method(), ?wait, "request rate limited");
                Box::pin(std::future::ready(Err(rate_limited(wait))))
            }
        }
    }
}
