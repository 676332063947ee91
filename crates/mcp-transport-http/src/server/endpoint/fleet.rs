//! The endpoint's part in a fleet that shares sessions: a session this instance does not hold
//! loaded from the store, the records of sessions in use kept alive, and the messages of the
//! other instances (their clients' answers, GET stream messages, probes, record changes,
//! ends) applied here.

use mcp_jsonrpc::sync::MutexExt as _;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::http::{Extensions, HeaderValue, header};
use axum::response::Response;
use bytes::Bytes;
use mcp_jsonrpc::RequestId;

use super::{App, owner_record};
use crate::server::factory::SharedSession;
use crate::server::response::{error_response, session_not_found};
use crate::server::session::Session;
use crate::server::session::table::Full;
use crate::server::shared::bus::{BusMessage, Kind};
use crate::server::shared::fleet::{Fleet, TAG_LEASE};
use crate::server::shared::link::SharedLink;
use crate::server::shared::{Delivery, OWNER_FIELD, SessionCopy, SessionRecord, Touched};
use crate::server::stream::router::{Mode, SessionRouter, SharedRecord};

/// 503 with `Retry-After`: the fleet's store of sessions did not answer, or says it would not
/// (its [`readiness`](crate::server::SharedSessions::readiness)); the answer to request `id`.
pub(super) fn store_unavailable(fleet: &Fleet, id: Option<&RequestId>) -> Response {
    let mut response = error_response(
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        id,
        &mcp_jsonrpc::ErrorObject::internal_error("the shared session store is unavailable; try again later"),
    );
    // While the store refuses calls at once (a breaker open), retry once it may take them.
    let retry_after = fleet.store.readiness().err().map_or(1, |wait| wait.as_secs_f64().ceil().max(1.0) as u64);
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    response
}

/// 503: this instance lost its tag to another instance (see `Fleet::renew`): it serves no
/// shared session (the balancer sends the client to another instance).
pub(super) fn tag_lost() -> Response {
    let mut response = error_response(
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        None,
        &mcp_jsonrpc::ErrorObject::internal_error("this instance is out of the fleet; try again"),
    );
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// A fleet's part of the endpoint: sessions loaded from the store, and the messages of the
/// other instances.
impl App {
    /// The instance's tag claimed (503 when the store fails), and still its own (503 once
    /// lost).
    pub(super) async fn fleet_ready(&self, fleet: &Fleet) -> Result<(), Response> {
        if fleet.is_lost() {
            return Err(tag_lost());
        }
        fleet.ready().await.map(|_| ()).map_err(|e| {
            tracing::warn!("fleet: no tag claimed: {e}");
            store_unavailable(fleet, None)
        })
    }

    /// A new copy's part in `fleet`: of a new session, or of one `recorded` in the store.
    pub(super) fn link(&self, fleet: &Arc<Fleet>, owner: Box<str>, recorded: bool, copy: SessionCopy) -> SharedLink {
        SharedLink::new(fleet.clone(), owner, self.config.session_idle_timeout, recorded, copy)
    }

    /// This instance's copy of a shared session (`router`'s), new or from its `record`, its
    /// calls numbered from the instance's range; `None` when the session is not shared or the
    /// factory cannot share it (or read the record).
    pub(super) fn connect_copy(
        &self,
        router: &Arc<SessionRouter>,
        record: Option<&SessionRecord>,
    ) -> Option<SharedSession> {
        let base = router.shared()?.fleet.base();
        let shared = self.factory.connect_shared(router.clone(), record, SharedRecord::new(router))?;
        shared.dispatcher.peer().number_calls_from(base as i64);
        Some(shared)
    }

    /// Keeps the record of a session in use alive in the store (at most every few seconds per
    /// copy); a copy whose record is gone is marked to end.
    pub(super) fn touch_shared(&self, fleet: &Arc<Fleet>, session: &Arc<Session>) {
        let Some(link) = session.router.shared() else { return };
        if !link.recorded() || !link.touch_due() {
            return;
        }
        let (fleet, session, ttl) = (fleet.clone(), session.clone(), self.config.session_idle_timeout);
        tokio::spawn(async move { touch(&fleet, &session, ttl).await });
    }

    /// Keeps alive the records of the shared sessions this instance holds that are in use:
    /// an SSE stream open or a request running, however long ago their last request came
    /// (at most [`KEEP_ALIVE_BATCH`] touches at a time).
    pub(super) async fn keep_alive(&self, fleet: &Arc<Fleet>) {
        let in_use: Vec<Arc<Session>> = self
            .sessions
            .lock_unpoisoned()
            .iter()
            .filter(|s| {
                s.router.shared().is_some_and(|l| l.recorded() && !l.is_gone())
                    && (s.router.connections.load(Ordering::Relaxed) > 0 || s.peer().running_requests() > 0)
            })
            .cloned()
            .collect();
        let ttl = self.config.session_idle_timeout;
        for batch in in_use.chunks(KEEP_ALIVE_BATCH) {
            futures_util::future::join_all(batch.iter().map(|session| touch(fleet, session, ttl))).await;
        }
    }

    /// A copy here of session `id`, for an operator (see
    /// [`SessionLoader`](crate::server::SessionLoader)): whether this instance holds one now.
    pub(crate) async fn load_for_operator(self: &Arc<Self>, id: &str) -> bool {
        let Some(fleet) = &self.fleet else { return false };
        if let Some(held) = self.local(id) {
            return held.router.shared().is_some();
        }
        self.load_shared(fleet, id, None).await.is_ok()
    }

    /// The copy here of session `id`, which this instance does not hold, from the store: for
    /// a request with `extensions`, whose principal must own it, or (`None`) for an operator,
    /// the copy then owned by who owns the session.
    pub(super) async fn load_shared(
        self: &Arc<Self>,
        fleet: &Arc<Fleet>,
        id: &str,
        extensions: Option<&Extensions>,
    ) -> Result<Arc<Session>, Response> {
        if fleet.store.readiness().is_err() {
            return Err(store_unavailable(fleet, None));
        }
        self.fleet_ready(fleet).await?;
        // Recorded as a copy as it is read: what is sent to the session's copies from then on
        // reaches this instance.
        let copy = fleet.new_copy();
        let record = match fleet.store.load_copy(id, copy).await {
            Ok(Some(record)) => record,
            Ok(None) => return Err(session_not_found()),
            Err(e) => {
                tracing::warn!(session = %id, "fleet: the session store failed: {e}");
                return Err(store_unavailable(fleet, None));
            }
        };
        let owner = record.field(OWNER_FIELD).and_then(|o| std::str::from_utf8(o).ok());
        let Some(owner) = owner.filter(|owner| extensions.is_none_or(|e| *owner == &*owner_record(e))) else {
            tracing::debug!(session = %id, "a shared session used by another principal");
            // No copy made here: the record stops naming it.
            forget_copy(fleet, id.into(), copy);
            return Err(session_not_found());
        };
        // A copy counts toward the sessions this instance holds, not toward a client address
        // (the session was counted for its client where it was created).
        if self.sessions.lock_unpoisoned().len() >= self.config.max_sessions {
            self.reap().await;
        }
        let id: Arc<str> = id.into();
        let link = self.link(fleet, owner.into(), true, copy);
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
        let Some(shared) = self.connect_copy(&router, Some(&record)) else {
            forget_copy(fleet, id, copy);
            return Err(session_not_found());
        };
        let session = Arc::new(Session {
            router,
            dispatcher: shared.dispatcher,
            refresh: Some(shared.refresh),
            client: None,
            #[cfg(feature = "auth")]
            owner: match extensions {
                Some(extensions) => crate::server::auth::owner::Owner::of(extensions),
                None => crate::server::auth::owner::Owner::from_record(owner),
            },
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
        match refused {
            // The record names this copy now: the one that serves takes its name.
            Some(Ok(first)) => {
                if let Some(link) = first.router.shared() {
                    link.set_copy(copy);
                }
                session.end_copy().await;
                return Ok(first);
            }
            Some(Err(full)) => {
                session.end_copy().await;
                self.drop_copy(&session);
                return Err(full);
            }
            None => {}
        }
        self.start_reaper();
        self.start_listener(fleet);
        // The record read may be older than the session's end (a DELETE on another instance
        // whose message came before this copy was in the table): the copy serves only if the
        // record is still there now, or else ends before it serves anything.
        let live = fleet.store.touch(&session.router.session_id, self.config.session_idle_timeout).await;
        if let (Ok(true), Some(link)) = (&live, session.router.shared()) {
            link.touched();
            return Ok(session);
        }
        self.remove_copy(&session);
        match live {
            Err(e) => {
                tracing::warn!(session = %session.router.session_id, "fleet: the session store failed: {e}");
                Err(store_unavailable(fleet, None))
            }
            _ => Err(session_not_found()),
        }
    }

    /// Listens to the fleet's bus (once): claims the instance's tag, then handles what reaches
    /// it, and renews the tag's lease.
    pub(super) fn start_listener(self: &Arc<Self>, fleet: &Arc<Fleet>) {
        if self.listener.swap(true, Ordering::Relaxed) {
            return;
        }
        let app = Arc::downgrade(self);
        let fleet = fleet.clone();
        tokio::spawn(async move {
            // The tag first (Redis may still be away: tried again until it answers).
            let mut backoff = std::time::Duration::from_millis(50);
            while let Err(e) = fleet.ready().await {
                tracing::warn!(?backoff, "fleet: no tag claimed yet: {e}");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(std::time::Duration::from_secs(2));
                if app.strong_count() == 0 {
                    return;
                }
            }
            let Some(mut inbox) = fleet.take_inbox() else { return };
            // A third of the lease (more often with a short idle timeout, as the reaper runs).
            let period = match app.upgrade() {
                Some(app) => (TAG_LEASE / 3).min(app.config.session_idle_timeout / 4),
                None => return,
            };
            let mut renew = tokio::time::interval(period.max(std::time::Duration::from_millis(10)));
            renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            renew.tick().await;
            loop {
                let delivery = tokio::select! {
                    received = inbox.recv() => match received {
                        Some(delivery) => delivery,
                        None => return,
                    },
                    _ = renew.tick() => {
                        if app.strong_count() == 0 || !fleet.renew().await {
                            // The tag is another instance's now: its messages are not this one's.
                            return;
                        }
                        continue;
                    }
                };
                let Some(app) = app.upgrade() else { return };
                match delivery {
                    Delivery::Message(message) => app.on_bus(&message).await,
                    Delivery::Missed(missed) => app.resync(&fleet, missed).await,
                    Delivery::Reset => app.reload(&fleet).await,
                }
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
        // Its own, or another's (a store without inboxes gives every instance every message).
        if message.origin == fleet.tag() || (message.to != 0 && message.to != fleet.tag()) {
            return;
        }
        metrics::counter!("mcp_fleet_bus_messages_total", "kind" => message.kind.name()).increment(1);
        match message.kind {
            Kind::Event => return fleet.relay(&message),
            Kind::Alive => return fleet.alive(&message),
            _ => {}
        }
        let Some(session) = self.local(&message.session) else { return };
        match message.kind {
            Kind::Incoming => deliver_incoming(&session, &message.frame).await,
            Kind::Standalone => session.router.deliver_standalone(&message.frame).await,
            Kind::Probe if session.router.release(message.stream, message.origin).await => {
                let mut alive = fleet.message(Kind::Alive, &message.session, Bytes::new());
                alive.stream = message.stream;
                fleet.send_to(message.origin, alive).await;
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

    /// Messages for this instance were lost (`missed`, at least): what they may have carried
    /// is found again, or its loss made known. Every shared session held here reloads its
    /// record (a change or an end missed), its calls waiting for an answer fail (an answer
    /// missed), and the streams followed from other instances end (an event missed: their
    /// clients resume them from the shared event store). A cancellation or a GET stream
    /// message that was lost stays lost.
    async fn resync(&self, fleet: &Fleet, missed: u64) {
        metrics::counter!("mcp_fleet_bus_dropped_total").increment(missed);
        metrics::counter!("mcp_fleet_bus_resyncs_total").increment(1);
        let held = self.held_shared();
        let relays = fleet.end_relays();
        tracing::warn!(
            missed,
            sessions = held.len(),
            relays,
            "fleet: messages for this instance were lost: its sessions' records reloaded, followed streams ended"
        );
        // An answer the client POSTed to another instance may have been among them: the calls
        // that wait for one fail now, with an error the client sees, rather than at their
        // timeout.
        let lost = mcp_jsonrpc::ErrorObject::internal_error(
            "the answer to this request may have been lost between the server's instances; try again",
        );
        let failed: usize = held.iter().map(|session| session.peer().fail_pending_calls(&lost)).sum();
        if failed > 0 {
            tracing::warn!(failed, "fleet: calls waiting for an answer failed (it may have been lost)");
        }
        for batch in held.chunks(KEEP_ALIVE_BATCH) {
            futures_util::future::join_all(batch.iter().map(|session| self.refresh(fleet, session))).await;
        }
    }

    /// The store lost its state (see [`Delivery::Reset`]): every shared session held here
    /// reloads its record, and a copy whose record is gone ends (its waiting calls fail).
    async fn reload(&self, fleet: &Fleet) {
        metrics::counter!("mcp_fleet_bus_resyncs_total").increment(1);
        let held = self.held_shared();
        tracing::warn!(sessions = held.len(), "fleet: the store lost its state: the sessions' records reloaded");
        for batch in held.chunks(KEEP_ALIVE_BATCH) {
            futures_util::future::join_all(batch.iter().map(|session| self.refresh(fleet, session))).await;
        }
    }

    /// The shared sessions held here whose record exists (as far as this copy knows).
    fn held_shared(&self) -> Vec<Arc<Session>> {
        self.sessions
            .lock_unpoisoned()
            .iter()
            .filter(|s| s.router.shared().is_some_and(|l| l.recorded() && !l.is_gone()))
            .cloned()
            .collect()
    }

    /// Reloads the record of a session another instance changed into the copy here (named in
    /// it again); a copy whose record is gone ends.
    async fn refresh(&self, fleet: &Fleet, session: &Arc<Session>) {
        let id = &session.router.session_id;
        // The record names this copy again as it is read (it may have been forgotten: this
        // instance's tag found unheld while it was cut off from the store).
        let load = match session.router.shared() {
            Some(link) => fleet.store.load_copy(id, link.copy()),
            None => fleet.store.load(id),
        };
        match load.await {
            Ok(Some(record)) => {
                if let Some(refresh) = &session.refresh
                    && !refresh(&record)
                {
                    tracing::warn!(session = %id, "fleet: a session record could not be read");
                }
            }
            Ok(None) => {
                tracing::debug!(session = %id, "fleet: the session's record is gone: its copy here ends");
                self.remove_copy(session);
            }
            Err(e) => tracing::warn!(session = %id, "fleet: a changed session not reloaded: {e}"),
        }
    }

    /// Ends the copy `session` here, whose record is gone (if the table still holds this
    /// one): no new request reaches it; those running finish (within the peer's shutdown
    /// grace) and their answers go out before its streams end, in a task of its own.
    fn remove_copy(&self, session: &Arc<Session>) {
        if let Some(link) = session.router.shared() {
            link.set_gone();
        }
        let id = &session.router.session_id;
        {
            let mut sessions = self.sessions.lock_unpoisoned();
            if sessions.get(id).is_some_and(|s| Arc::ptr_eq(s, session)) {
                sessions.remove(id);
            }
        }
        // A call that just got its answer (Redis restarted empty: the answer came, then the
        // loss that made the record's absence known) still answers its client.
        let session = session.clone();
        tokio::spawn(async move { session.end_copy_after_running().await });
    }

    /// The client ended a shared session (DELETE): its record goes, and the other copies end.
    pub(crate) async fn end_shared(&self, session: &Session) {
        let Some(link) = session.router.shared() else { return };
        link.fleet.end(&session.router.session_id).await;
    }

    /// This instance's copy `session` is gone while the session may live on (idle here): the
    /// record stops naming it, in the background.
    pub(super) fn drop_copy(&self, session: &Session) {
        let Some(link) = session.router.shared() else { return };
        if !link.recorded() || link.is_gone() {
            return;
        }
        forget_copy(&link.fleet, session.router.session_id.clone(), link.copy());
    }

    /// The GET stream of shared `session` is held here now: the record says so, for the
    /// messages of its other copies.
    pub(crate) async fn hold_standalone(&self, session: &Session) {
        let Some(link) = session.router.shared() else { return };
        if let Err(e) = link.fleet.store.hold_standalone(&session.router.session_id, link.fleet.tag()).await {
            tracing::warn!(session = %session.router.session_id, "fleet: the GET stream's holder not recorded: {e}");
        }
    }
}

/// The record of session `id` stops naming `copy` (dropped here), in the background.
fn forget_copy(fleet: &Fleet, id: Arc<str>, copy: SessionCopy) {
    let store = fleet.store.clone();
    tokio::spawn(async move {
        if let Err(e) = store.drop_copy(&id, copy).await {
            tracing::debug!(session = %id, "fleet: a dropped copy still named in the record: {e}");
        }
    });
}

/// The most touches the keep-alive of an endpoint awaits at once.
const KEEP_ALIVE_BATCH: usize = 64;

/// Keeps the record of `session` for `ttl` from now, naming this copy in it again if it was
/// forgotten (and then reloading it: what was sent to the copies meanwhile did not come
/// here); if it is gone, the copy is marked to end (the next lookup or the reaper ends it).
async fn touch(fleet: &Fleet, session: &Session, ttl: std::time::Duration) {
    let router = &session.router;
    let Some(link) = router.shared() else { return };
    link.touched();
    match fleet.store.touch_copy(&router.session_id, link.copy(), ttl).await {
        Ok(Touched::Named) => {}
        Ok(Touched::Renamed(record)) => {
            tracing::info!(session = %router.session_id, "fleet: this copy was forgotten by the record: named again, reloaded");
            if let Some(refresh) = &session.refresh
                && !refresh(&record)
            {
                tracing::warn!(session = %router.session_id, "fleet: a session record could not be read");
            }
        }
        Ok(Touched::Gone) => {
            tracing::debug!(session = %router.session_id, "fleet: the session's record is gone: its copy here ends");
            link.set_gone();
        }
        Err(e) => tracing::warn!(session = %router.session_id, "fleet: session not touched: {e}"),
    }
}

/// A client's message another instance got: handed to this copy's peer, which takes the
/// responses it awaits and the cancellations of what it runs.
async fn deliver_incoming(session: &Session, frame: &Bytes) {
    let parsed = mcp_jsonrpc::message::parse(frame);
    session.dispatcher.dispatch(parsed, None).await;
}
