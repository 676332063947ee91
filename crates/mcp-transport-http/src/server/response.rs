//! The endpoint's error answers: a JSON-RPC error as an HTTP response, and the ones every part
//! of the endpoint gives (an invalid request, an unknown or ended session, a busy or draining
//! server, a revision we do not speak). It uses nothing else of the server.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mcp_jsonrpc::message;
use mcp_jsonrpc::{ErrorObject, RequestId};
use mcp_types::ProtocolVersion;

use crate::headers::APPLICATION_JSON;

/// A JSON-RPC error as an HTTP response.
pub(super) fn error_response(status: StatusCode, id: Option<&RequestId>, error: &ErrorObject) -> Response {
    let body = message::encode_error(id, error);
    (status, [(header::CONTENT_TYPE, APPLICATION_JSON)], body).into_response()
}

/// -32022 (400): the revisions we serve, and the one asked for.
pub(super) fn unsupported_version(requested: &str, id: Option<&RequestId>) -> Response {
    let error = ErrorObject::unsupported_protocol_version(requested, ProtocolVersion::ALL.into_iter().rev());
    error_response(StatusCode::BAD_REQUEST, id, &error)
}

/// An invalid-request error (-32600) without an id, with `status`.
pub(super) fn invalid_request(status: StatusCode, message: impl std::fmt::Display) -> Response {
    error_response(status, None, &ErrorObject::invalid_request(message))
}

/// 404: the session ended while its request was on the way.
pub(super) fn session_ended() -> Response {
    invalid_request(StatusCode::NOT_FOUND, "the session has ended")
}

/// 404 for a session id we do not know (or no longer).
pub(super) fn session_not_found() -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        None,
        &ErrorObject::new(mcp_types::ErrorCode::SESSION_NOT_FOUND.code(), "session not found"),
    )
}

/// 503 with `Retry-After`: no room for another request in flight.
pub(super) fn busy(limit: usize, id: Option<&RequestId>) -> Response {
    let error = ErrorObject::internal_error(format!("the server is busy: {limit} requests are in flight"));
    let mut response = error_response(StatusCode::SERVICE_UNAVAILABLE, id, &error);
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// 503 with `Retry-After` and `Connection: close`: the server is shutting down (draining).
pub(super) fn draining(id: Option<&RequestId>) -> Response {
    let error = ErrorObject::internal_error("the server is shutting down");
    let mut response = error_response(StatusCode::SERVICE_UNAVAILABLE, id, &error);
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
