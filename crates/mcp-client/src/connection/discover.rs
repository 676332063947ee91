//! The `server/discover` probe (2026-07-28): whether the server speaks the stateless revision,
//! and what it says of itself.

use std::time::Duration;

use mcp_jsonrpc::{CallError, CallOptions, Peer};
use mcp_types::{DiscoverResult, Implementation, JsonObject, ProtocolVersion, Request};
use serde_json::Value;
use tracing::Instrument as _;

use crate::error::ClientError;
use crate::wire::stateless::{Json, RequestMeta, STATELESS, supported_versions};

/// What `server/discover` told about the server.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    pub(crate) result: DiscoverResult,
    pub(crate) server_info: Implementation,
}

/// What the `server/discover` probe found.
pub(crate) enum DiscoverOutcome {
    /// A 2026-07-28 server.
    Stateless(Box<Discovered>),
    /// Not a 2026-07-28 server: use `initialize`.
    SessionRevisions {
        /// What the probe got.
        why: String,
        /// Whether the server said it speaks only earlier revisions (a `DiscoverResult` or an
        /// `UnsupportedProtocolVersion` error without 2026-07-28), rather than failing in a
        /// way any server might (another error, no answer).
        conclusive: bool,
    },
}

/// Reads a `DiscoverResult` leniently: absent cache hints and result type take their defaults,
/// and `serverInfo` is read from `_meta` or, where some servers put it, the top level.
pub(crate) fn read_discover(value: Value) -> Option<Discovered> {
    let Value::Object(mut m) = value else { return None };
    m.entry("resultType").or_insert_with(|| Value::from("complete"));
    m.entry("cacheScope").or_insert_with(|| Value::from("private"));
    if !m.get("ttlMs").is_some_and(Value::is_i64) {
        m.insert("ttlMs".to_owned(), Value::from(0));
    }
    let top_info = m.get("serverInfo").cloned();
    let result: DiscoverResult = serde_json::from_value(Value::Object(m)).ok()?;
    let server_info = result
        .meta
        .as_ref()
        .and_then(|meta| meta.server_info.clone())
        .or_else(|| top_info.and_then(|v| serde_json::from_value(v).ok()))
        .unwrap_or_else(|| Implementation::new("unknown", "unknown"));
    Some(Discovered { result, server_info })
}

/// Whether a transport error is HTTP's refusal of the probe that a server of an earlier
/// revision gives (a status 4xx other than 401 and 403, without a JSON-RPC error body).
#[cfg(feature = "http")]
fn refused_by_earlier_server(e: &mcp_jsonrpc::TransportError) -> bool {
    use mcp_transport_http::client::{HttpErrorKind, HttpRequestError};
    let Some(e) = e.downcast_ref::<HttpRequestError>() else { return false };
    let status = e.status().map_or(0, |s| s.as_u16());
    e.kind() == HttpErrorKind::Status && (400..500).contains(&status) && status != 401 && status != 403
}

#[cfg(not(feature = "http"))]
fn refused_by_earlier_server(_: &mcp_jsonrpc::TransportError) -> bool {
    false
}

/// Probes the server with `server/discover` (the transport-specific rules of the
/// specification's backward compatibility): a `DiscoverResult` listing our revision is a
/// 2026-07-28 server; `UnsupportedProtocolVersion` listing it is one too (the probe is sent
/// once more); a 4xx without a 2026-07-28 error body (HTTP), any other JSON-RPC error, or
/// (on stdio) silence, is a server of an earlier revision. With `fallback` off, what is not a
/// 2026-07-28 server is an error.
pub(crate) async fn probe(
    peer: &Peer,
    meta: &RequestMeta,
    timeout: Option<Duration>,
    over_http: bool,
    fallback: bool,
) -> Result<DiscoverOutcome, ClientError> {
    let mut corrected = false;
    let outcome = |why: String, conclusive: bool| -> Result<DiscoverOutcome, ClientError> {
        if fallback {
            Ok(DiscoverOutcome::SessionRevisions { why, conclusive })
        } else {
            Err(ClientError::UnsupportedVersion(why))
        }
    };
    let earlier = |why: String| outcome(why, false);
    let only_earlier = |why: String| outcome(why, true);
    loop {
        let mut params = JsonObject::new();
        meta.apply(&mut params, STATELESS.as_str());
        let mut options = CallOptions { timeout, hints: meta.hints("server/discover", &params), ..Default::default() };
        let span = crate::trace::start(mcp_types::DiscoverRequest::METHOD, STATELESS, &mut options);
        let outcome = peer.request::<Json<mcp_types::DiscoverRequest>>(params, options).instrument(span.clone()).await;
        crate::trace::record_call_outcome(&span, &outcome);
        match outcome {
            Ok(value) => {
                let Some(discovered) = read_discover(value) else {
                    return earlier("the answer to server/discover is not a DiscoverResult".to_owned());
                };
                let versions = &discovered.result.supported_versions;
                if versions.iter().any(|v| v == STATELESS.as_str()) {
                    return Ok(DiscoverOutcome::Stateless(Box::new(discovered)));
                }
                return only_earlier(format!("the server supports {}", versions.join(", ")));
            }
            Err(CallError::Transport(e)) if refused_by_earlier_server(&e) => return earlier(e.to_string()),
            Err(CallError::Remote(e)) => {
                if let Some(versions) = supported_versions(&e) {
                    if versions.iter().any(|v| v == STATELESS.as_str()) {
                        if corrected {
                            return Err(ClientError::Remote(e));
                        }
                        corrected = true;
                        continue;
                    }
                    let known: Vec<ProtocolVersion> =
                        versions.iter().filter_map(|v| ProtocolVersion::from_wire(v)).collect();
                    if !known.is_empty() && known.iter().all(|v| !v.is_stateless()) {
                        return only_earlier(format!("the server supports {}", versions.join(", ")));
                    }
                    return Err(ClientError::UnsupportedVersion(versions.join(", ")));
                }
                return earlier(format!("server/discover failed: {e}"));
            }
            Err(CallError::Timeout { elapsed, .. }) if !over_http => {
                return earlier(format!("no answer to server/discover within {elapsed:?}"));
            }
            Err(e) => return Err(e.into()),
        }
    }
}
