//! The GET and DELETE handlers of the MCP endpoint (POST is in [`super::post`]).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mcp_types::ProtocolVersion;

use super::extract::{AllowedOrigin, Authenticated};
use crate::headers::LAST_EVENT_ID;
use crate::server::checks::{accepts_sse, header_str, protocol_version};
use crate::server::endpoint::App;
use crate::server::response::{draining, invalid_request};
use crate::server::stream::body::ConnGuard;
use crate::server::stream::router::STANDALONE;

/// GET: opens the session's standalone SSE stream, or with `Last-Event-ID` resumes a stream.
pub(crate) async fn get_mcp(
    State(app): State<Arc<App>>,
    _: AllowedOrigin,
    _: Authenticated,
    request: Request<Body>,
) -> Result<Response, Response> {
    let (parts, _) = request.into_parts();
    let headers = &parts.headers;
    let config = app.config();
    if config.stateless || !config.get_stream {
        let allow = if config.stateless { "POST" } else { "POST, DELETE" };
        return Ok((StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, allow)]).into_response());
    }
    accepts_sse(headers)?;
    protocol_version(headers, None)?;
    if config.drain.is_draining() {
        return Err(draining(None));
    }
    let session = app.session(headers, &parts.extensions).await?;
    let router = &session.router;
    if let Some(last) = header_str(headers, LAST_EVENT_ID) {
        let Some(resumed) = router.resume(last).await else {
            return Err(invalid_request(StatusCode::BAD_REQUEST, format!("unknown Last-Event-ID {last:?}")));
        };
        if resumed.live.is_some() && last.starts_with("0-") {
            app.hold_standalone(&session).await;
        }
        return Ok(app.sse(resumed.replay, resumed.live, ConnGuard::new(router.clone(), None)));
    }
    let Some(rx) = router.open_standalone().await else {
        return Err(invalid_request(StatusCode::CONFLICT, "an SSE stream is already open for this session"));
    };
    app.hold_standalone(&session).await;
    let priming = router.resumable() && session.peer().protocol_version() >= ProtocolVersion::V2025_11_25;
    let first = if priming { vec![router.priming_event(STANDALONE).await] } else { Vec::new() };
    Ok(app.sse(first, Some(rx), ConnGuard::new(router.clone(), None)))
}

/// DELETE: ends the session.
pub(crate) async fn delete_mcp(
    State(app): State<Arc<App>>,
    _: AllowedOrigin,
    _: Authenticated,
    request: Request<Body>,
) -> Result<Response, Response> {
    let (parts, _) = request.into_parts();
    let headers = &parts.headers;
    if app.config().stateless {
        return Ok((StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, "POST")]).into_response());
    }
    let session = app.session(headers, &parts.extensions).await?;
    app.end_shared(&session).await;
    if let Some(s) = app.remove(&session.router.session_id) {
        s.end().await;
    }
    Ok(StatusCode::OK.into_response())
}
