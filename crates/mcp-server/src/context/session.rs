//! What the server knows about one client: its session's state ([`SessionState`]: what the
//! client declared, its log level and subscriptions), which a handler's [`Context`](super::Context)
//! reads and the serving fills (at `initialize`, from a 2026-07-28 request's envelope, or from
//! the record a fleet shares).

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use mcp_jsonrpc::{ErrorObject, Peer, RequestContext};
use mcp_types::{ClientCapabilities, Implementation, LoggingLevel, ProtocolVersion};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The most resources one session may subscribe to at once.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 4096;
/// The most bytes of URIs one session's subscriptions may hold.
pub(crate) const MAX_SUBSCRIPTION_BYTES: usize = 1 << 20;

/// What the server knows about one connected client (for a request of the stateless revision:
/// what that request declared).
pub(crate) struct SessionState {
    pub(crate) peer: OnceLock<Peer>,
    /// Unique in this process (numbered from 1 in every process): with a random tag of the
    /// process, the owner of the tasks of a connection outside HTTP (see `serve::owner`).
    pub(crate) id: u64,
    inner: Mutex<SessionInner>,
}

/// A new session's [`SessionState::id`].
fn next_session_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[derive(Default)]
struct SessionInner {
    initialized: bool,
    capabilities: ClientCapabilities,
    client_info: Option<Implementation>,
    /// The `clientInfo` of a request of the stateless revision, as JSON: decoded only if a
    /// handler asks for it.
    client_info_json: Option<Box<str>>,
    log_level: Option<LoggingLevel>,
    /// Requests of the stateless revision get log messages only when they ask (`_meta`
    /// logLevel).
    quiet_by_default: bool,
    subscriptions: HashSet<String>,
}

impl SessionState {
    pub(crate) fn new() -> Self {
        SessionState { peer: OnceLock::new(), id: next_session_id(), inner: Mutex::new(SessionInner::default()) }
    }
    /// A session that skips the handshake: served as initialized, the client's capabilities
    /// unknown (so nothing is asked of it).
    pub(crate) fn preinitialized() -> Self {
        let inner = SessionInner { initialized: true, ..SessionInner::default() };
        SessionState { peer: OnceLock::new(), id: next_session_id(), inner: Mutex::new(inner) }
    }
    fn inner(&self) -> std::sync::MutexGuard<'_, SessionInner> {
        self.inner.lock_unpoisoned()
    }
    /// The handshake of the session revisions: what the client declared at `initialize`.
    pub(crate) fn initialize(&self, capabilities: ClientCapabilities, client_info: Implementation) {
        let mut inner = self.inner();
        inner.capabilities = capabilities;
        inner.client_info = Some(client_info);
        inner.initialized = true;
    }
    pub(crate) fn is_initialized(&self) -> bool {
        self.inner().initialized
    }
    pub(crate) fn client_capabilities(&self) -> ClientCapabilities {
        self.inner().capabilities.clone()
    }
    pub(crate) fn client_info(&self) -> Option<Implementation> {
        let mut inner = self.inner();
        if let Some(json) = inner.client_info_json.take() {
            inner.client_info = decode_raw(&json).ok();
        }
        inner.client_info.clone()
    }
    pub(crate) fn log_enabled(&self, level: &LoggingLevel) -> bool {
        let inner = self.inner();
        match &inner.log_level {
            Some(min) => severity(level) >= severity(min),
            None => !inner.quiet_by_default,
        }
    }
    /// The state of one request of the stateless revision: what its `_meta` declared.
    pub(crate) fn stateless(envelope: Envelope<'_>) -> Self {
        let inner = SessionInner {
            initialized: true,
            capabilities: envelope.capabilities,
            client_info: None,
            client_info_json: envelope.client_info.map(Box::from),
            log_level: envelope.log_level,
            quiet_by_default: true,
            subscriptions: HashSet::new(),
        };
        SessionState { peer: OnceLock::new(), id: next_session_id(), inner: Mutex::new(inner) }
    }
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.inner().subscriptions.contains(uri)
    }
    /// Subscribes to `uri`: what a client may make the session hold is bounded.
    pub(crate) fn subscribe(&self, uri: String) -> Result<(), ErrorObject> {
        let mut inner = self.inner();
        let subscriptions = &mut inner.subscriptions;
        if !subscriptions.contains(&uri) {
            let bytes: usize = subscriptions.iter().map(String::len).sum::<usize>() + uri.len();
            if subscriptions.len() >= MAX_SUBSCRIPTIONS || bytes > MAX_SUBSCRIPTION_BYTES {
                return Err(ErrorObject::invalid_params(format!(
                    "too many subscriptions: a session holds at most {MAX_SUBSCRIPTIONS} URIs of \
                     {MAX_SUBSCRIPTION_BYTES} bytes in all; unsubscribe first"
                )));
            }
            subscriptions.insert(uri);
        }
        Ok(())
    }
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.inner().subscriptions.remove(uri);
    }
    /// The least severe level of log messages the client wants (`logging/setLevel`).
    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        self.inner().log_level = Some(level);
    }

    #[cfg(feature = "http")]
    /// What another instance of a fleet needs to serve this session (see
    /// `mcp_transport_http::server::shared`): the revision, what the client declared, its log
    /// level and subscriptions, as JSON.
    pub(crate) fn record(&self, version: ProtocolVersion) -> Vec<u8> {
        let inner = self.inner();
        let record = SessionRecord {
            version: version.as_str().to_owned(),
            capabilities: inner.capabilities.clone(),
            client_info: inner.client_info.clone(),
            log_level: inner.log_level.clone(),
            subscriptions: inner.subscriptions.iter().cloned().collect(),
        };
        serde_json::to_vec(&record).unwrap_or_default()
    }

    #[cfg(feature = "http")]
    /// A session rebuilt from its [`record`](Self::record), and its revision.
    pub(crate) fn from_record(record: &[u8]) -> Option<(Self, ProtocolVersion)> {
        let state = SessionState::new();
        let version = state.apply_record(record)?;
        state.inner().initialized = true;
        Some((state, version))
    }

    #[cfg(feature = "http")]
    /// Takes what a [`record`](Self::record) says; its revision, or `None` if unreadable.
    pub(crate) fn apply_record(&self, record: &[u8]) -> Option<ProtocolVersion> {
        let record: SessionRecord = serde_json::from_slice(record).ok()?;
        let version = ProtocolVersion::from_wire(&record.version)?;
        let mut inner = self.inner();
        inner.capabilities = record.capabilities;
        inner.client_info = record.client_info;
        inner.log_level = record.log_level;
        inner.subscriptions = record.subscriptions.into_iter().collect();
        Some(version)
    }
}

/// A session as a fleet's store keeps it.
#[cfg(feature = "http")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionRecord {
    version: String,
    capabilities: ClientCapabilities,
    client_info: Option<Implementation>,
    log_level: Option<LoggingLevel>,
    subscriptions: Vec<String>,
}

/// `level` is at least as severe as `threshold`.
pub(crate) fn severity(level: &LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
        LoggingLevel::Other(_) => 1,
    }
}

/// What a request of the stateless revision declares about its client.
pub(crate) struct Envelope<'a> {
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    /// The `clientInfo` JSON, decoded only if a handler asks for it.
    pub(crate) client_info: Option<&'a str>,
    pub(crate) log_level: Option<LoggingLevel>,
}

/// Decodes a raw value as it would decode from its `serde_json::Value` (whose outcome, errors
/// included, is authoritative where the two could differ).
pub(crate) fn decode_raw<T: DeserializeOwned>(raw: &str) -> Result<T, serde_json::Error> {
    serde_json::from_str(raw).or_else(|_| serde_json::from_value(serde_json::from_str::<Value>(raw)?))
}

/// Saves the session for the other instances of a fleet, when it is shared (HTTP with
/// `HttpServerConfig::shared_sessions`); boxed, and only then.
pub(crate) async fn save_shared(state: &SessionState, rctx: &RequestContext) -> Result<(), ErrorObject> {
    #[cfg(feature = "http")]
    if let Some(info) = rctx.attachment().and_then(|a| a.downcast_ref::<mcp_transport_http::server::RequestInfo>())
        && info.shares_session()
    {
        let record = state.record(rctx.peer().protocol_version());
        return Box::pin(info.save_session(&record)).await.map_err(|e| {
            tracing::warn!("fleet: the session could not be saved: {e}");
            ErrorObject::internal_error("the shared session store is unavailable; try again later")
        });
    }
    let _ = (state, rctx);
    Ok(())
}
