//! The checks of the endpoint's requests, each giving the response to answer with when it
//! fails: `Result<_, Response>` functions of the configuration, the headers and the body, so
//! that handlers read as a list of `?`s (what every handler of a route checks first, they take
//! as extractors built on these: `handlers/extract.rs`). They use the configuration, the
//! factory (a request's scopes) and auth below them, not the endpoint's state.
//!
//! A failed check's `Response` is the value its handler returns at once, so boxing it would
//! only add an allocation.
#![allow(clippy::result_large_err)]

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header, request::Parts};
use axum::response::Response;
use bytes::Bytes;
use http_body_util::BodyExt as _;
use mcp_jsonrpc::RequestId;
use mcp_jsonrpc::message::{self, Message, Parsed};
use mcp_types::ProtocolVersion;

#[cfg(feature = "auth")]
use super::auth::{AuthConfig, Principal};
use super::config::HttpServerConfig;
use super::factory::Rejection;
use super::factory::SessionFactory;
use super::response::{error_response, invalid_request, unsupported_version};
use crate::headers::{APPLICATION_JSON, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, TEXT_EVENT_STREAM};

/// A [`Rejection`] as the answer to the request `id`.
pub(super) fn rejection_response(rejection: &Rejection, id: Option<&RequestId>) -> Response {
    error_response(rejection.status, id, &rejection.error)
}

/// -32020 (400): headers that are missing or disagree with the body.
pub(super) fn header_mismatch(id: Option<&RequestId>, detail: impl std::fmt::Display) -> Response {
    rejection_response(&Rejection::header_mismatch(detail), id)
}

/// Whether an Accept header admits `media` (`type/subtype`), wildcards included. No header
/// admits everything.
pub(super) fn accepts(headers: &HeaderMap, media: &str) -> bool {
    accepts_each(headers, [media]) == [true]
}

/// [`accepts`] for several media types, in one pass over the header.
fn accepts_each<const N: usize>(headers: &HeaderMap, media: [&str; N]) -> [bool; N] {
    let types = media.map(|m| m.split_once('/').map_or(m, |(ty, _)| ty));
    let mut admitted = [false; N];
    // Whether a readable Accept header was seen: none admits everything.
    let mut seen = false;
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        seen = true;
        for range in value.split(',') {
            let range = range.split_once(';').map_or(range, |(r, _)| r).trim();
            let wildcard = range.strip_suffix("/*");
            for i in 0..N {
                admitted[i] |= range == "*/*"
                    || range.eq_ignore_ascii_case(media[i])
                    || wildcard.is_some_and(|t| t.eq_ignore_ascii_case(types[i]));
            }
        }
    }
    if seen { admitted } else { [true; N] }
}

/// 406 unless the client accepts SSE (a GET of a stream).
pub(super) fn accepts_sse(headers: &HeaderMap) -> Result<(), Response> {
    if accepts(headers, TEXT_EVENT_STREAM) {
        Ok(())
    } else {
        Err(invalid_request(StatusCode::NOT_ACCEPTABLE, "the client must accept text/event-stream"))
    }
}

/// A header's value, if it is visible ASCII.
pub(super) fn header_str(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// DNS-rebinding protection: Host and Origin against the allow-lists. Every value counts: a
/// second Host line (which RFC 9112 answers with 400) or Origin line cannot slip past the
/// first, and the authority of an absolute-form target, which names the host in place of
/// Host, is checked too. An HTTP/1.1 request without Host gets 400, as RFC 9112 says.
pub(super) fn check_origin(config: &HttpServerConfig, parts: &Parts) -> Result<(), Response> {
    let mut hosts = parts.headers.get_all(header::HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return Err(invalid_request(StatusCode::BAD_REQUEST, "more than one Host header"));
    }
    let authority = parts.uri.authority().map(|a| a.as_str());
    if host.is_none() && authority.is_none() && parts.version == axum::http::Version::HTTP_11 {
        return Err(invalid_request(StatusCode::BAD_REQUEST, "missing Host header"));
    }
    let named = host.map(|h| h.to_str().ok()).into_iter().chain(authority.map(Some));
    for name in named {
        if !name.is_some_and(|h| config.hosts.allows_host(h)) {
            return Err(invalid_request(StatusCode::FORBIDDEN, "Host header not allowed"));
        }
    }
    for origin in parts.headers.get_all(header::ORIGIN) {
        if !origin.to_str().is_ok_and(|o| config.origins.allows_origin(o)) {
            return Err(invalid_request(StatusCode::FORBIDDEN, "Origin not allowed"));
        }
    }
    Ok(())
}

/// The principal of the request (of head `parts`) may make the requests of the POST body
/// `parsed` (feature `auth`: asked of the session factory): 403 `insufficient_scope` otherwise.
pub(super) fn authorized(
    config: &HttpServerConfig,
    factory: &dyn SessionFactory,
    parsed: &Parsed,
    parts: &Parts,
) -> Result<(), Response> {
    #[cfg(feature = "auth")]
    if let Some(auth) = config.auth.as_deref() {
        return authorize(auth, factory, parsed, parts);
    }
    let _ = (config, factory, parsed, parts);
    Ok(())
}

/// Asks the factory whether the principal of the request may make each request of a POST:
/// 403 `insufficient_scope` otherwise, naming in one challenge every scope the POST needs (the
/// endpoint's, and those of each request refused).
#[cfg(feature = "auth")]
fn authorize(auth: &AuthConfig, factory: &dyn SessionFactory, parsed: &Parsed, parts: &Parts) -> Result<(), Response> {
    let Some(principal) = parts.extensions.get::<Principal>() else { return Ok(()) };
    let mut needed: Option<Vec<String>> = None;
    let mut check = |message: &Message| {
        if let Message::Request(request) = message
            && let Err(insufficient) = factory.authorize(request, principal)
        {
            let scopes = needed.get_or_insert_with(|| auth.required().to_vec());
            for scope in insufficient.scopes {
                if !scopes.contains(&scope) {
                    scopes.push(scope);
                }
            }
        }
    };
    match parsed {
        Parsed::Single(message) => check(message),
        Parsed::Batch(items) => items.iter().filter_map(|item| item.as_ref().ok()).for_each(check),
        Parsed::Invalid { .. } => {}
    }
    match needed {
        Some(scopes) => Err(auth.refuse_scopes(&scopes, &parts.headers)),
        None => Ok(()),
    }
}

/// A POST to the MCP endpoint accepts what it may be answered with (406 otherwise) and
/// carries JSON (415 otherwise).
pub(super) fn post_media_types(config: &HttpServerConfig, headers: &HeaderMap) -> Result<(), Response> {
    let admitted = if config.json_response {
        accepts(headers, APPLICATION_JSON)
    } else {
        accepts_each(headers, [APPLICATION_JSON, TEXT_EVENT_STREAM]) == [true; 2]
    };
    if !admitted {
        return Err(invalid_request(
            StatusCode::NOT_ACCEPTABLE,
            "the client must accept both application/json and text/event-stream",
        ));
    }
    let json = header_str(headers, header::CONTENT_TYPE)
        .and_then(|ct| ct.split(';').next())
        .is_some_and(|ct| ct.trim().eq_ignore_ascii_case(APPLICATION_JSON));
    if !json {
        return Err(invalid_request(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json"));
    }
    Ok(())
}

/// The `MCP-Protocol-Version` header, when present; 400 for a revision we don't speak.
pub(super) fn protocol_version(
    headers: &HeaderMap,
    id: Option<&RequestId>,
) -> Result<Option<ProtocolVersion>, Response> {
    match headers.get(MCP_PROTOCOL_VERSION) {
        None => Ok(None),
        Some(v) => match v.to_str().ok().and_then(|s| s.parse::<ProtocolVersion>().ok()) {
            Some(version) => Ok(Some(version)),
            None => Err(unsupported_version(&String::from_utf8_lossy(v.as_bytes()), id)),
        },
    }
}

/// The `Mcp-Session-Id` a request names: 400 without one.
pub(super) fn session_id(headers: &HeaderMap) -> Result<&str, Response> {
    // Two ids name no one session: refused rather than served as the first.
    if headers.get_all(MCP_SESSION_ID).iter().nth(1).is_some() {
        return Err(invalid_request(StatusCode::BAD_REQUEST, "more than one Mcp-Session-Id header"));
    }
    header_str(headers, MCP_SESSION_ID)
        .ok_or_else(|| invalid_request(StatusCode::BAD_REQUEST, "missing Mcp-Session-Id header"))
}

/// Reads a body within the size and time limits.
pub(super) async fn read_body(config: &HttpServerConfig, body: Body) -> Result<Bytes, Response> {
    let too_large = || {
        invalid_request(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the message is larger than the limit of {} bytes", config.max_body),
        )
    };
    // A declared length past the bound is refused at once: waiting for a body that will be
    // refused would hold the connection up to `body_timeout` for nothing.
    if axum::body::HttpBody::size_hint(&body).lower() > config.max_body as u64 {
        return Err(too_large());
    }
    let limited = http_body_util::Limited::new(body, config.max_body);
    match tokio::time::timeout(config.body_timeout, limited.collect()).await {
        Err(_) => Err(invalid_request(StatusCode::REQUEST_TIMEOUT, "the request body took too long")),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(e)) => Err(invalid_request(StatusCode::BAD_REQUEST, format!("cannot read the request body: {e}"))),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

/// What a POST body holds.
pub(super) struct Classified {
    /// The ids of its requests, in order.
    pub(super) requests: Vec<RequestId>,
    pub(super) initialize: bool,
    pub(super) batch: bool,
    /// The (single) message carries a 2026-07-28 request envelope in `_meta`.
    pub(super) stateless_envelope: bool,
    /// The body as parsed (the 2026-07-28 path reads its request from it).
    pub(super) parsed: Parsed,
}

/// Parses a POST body: 400 for what is no JSON-RPC message, and for a batched initialize.
pub(super) fn classify(body: &[u8]) -> Result<Classified, Response> {
    let (mut requests, mut initialize, mut stateless_envelope) = (Vec::new(), false, false);
    let mut take = |m: &Message| {
        if let Message::Request(r) = m {
            initialize |= r.method == "initialize";
            stateless_envelope |= r.carries_protocol_version();
            requests.push(r.id.clone());
        }
    };
    let parsed = message::parse(body);
    let batch = match &parsed {
        Parsed::Invalid { id, error } => return Err(error_response(StatusCode::BAD_REQUEST, id.as_ref(), error)),
        Parsed::Single(m) => {
            take(m);
            false
        }
        Parsed::Batch(items) => {
            for item in items {
                match item {
                    Ok(m) => take(m),
                    Err(invalid) => {
                        return Err(error_response(StatusCode::BAD_REQUEST, invalid.id.as_ref(), &invalid.error));
                    }
                }
            }
            true
        }
    };
    if initialize && batch {
        return Err(invalid_request(StatusCode::BAD_REQUEST, "initialize must not be part of a batch"));
    }
    Ok(Classified { requests, initialize, batch, stateless_envelope, parsed })
}

/// 400 for a batch in a revision that has none.
pub(super) fn batch_allowed(what: &Classified, version: ProtocolVersion) -> Result<(), Response> {
    if what.batch && !version.allows_batches() {
        return Err(invalid_request(
            StatusCode::BAD_REQUEST,
            format!("batches are not supported in protocol revision {version}"),
        ));
    }
    Ok(())
}
