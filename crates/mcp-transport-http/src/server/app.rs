//! The endpoint's state: its configuration, its sessions (created, looked up, expired), and
//! the bound on requests in flight; and the router that serves it.
// A failed check's `Response` is returned at once (see `checks`): boxing it would only allocate.
#![allow(clippy::result_large_err)]

use mcp_jsonrpc::sync::MutexExt as _;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::http::{Extensions, HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::{get, post};
use bytes::Bytes;
use mcp_jsonrpc::RequestId;
use tokio::sync::mpsc;

use super::checks::session_id;
use super::config::HttpServerConfig;
use super::factory::{SessionFactory, SharedSession};
use super::response::{busy, draining, error_response, session_not_found};
use super::session::Session;
use super::session::drain::Drain;
use super::session::table::{Full, SessionTable};
use super::shared::bus::{BusMessage, Kind};
use super::shared::fleet::Fleet;
use super::shared::link::SharedLink;
use super::stream::body::{ConnGuard, SseBody};
use super::stream::router::{Mode, SessionRouter};
use super::{handlers, http_sse, post};
use crate::headers::TEXT_EVENT_STREAM;

/// The state every handler of the endpoint shares.
pub(crate) struct App {
    pub(super) factory: Arc<dyn SessionFactory>,
    config: HttpServerConfig,
    /// The sessions (shared with the configuration's [`Drain`](super::session::drain::Drain)).
    sessions: Arc<Mutex<SessionTable>>,
    reaper: AtomicBool,
    /// This endpoint's part in a fleet that shares sessions, if it does.
    pub(super) fleet: Option<Arc<Fleet>>,
    /// The fleet's bus is listened to (started with the first session).
    listener: AtomicBool,
    /// POSTs whose requests are being handled (at most `max_requests_in_flight`).
    in_flight: Arc<AtomicUsize>,
}

/// A POST's place among the requests in flight (see [`App::admit`]); freed on drop.
pub(crate) struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

/// The endpoint's routes: the MCP endpoint, and the HTTP+SSE endpoints if enabled.
pub(crate) fn router(factory: Arc<dyn SessionFactory>, config: HttpServerConfig) -> axum::Router {
    let path = config.path.clone();
    let http_sse = config.http_sse.clone();
    #[cfg(feature = "auth")]
    let auth = config.auth.clone();
    let drain = config.drain.clone();
    let health = config.health_routes;
    let fleet = config.shared_sessions.clone().map(|store| Arc::new(Fleet::new(store)));
    let app = Arc::new(App {
        factory,
        config,
        sessions: Arc::default(),
        reaper: AtomicBool::new(false),
        fleet,
        listener: AtomicBool::new(false),
        in_flight: Arc::new(AtomicUsize::new(0)),
    });
    drain.register(&app.sessions);
    // In a fleet, the other instances' messages are heard from the start (when built within a
    // runtime; else from the first session).
    if let Some(fleet) = &app.fleet
        && tokio::runtime::Handle::try_current().is_ok()
    {
        app.start_listener(fleet);
    }
    let mcp = get(handlers::get_mcp).post(post::post_mcp).delete(handlers::delete_mcp);
    let mut router = axum::Router::new().route(&path, mcp);
    if let Some((sse, messages)) = http_sse {
        router = router.route(&sse, get(http_sse::open_stream)).route(&messages, post(http_sse::post_message));
    }
    // The protected resource metadata, served without a token, to any origin.
    #[cfg(feature = "auth")]
    if let Some(auth) = auth {
        use super::auth::AuthConfig;
        // Encoded once: the metadata does not change while the router serves.
        let body = auth.metadata_json();
        for metadata_path in auth.metadata_paths(&path) {
            let body = body.clone();
            let answer = move || async move { AuthConfig::metadata_response(body) };
            let preflight = |headers: HeaderMap| async move { AuthConfig::metadata_preflight(&headers) };
            router = router.route(&metadata_path, get(answer).options(preflight));
        }
    }
    if health {
        router = health_routes(router, drain);
    }
    router.with_state(app)
}

/// `/healthz` (200 while the process serves) and `/readyz` (200, 503 once draining).
fn health_routes(router: axum::Router<Arc<App>>, drain: Arc<Drain>) -> axum::Router<Arc<App>> {
    let ready = move || {
        let ready = drain.is_ready();
        async move { if ready { (StatusCode::OK, "ready") } else { (StatusCode::SERVICE_UNAVAILABLE, "draining") } }
    };
    router.route("/healthz", get(|| async { "ok" })).route("/readyz", get(ready))
}

impl App {
    /// The endpoint's settings.
    pub(super) fn config(&self) -> &HttpServerConfig {
        &self.config
    }

    /// The Streamable HTTP session a request names: 400 without `Mcp-Session-Id`, 404 for an
    /// unknown one (or one of another principal, or an HTTP+SSE session). In a fleet, a
    /// session this instance does not hold is loaded from the shared store (503 when the
    /// store fails).
    pub(super) async fn session(
        self: &Arc<Self>,
        headers: &HeaderMap,
        extensions: &Extensions,
    ) -> Result<Arc<Session>, Response> {
        let id = session_id(headers)?;
        if let Some(session) = self.lookup(id, Mode::Streamable, extensions) {
            return Ok(session);
        }
        if self.local(id).is_some() {
            // An HTTP+SSE session: not one of this endpoint's (nor to load from a store).
            return Err(session_not_found());
        }
        match &self.fleet {
            Some(fleet) => self.load_shared(fleet, id, extensions).await,
            None => Err(session_not_found()),
        }
    }

    /// A place for a POST that carries requests, or the 503 that says there is none (or that
    /// the server is shutting down).
    pub(super) fn admit(&self, id: Option<&RequestId>) -> Result<InFlight, Response> {
        if self.config.drain.is_draining() {
            return Err(draining(id));
        }
        let limit = self.config.max_requests_in_flight;
        let admitted =
            self.in_flight.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < limit).then_some(n + 1));
        admitted.map(|_| InFlight(self.in_flight.clone())).map_err(|_| busy(limit, id))
    }

    /// The live session `id`, marked active, if it travels by `mode` (each transport's
    /// endpoints serve only their own sessions) and the request (whose `extensions` hold its
    /// principal, with feature `auth`) may use it.
    pub(super) fn lookup(&self, id: &str, mode: Mode, extensions: &Extensions) -> Option<Arc<Session>> {
        let mut sessions = self.sessions.lock_unpoisoned();
        let session = sessions.get(id)?;
        if session.router.mode() != mode {
            tracing::debug!(session = %id, "a session used through the other transport's endpoint");
            return None;
        }
        #[cfg(feature = "auth")]
        if session.owner.as_ref().is_some_and(|owner| !owner.admits(extensions)) {
            tracing::debug!(session = %id, "a session used by another principal");
            return None;
        }
        #[cfg(not(feature = "auth"))]
        let _ = extensions;
        let session = session.clone();
        if session.peer().is_closed() {
            // Its peer was closed (by a handler, say): the session's streams end with it.
            if let Some(gone) = sessions.remove(id) {
                tokio::spawn(async move { gone.end().await });
            }
            return None;
        }
        session.router.touch();
        if let Some(fleet) = &self.fleet {
            self.touch_shared(fleet, &session);
        }
        Some(session)
    }

    /// Forgets session `id` (the caller ends it).
    pub(super) fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.lock_unpoisoned().remove(id)
    }

    /// A session of this instance, without loading it from a fleet's store.
    pub(super) fn local(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.lock_unpoisoned().get(id).cloned()
    }

    /// Starts a session, owned by the principal in `extensions` (feature `auth`) and counted
    /// for the client address there (see [`client_address`]); 503 with `Retry-After` when
    /// the endpoint or the address is at its bound even after expiring idle sessions (an
    /// answer to `request`, the initialize, if any).
    pub(super) async fn create_session(
        self: &Arc<Self>,
        mode: Mode,
        extensions: &Extensions,
        request: Option<&RequestId>,
    ) -> Result<Arc<Session>, Response> {
        self.start_reaper();
        let client = client_address(extensions);
        let (max, per_client) = (self.config.max_sessions, self.config.max_sessions_per_client);
        if self.sessions.lock_unpoisoned().room(client, max, per_client).is_err() {
            self.reap().await;
        }
        let id: Arc<str> = new_session_id().into();
        let shared = match (&self.fleet, mode) {
            (Some(fleet), Mode::Streamable) => Some(self.link(fleet, owner_record(extensions))),
            _ => None,
        };
        let router = SessionRouter::new(
            id.clone(),
            mode,
            self.config.event_store.clone(),
            self.config.stream_queue,
            self.config.retry,
            shared,
        );
        router.touch();
        let mut sessions = self.sessions.lock_unpoisoned();
        if let Err(full) = sessions.room(client, max, per_client) {
            drop(sessions);
            return Err(self.full(full, client, request));
        }
        let (dispatcher, refresh) = match self.connect_copy(&router, None) {
            Some(shared) => (shared.dispatcher, Some(shared.refresh)),
            None => (self.factory.connect(router.clone()), None),
        };
        let session = Arc::new(Session {
            router,
            dispatcher,
            refresh,
            client,
            #[cfg(feature = "auth")]
            owner: super::auth::Owner::of(extensions),
        });
        sessions.insert(id, session.clone());
        drop(sessions);
        if let Some(fleet) = &self.fleet {
            self.start_listener(fleet);
        }
        Ok(session)
    }

    /// The 503 of a new session that does not fit (`full` says which bound it met), as the
    /// answer to request `id`.
    fn full(&self, full: Full, client: Option<IpAddr>, id: Option<&RequestId>) -> Response {
        match full {
            Full::Server => {
                tracing::warn!(max = self.config.max_sessions, "a new session refused: the server holds its most");
            }
            Full::Client => {
                let (max, client) = (self.config.max_sessions_per_client, client.map(|ip| ip.to_string()));
                tracing::warn!(max, client, "a new session refused: its client address holds its most");
            }
        }
        super::checks::too_many_sessions(full, id)
    }

    /// The router of a session-less exchange (a stateless or 2026-07-28 POST): no id, no event
    /// store.
    pub(super) fn ephemeral_router(&self) -> Arc<SessionRouter> {
        SessionRouter::new("".into(), Mode::Streamable, None, self.config.stream_queue, self.config.retry, None)
    }

    /// Ends the sessions idle for longer than the timeout.
    async fn reap(&self) {
        let timeout = self.config.session_idle_timeout;
        let expired: Vec<Arc<Session>> = {
            self.sessions.lock_unpoisoned().remove_where(|s| {
                s.peer().is_closed()
                    || (s.router.idle_for() >= timeout
                        && s.router.connections.load(Ordering::Relaxed) == 0
                        && s.peer().running_requests() == 0)
            })
        };
        for session in expired {
            tracing::debug!(session = %session.router.session_id, "session expired");
            if session.router.shared().is_some() {
                // The record expires in the store by itself; other copies may be in use.
                session.end_copy().await;
            } else {
                session.end().await;
            }
        }
    }

    fn start_reaper(self: &Arc<Self>) {
        if self.reaper.swap(true, Ordering::Relaxed) {
            return;
        }
        let app = Arc::downgrade(self);
        let period = (self.config.session_idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(60));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(app) = app.upgrade() else { return };
                app.reap().await;
            }
        });
    }

    /// An SSE response: `first` events, then what `live` brings until it ends.
    pub(super) fn sse(&self, first: Vec<Bytes>, live: Option<mpsc::Receiver<Bytes>>, guard: ConnGuard) -> Response {
        let keep_alive = self.config.keep_alive;
        let mut response = Response::new(axum::body::Body::new(SseBody::new(first, live, keep_alive, guard)));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(TEXT_EVENT_STREAM));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        headers.insert(X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
        response
    }
}

/// Tells proxies (nginx) not to buffer an SSE response.
const X_ACCEL_BUFFERING: header::HeaderName = header::HeaderName::from_static("x-accel-buffering");

tokio::task_local! {
    /// The address of the client of the connection [`serve`](super::serve) serves in this
    /// task.
    pub(super) static CLIENT_ADDRESS: IpAddr;
}

/// The address of the client that sent a request: that of the connection
/// [`serve`](super::serve) serves, or for a router served otherwise the `ConnectInfo` that
/// axum's `into_make_service_with_connect_info::<SocketAddr>` puts in the request's
/// extensions; `None` without either (the per-client bound then does not apply).
fn client_address(extensions: &Extensions) -> Option<IpAddr> {
    let ip = match CLIENT_ADDRESS.try_with(|ip| *ip) {
        Ok(ip) => ip,
        Err(_) => extensions.get::<ConnectInfo<SocketAddr>>()?.0.ip(),
    };
    // An IPv4 client of a dual-stack listener is the same client as over IPv4.
    Some(match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    })
}

/// 128 bits from the OS's generator, as 32 hex digits (visible ASCII).
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random number generator failed");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a fleet's store records of a session's owner (feature `auth`; empty otherwise).
fn owner_record(extensions: &Extensions) -> Box<str> {
    #[cfg(feature = "auth")]
    if let Some(owner) = super::auth::Owner::of(extensions) {
        return owner.record().into();
    }
    #[cfg(not(feature = "auth"))]
    let _ = extensions;
    "".into()
}

/// 503: the fleet's store of sessions did not answer.
fn store_unavailable() -> Response {
    let mut response = error_response(
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        None,
        &mcp_jsonrpc::ErrorObject::internal_error("the shared session store is unavailable; try again later"),
    );
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// A fleet's part of the endpoint: sessions loaded from the store, and the messages of the
/// other instances.
impl App {
    /// A new copy's part in `fleet`.
    fn link(&self, fleet: &Arc<Fleet>, owner: Box<str>) -> SharedLink {
        SharedLink::new(fleet.clone(), owner, self.config.session_idle_timeout)
    }

    /// This instance's copy of a shared session (`router`'s), new or from its `record`, its
    /// calls numbered from the instance's range; `None` when the session is not shared or the
    /// factory cannot share it (or read the record).
    fn connect_copy(&self, router: &Arc<SessionRouter>, record: Option<&[u8]>) -> Option<SharedSession> {
        let base = router.shared()?.fleet.base();
        let shared = self.factory.connect_shared(router.clone(), record)?;
        shared.dispatcher.peer().number_calls_from(base as i64);
        Some(shared)
    }

    /// Keeps the record of a session in use alive in the store (at most every few seconds per
    /// copy).
    fn touch_shared(&self, fleet: &Arc<Fleet>, session: &Arc<Session>) {
        if !session.router.shared().is_some_and(SharedLink::touch_due) {
            return;
        }
        let (fleet, id, ttl) = (fleet.clone(), session.router.session_id.clone(), self.config.session_idle_timeout);
        tokio::spawn(async move {
            if let Err(e) = fleet.store.touch(&id, ttl).await {
                tracing::warn!(session = %id, "fleet: session not touched: {e}");
            }
        });
    }

    /// The copy here of session `id`, which this instance does not hold, from the store.
    async fn load_shared(
        self: &Arc<Self>,
        fleet: &Arc<Fleet>,
        id: &str,
        extensions: &Extensions,
    ) -> Result<Arc<Session>, Response> {
        let record = match fleet.store.load(id).await {
            Ok(Some(record)) => record,
            Ok(None) => return Err(session_not_found()),
            Err(e) => {
                tracing::warn!(session = %id, "fleet: the session store failed: {e}");
                return Err(store_unavailable());
            }
        };
        let (owner, record) = split_record(&record).ok_or_else(session_not_found)?;
        if owner != &*owner_record(extensions) {
            tracing::debug!(session = %id, "a shared session used by another principal");
            return Err(session_not_found());
        }
        // A copy counts toward the sessions this instance holds, not toward a client address
        // (the session was counted for its client where it was created).
        if self.sessions.lock_unpoisoned().len() >= self.config.max_sessions {
            self.reap().await;
        }
        let id: Arc<str> = id.into();
        let link = self.link(fleet, owner.into());
        let queue = self.config.stream_queue;
        let router = SessionRouter::new(
            id.clone(),
            Mode::Streamable,
            self.config.event_store.clone(),
            queue,
            self.config.retry,
            Some(link),
        );
        router.touch();
        let shared = self.connect_copy(&router, Some(record)).ok_or_else(session_not_found)?;
        let session = Arc::new(Session {
            router,
            dispatcher: shared.dispatcher,
            refresh: Some(shared.refresh),
            client: None,
            #[cfg(feature = "auth")]
            owner: super::auth::Owner::of(extensions),
        });
        // Another request loaded it meanwhile (that copy serves), or the table is full.
        let refused = {
            let mut sessions = self.sessions.lock_unpoisoned();
            match sessions.get(&id).cloned() {
                Some(first) => Some(Ok(first)),
                None if sessions.len() >= self.config.max_sessions => Some(Err(self.full(Full::Server, None, None))),
                None => {
                    sessions.insert(id, session.clone());
                    None
                }
            }
        };
        if let Some(outcome) = refused {
            session.end_copy().await;
            return outcome;
        }
        self.start_reaper();
        self.start_listener(fleet);
        Ok(session)
    }

    /// Listens to the fleet's bus (once).
    fn start_listener(self: &Arc<Self>, fleet: &Arc<Fleet>) {
        if self.listener.swap(true, Ordering::Relaxed) {
            return;
        }
        // Subscribed now: what is published from here on reaches this endpoint.
        let mut bus = fleet.store.subscribe();
        let app = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let message = match bus.recv().await {
                    Ok(message) => message,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!("fleet: {n} messages of other instances missed (the bus ran ahead)");
                        continue;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                let Some(app) = app.upgrade() else { return };
                app.on_bus(&message).await;
            }
        });
    }

    /// A message of another instance.
    async fn on_bus(&self, bytes: &Bytes) {
        let Some(fleet) = &self.fleet else { return };
        let Some(message) = BusMessage::decode(bytes) else {
            tracing::debug!("fleet: unreadable message on the bus");
            return;
        };
        if message.origin == fleet.tag {
            return;
        }
        match message.kind {
            Kind::Event => return fleet.relay(&message),
            Kind::Alive => return fleet.alive(&message),
            _ => {}
        }
        let Some(session) = self.local(&message.session) else { return };
        match message.kind {
            Kind::Incoming => deliver_incoming(&session, &message.frame).await,
            Kind::Standalone => session.router.deliver_standalone(&message.frame).await,
            Kind::Probe if session.router.release(message.stream).await => {
                let mut alive = fleet.message(Kind::Alive, &message.session, Bytes::new());
                alive.stream = message.stream;
                fleet.publish(alive).await;
            }
            Kind::Changed => self.refresh(fleet, &session).await,
            Kind::Ended => {
                if let Some(gone) = self.remove(&message.session) {
                    gone.end_copy().await;
                }
            }
            _ => {}
        }
    }

    /// Reloads the record of a session another instance changed into the copy here.
    async fn refresh(&self, fleet: &Fleet, session: &Session) {
        let id = &session.router.session_id;
        match fleet.store.load(id).await {
            Ok(Some(record)) => {
                if let (Some(refresh), Some((_, record))) = (&session.refresh, split_record(&record))
                    && !refresh(record)
                {
                    tracing::warn!(session = %id, "fleet: a session record could not be read");
                }
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(session = %id, "fleet: a changed session not reloaded: {e}"),
        }
    }

    /// The client ended a shared session (DELETE): its record goes, and the other copies end.
    pub(super) async fn end_shared(&self, session: &Session) {
        let Some(link) = session.router.shared() else { return };
        let id = &session.router.session_id;
        if let Err(e) = link.fleet.store.remove(id).await {
            tracing::warn!(session = %id, "fleet: the record of an ended session not removed: {e}");
        }
        link.fleet.publish(link.fleet.message(Kind::Ended, id, Bytes::new())).await;
    }
}

/// A record as the store holds it: the owner's line, then the factory's part.
fn split_record(record: &[u8]) -> Option<(&str, &[u8])> {
    let newline = record.iter().position(|&b| b == b'\n')?;
    Some((std::str::from_utf8(&record[..newline]).ok()?, &record[newline + 1..]))
}

/// A client's message another instance got: handed to this copy's peer, which takes the
/// responses it awaits and the cancellations of what it runs.
async fn deliver_incoming(session: &Session, frame: &Bytes) {
    let parsed = mcp_jsonrpc::message::parse(frame);
    session.dispatcher.dispatch(parsed, None).await;
}
