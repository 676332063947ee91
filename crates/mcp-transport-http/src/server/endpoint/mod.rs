//! The endpoint's state, which every handler shares ([`App`]): its configuration, its
//! sessions (created, looked up, expired), the bound on requests in flight, and its part in a
//! fleet (`fleet.rs`). It uses the configuration, the sessions, their streams, the fleet link,
//! the factory and the checks below it; the handlers and the routes above take it as their
//! state.
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
use bytes::Bytes;
use mcp_jsonrpc::{ErrorObject, RequestId};
use tokio::sync::mpsc;

use crate::headers::TEXT_EVENT_STREAM;
use crate::server::checks::session_id;
use crate::server::config::HttpServerConfig;
use crate::server::factory::SessionFactory;
use crate::server::response::{busy, draining, error_response, session_not_found};
use crate::server::session::Session;
use crate::server::session::table::{Full, SessionTable};
use crate::server::shared::fleet::Fleet;
use crate::server::stream::body::{ConnGuard, SseBody};
use crate::server::stream::router::{Mode, SessionRouter};

mod fleet;

/// The state every handler of the endpoint shares.
pub(crate) struct App {
    pub(super) factory: Arc<dyn SessionFactory>,
    config: HttpServerConfig,
    /// The sessions (shared with the configuration's drain, for a graceful shutdown).
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

impl App {
    /// The state of an endpoint serving `config` with sessions run by `factory`, its sessions
    /// registered with the configuration's [`Drain`](crate::server::session::drain::Drain).
    pub(crate) fn new(factory: Arc<dyn SessionFactory>, config: HttpServerConfig) -> Arc<App> {
        let drain = config.drain.clone();
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
        if app.fleet.is_some() {
            app.factory.fleet_loader(crate::server::factory::SessionLoader(Arc::downgrade(&app)));
        }
        // In a fleet, the other instances' messages are heard from the start (when built within a
        // runtime; else from the first session).
        if let Some(fleet) = &app.fleet
            && tokio::runtime::Handle::try_current().is_ok()
        {
            app.start_listener(fleet);
        }
        app
    }

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
        if let Some(fleet) = &self.fleet
            && fleet.is_lost()
        {
            return Err(fleet::tag_lost());
        }
        if let Some(session) = self.lookup(id, Mode::Streamable, extensions) {
            return Ok(session);
        }
        if self.local(id).is_some() {
            // An HTTP+SSE session: not one of this endpoint's (nor to load from a store).
            return Err(session_not_found());
        }
        match &self.fleet {
            Some(fleet) => self.load_shared(fleet, id, Some(extensions)).await,
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
        if let Some(fleet) = &self.fleet {
            if session.router.shared().is_some_and(|l| l.is_gone()) {
                // The store has no record of it any more (it ended, or expired): this copy ends.
                if let Some(gone) = sessions.remove(id) {
                    tokio::spawn(async move { gone.end_copy().await });
                }
                return None;
            }
            self.touch_shared(fleet, &session);
        }
        session.router.touch();
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
    /// the endpoint or the address is at its bound even after expiring idle sessions, or when
    /// a shared session's store is not ready (an answer to `request`, the initialize, if any).
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
        // A shared session needs the store: while it says it would fail, refuse at once.
        if let (Some(fleet), Mode::Streamable) = (&self.fleet, mode)
            && fleet.store.readiness().is_err()
        {
            tracing::warn!("a new session refused: the shared session store is unavailable");
            return Err(fleet::store_unavailable(fleet, request));
        }
        let id: Arc<str> = new_session_id().into();
        // A fleet-wide bound on sessions, if the store keeps one.
        if let (Some(fleet), Mode::Streamable) = (&self.fleet, mode)
            && let Some(admit) = fleet.store.admit(&id, self.config.session_idle_timeout)
        {
            match admit.await {
                Ok(true) => {}
                Ok(false) => {
                    tracing::warn!("a new session refused: the fleet holds its most");
                    return Err(too_many_sessions(Full::Fleet, request));
                }
                Err(e) => {
                    tracing::warn!("a new session refused: the shared session store failed: {e}");
                    return Err(fleet::store_unavailable(fleet, request));
                }
            }
        }
        let shared = match (&self.fleet, mode) {
            (Some(fleet), Mode::Streamable) => {
                self.fleet_ready(fleet).await?;
                Some(self.link(fleet, owner_record(extensions), false, fleet.new_copy()))
            }
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
            if let Some(link) = router.shared() {
                // Counted in the fleet above: uncounted.
                let (store, id) = (link.fleet.store.clone(), id.clone());
                tokio::spawn(async move { store.remove(&id).await });
            }
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
            owner: crate::server::auth::owner::Owner::of(extensions),
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
            Full::Fleet => tracing::warn!("a new session refused: the fleet holds its most"),
        }
        too_many_sessions(full, id)
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
                    || s.router.shared().is_some_and(|l| l.is_gone())
                    || (s.router.idle_for() >= timeout
                        && s.router.connections.load(Ordering::Relaxed) == 0
                        && s.peer().running_requests() == 0)
            })
        };
        for session in expired {
            tracing::debug!(session = %session.router.session_id, "session expired");
            if session.router.shared().is_some() {
                // The record expires in the store by itself; other copies may be in use. It
                // stops naming this one.
                session.end_copy().await;
                self.drop_copy(&session);
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
                if let Some(fleet) = &app.fleet {
                    app.keep_alive(fleet).await;
                }
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

/// 503 with `Retry-After`: the endpoint, or the client's address, holds as many sessions as
/// it may (`full` says which); the answer to request `id`.
fn too_many_sessions(full: Full, id: Option<&RequestId>) -> Response {
    let message = match full {
        Full::Server => "too many sessions; try again later",
        Full::Client => "too many sessions from this client address; end one or try again later",
        Full::Fleet => "too many sessions in the fleet; try again later",
    };
    let mut response = error_response(StatusCode::SERVICE_UNAVAILABLE, id, &ErrorObject::internal_error(message));
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static(SESSIONS_RETRY_AFTER));
    response
}

/// The `Retry-After` (seconds) of a new session refused because the sessions are at their
/// bound: long enough for a few to end or expire.
const SESSIONS_RETRY_AFTER: &str = "5";

/// Tells proxies (nginx) not to buffer an SSE response.
const X_ACCEL_BUFFERING: header::HeaderName = header::HeaderName::from_static("x-accel-buffering");

tokio::task_local! {
    /// The address of the client of the connection [`serve`](crate::server::serve) serves in this
    /// task.
    pub(super) static CLIENT_ADDRESS: IpAddr;
}

/// The address of the client that sent a request: that of the connection
/// [`serve`](crate::server::serve) serves, or for a router served otherwise the `ConnectInfo` that
/// axum's `into_make_service_with_connect_info::<SocketAddr>` puts in the request's
/// extensions; `None` without either (the per-client bound then does not apply).
pub(crate) fn client_address(extensions: &Extensions) -> Option<IpAddr> {
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
    if let Some(owner) = crate::server::auth::owner::Owner::of(extensions) {
        return owner.record().into();
    }
    #[cfg(not(feature = "auth"))]
    let _ = extensions;
    "".into()
}
