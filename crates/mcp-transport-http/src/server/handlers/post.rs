//! POST to the MCP endpoint: the messages of a session, or of the stateless mode, handed to
//! the peer that serves them and answered with 202, one JSON response or an SSE stream. A
//! request of the stateless revision goes to [`super::stateless_revision`].

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, Request, StatusCode, header, request::Parts};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use mcp_jsonrpc::{ErrorObject, RequestId, message};
use mcp_types::Notification as _;
use mcp_types::ProtocolVersion;
use tokio::sync::oneshot;

use super::extract::{AllowedOrigin, Authenticated, PostMediaTypes};
use super::info::RequestInfo;
use super::stateless_revision;
use crate::headers::{APPLICATION_JSON, MCP_SESSION_ID};
use crate::server::checks::{Classified, authorized, batch_allowed, classify, protocol_version, read_body};
use crate::server::endpoint::App;
use crate::server::response::{error_response, session_ended};
use crate::server::session::Session;
use crate::server::shared::Audience;
use crate::server::shared::bus::Kind;
use crate::server::shared::fleet::tag_of;
use crate::server::stream::body::ConnGuard;
use crate::server::stream::router::{Answer, Answered, Mode, OpenError};

/// The kind of exchange a POST is: what its handlers see, and how its SSE answer begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exchange {
    /// A message of a session: its handlers see the session id; an SSE answer opens with a
    /// priming event (an id to resume from) when `priming` and the session keeps events.
    Session {
        /// The session's revision has priming events (2025-11-25 on) and the message is no
        /// initialize.
        priming: bool,
    },
    /// A message served outside any session (the stateless mode): no session id, nothing to
    /// resume.
    Stateless,
}

/// POST: checks its headers and body, then serves it by what it is.
pub(crate) async fn post_mcp(
    State(app): State<Arc<App>>,
    _: AllowedOrigin,
    _: Authenticated,
    _: PostMediaTypes,
    request: Request<Body>,
) -> Result<Response, Response> {
    let (parts, body) = request.into_parts();
    let body = read_body(app.config(), body).await?;
    let what = classify(&body)?;
    authorized(app.config(), app.factory.as_ref(), &what.parsed, &parts)?;
    let header_version = protocol_version(&parts.headers, what.requests.first())?;
    if header_version.is_some_and(ProtocolVersion::is_stateless) || what.stateless_envelope {
        return stateless_revision::post(&app, parts, what.parsed, header_version).await;
    }
    if app.config().stateless {
        return post_stateless(&app, parts, what, header_version).await;
    }
    post_in_session(&app, parts, what, &body).await
}

/// Serves a POST of a session (a new one for initialize, whose id the answer carries).
async fn post_in_session(app: &Arc<App>, parts: Parts, what: Classified, body: &Bytes) -> Result<Response, Response> {
    let session = if what.initialize {
        app.create_session(Mode::Streamable, &parts.extensions, what.requests.first()).await?
    } else {
        app.session(&parts.headers, &parts.extensions).await?
    };
    if what.requests.is_empty() {
        forward_in_fleet(&session, &what, body).await;
    }
    let version = session.peer().protocol_version();
    batch_allowed(&what, version)?;
    let initialize = what.initialize;
    let exchange = Exchange::Session { priming: !initialize && version >= ProtocolVersion::V2025_11_25 };
    let (Ok(mut response) | Err(mut response)) = dispatch(app, &session, parts, what, exchange).await;
    if initialize {
        if let Ok(v) = HeaderValue::from_str(&session.router.session_id) {
            response.headers_mut().insert(MCP_SESSION_ID, v);
        }
        if !response.status().is_success() {
            // The initialize failed before reaching the server: no session.
            if let Some(s) = app.remove(&session.router.session_id) {
                s.end().await;
            }
        }
    }
    Ok(response)
}

/// Serves one POST outside any session (the stateless mode).
async fn post_stateless(
    app: &Arc<App>,
    parts: Parts,
    what: Classified,
    header_version: Option<ProtocolVersion>,
) -> Result<Response, Response> {
    let version = header_version.unwrap_or(ProtocolVersion::V2025_03_26);
    batch_allowed(&what, version)?;
    let router = app.ephemeral_router();
    let dispatcher = if what.initialize {
        app.factory.connect(router.clone())
    } else {
        app.factory.connect_stateless(router.clone(), version)
    };
    let session = Session {
        router,
        dispatcher,
        refresh: None,
        client: None,
        #[cfg(feature = "auth")]
        owner: None,
    };
    dispatch(app, &session, parts, what, Exchange::Stateless).await
}

/// Hands a POSTed message to the peer of `session` (in this task) and answers with 202, its
/// JSON response, or its SSE stream.
async fn dispatch(
    app: &App,
    session: &Session,
    parts: Parts,
    what: Classified,
    exchange: Exchange,
) -> Result<Response, Response> {
    let router = &session.router;
    let session_id = match exchange {
        Exchange::Session { .. } => Some(router.session_id.clone()),
        Exchange::Stateless => None,
    };
    if session.peer().is_closed() {
        return Err(session_ended());
    }
    if what.requests.is_empty() {
        let info = RequestInfo {
            client: crate::server::endpoint::client_address(&parts.extensions),
            parts,
            session_id,
            stream: None,
            _in_flight: None,
        };
        session.dispatcher.dispatch(what.parsed, Some(Arc::new(info))).await;
        return Ok(StatusCode::ACCEPTED.into_response());
    }
    let permit = app.admit(what.requests.first())?;
    let answer = if app.config().json_response { Answer::Json } else { Answer::Sse };
    let priming = exchange == Exchange::Session { priming: true } && router.resumable();
    let (stream, answered) = router.open_stream(what.requests, answer, priming).await.map_err(open_failed)?;
    // The priming event comes before anything the handler sends (it may send, or close the
    // stream, while it is polled here): its id is the point the client resumes from. A shared
    // session's stream holds what the handler sends until the response starts, and sends the
    // priming event itself then (`SessionRouter::started`).
    let first = match answered {
        Answered::Sse(_) if priming && !router.defers() => vec![router.priming_event(stream).await],
        _ => Vec::new(),
    };
    let info = RequestInfo {
        client: crate::server::endpoint::client_address(&parts.extensions),
        parts,
        session_id,
        stream: Some((Arc::downgrade(router), stream)),
        _in_flight: Some(permit),
    };
    session.dispatcher.dispatch(what.parsed, Some(Arc::new(info))).await;
    if matches!(answered, Answered::Sse(_)) {
        router.started(stream).await;
    }
    match answered {
        Answered::Json(rx) => json_answer(rx).await,
        Answered::Sse(rx) => Ok(app.sse(first, Some(rx), ConnGuard::new(router.clone(), None))),
    }
}

/// In a fleet, what the client answers or cancels may be another copy's: a response this copy
/// does not await, and every `notifications/cancelled`, also go to the other instances (the
/// copy that awaits or runs it takes it; the others ignore it).
async fn forward_in_fleet(session: &Session, what: &Classified, body: &Bytes) {
    let Some(link) = session.router.shared() else { return };
    let elsewhere = |message: &message::Message| match message {
        message::Message::Response(response) => {
            response.id.as_ref().is_some_and(|id| !session.peer().awaits_response(id))
        }
        message::Message::Notification(n) => n.method == mcp_types::CancelledNotification::METHOD,
        message::Message::Request(_) => false,
    };
    let forward = match &what.parsed {
        message::Parsed::Single(m) => elsewhere(m),
        message::Parsed::Batch(items) => items.iter().filter_map(|i| i.as_ref().ok()).any(elsewhere),
        _ => false,
    };
    if !forward {
        return;
    }
    let message = link.fleet.message(Kind::Incoming, &session.router.session_id, body.clone());
    // An answer to a request of another copy goes to it alone: its id names its instance.
    // Cancellations (the client's own request ids) and batches go to every copy of the session.
    let to = match &what.parsed {
        message::Parsed::Single(message::Message::Response(response)) => match &response.id {
            Some(RequestId::Integer(id)) => Some(tag_of(*id as u64)),
            _ => None,
        },
        _ => None,
    };
    match to {
        // This instance's own (a call no copy awaits any more), or not one of the fleet's.
        Some(to) if to == link.fleet.tag() || to == 0 => {}
        Some(to) => link.fleet.send_to(to, message).await,
        None => link.fleet.send_to_copies(Audience::Copies, message).await,
    }
}

/// Why a POST's stream could not open, as its answer.
fn open_failed(error: OpenError) -> Response {
    match error {
        OpenError::DuplicateId(id) => error_response(
            StatusCode::BAD_REQUEST,
            Some(&id),
            &ErrorObject::invalid_request(format!("request id {id} is already in use in this session")),
        ),
        OpenError::Closed => session_ended(),
    }
}

/// The JSON answer of a POST, once its response frame comes.
async fn json_answer(rx: oneshot::Receiver<Bytes>) -> Result<Response, Response> {
    match rx.await {
        Ok(frame) if !frame.is_empty() => {
            Ok(([(header::CONTENT_TYPE, HeaderValue::from_static(APPLICATION_JSON))], frame).into_response())
        }
        // Cancelled: there is no response.
        Ok(_) => Ok(StatusCode::ACCEPTED.into_response()),
        // The stream was dropped unanswered: the session ended (DELETE, expiry) meanwhile.
        Err(_) => Err(session_ended()),
    }
}
