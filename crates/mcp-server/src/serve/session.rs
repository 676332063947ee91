//! One client's session: the lifecycle (initialize, initialized), what the client declared,
//! its log level and subscriptions, and the entry of its requests (handed to
//! `dispatch` once the revision they are served in is known).

use std::future::Future;
use std::sync::Arc;

use mcp_jsonrpc::message::{self, decode_params};
use mcp_jsonrpc::{BoxFuture, ErrorObject, Peer, Reply, RequestContext, Service};
use mcp_types::{
    CallToolRequest, DiscoverRequest, GetPromptRequest, InitializeRequest, InitializeRequestParams, InitializeResult,
    InitializedNotification, Notification, ProtocolVersion, ReadResourceRequest, Request, RootsListChangedNotification,
    SubscriptionsListenRequest,
};

use super::call::Call;
use super::dispatch::route;
use super::reply::{Decoration, Era, respond};
use super::shared::ServerShared;
use super::stateless;
use crate::context::session::{RecordChange, SessionState, update_shared};

/// A server as the services of its connections hold it: what they share, and the layers its
/// requests pass first (which the serving below the middleware does not see).
pub(crate) struct Serving {
    pub(crate) shared: ServerShared,
    /// The middleware, outermost first (empty: requests are served in place).
    pub(crate) middleware: crate::middleware::Layers,
}

impl std::ops::Deref for Serving {
    type Target = ServerShared;

    fn deref(&self) -> &ServerShared {
        &self.shared
    }
}

/// The `Service` of one connection.
pub(crate) struct Session {
    pub(crate) server: Arc<Serving>,
    pub(crate) state: Arc<SessionState>,
    /// Counted among the live sessions (`mcp_sessions`): not a stateless POST's.
    pub(crate) counted: bool,
}

impl Session {
    /// The service of a connection whose state is `state`; `counted`: a session that counts
    /// in `mcp_sessions` while it lives.
    pub(crate) fn new(server: Arc<Serving>, state: Arc<SessionState>, counted: bool) -> Session {
        if counted {
            crate::metrics::session_started();
        }
        Session { server, state, counted }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.counted {
            crate::metrics::session_ended();
        }
        self.server.session_ended();
    }
}

impl Service for Session {
    fn request(&self, request: message::Request, ctx: RequestContext) -> BoxFuture<Reply> {
        // `Span::none()` unless a subscriber wants it: then nothing of the request is read.
        let span = crate::trace::request_span(&request, &ctx);
        // Counted now; its duration and outcome when its reply is ready.
        let meter = crate::metrics::Meter::start(request.method.as_str());
        let handled = handle(self.server.clone(), self.state.clone(), request, ctx);
        Box::pin(meter.measure(crate::trace::Traced::new(handled, span)))
    }

    fn notification(&self, notification: message::Notification, peer: &Peer) {
        if !self.server.middleware.is_empty() {
            let seen = crate::middleware::McpNotification {
                method: &notification.method,
                params: notification.params.as_deref(),
                peer,
            };
            if !crate::middleware::notify(&self.server.middleware, &seen) {
                return;
            }
        }
        match notification.method.as_str() {
            InitializedNotification::METHOD => tracing::debug!("client initialized"),
            RootsListChangedNotification::METHOD => match &self.server.on_roots_changed {
                Some(f) => f(peer.clone()),
                None => tracing::debug!("client roots changed"),
            },
            other => {
                if !self.server.custom.notify(other, notification.params.as_deref(), peer) {
                    tracing::debug!(method = other, "unhandled notification");
                }
            }
        }
    }
}

/// One request of the connection: of the stateless revision if its params carry the envelope,
/// else of the connection's session (`initialize` first).
#[expect(clippy::manual_async_fn, reason = "an async fn's future holds its arguments twice")]
fn handle(
    server: Arc<Serving>,
    state: Arc<SessionState>,
    req: message::Request,
    rctx: RequestContext,
) -> impl Future<Output = Reply> + Send + 'static {
    async move {
        let (server, state) = (&*server, &state);
        // A request without the version key in its params is not read any further here.
        if stateless::may_have_envelope(&req) {
            // Boxed, in a statement of its own, the envelope's scope ended: a temporary or a
            // binding still in scope at the await would keep its room in this future (which
            // every request's is) across it.
            let stateless = stateless::envelope(&req)?.map(|e| Box::pin(handle_stateless(server, &req, &rctx, e)));
            if let Some(stateless) = stateless {
                return stateless.await;
            }
        }
        let method = req.method.as_str();
        if method == InitializeRequest::METHOD {
            if !server.middleware.is_empty() {
                // Through the layers (boxed, out of every request's future).
                let era = Era::session(rctx.peer().protocol_version());
                let call = Call { server, state, req: &req, rctx: &rctx, era: &era };
                let end: crate::middleware::End<'_> =
                    Box::new(|call| Box::pin(initialize_session(call.server, call.state, call.req, call.rctx)));
                return crate::middleware::run_to(&server.middleware, call, end).await;
            }
            return initialize_session(server, state, &req, &rctx).await;
        }
        if !state.is_initialized() {
            return Err(ErrorObject::invalid_request(format!(
                "`{method}` before `initialize`: the session is not initialized"
            )));
        }
        let era = Era::session(rctx.peer().protocol_version());
        dispatch(&server.middleware, Call { server, state, req: &req, rctx: &rctx, era: &era }).await
    }
}

/// Serves a request of an initialized session, or a request of the stateless revision, by the
/// marker type of its method ([`route`]).
///
/// With middleware installed the request goes through the layers first (boxed, out of this
/// future); without, one branch on the empty list of layers and the request is served in
/// place.
fn dispatch<'a>(layers: &'a crate::middleware::Layers, call: Call<'a>) -> impl Future<Output = Reply> + Send + 'a {
    use futures_util::future::Either;
    if layers.is_empty() { Either::Left(route(call)) } else { Either::Right(crate::middleware::run(layers, call)) }
}

/// A request of the stateless revision (2026-07-28): served on its own, whatever the
/// connection's session, with what its `_meta` declares. A method the revision removed is
/// -32601 ([`dispatch`] checks each marker's revisions).
#[expect(clippy::manual_async_fn, reason = "an async fn's future holds its arguments twice")]
fn handle_stateless<'a>(
    server: &'a Serving,
    req: &'a message::Request,
    rctx: &'a RequestContext,
    envelope: crate::context::session::Envelope<'a>,
) -> impl Future<Output = Reply> + Send + 'a {
    async move {
        let method = req.method.as_str();
        let layered = !server.middleware.is_empty();
        if method == DiscoverRequest::METHOD {
            let version = envelope.version;
            if layered {
                let end: crate::middleware::End<'_> = Box::new(move |call| {
                    Box::pin(std::future::ready(stateless::discover(call.server, call.rctx, version)))
                });
                return Box::pin(through_layers(server, req, rctx, envelope, end)).await;
            }
            return stateless::discover(server, rctx, version);
        }
        if method == SubscriptionsListenRequest::METHOD {
            // Boxed: a long-lived stream, whose state the other requests need not carry.
            let tasks_declared = super::tasks_ext::declared(&envelope.capabilities);
            let hides = server.visibility.is_some() || server.hide_out_of_scope;
            // Tasks run elsewhere are followed by the forwarder, with the request's context.
            let forwards = server.task_forwarder.is_some();
            if layered || forwards {
                // The layers see the request (and may refuse it), not the stream's messages.
                let end: crate::middleware::End<'_> = Box::new(move |call| {
                    let params = call.req.params.as_deref();
                    let viewer = hides.then(|| (call.era.version, Arc::clone(call.state)));
                    let follower = forwards.then(|| call.context(None));
                    let listen = super::subscriptions::listen;
                    Box::pin(listen(call.server, params, call.rctx, tasks_declared, viewer, follower))
                });
                if !layered {
                    return Box::pin(with_state(server, req, rctx, envelope, end)).await;
                }
                return Box::pin(through_layers(server, req, rctx, envelope, end)).await;
            }
            // Who listens, kept only when the server may hide items from it (the client's
            // capabilities are large: else not kept across the await).
            let viewer = hides.then(|| (envelope.version, Arc::new(SessionState::stateless(envelope))));
            let listen = Box::pin(super::subscriptions::listen(
                server,
                req.params.as_deref(),
                rctx,
                tasks_declared,
                viewer,
                None,
            ));
            return listen.await;
        }
        if super::tasks_ext::is_task_method(method)
            && let Some(tasks) = &server.tasks
        {
            // The tasks extension (boxed: a rare path); the envelope not kept across the await.
            let declared = super::tasks_ext::declared(&envelope.capabilities);
            if layered {
                let end: crate::middleware::End<'_> = Box::new(move |call| {
                    Box::pin(async move {
                        let Some(tasks) = &call.server.tasks else {
                            return Err(ErrorObject::method_not_found(&call.req.method));
                        };
                        super::tasks_ext::serve(call.server, tasks, call.req, call.rctx, declared).await
                    })
                });
                return Box::pin(through_layers(server, req, rctx, envelope, end)).await;
            }
            drop(envelope);
            return Box::pin(super::tasks_ext::serve(server, tasks, req, rctx, declared)).await;
        }
        if server.task_forwarder.is_some() && super::tasks_ext::is_task_method(method) {
            // The tasks extension, its tasks run elsewhere (boxed: a rare path).
            let declared = super::tasks_ext::declared(&envelope.capabilities);
            let end: crate::middleware::End<'_> = Box::new(move |call| Box::pin(forward_task(call, declared)));
            if layered {
                return Box::pin(through_layers(server, req, rctx, envelope, end)).await;
            }
            return Box::pin(with_state(server, req, rctx, envelope, end)).await;
        }
        // The methods that may answer with an input-required result.
        let input_rounds = match method {
            CallToolRequest::METHOD | GetPromptRequest::METHOD | ReadResourceRequest::METHOD => Some(Arc::new(
                crate::context::rounds::InputRounds::from_request(server, req, envelope.capabilities.clone())?,
            )),
            _ => None,
        };
        let decoration = Decoration::new(server, server.cache_hints.for_method(method).cloned());
        let version = envelope.version;
        let state = Arc::new(SessionState::stateless(envelope));
        let era = Era { version, decoration: Some(decoration), input_rounds: input_rounds.clone() };
        let reply = dispatch(&server.middleware, Call { server, state: &state, req, rctx, era: &era }).await;
        match input_rounds.and_then(|rounds| rounds.outcome(server, rctx, req)) {
            Some(outcome) => outcome,
            None => reply,
        }
    }
}

/// A request of the stateless revision served before the typed dispatch (`server/discover`,
/// `subscriptions/listen`, the tasks extension's methods), through the server's layers, then
/// by `end`.
async fn through_layers<'a>(
    server: &'a Serving,
    req: &'a message::Request,
    rctx: &'a RequestContext,
    envelope: crate::context::session::Envelope<'a>,
    end: crate::middleware::End<'a>,
) -> Reply {
    let version = envelope.version;
    let state = Arc::new(SessionState::stateless(envelope));
    let era = Era { version, decoration: None, input_rounds: None };
    crate::middleware::run_to(&server.middleware, Call { server, state: &state, req, rctx, era: &era }, end).await
}

/// A request of the stateless revision served by `end`, with the state its `_meta` declares.
async fn with_state<'a>(
    server: &'a ServerShared,
    req: &'a message::Request,
    rctx: &'a RequestContext,
    envelope: crate::context::session::Envelope<'a>,
    end: crate::middleware::End<'a>,
) -> Reply {
    let version = envelope.version;
    let state = Arc::new(SessionState::stateless(envelope));
    let era = Era { version, decoration: None, input_rounds: None };
    end(Call { server, state: &state, req, rctx, era: &era }).await
}

/// A task method of the 2026-07-28 extension on a server whose tasks run elsewhere: the
/// forwarder's answer, as it is.
async fn forward_task(call: Call<'_>, declared: bool) -> Reply {
    let Some(forwarder) = &call.server.task_forwarder else {
        return Err(ErrorObject::method_not_found(&call.req.method));
    };
    if !declared {
        return Err(super::tasks_ext::missing_extension(&format!("`{}`", call.req.method)));
    }
    let params = call.req.params.as_deref().map(|p| serde_json::from_str(p.get())).transpose();
    let params = params.map_err(ErrorObject::invalid_params)?;
    let ctx = call.context(None);
    let answer = forwarder.forward(call.req.method.clone(), params, ctx).await?;
    call.rctx.encode_result(&answer)
}

/// `initialize`, and in a fleet the session recorded: any instance may serve the next request,
/// so the session is recorded first (and not initialized here if the store did not take it).
async fn initialize_session(
    server: &ServerShared,
    state: &Arc<SessionState>,
    req: &message::Request,
    rctx: &RequestContext,
) -> Reply {
    let reply = initialize(server, state, req, rctx)?;
    if let Err(e) = update_shared(state, rctx, RecordChange::Initialized).await {
        state.uninitialize();
        return Err(e);
    }
    Ok(reply)
}

/// `initialize`: the handshake of the session revisions.
fn initialize(
    server: &ServerShared,
    state: &Arc<SessionState>,
    req: &message::Request,
    rctx: &RequestContext,
) -> Reply {
    let p: InitializeRequestParams = decode_params(req.params.as_deref())?;
    // The client's revision if we speak it (and it has the handshake), else our newest.
    let version = ProtocolVersion::from_wire(&p.protocol_version)
        .filter(|v| !v.is_stateless())
        .unwrap_or(ProtocolVersion::LATEST_SESSION);
    state.initialize(p.capabilities, p.client_info);
    #[cfg(feature = "http")]
    if let Some(id) = rctx
        .attachment()
        .and_then(|a| a.downcast_ref::<mcp_transport_http::server::RequestInfo>())
        .and_then(|info| info.session_id())
    {
        state.set_http_id(id);
    }
    rctx.peer().set_protocol_version(version);
    let mut result = InitializeResult::new(server.capabilities.clone(), version.as_str(), server.info.clone());
    result.instructions = server.instructions.clone();
    respond(rctx, &result, &Era::session(version))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size of the future a function returns, for arguments of these types.
    fn future_size<F, A, B, C, D, Fut>(_: F) -> usize
    where
        F: Fn(A, B, C, D) -> Fut,
    {
        std::mem::size_of::<Fut>()
    }

    /// Every request's future is as large as its largest branch: the stateless revision's
    /// branch is boxed (the envelope not kept across its await), no argument is held twice, and
    /// no method's future keeps its params (in an unoptimized build: 576 bytes for a request,
    /// 936 more for a request of the stateless revision, in November 2026).
    #[test]
    fn a_requests_future_stays_small() {
        let request = future_size::<_, Arc<Serving>, Arc<SessionState>, message::Request, RequestContext, _>(handle);
        assert!(request <= 768, "a request's future is {request} bytes");
        let stateless = future_size::<
            _,
            &'static Serving,
            &'static message::Request,
            &'static RequestContext,
            crate::context::session::Envelope<'static>,
            _,
        >(handle_stateless);
        assert!(stateless <= 1280, "a stateless request's future is {stateless} bytes");
    }
}
