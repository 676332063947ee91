//! What both client transports share ([`Core`]): the session's state (here), the HTTP of
//! its exchanges (`exchange.rs`), the incoming frames and the requests that await them
//! (`inbound.rs`), what is done with each outgoing frame (`write.rs`), SSE streams and their
//! resumption (`streams.rs`), and the HTTP+SSE transport's stream (`http_sse.rs`). It uses the
//! client's configuration, errors, hints and SSE parser; the transports use it.

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{HeaderName, HeaderValue, Method, StatusCode};
use mcp_jsonrpc::transport::{Inbound, ReadError};
use mcp_types::RequestId;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};
use url::Url;

use super::config::HttpClientConfig;
use super::error::HttpClientError;
use super::hints::RequestHeaders;
use inbound::Awaited;

mod exchange;
mod http_sse;
mod inbound;
mod streams;
mod write;

/// The read half's end of the queue of incoming frames.
pub(crate) type InboundQueue = mpsc::Receiver<Result<Inbound, ReadError>>;

/// Which transport the connection speaks.
#[derive(Debug, Clone)]
pub(crate) enum Mode {
    /// Streamable HTTP, unless the POST of `initialize` says otherwise.
    Detect,
    /// Streamable HTTP (2025-03-26 and later).
    Streamable,
    /// HTTP+SSE (2024-11-05): messages are POSTed to `endpoint`, answers come on the one SSE
    /// stream.
    Sse { endpoint: Url },
}

#[derive(Debug)]
struct State {
    mode: Mode,
    session_id: Option<HeaderValue>,
    protocol_version: Option<HeaderValue>,
    /// The id of the `initialize` request whose answer (with the negotiated revision) is
    /// awaited.
    init_id: Option<RequestId>,
    /// Bumped by each `initialize`: answers about an older session do not touch this one.
    generation: u64,
    /// The server answered 404 to our session id; only `initialize` goes out until a new one.
    expired: bool,
    /// The standalone GET stream while it runs: its number and its stop token.
    get_stream: Option<(u64, CancellationToken)>,
    /// Numbers GET streams.
    get_streams_started: u64,
    /// The revision of the last stateless (2026-07-28) request: the connection is stateless.
    /// Cleared by `initialize`.
    stateless: Option<HeaderValue>,
}

/// The session headers as they were when a request was built.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    session_id: Option<HeaderValue>,
    protocol_version: Option<HeaderValue>,
    generation: u64,
    /// Over HTTP+SSE: no session id, answers on the one stream.
    sse: bool,
    /// A stateless (2026-07-28) request: no session, no resumption, its metadata headers.
    stateless: bool,
    /// `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` of a stateless request.
    extra: Vec<(HeaderName, HeaderValue)>,
    /// JSON-RPC error codes that, in a 4xx body, are the server's answer (from the client).
    final_errors: &'static [i64],
}

pub(crate) struct Core {
    pub(crate) config: HttpClientConfig,
    client: reqwest::Client,
    state: Mutex<State>,
    inbound: mpsc::Sender<Result<Inbound, ReadError>>,
    permits: Arc<Semaphore>,
    /// Fires on close: every task stops.
    pub(crate) closing: CancellationToken,
    /// Fires when nothing more will be read (close, or the HTTP+SSE stream ended).
    pub(crate) ended: CancellationToken,
    awaited: Mutex<HashMap<RequestId, Arc<Awaited>>>,
    /// The last `retry` the server sent on any stream.
    server_retry: Mutex<Option<Duration>>,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("url", &self.config.url.as_str())
            .field("state", &*self.state.lock_unpoisoned())
            .finish()
    }
}

impl Core {
    pub(crate) fn new(config: HttpClientConfig, mode: Mode) -> Result<(Arc<Core>, InboundQueue), HttpClientError> {
        let client = config.build_client()?;
        let (tx, rx) = mpsc::channel(config.inbound_capacity);
        let core = Core {
            client,
            state: Mutex::new(State {
                mode,
                session_id: None,
                protocol_version: None,
                init_id: None,
                generation: 0,
                expired: false,
                get_stream: None,
                get_streams_started: 0,
                stateless: None,
            }),
            inbound: tx,
            permits: Arc::new(Semaphore::new(config.max_in_flight)),
            closing: CancellationToken::new(),
            ended: CancellationToken::new(),
            awaited: Mutex::new(HashMap::new()),
            server_retry: Mutex::new(None),
            config,
        };
        Ok((Arc::new(core), rx))
    }

    pub(crate) fn session_id(&self) -> Option<String> {
        self.state.lock_unpoisoned().session_id.as_ref().and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    pub(crate) fn protocol_version(&self) -> Option<String> {
        let st = self.state.lock_unpoisoned();
        st.stateless.as_ref().or(st.protocol_version.as_ref()).and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    pub(crate) fn is_stateless(&self) -> bool {
        self.state.lock_unpoisoned().stateless.is_some()
    }

    pub(crate) fn is_sse(&self) -> bool {
        matches!(self.state.lock_unpoisoned().mode, Mode::Sse { .. })
    }

    pub(crate) fn is_expired(&self) -> bool {
        self.state.lock_unpoisoned().expired
    }

    pub(crate) fn set_mode(&self, mode: Mode) {
        self.state.lock_unpoisoned().mode = mode;
    }

    fn snapshot(&self) -> Snapshot {
        let st = self.state.lock_unpoisoned();
        Snapshot {
            session_id: st.session_id.clone(),
            protocol_version: st.stateless.clone().or_else(|| st.protocol_version.clone()),
            generation: st.generation,
            sse: matches!(st.mode, Mode::Sse { .. }),
            stateless: false,
            extra: Vec::new(),
            final_errors: &[],
        }
    }

    /// The headers of a stateless request, as the client handed them: its revision,
    /// `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`; no session id.
    fn stateless_snapshot(&self, headers: &RequestHeaders) -> Snapshot {
        let generation = {
            let mut st = self.state.lock_unpoisoned();
            if headers.version.is_some() {
                st.stateless = headers.version.clone();
            }
            st.generation
        };
        Snapshot {
            session_id: None,
            protocol_version: headers.version.clone(),
            generation,
            sse: false,
            stateless: true,
            extra: headers.headers.clone(),
            final_errors: headers.final_errors,
        }
    }

    /// Where messages are POSTed.
    fn target(&self) -> Url {
        match &self.state.lock_unpoisoned().mode {
            Mode::Sse { endpoint } => endpoint.clone(),
            _ => self.config.url.clone(),
        }
    }

    /// A new `initialize` goes out: a new session begins, without a session id.
    fn begin_initialize(&self, id: Option<RequestId>) {
        let mut st = self.state.lock_unpoisoned();
        st.init_id = id;
        st.generation += 1;
        st.session_id = None;
        st.protocol_version = None;
        st.stateless = None;
        st.expired = false;
        if let Some((_, get)) = st.get_stream.take() {
            get.cancel();
        }
    }

    fn set_session_id(&self, value: HeaderValue, generation: u64) {
        let mut st = self.state.lock_unpoisoned();
        if st.generation == generation {
            debug!(session = ?value, "session started");
            st.session_id = Some(value);
        }
    }

    /// The server answered 404 to the session id of `generation`.
    fn expire(&self, generation: u64) {
        let mut st = self.state.lock_unpoisoned();
        if st.generation != generation || st.expired {
            return;
        }
        warn!("the server ended the MCP session (HTTP 404); a new `initialize` starts a new one");
        st.expired = true;
        st.session_id = None;
        if let Some((_, get)) = st.get_stream.take() {
            get.cancel();
        }
    }

    /// Stops every stream and ends the session (DELETE; a 405 is fine).
    pub(crate) async fn close(&self) {
        if self.closing.is_cancelled() {
            return;
        }
        self.closing.cancel();
        self.ended.cancel();
        let snap = self.snapshot();
        let Some(session) = snap.session_id.clone().filter(|_| !snap.sse) else { return };
        let send = self.send_answering(|| self.request(Method::DELETE, &self.config.url, &snap), false);
        match tokio::time::timeout(self.config.http_timeout, send).await {
            Ok(Ok(r)) if r.status().is_success() || r.status() == StatusCode::METHOD_NOT_ALLOWED => {
                debug!(?session, status = %r.status(), "session ended");
            }
            Ok(Ok(r)) => debug!(?session, status = %r.status(), "DELETE of the session refused"),
            Ok(Err(e)) => debug!(?session, error = %e, "DELETE of the session failed"),
            Err(_) => debug!(?session, "DELETE of the session got no answer in time"),
        }
    }
}
