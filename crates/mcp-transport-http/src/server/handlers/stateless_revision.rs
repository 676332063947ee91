//! A POST of the stateless revision (2026-07-28): one request, served on its own after its
//! headers are checked against its body, answered as JSON when the response comes first and
//! as SSE when notifications precede it. Closing the response cancels the request.
// A failed check's `Response` is returned at once (see `checks`): boxing it would only allocate.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header, request::Parts};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use mcp_jsonrpc::message::{Message, Parsed, Request};
use mcp_jsonrpc::raw::{self as json, PROTOCOL_VERSION_KEY};
use mcp_jsonrpc::{ErrorObject, Peer, RequestId};
use mcp_types::{ErrorCode, ProtocolVersion};
use tokio::sync::mpsc;

use super::info::RequestInfo;
use crate::headers::{MCP_METHOD, MCP_PROTOCOL_VERSION, mirrored_value};
use crate::server::checks::{header_mismatch, header_str, rejection_response};
use crate::server::endpoint::App;
use crate::server::response::{error_response, invalid_request, unsupported_version};
use crate::server::sse::sse_event;
use crate::server::stream::body::ConnGuard;

/// Serves a 2026-07-28 POST (`header_version` is its `MCP-Protocol-Version`, if it parsed).
pub(super) async fn post(
    app: &Arc<App>,
    parts: Parts,
    parsed: Parsed,
    header_version: Option<ProtocolVersion>,
) -> Result<Response, Response> {
    let request = match parsed {
        Parsed::Single(Message::Request(r)) => r,
        // 2026-07-28 defines no notifications from the client over HTTP (closing the stream
        // cancels): clients that send `notifications/cancelled` anyway get 202. A notification
        // outside the protocol (a custom method's, an extension's) is handed to the server
        // outside any session, as in the stateless mode of the session revisions.
        Parsed::Single(Message::Notification(n)) => {
            if !mcp_types::is_reserved_method(&n.method) {
                let dispatcher = app.factory.connect_stateless(app.ephemeral_router(), ProtocolVersion::V2026_07_28);
                let info = RequestInfo {
                    client: crate::server::endpoint::client_address(&parts.extensions),
                    parts,
                    session_id: None,
                    stream: None,
                    _in_flight: None,
                };
                dispatcher.dispatch(Parsed::Single(Message::Notification(n)), Some(Arc::new(info))).await;
            }
            return Ok(StatusCode::ACCEPTED.into_response());
        }
        _ => return Err(invalid_request(StatusCode::BAD_REQUEST, "a 2026-07-28 POST carries one request")),
    };
    check_headers(app, &request, &parts.headers, header_version)?;
    serve(app, parts, request).await
}

/// The headers against the body: `MCP-Protocol-Version` and `Mcp-Method` here, the rest by
/// the session factory ([`SessionFactory::check_request`]).
/// Only what they are checked against is read of the params, through the request's index,
/// which the server and the handler then read too.
///
/// [`SessionFactory::check_request`]: crate::server::SessionFactory::check_request
fn check_headers(
    app: &App,
    request: &Request,
    headers: &HeaderMap,
    header_version: Option<ProtocolVersion>,
) -> Result<(), Response> {
    check_version(request, headers, header_version)?;
    let id = Some(&request.id);
    let method = request.method.as_str();
    match mirrored_value(headers, MCP_METHOD) {
        Some(Ok(m)) if m == method => {}
        Some(Ok(m)) => {
            return Err(header_mismatch(id, format!("Mcp-Method {m:?} but the body's method is {method:?}")));
        }
        Some(Err(_)) => return Err(header_mismatch(id, "the Mcp-Method header is malformed")),
        None => return Err(header_mismatch(id, "the Mcp-Method header is missing")),
    }
    app.factory.check_request(request, headers).map_err(|rejection| rejection_response(&rejection, id))
}

/// `MCP-Protocol-Version` names the revision the body's `_meta` does, one we serve this way.
fn check_version(
    request: &Request,
    headers: &HeaderMap,
    header_version: Option<ProtocolVersion>,
) -> Result<(), Response> {
    let id = Some(&request.id);
    let Some(header_text) = header_str(headers, MCP_PROTOCOL_VERSION) else {
        return Err(header_mismatch(id, "the MCP-Protocol-Version header is missing"));
    };
    let body_version = request.meta(PROTOCOL_VERSION_KEY).and_then(json::str_text);
    let Some(body_version) = body_version.as_deref() else {
        let error = ErrorObject::missing_request_metadata(PROTOCOL_VERSION_KEY);
        return Err(error_response(StatusCode::BAD_REQUEST, id, &error));
    };
    let disagree =
        || header_mismatch(id, format!("MCP-Protocol-Version {header_text} but the body says {body_version}"));
    match header_version {
        Some(v) if v.is_stateless() => (body_version == v.as_str()).then_some(()).ok_or_else(disagree),
        // A version we don't serve without a handshake (the header parsed, so it is a session
        // revision): the body must say the same, and it is not served this way.
        _ if body_version != header_text => Err(disagree()),
        _ => Err(unsupported_version(body_version, id)),
    }
}

/// Serves the request on a peer of its own and answers with what its peer sends first.
async fn serve(app: &Arc<App>, parts: Parts, request: Request) -> Result<Response, Response> {
    let id = request.id.clone();
    let permit = app.admit(Some(&id))?;
    let router = app.ephemeral_router();
    let dispatcher = app.factory.connect_stateless(router.clone(), ProtocolVersion::V2026_07_28);
    let Ok(mut rx) = router.open_raw(id.clone()).await else {
        return Err(invalid_request(StatusCode::INTERNAL_SERVER_ERROR, "cannot serve the request"));
    };
    let info = RequestInfo {
        client: crate::server::endpoint::client_address(&parts.extensions),
        parts,
        session_id: None,
        stream: None,
        _in_flight: Some(permit),
    };
    // Until the response is out, the client going away cancels the request.
    let mut cancel = CancelOnDrop { peer: Some(dispatcher.peer().clone()), id };
    dispatcher.dispatch(Parsed::Single(Message::Request(request)), Some(Arc::new(info))).await;
    drop(dispatcher);
    Ok(match rx.recv().await {
        None => StatusCode::ACCEPTED.into_response(),
        Some((frame, true)) => {
            cancel.peer = None;
            let status = response_status(&frame);
            (status, [(header::CONTENT_TYPE, HeaderValue::from_static(crate::headers::APPLICATION_JSON))], frame)
                .into_response()
        }
        Some((first, false)) => {
            let (tx, events) = mpsc::channel(app.config().stream_queue.max(1));
            let _ = tx.try_send(sse_event(None, &first));
            let cancel_later = CancelOnDrop { peer: cancel.peer.take(), id: cancel.id.clone() };
            tokio::spawn(forward(rx, tx, cancel_later));
            app.sse(Vec::new(), Some(events), ConnGuard::new(router, None))
        }
    })
}

/// Streams the rest of a request's frames as SSE events; if the client goes away first, the
/// request is cancelled.
async fn forward(mut rx: mpsc::Receiver<(Bytes, bool)>, tx: mpsc::Sender<Bytes>, mut cancel: CancelOnDrop) {
    loop {
        tokio::select! {
            item = rx.recv() => match item {
                Some((frame, last)) => {
                    if tx.send(sse_event(None, &frame)).await.is_err() {
                        return;
                    }
                    if last {
                        cancel.peer = None;
                        return;
                    }
                }
                None => {
                    cancel.peer = None;
                    return;
                }
            },
            _ = tx.closed() => return,
        }
    }
}

/// The HTTP status of a response frame: 404 for an unknown method, 400 for the revision's
/// request errors, 200 otherwise.
fn response_status(frame: &[u8]) -> StatusCode {
    // An error response names its `error` member; most frames are results, read no further.
    if memchr::memmem::find(frame, br#""error""#).is_none() {
        return StatusCode::OK;
    }
    #[derive(serde::Deserialize)]
    struct Frame {
        error: Option<ErrorObject>,
    }
    let Ok(Frame { error: Some(error) }) = serde_json::from_slice::<Frame>(frame) else {
        return StatusCode::OK;
    };
    let envelope = error.data.as_ref().is_some_and(|d| d.get("envelope").is_some());
    match error.error_code() {
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        ErrorCode::INVALID_PARAMS if envelope => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// Cancels a request when dropped armed: the client closed the response stream.
struct CancelOnDrop {
    peer: Option<Peer>,
    id: RequestId,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(peer) = self.peer.take() {
            tracing::debug!(id = %self.id, "the client closed the response stream: request cancelled");
            peer.cancel_incoming(&self.id);
        }
    }
}
