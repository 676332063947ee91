//! The HTTP+SSE transport of 2024-11-05: a GET at `/sse` opens a session's one SSE stream,
//! whose `endpoint` event names where to POST (`/messages?sessionId=…`); every answer goes
//! on that stream.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{Request, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use mcp_jsonrpc::message;

use super::extract::{AllowedOrigin, Authenticated};
use super::info::RequestInfo;
use crate::server::checks::{accepts_sse, authorized, read_body};
use crate::server::endpoint::App;
use crate::server::response::{draining, error_response, invalid_request, session_ended, session_not_found};
use crate::server::stream::body::ConnGuard;
use crate::server::stream::router::Mode;

/// GET `/sse`: a new session and its stream, opened with the `endpoint` event.
pub(crate) async fn open_stream(
    State(app): State<Arc<App>>,
    _: AllowedOrigin,
    _: Authenticated,
    request: Request<Body>,
) -> Result<Response, Response> {
    let (parts, _) = request.into_parts();
    accepts_sse(&parts.headers)?;
    if app.config().drain.is_draining() {
        return Err(draining(None));
    }
    let Some((_, messages)) = &app.config().http_sse else {
        return Ok(StatusCode::NOT_FOUND.into_response());
    };
    let session = app.create_session(Mode::HttpSse, &parts.extensions, None).await?;
    let Some(rx) = session.router.open_standalone().await else {
        return Ok(StatusCode::INTERNAL_SERVER_ERROR.into_response());
    };
    let endpoint = format!("event: endpoint\ndata: {messages}?sessionId={}\n\n", session.router.session_id);
    // The session lives as long as its stream.
    let id = session.router.session_id.clone();
    let weak = Arc::downgrade(&app);
    let on_drop: Box<dyn FnOnce() + Send> = Box::new(move || {
        if let Some(app) = weak.upgrade()
            && let Some(session) = app.remove(&id)
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            handle.spawn(async move { session.end().await });
        }
    });
    Ok(app.sse(vec![Bytes::from(endpoint)], Some(rx), ConnGuard::new(session.router.clone(), Some(on_drop))))
}

/// The query of a POST to `/messages`.
#[derive(serde::Deserialize)]
pub(crate) struct MessagesQuery {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
}

/// POST `/messages`: a message for the session named in the query; answers go on its stream.
pub(crate) async fn post_message(
    State(app): State<Arc<App>>,
    _: AllowedOrigin,
    _: Authenticated,
    Query(query): Query<MessagesQuery>,
    request: Request<Body>,
) -> Result<Response, Response> {
    let (parts, body) = request.into_parts();
    let Some(id) = query.session_id else {
        return Err(invalid_request(StatusCode::BAD_REQUEST, "missing sessionId"));
    };
    let Some(session) = app.lookup(&id, Mode::HttpSse, &parts.extensions) else {
        // As at the MCP endpoint: 404 with -32001, so that the client starts a new session.
        return Err(session_not_found());
    };
    let body = read_body(app.config(), body).await?;
    let parsed = message::parse(&body);
    // What is no message is refused here, as at the MCP endpoint (400 with -32700 or -32600),
    // rather than accepted with 202 and answered on the stream.
    if let message::Parsed::Invalid { id, error } = &parsed {
        return Err(error_response(StatusCode::BAD_REQUEST, id.as_ref(), error));
    }
    authorized(app.config(), app.factory.as_ref(), &parsed, &parts)?;
    let info = RequestInfo {
        client: crate::server::endpoint::client_address(&parts.extensions),
        parts,
        session_id: Some(session.router.session_id.clone()),
        stream: None,
        _in_flight: None,
    };
    if session.peer().is_closed() {
        return Err(session_ended());
    }
    session.dispatcher.dispatch(parsed, Some(Arc::new(info))).await;
    Ok((StatusCode::ACCEPTED, "Accepted").into_response())
}
