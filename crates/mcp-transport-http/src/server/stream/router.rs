//! One HTTP session: the routing of what its peer sends to the HTTP responses that carry it.
//!
//! The session's peer is a driven one ([`Peer::driven`](mcp_jsonrpc::Peer::driven)): each
//! POST hands its parsed message to the peer in the POST's own task, and the peer hands what it
//! sends to the [`SessionRouter`] (its [`FrameSink`]). An idle session holds no task and no
//! queue.
//!
//! Each POST that holds requests opens a *stream*: its SSE response, or the JSON response it
//! waits for. The peer tags every frame with the request it belongs to ([`Route`]); a frame
//! goes on the stream of that request, and anything else on the standalone stream (the GET).
//! A stream ends with the response to its requests. A stream whose connection went away keeps
//! its events in the [`EventStore`] until the client resumes it with `Last-Event-ID`.

use hashbrown::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use bytes::{BufMut as _, Bytes, BytesMut};
use mcp_jsonrpc::transport::{Outbound, Route};
use mcp_jsonrpc::{FrameSink, RequestId};
use tokio::sync::{Mutex, mpsc, oneshot};

use super::event_store::EventStore;
use crate::server::shared::bus::Kind;
use crate::server::shared::link::SharedLink;
use crate::server::shared::{
    Audience, Fanout, FieldChange, OWNER_FIELD, SessionCopy, SessionEnded, SessionRecord, SharedError,
};
use crate::server::sse::{retry_event, sse_event};

/// The stream number of the standalone (GET) stream.
pub(crate) const STANDALONE: u64 = 0;

/// How a session's messages travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Streamable HTTP: per-POST streams, plus the standalone GET stream.
    Streamable,
    /// HTTP+SSE (2024-11-05): everything on the one SSE stream; no event ids.
    HttpSse,
}

/// Where the events of a stream go.
enum Sink {
    /// An SSE response, while its connection lasts.
    Sse(Option<mpsc::Sender<Bytes>>),
    /// A JSON response waiting for the one response frame.
    Json(Option<oneshot::Sender<Bytes>>),
    /// The raw frames, each with whether it is the last (see [`SessionRouter::open_raw`]).
    Raw(Option<mpsc::Sender<(Bytes, bool)>>),
}

/// How a POST's stream is answered (see [`SessionRouter::open_stream`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// An SSE response.
    Sse,
    /// One JSON response.
    Json,
}

struct Stream {
    sink: Sink,
    requests: Vec<RequestId>,
    /// The client may hold an event id of this stream (the priming event, or a message went
    /// out): it can resume the stream if its connection ends, so its events are stored.
    has_id: bool,
    /// The instance (its tag) where the client resumed the stream, which its events go to over
    /// the bus; 0 while none did.
    follower: u32,
    /// A shared session's SSE stream while its POST is being answered, before any byte of the
    /// response can have gone out (see [`SessionRouter::started`]).
    unsent: Option<Unsent>,
}

/// The events of a stream that no byte of has gone out yet: the client holds no id of it, so
/// they are held, not stored, until the response starts (or the stream ends).
struct Unsent {
    /// The stream opens with a priming event (2025-11-25 on).
    prime: bool,
    /// The events sent so far, each with its seq.
    held: Vec<(u64, Bytes)>,
}

#[derive(Default)]
struct Routes {
    by_request: HashMap<RequestId, u64>,
    streams: HashMap<u64, Stream>,
    standalone: Option<mpsc::Sender<Bytes>>,
    next_stream: u64,
    closed: bool,
}

impl Routes {
    /// Whether the standalone (GET) stream is held here, connected.
    fn holds_standalone(&self) -> bool {
        self.standalone.as_ref().is_some_and(|tx| !tx.is_closed())
    }
}

/// Why a POST could not open a stream.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// A request id of the POST is already in flight in this session.
    DuplicateId(RequestId),
    /// The session is over.
    Closed,
}

/// The routing table and event numbering of one session.
pub(crate) struct SessionRouter {
    pub(crate) session_id: Arc<str>,
    mode: Mode,
    shared: Option<SharedLink>,
    store: Option<Arc<dyn EventStore>>,
    /// Events queued per connection before it counts as not reading (and is dropped).
    queue: usize,
    retry: Duration,
    routes: Mutex<Routes>,
    seq: AtomicU64,
    /// Open SSE connections (a session with one is not idle).
    pub(crate) connections: AtomicUsize,
    /// Milliseconds since `epoch` of the last request.
    last_active: AtomicU64,
    epoch: Instant,
}

/// What a GET with `Last-Event-ID` resumes.
pub(crate) struct Resumed {
    pub(crate) replay: Vec<Bytes>,
    /// The live connection, when the stream is still open.
    pub(crate) live: Option<mpsc::Receiver<Bytes>>,
}

impl SessionRouter {
    pub(crate) fn new(
        session_id: Arc<str>,
        mode: Mode,
        store: Option<Arc<dyn EventStore>>,
        queue: usize,
        retry: Duration,
        shared: Option<SharedLink>,
    ) -> Arc<Self> {
        // A fleet's copies of a session number their streams and events from ranges of their
        // own (see `shared`).
        let base = shared.as_ref().map_or(0, |s| s.fleet.base());
        Arc::new(SessionRouter {
            session_id,
            mode,
            shared,
            store: if mode == Mode::HttpSse { None } else { store },
            queue: queue.max(1),
            retry,
            routes: Mutex::new(Routes { next_stream: base + STANDALONE + 1, ..Routes::default() }),
            seq: AtomicU64::new(base),
            connections: AtomicUsize::new(0),
            last_active: AtomicU64::new(0),
            epoch: Instant::now(),
        })
    }

    pub(crate) fn touch(&self) {
        self.last_active.store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    pub(crate) fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_active.load(Ordering::Relaxed));
        self.epoch.elapsed().saturating_sub(last)
    }

    /// How the session's messages travel.
    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    pub(crate) fn resumable(&self) -> bool {
        self.store.is_some()
    }

    /// The session's part in a fleet, if it is shared.
    pub(crate) fn shared(&self) -> Option<&SharedLink> {
        self.shared.as_ref()
    }

    /// Applies the factory's `changes` to the session's record (made by the first change, with
    /// the transport's field, the owner) and tells the other copies to reload it: the record
    /// as it is then, or `None` when the session is not shared. Fails when the store does, or
    /// with [`SessionEnded`] when the record is gone (the copy is then marked to end).
    pub(crate) async fn update(&self, changes: &[FieldChange]) -> Result<Option<SessionRecord>, SharedError> {
        let Some(link) = &self.shared else { return Ok(None) };
        if link.is_gone() {
            return Err(SessionEnded.into());
        }
        if let Some(change) = changes.iter().find(|c| c.name().starts_with('.')) {
            return Err(format!("the session record's field {:?} is the transport's", change.name()).into());
        }
        let store = &link.fleet.store;
        if !link.recorded() {
            let mut fields = Vec::with_capacity(changes.len() + 2);
            fields.push((OWNER_FIELD.to_owned(), Bytes::copy_from_slice(link.owner.as_bytes())));
            // The record names this copy from the start (see `SharedSessions::load_copy`).
            let copy = link.copy();
            fields.push((SessionCopy::field(copy.tag), Bytes::from(copy.nonce.to_string())));
            for change in changes {
                if let FieldChange::Set(name, value) = change {
                    fields.retain(|(n, _)| n != name);
                    fields.push((name.clone(), value.clone()));
                }
            }
            let created = store.create(&self.session_id, &fields, link.ttl).await?;
            link.set_recorded();
            if created {
                link.touched();
                return Ok(Some(SessionRecord { version: 1, fields }));
            }
            // Another request of the session made it meanwhile: this one changes it.
        }
        let Some(record) = store.update(&self.session_id, changes, link.ttl).await? else {
            link.set_gone();
            return Err(SessionEnded.into());
        };
        link.touched();
        link.fleet
            .send_to_copies(Audience::Copies, link.fleet.message(Kind::Changed, &self.session_id, Bytes::new()))
            .await;
        Ok(Some(record))
    }

    /// The instance of tag `by` resumes `stream`: if it is open here (its requests not all
    /// answered), its connection here ends (the client left it) and its events go to `by`
    /// over the bus from now on. Whether it is open.
    pub(crate) async fn release(&self, stream: u64, by: u32) -> bool {
        let mut routes = self.routes.lock().await;
        self.flush(&mut routes, stream, false).await;
        match routes.streams.get_mut(&stream) {
            Some(open) => {
                if let Sink::Sse(slot) = &mut open.sink {
                    *slot = None;
                }
                open.follower = by;
                true
            }
            None => false,
        }
    }

    /// A message for the standalone stream from another copy: sent (and stored) if this copy
    /// holds the stream.
    pub(crate) async fn deliver_standalone(&self, frame: &Bytes) {
        let mut routes = self.routes.lock().await;
        if routes.holds_standalone() {
            self.send_event(&mut routes, STANDALONE, frame).await;
        }
    }

    fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The priming event of a new stream: an id to resume from, the retry delay, no data.
    pub(crate) async fn priming_event(&self, stream: u64) -> Bytes {
        if let Some(s) = self.routes.lock().await.streams.get_mut(&stream) {
            s.has_id = true;
        }
        self.priming_bytes(stream)
    }

    fn priming_bytes(&self, stream: u64) -> Bytes {
        let mut out = BytesMut::with_capacity(48);
        out.put_slice(
            format!("id: {stream}-{}\nretry: {}\ndata: \n\n", self.next_seq(), self.retry.as_millis()).as_bytes(),
        );
        out.freeze()
    }

    /// Whether a POST's SSE stream holds its events until its response starts
    /// ([`started`](Self::started)) rather than opening with a priming event at once: in a
    /// shared session, where storing an event is a round trip to the shared store.
    pub(crate) fn defers(&self) -> bool {
        self.shared.is_some() && self.store.is_some()
    }

    /// Opens the stream of a POST holding `requests`; an SSE receiver, or a JSON waiter.
    /// `prime`: its SSE stream opens with a priming event (2025-11-25 on); the caller sends it
    /// unless the stream [`defers`](Self::defers) (the router sends it then).
    pub(crate) async fn open_stream(
        &self,
        requests: Vec<RequestId>,
        answer: Answer,
        prime: bool,
    ) -> Result<(u64, Answered), OpenError> {
        let (sink, answered, unsent) = match answer {
            Answer::Json => {
                let (tx, rx) = oneshot::channel();
                (Sink::Json(Some(tx)), Answered::Json(rx), None)
            }
            Answer::Sse => {
                let (tx, rx) = mpsc::channel(self.queue);
                let unsent = self.defers().then(|| Unsent { prime, held: Vec::new() });
                (Sink::Sse(Some(tx)), Answered::Sse(rx), unsent)
            }
        };
        let stream = self.insert_stream(requests, sink, unsent).await?;
        Ok((stream, answered))
    }

    /// The POST of `stream` was dispatched and its response is about to start: what the
    /// stream holds is stored if the client can ask for it again, and goes on the connection
    /// after the priming event (see [`flush`](Self::flush)). Nothing to do for a stream that
    /// does not [`defer`](Self::defers), or that already ended.
    pub(crate) async fn started(&self, stream: u64) {
        if !self.defers() {
            return;
        }
        let mut routes = self.routes.lock().await;
        self.flush(&mut routes, stream, false).await;
    }

    /// Ends the unsent state of `stream` (if it is in it): from now on its events may reach the
    /// client, so every held event it could ask for again is stored first, then the priming
    /// event and the held events go on the connection, in that order.
    ///
    /// Which events the client could ask for again: with a priming event, all of them (it can
    /// resume from the priming event, and a replay after that id, which is never stored,
    /// returns every event stored for the stream); without, all but the first (a client that
    /// got the first resumes after it; one that did not holds no id of the stream). A stream
    /// that `done` with its response as its only event is the exception: it goes out alone,
    /// without a priming event, and is not stored. The client can then hold no id of the
    /// stream until it has its response whole, and a resume from that id is one of a finished
    /// stream, which replays nothing; so not storing it loses nothing, and spares the call
    /// its round trip to the shared store.
    async fn flush(&self, routes: &mut Routes, stream: u64, done: bool) {
        let Some(Stream { unsent: unsent @ Some(_), .. }) = routes.streams.get_mut(&stream) else { return };
        let Some(Unsent { prime, held }) = unsent.take() else { return };
        let alone = done && held.len() == 1;
        if !alone && let Some(store) = &self.store {
            for (seq, frame) in held.iter().skip(usize::from(!prime)) {
                store.append(&self.session_id, stream, *seq, frame.clone()).await;
            }
        }
        let primed = prime && !alone;
        let priming = primed.then(|| self.priming_bytes(stream));
        let Some(open) = routes.streams.get_mut(&stream) else { return };
        open.has_id = primed || !held.is_empty();
        let Sink::Sse(slot) = &mut open.sink else { return };
        let Some(tx) = slot else { return };
        let events = priming.into_iter().chain(held.iter().map(|(seq, frame)| sse_event(Some((stream, *seq)), frame)));
        for event in events {
            if let Err(e) = tx.try_send(event) {
                // Gone, or not reading: drop the connection; the store keeps the events.
                tracing::debug!(session = %self.session_id, stream, "SSE connection dropped: {e}");
                *slot = None;
                return;
            }
        }
    }

    /// Opens the stream of one 2026-07-28 request: its frames raw, each with whether it is
    /// the last (the response mode is chosen by what comes first).
    pub(crate) async fn open_raw(&self, request: RequestId) -> Result<mpsc::Receiver<(Bytes, bool)>, OpenError> {
        let (tx, rx) = mpsc::channel(self.queue);
        self.insert_stream(vec![request], Sink::Raw(Some(tx)), None).await?;
        Ok(rx)
    }

    /// Routes `requests` to a new stream that goes to `sink`.
    async fn insert_stream(
        &self,
        requests: Vec<RequestId>,
        sink: Sink,
        unsent: Option<Unsent>,
    ) -> Result<u64, OpenError> {
        let mut routes = self.routes.lock().await;
        if routes.closed {
            return Err(OpenError::Closed);
        }
        if let Some(dup) = requests.iter().find(|id| routes.by_request.contains_key(*id)) {
            return Err(OpenError::DuplicateId(dup.clone()));
        }
        let stream = routes.next_stream;
        routes.next_stream += 1;
        for id in &requests {
            routes.by_request.insert(id.clone(), stream);
        }
        routes.streams.insert(stream, Stream { sink, requests, has_id: false, follower: 0, unsent });
        Ok(stream)
    }

    /// Attaches the standalone stream (a GET without `Last-Event-ID`); `None` when one is
    /// open already.
    pub(crate) async fn open_standalone(&self) -> Option<mpsc::Receiver<Bytes>> {
        let mut routes = self.routes.lock().await;
        if routes.closed || routes.holds_standalone() {
            return None;
        }
        let (tx, rx) = mpsc::channel(self.queue);
        routes.standalone = Some(tx);
        Some(rx)
    }

    /// Resumes a stream after the event `last_event_id` (`STREAM-SEQ`): what it missed, and
    /// the live connection if it is still open. `None` for an id this session never issued.
    pub(crate) async fn resume(&self, last_event_id: &str) -> Option<Resumed> {
        let (stream, seq) = last_event_id.split_once('-')?;
        let (stream, seq): (u64, u64) = (stream.parse().ok()?, seq.parse().ok()?);
        if let Some(link) = &self.shared
            && stream != STANDALONE
            && link.fleet.is_foreign(stream)
        {
            return Some(self.resume_foreign(link, stream, seq).await);
        }
        let mut routes = self.routes.lock().await;
        // In a fleet, the standalone stream's events come from every copy: any seq may be one.
        let foreign_seq = self.shared.is_some() && stream == STANDALONE;
        if (seq > self.seq.load(Ordering::Relaxed) && !foreign_seq) || stream >= routes.next_stream {
            return None;
        }
        self.flush(&mut routes, stream, false).await;
        let replay = match &self.store {
            Some(store) => store.replay(&self.session_id, stream, seq).await,
            None => Vec::new(),
        };
        let replay = replay.into_iter().map(|(seq, msg)| sse_event(Some((stream, seq)), &msg)).collect();
        let (tx, rx) = mpsc::channel(self.queue);
        let live = if stream == STANDALONE {
            if routes.closed {
                None
            } else {
                // The client that resumes is the one that holds the stream: a connection the
                // server still thinks open is one the client lost (it broke, and no write
                // has failed yet). The old one ends; messages go on here.
                routes.standalone = Some(tx);
                Some(rx)
            }
        } else {
            match routes.streams.get_mut(&stream) {
                Some(Stream { sink: Sink::Sse(slot), .. }) => {
                    *slot = Some(tx);
                    Some(rx)
                }
                _ => None,
            }
        };
        Some(Resumed { replay, live })
    }

    /// Resumes `stream`, which another instance opened: its stored events after `seq`, then
    /// what its owner still sends over the bus, if it still runs it.
    async fn resume_foreign(&self, link: &SharedLink, stream: u64, seq: u64) -> Resumed {
        // Followed before the replay is read, and once the owner released the stream: what it
        // stored before is replayed, what it sends after comes over the bus (both at most once).
        let live = link.fleet.follow(&self.session_id, stream, seq, self.queue).await;
        let events = match &self.store {
            Some(store) => store.replay(&self.session_id, stream, seq).await,
            None => Vec::new(),
        };
        let last = events.last().map_or(seq, |&(last, _)| last);
        link.fleet.replayed(&self.session_id, stream, last);
        let replay = events.into_iter().map(|(seq, msg)| sse_event(Some((stream, seq)), &msg)).collect();
        Resumed { replay, live }
    }

    /// Ends the SSE connection of `stream` (the client resumes it with `Last-Event-ID`); the
    /// stream's requests go on. Whether there was a connection to end: not when the client
    /// has no event id of the stream to resume from (revisions before 2025-11-25 send no
    /// priming event), for then the stream could never be resumed.
    pub(crate) async fn close_connection(&self, stream: u64) -> bool {
        let mut routes = self.routes.lock().await;
        self.flush(&mut routes, stream, false).await;
        match routes.streams.get_mut(&stream) {
            Some(Stream { sink: Sink::Sse(slot), has_id: true, .. }) => slot.take().is_some(),
            _ => false,
        }
    }

    /// Routes one frame of the peer.
    async fn deliver(&self, out: &Outbound) {
        let mut routes = self.routes.lock().await;
        let (stream, last) = self.stream_of(&routes, &out.route);
        if stream == STANDALONE
            && let Some(link) = &self.shared
            && !routes.holds_standalone()
        {
            drop(routes);
            // Another copy may hold the GET stream. A change every copy was told of is its
            // to send (if it holds the stream); anything else goes to it over the bus.
            if !out.hints.as_ref().is_some_and(|h| h.is::<Fanout>()) {
                let message = link.fleet.message(Kind::Standalone, &self.session_id, out.frame.clone());
                link.fleet.send_to_copies(Audience::Standalone, message).await;
            }
            return;
        }
        match routes.streams.get_mut(&stream).map(|s| &mut s.sink) {
            Some(Sink::Json(waiter)) => {
                if let Some(tx) = waiter.take() {
                    let _ = tx.send(out.frame.clone());
                }
            }
            Some(Sink::Raw(slot)) => {
                if let Some(tx) = slot
                    && tx.try_send((out.frame.clone(), last)).is_err()
                {
                    tracing::debug!(stream, "response stream gone or not reading: dropped");
                    *slot = None;
                }
            }
            // The request was cancelled: no response will come, the stream just ends.
            _ if out.frame.is_empty() => {}
            Some(Sink::Sse(_)) | None => {
                let (seq, sent) = self.send_event(&mut routes, stream, &out.frame).await;
                // The client went away and resumed the stream on another instance: the event
                // goes there (while none did, it is only stored, for the replay).
                let follower = routes.streams.get(&stream).map_or(0, |s| s.follower);
                if !sent
                    && stream != STANDALONE
                    && follower != 0
                    && let (Some(link), Some(seq)) = (&self.shared, seq)
                {
                    let mut message = link.fleet.message(Kind::Event, &self.session_id, out.frame.clone());
                    (message.stream, message.seq, message.last) = (stream, seq, last);
                    link.fleet.send_to(follower, message).await;
                }
            }
        }
        if last {
            self.flush(&mut routes, stream, true).await;
        }
        if last && let Some(done) = routes.streams.remove(&stream) {
            for id in &done.requests {
                routes.by_request.remove(id);
            }
        }
    }

    /// The stream a frame goes on, and whether it is the stream's last (its response).
    fn stream_of(&self, routes: &Routes, route: &Route) -> (u64, bool) {
        let (stream, last) = match route {
            Route::Response(id) => match routes.by_request.get(id) {
                Some(&s) => (s, true),
                None => (STANDALONE, false),
            },
            Route::Related(id) => (routes.by_request.get(id).copied().unwrap_or(STANDALONE), false),
            Route::Unrelated => (STANDALONE, false),
        };
        match (self.mode, routes.streams.get(&stream)) {
            (Mode::HttpSse, _) => (STANDALONE, last),
            // A JSON response carries only the response: the rest goes on the GET stream.
            (_, Some(Stream { sink: Sink::Json(_), .. })) if !last => (STANDALONE, last),
            _ => (stream, last),
        }
    }

    /// Sends `frame` as an SSE event on `stream` (an SSE stream, or the standalone one),
    /// numbered when the session is resumable, and stored first if a client may ask for it
    /// again: its seq, if numbered, and whether a connection took it.
    ///
    /// A POST stream's events are stored once the client may hold an id of the stream (its
    /// priming event, or an event went out). Its first event without a priming event is never
    /// asked for again: a client that got it resumes after it, one that did not has no id to
    /// resume from. Not storing it spares a shared store's round trip on every stream that is
    /// one response (clients before 2025-11-25); a resume after its id replays every event the
    /// stream stored, which are the ones after it. A stream that defers (a shared session's,
    /// before its response starts) holds its events instead: see [`flush`](Self::flush).
    async fn send_event(&self, routes: &mut Routes, stream: u64, frame: &Bytes) -> (Option<u64>, bool) {
        let id = match &self.store {
            Some(store) => {
                let seq = self.next_seq();
                if let Some(Stream { unsent: Some(unsent), .. }) = routes.streams.get_mut(&stream) {
                    unsent.held.push((seq, frame.clone()));
                    // Held with the priming event within what the connection queues.
                    if unsent.held.len() + 1 >= self.queue {
                        self.flush(routes, stream, false).await;
                    }
                    return (Some(seq), true);
                }
                let post_stream = routes.streams.get_mut(&stream);
                let keep = post_stream.as_ref().is_none_or(|s| s.has_id);
                if let Some(s) = post_stream {
                    s.has_id = true;
                }
                if keep {
                    store.append(&self.session_id, stream, seq, frame.clone()).await;
                }
                Some((stream, seq))
            }
            None => None,
        };
        let slot = match routes.streams.get_mut(&stream) {
            Some(Stream { sink: Sink::Sse(slot), .. }) => slot,
            _ => &mut routes.standalone,
        };
        let seq = id.map(|(_, seq)| seq);
        if let Some(tx) = slot {
            if let Err(e) = tx.try_send(sse_event(id, frame)) {
                // Gone, or not reading: drop the connection; the store keeps the events.
                tracing::debug!(session = %self.session_id, stream, "SSE connection dropped: {e}");
                *slot = None;
                return (seq, false);
            }
            return (seq, true);
        } else if stream == STANDALONE && self.store.is_none() {
            tracing::debug!(session = %self.session_id, "no GET stream open: server message dropped");
        }
        (seq, false)
    }

    /// A graceful shutdown starts: the standalone (GET) stream of a Streamable HTTP session
    /// ends with a `retry` hint, for its client to reconnect (to another instance). An
    /// HTTP+SSE session's one stream carries its responses too: it stays until
    /// [`SessionRouter::shut_down`].
    pub(crate) async fn end_standalone(&self) {
        if self.mode == Mode::HttpSse {
            return;
        }
        if let Some(tx) = self.routes.lock().await.standalone.take() {
            let _ = tx.try_send(retry_event(self.retry));
        }
    }

    /// The shutdown's grace is over: each request still without a response is answered with
    /// an error (stored, for a client that resumes elsewhere), and every connection ends with
    /// a `retry` hint. The requests' handlers are the caller's to cancel.
    pub(crate) async fn shut_down(&self) {
        let mut routes = self.routes.lock().await;
        let error = mcp_jsonrpc::ErrorObject::internal_error("the server is shutting down; the request was cancelled");
        let streams: Vec<u64> = routes.streams.keys().copied().collect();
        for stream in streams {
            let requests = routes.streams.get(&stream).map(|s| s.requests.clone()).unwrap_or_default();
            for id in &requests {
                let frame = mcp_jsonrpc::message::encode_error(Some(id), &error);
                match routes.streams.get_mut(&stream).map(|s| &mut s.sink) {
                    Some(Sink::Json(waiter)) => {
                        if let Some(tx) = waiter.take() {
                            let _ = tx.send(frame);
                        }
                    }
                    Some(Sink::Raw(slot)) => {
                        if let Some(tx) = slot.take() {
                            let _ = tx.try_send((frame, true));
                        }
                    }
                    _ => {
                        self.send_event(&mut routes, stream, &frame).await;
                    }
                }
                routes.by_request.remove(id);
            }
            self.flush(&mut routes, stream, true).await;
            if let Some(Stream { sink: Sink::Sse(Some(tx)), .. }) = routes.streams.remove(&stream) {
                let _ = tx.try_send(retry_event(self.retry));
            }
        }
        if let Some(tx) = routes.standalone.take() {
            let _ = tx.try_send(retry_event(self.retry));
        }
    }

    /// The session is over: every connection ends, and its events are forgotten (in a fleet,
    /// only when the session ended, not when this copy of it went idle: see
    /// [`close_copy`](Self::close_copy)).
    pub(crate) async fn close(&self) {
        self.close_copy().await;
        if let Some(store) = &self.store {
            store.remove_session(&self.session_id).await;
        }
    }

    /// This copy of the session is over: every connection ends.
    pub(crate) async fn close_copy(&self) {
        let mut routes = self.routes.lock().await;
        routes.closed = true;
        routes.standalone = None;
        routes.streams.clear();
        routes.by_request.clear();
    }
}

/// What a POST's response waits on.
pub(crate) enum Answered {
    /// SSE events, until the stream ends.
    Sse(mpsc::Receiver<Bytes>),
    /// The one response frame.
    Json(oneshot::Receiver<Bytes>),
}

impl FrameSink for SessionRouter {
    fn deliver(&self, frame: Outbound) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move { SessionRouter::deliver(self, &frame).await })
    }
}

/// The record a fleet keeps of one shared session, changed from outside its requests (given
/// to [`SessionFactory::connect_shared`](crate::server::SessionFactory::connect_shared)):
/// what [`RequestInfo::update_session`](crate::server::RequestInfo::update_session) does from inside one. It holds the session weakly.
#[derive(Clone)]
pub struct SharedRecord {
    router: Weak<SessionRouter>,
}

impl std::fmt::Debug for SharedRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedRecord").finish_non_exhaustive()
    }
}

impl SharedRecord {
    pub(crate) fn new(router: &Arc<SessionRouter>) -> SharedRecord {
        SharedRecord { router: Arc::downgrade(router) }
    }

    /// Applies `changes` to the session's record and tells the other instances' copies to
    /// reload it, as [`RequestInfo::update_session`](crate::server::RequestInfo::update_session) does: the record after the change;
    /// `None` when the session is not shared. Fails with
    /// [`SessionEnded`](crate::server::SessionEnded) once the session (or this copy of it)
    /// ended.
    pub async fn update(&self, changes: &[FieldChange]) -> Result<Option<SessionRecord>, SharedError> {
        match self.router.upgrade() {
            Some(router) => router.update(changes).await,
            None => Err(SessionEnded.into()),
        }
    }
}
