//! What the server knows about one client: its session's state ([`SessionState`]: what the
//! client declared, its log level and subscriptions), which a handler's [`Context`](super::Context)
//! reads and the serving fills (at `initialize`, from a 2026-07-28 request's envelope, or from
//! the record a fleet shares).

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

#[cfg(feature = "http")]
use axum::body::Bytes;
use mcp_jsonrpc::{ErrorObject, Peer, RequestContext};
#[cfg(feature = "http")]
use mcp_transport_http::server::{FieldChange, SessionRecord};
use mcp_types::{ClientCapabilities, Implementation, LoggingLevel, ProtocolVersion};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The most resources one session may subscribe to at once.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 4096;
/// The most bytes of URIs one session's subscriptions may hold.
pub(crate) const MAX_SUBSCRIPTION_BYTES: usize = 1 << 20;
/// The most items one session may hide (of every kind together).
pub(crate) const MAX_HIDDEN: usize = 4096;

/// What kind of item an [`Item`](super::visibility::Item) is; the hidden set of a session is kept by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ItemKind {
    /// A tool, known by its name.
    Tool,
    /// A prompt, known by its name.
    Prompt,
    /// A resource, known by its URI.
    Resource,
    /// A resource template, known by its URI template.
    ResourceTemplate,
}

impl ItemKind {
    /// Its place in a session's hidden set.
    pub(crate) fn index(self) -> usize {
        self as usize
    }
    #[cfg(feature = "http")]
    /// What the name of its fields in a fleet's record starts with.
    pub(crate) fn record_prefix(self) -> &'static str {
        match self {
            ItemKind::Tool => "hide:tool:",
            ItemKind::Prompt => "hide:prompt:",
            ItemKind::Resource => "hide:resource:",
            ItemKind::ResourceTemplate => "hide:template:",
        }
    }
    /// Every kind.
    #[cfg(feature = "http")]
    pub(crate) const ALL: [ItemKind; 4] =
        [ItemKind::Tool, ItemKind::Prompt, ItemKind::Resource, ItemKind::ResourceTemplate];
}

/// What the server knows about one connected client (for a request of the stateless revision:
/// what that request declared).
pub(crate) struct SessionState {
    pub(crate) peer: OnceLock<Peer>,
    /// Unique in this process (numbered from 1 in every process): with a random tag of the
    /// process, the owner of the tasks of a connection outside HTTP (see `serve::owner`).
    pub(crate) id: u64,
    /// The HTTP session id (`Mcp-Session-Id`), set at `initialize` over HTTP.
    http_id: OnceLock<Arc<str>>,
    /// Whether the session hides any item ([`SessionInner::hidden`] is not empty): a session
    /// that hides nothing looks items up without taking the lock.
    hides_any: AtomicBool,
    /// A session a fleet shares (its changes go through the fleet's record).
    shared: AtomicBool,
    /// A shared session's record, to change it outside its requests (`Server::session`).
    #[cfg(feature = "http")]
    record: OnceLock<mcp_transport_http::server::SharedRecord>,
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
    /// The items hidden from this session, by [`ItemKind::index`].
    hidden: [HashSet<String>; 4],
    /// The version of the fleet's record this copy holds (0: none yet); an older record is not
    /// applied over a newer one.
    #[cfg_attr(not(feature = "http"), allow(dead_code, reason = "a fleet's record needs feature http"))]
    record_version: u64,
}

impl SessionState {
    pub(crate) fn new() -> Self {
        SessionState::with(SessionInner::default())
    }
    fn with(inner: SessionInner) -> Self {
        SessionState {
            peer: OnceLock::new(),
            id: next_session_id(),
            http_id: OnceLock::new(),
            hides_any: AtomicBool::new(false),
            shared: AtomicBool::new(false),
            #[cfg(feature = "http")]
            record: OnceLock::new(),
            inner: Mutex::new(inner),
        }
    }
    /// A session that skips the handshake: served as initialized, the client's capabilities
    /// unknown (so nothing is asked of it).
    pub(crate) fn preinitialized() -> Self {
        SessionState::with(SessionInner { initialized: true, ..SessionInner::default() })
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
    pub(crate) fn supports_apps(&self) -> bool {
        mcp_types::apps::supports_html(&self.inner().capabilities)
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
            hidden: Default::default(),
            record_version: 0,
        };
        SessionState::with(inner)
    }
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.inner().subscriptions.contains(uri)
    }
    /// Subscribes to `uri`: what a client may make the session hold is bounded.
    pub(crate) fn subscribe(&self, uri: String) -> Result<(), ErrorObject> {
        let mut inner = self.inner();
        if !inner.subscriptions.contains(&uri) {
            room_for(&inner.subscriptions, &uri)?;
            inner.subscriptions.insert(uri);
        }
        Ok(())
    }
    /// Whether the session may subscribe to `uri` too (see [`subscribe`](Self::subscribe)).
    #[cfg(feature = "http")]
    fn may_subscribe(&self, uri: &str) -> Result<(), ErrorObject> {
        let inner = self.inner();
        if inner.subscriptions.contains(uri) { Ok(()) } else { room_for(&inner.subscriptions, uri) }
    }
    /// Whether the session hides the item `key` of `kind`: without a lock when it hides
    /// nothing.
    #[inline]
    pub(crate) fn hides(&self, kind: ItemKind, key: &str) -> bool {
        self.hides_any.load(Ordering::Acquire) && self.inner().hidden[kind.index()].contains(key)
    }
    /// Whether the session hides any item.
    #[inline]
    pub(crate) fn hides_any(&self) -> bool {
        self.hides_any.load(Ordering::Acquire)
    }
    /// Hides or shows the item `key` of `kind`: at most [`MAX_HIDDEN`] items are hidden.
    pub(crate) fn set_hidden(&self, kind: ItemKind, key: &str, hidden: bool) -> Result<(), ErrorObject> {
        let mut inner = self.inner();
        if hidden {
            room_to_hide(&inner.hidden, kind, key)?;
            inner.hidden[kind.index()].insert(key.to_owned());
        } else {
            inner.hidden[kind.index()].remove(key);
        }
        self.hides_any.store(inner.hidden.iter().any(|h| !h.is_empty()), Ordering::Release);
        Ok(())
    }
    #[cfg(feature = "http")]
    /// Records the HTTP session id (at `initialize`, or from the fleet's record).
    pub(crate) fn set_http_id(&self, id: &str) {
        if self.http_id.get().is_none() {
            let _ = self.http_id.set(Arc::from(id));
        }
    }
    /// The id [`SessionControl::id`](super::visibility::SessionControl::id) gives: the HTTP
    /// session id, else this process's number of the session.
    pub(crate) fn public_id(&self) -> String {
        match self.http_id.get() {
            Some(id) => id.to_string(),
            None => self.id.to_string(),
        }
    }
    #[cfg(feature = "http")]
    /// Marks the session as one a fleet shares, whose record `record` changes.
    pub(crate) fn mark_shared(&self, record: mcp_transport_http::server::SharedRecord) {
        let _ = self.record.set(record);
        self.shared.store(true, Ordering::Relaxed);
    }
    /// Whether a fleet shares the session.
    pub(crate) fn is_shared(&self) -> bool {
        self.shared.load(Ordering::Relaxed)
    }
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.inner().subscriptions.remove(uri);
    }
    /// The least severe level of log messages the client wants (`logging/setLevel`).
    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        self.inner().log_level = Some(level);
    }
    /// Undoes [`initialize`](Self::initialize) (the fleet's store did not take the session).
    pub(crate) fn uninitialize(&self) {
        let mut inner = self.inner();
        inner.initialized = false;
        inner.capabilities = ClientCapabilities::default();
        inner.client_info = None;
    }

    #[cfg(feature = "http")]
    /// The fields of the fleet's record (see `mcp_transport_http::server::shared`) that
    /// `change` sets or removes: the session's fixed part (revision, what the client declared
    /// at `initialize`) in `session`, its log level in `level`, each subscription in a field
    /// `sub:URI` of its own.
    fn record_changes(&self, change: &RecordChange<'_>, version: ProtocolVersion) -> Vec<FieldChange> {
        match change {
            RecordChange::Initialized => {
                let inner = self.inner();
                let fixed = FixedRecord {
                    version: version.as_str().to_owned(),
                    capabilities: inner.capabilities.clone(),
                    client_info: inner.client_info.clone(),
                    id: self.http_id.get().map(|id| id.to_string()),
                };
                vec![FieldChange::Set(SESSION_FIELD.to_owned(), json_bytes(&fixed))]
            }
            RecordChange::Level(level) => vec![FieldChange::Set(LEVEL_FIELD.to_owned(), json_bytes(level))],
            RecordChange::Subscribe(uri) => vec![FieldChange::Set(format!("{SUBSCRIPTION_FIELD}{uri}"), Bytes::new())],
            RecordChange::Unsubscribe(uri) => vec![FieldChange::Remove(format!("{SUBSCRIPTION_FIELD}{uri}"))],
            RecordChange::Hidden { kind, key, hidden: true } => {
                vec![FieldChange::Set(format!("{}{key}", kind.record_prefix()), Bytes::new())]
            }
            RecordChange::Hidden { kind, key, hidden: false } => {
                vec![FieldChange::Remove(format!("{}{key}", kind.record_prefix()))]
            }
        }
    }

    #[cfg(feature = "http")]
    /// A session rebuilt from its fleet's record, and its revision.
    pub(crate) fn from_record(record: &SessionRecord) -> Option<(Self, ProtocolVersion)> {
        let state = SessionState::new();
        let version = state.apply_record(record)?;
        state.inner().initialized = true;
        Some((state, version))
    }

    #[cfg(feature = "http")]
    /// Takes what the fleet's `record` says, unless this copy holds a newer version already;
    /// its revision, or `None` if unreadable.
    pub(crate) fn apply_record(&self, record: &SessionRecord) -> Option<ProtocolVersion> {
        let fixed: FixedRecord = serde_json::from_slice(record.field(SESSION_FIELD)?).ok()?;
        let version = ProtocolVersion::from_wire(&fixed.version)?;
        let log_level = match record.field(LEVEL_FIELD) {
            Some(level) => Some(serde_json::from_slice::<LoggingLevel>(level).ok()?),
            None => None,
        };
        if let Some(id) = &fixed.id {
            self.set_http_id(id);
        }
        let mut inner = self.inner();
        if inner.record_version > 0 && record.version <= inner.record_version {
            return Some(version);
        }
        inner.record_version = record.version;
        inner.capabilities = fixed.capabilities;
        inner.client_info = fixed.client_info;
        inner.log_level = log_level;
        inner.subscriptions = record
            .fields
            .iter()
            .filter_map(|(name, _)| name.strip_prefix(SUBSCRIPTION_FIELD))
            .map(str::to_owned)
            .collect();
        let mut hidden: [HashSet<String>; 4] = Default::default();
        for (name, _) in &record.fields {
            if let Some((kind, key)) =
                ItemKind::ALL.iter().find_map(|k| name.strip_prefix(k.record_prefix()).map(|key| (k, key)))
            {
                hidden[kind.index()].insert(key.to_owned());
            }
        }
        self.hides_any.store(hidden.iter().any(|h| !h.is_empty()), Ordering::Release);
        inner.hidden = hidden;
        Some(version)
    }
}

/// Whether `subscriptions` have room for `uri` too.
fn room_for(subscriptions: &HashSet<String>, uri: &str) -> Result<(), ErrorObject> {
    let bytes: usize = subscriptions.iter().map(String::len).sum::<usize>() + uri.len();
    if subscriptions.len() >= MAX_SUBSCRIPTIONS || bytes > MAX_SUBSCRIPTION_BYTES {
        return Err(ErrorObject::invalid_params(format!(
            "too many subscriptions: a session holds at most {MAX_SUBSCRIPTIONS} URIs of \
             {MAX_SUBSCRIPTION_BYTES} bytes in all; unsubscribe first"
        )));
    }
    Ok(())
}

/// Whether `hidden` has room for `key` of `kind` too.
fn room_to_hide(hidden: &[HashSet<String>; 4], kind: ItemKind, key: &str) -> Result<(), ErrorObject> {
    if !hidden[kind.index()].contains(key) && hidden.iter().map(HashSet::len).sum::<usize>() >= MAX_HIDDEN {
        return Err(ErrorObject::invalid_params(format!(
            "too many hidden items: a session hides at most {MAX_HIDDEN}; show some first"
        )));
    }
    Ok(())
}

/// A change of a session that a fleet's record holds.
#[cfg_attr(not(feature = "http"), allow(dead_code, reason = "a fleet's record needs feature http"))]
pub(crate) enum RecordChange<'a> {
    /// The handshake: the revision and what the client declared.
    Initialized,
    /// `logging/setLevel`.
    Level(&'a LoggingLevel),
    /// `resources/subscribe`.
    Subscribe(&'a str),
    /// `resources/unsubscribe`.
    Unsubscribe(&'a str),
    /// An item hidden from the session, or shown again ([`SessionControl`](super::visibility::SessionControl)).
    Hidden { kind: ItemKind, key: &'a str, hidden: bool },
}

/// The record's field of the fixed part of a session.
#[cfg(feature = "http")]
const SESSION_FIELD: &str = "session";
/// The record's field of the log level.
#[cfg(feature = "http")]
const LEVEL_FIELD: &str = "level";
/// What the record's field of a subscription starts with (the URI follows).
#[cfg(feature = "http")]
const SUBSCRIPTION_FIELD: &str = "sub:";

/// The part of a session a fleet's record keeps in one field: set at `initialize`, never
/// changed.
#[cfg(feature = "http")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct FixedRecord {
    version: String,
    capabilities: ClientCapabilities,
    client_info: Option<Implementation>,
    /// The HTTP session id, so that a copy built from the record knows it (see
    /// `Server::session`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
}

#[cfg(feature = "http")]
fn json_bytes(value: &impl serde::Serialize) -> Bytes {
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
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

/// Records `change` of the session in the fleet's store when the session is shared (HTTP with
/// `HttpServerConfig::shared_sessions`), and then takes the record as the store holds it
/// (this change and every other instance's): whether it did, that is whether the session is
/// shared; the caller applies the change itself when it is not. A change the store did not
/// take is not applied (the request fails). Boxed, and only for a shared session.
pub(crate) async fn update_shared(
    state: &SessionState,
    rctx: &RequestContext,
    change: RecordChange<'_>,
) -> Result<bool, ErrorObject> {
    update_shared_with(state, rctx.attachment(), rctx.peer().protocol_version(), change).await
}

/// [`update_shared`] with what it reads of the request: its attachment and revision.
pub(crate) async fn update_shared_with(
    state: &SessionState,
    attachment: Option<&mcp_jsonrpc::Attachment>,
    version: ProtocolVersion,
    change: RecordChange<'_>,
) -> Result<bool, ErrorObject> {
    #[cfg(feature = "http")]
    return update_record(state, attachment, version, change).await;
    #[cfg(not(feature = "http"))]
    {
        let _ = (state, attachment, version, change);
        Ok(false)
    }
}

/// [`update_shared_with`] with feature `http`: the change made in the fleet's record, from a
/// request of the session (through its HTTP request) or from outside one (a
/// [`SessionControl`](super::visibility::SessionControl) of `Server::session`, through the
/// record the copy was given when it was made).
#[cfg(feature = "http")]
async fn update_record(
    state: &SessionState,
    attachment: Option<&mcp_jsonrpc::Attachment>,
    version: ProtocolVersion,
    change: RecordChange<'_>,
) -> Result<bool, ErrorObject> {
    let info = attachment
        .and_then(|a| a.downcast_ref::<mcp_transport_http::server::RequestInfo>())
        .filter(|info| info.shares_session());
    let record = match info {
        None if state.is_shared() => state.record.get(),
        _ => None,
    };
    if info.is_none() && record.is_none() {
        return Ok(false);
    }
    match change {
        RecordChange::Subscribe(uri) => state.may_subscribe(uri)?,
        RecordChange::Hidden { kind, key, hidden: true } => room_to_hide(&state.inner().hidden, kind, key)?,
        _ => {}
    }
    let changes = state.record_changes(&change, version);
    let updated = match (info, record) {
        (Some(info), _) => Box::pin(info.update_session(&changes)).await,
        (None, Some(record)) => Box::pin(record.update(&changes)).await,
        (None, None) => return Ok(false),
    };
    let record = updated.map_err(|e| {
        if e.is::<mcp_transport_http::server::SessionEnded>() {
            return ErrorObject::invalid_request("the session ended");
        }
        tracing::warn!("fleet: the session could not be saved: {e}");
        ErrorObject::internal_error("the shared session store is unavailable; try again later")
    })?;
    if let Some(record) = record
        && state.apply_record(&record).is_none()
    {
        tracing::warn!("fleet: the session's record could not be read back");
    }
    Ok(true)
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;

    fn record(version: u64, level: &str, subscriptions: &[&str]) -> SessionRecord {
        let fixed = br#"{"version":"2025-06-18","capabilities":{},"clientInfo":null}"#;
        let mut fields = vec![
            (SESSION_FIELD.to_owned(), Bytes::from_static(fixed)),
            (LEVEL_FIELD.to_owned(), Bytes::from(format!("\"{level}\""))),
        ];
        fields.extend(subscriptions.iter().map(|uri| (format!("{SUBSCRIPTION_FIELD}{uri}"), Bytes::new())));
        SessionRecord { version, fields }
    }

    #[test]
    fn a_copy_takes_newer_records_only() {
        let (state, version) = SessionState::from_record(&record(2, "error", &["a://1"])).unwrap();
        assert_eq!(version, ProtocolVersion::from_wire("2025-06-18").unwrap());
        assert!(state.is_subscribed("a://1") && !state.log_enabled(&LoggingLevel::Info));
        // A reload that read the record before the change this copy took last comes after it.
        assert!(state.apply_record(&record(1, "debug", &[])).is_some());
        assert!(state.is_subscribed("a://1") && !state.log_enabled(&LoggingLevel::Info));
        assert!(state.apply_record(&record(3, "debug", &["a://2"])).is_some());
        assert!(!state.is_subscribed("a://1") && state.is_subscribed("a://2"));
        assert!(state.log_enabled(&LoggingLevel::Debug));
        assert!(state.apply_record(&SessionRecord { version: 4, fields: Vec::new() }).is_none(), "unreadable");
    }
}
