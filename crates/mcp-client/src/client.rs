//! The client: the handshake, typed calls, handlers for the server's requests, notifications.

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_jsonrpc::{
    BoxFuture, CallError, Peer, PeerConfig, Reply, RequestContext, Router, Service, Transport, TransportError,
    TransportKind, message,
};
use mcp_transport_stdio::{ChildCommand, ChildError, ChildProcess};
use mcp_types::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientCapabilitiesElicitation,
    ClientCapabilitiesRoots, ClientCapabilitiesSampling, CompleteRequest, CompleteRequestParams,
    CompleteRequestParamsArgument, CompleteRequestParamsContext, CompleteResult, CompletionReference,
    CreateMessageRequest, DiscoverRequest, DiscoverResult, ElicitRequest, ErrorObject, GetPromptRequest,
    GetPromptRequestParams, GetPromptResult, Implementation, InitializeRequest, InitializeRequestParams,
    InitializeResult, InitializedNotification, ListPromptsRequest, ListPromptsResult, ListResourceTemplatesRequest,
    ListResourceTemplatesResult, ListResourcesRequest, ListResourcesResult, ListRootsRequest, ListRootsResult,
    ListToolsRequest, ListToolsResult, LoggingLevel, LoggingMessageNotificationParams, PaginatedRequestParams,
    PingRequest, Prompt, ProtocolVersion, ReadResourceRequest, ReadResourceRequestParams, ReadResourceResult, Resource,
    ResourceTemplate, RootsListChangedNotification, ServerCapabilities, SetLevelRequest, SetLevelRequestParams,
    SubscribeRequest, SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequest, UnsubscribeRequestParams,
};
use tokio::sync::broadcast;

use crate::cache::ListCache;
use crate::handlers::{ElicitationHandler, RootsHandler, SamplingHandler, apply_elicitation_defaults};
use crate::listen::{self, Registry, Subscription};
use crate::modern::{self, Discovered, InputHandlers, MODERN, Probe, RequestMeta};
use crate::tool_headers::{self, HeaderRules};

pub use mcp_jsonrpc::CallOptions;

/// The most pages a `list_all_*` helper follows before it gives up (a server that keeps
/// sending cursors would otherwise loop forever).
const MAX_PAGES: usize = 10_000;

/// Why a client operation failed. Each kind can be told apart and keeps the server's message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    #[error("server error: {0}")]
    Remote(ErrorObject),
    /// No answer in time (a cancellation was sent).
    #[error("request `{method}` timed out after {elapsed:?}")]
    Timeout {
        /// The method called.
        method: String,
        /// How long the call waited.
        elapsed: Duration,
    },
    /// The call was cancelled by the caller.
    #[error("request cancelled")]
    Cancelled,
    /// The connection is closed.
    #[error("connection closed{}", .0.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Closed(Option<String>),
    /// The server's answer does not decode as the expected result.
    #[error("cannot decode the answer to `{method}`: {detail}")]
    Decode {
        /// The method called.
        method: String,
        /// What went wrong.
        detail: String,
    },
    /// The server did not declare the capability the call needs.
    #[error("the server does not support {0}")]
    NotSupported(&'static str),
    /// The server answered `initialize` with a revision this client does not speak.
    #[error("the server speaks protocol revision `{0}`, which this client does not support")]
    UnsupportedVersion(String),
    /// The arguments do not match the tool's input schema (checked before sending).
    #[error("invalid arguments for tool `{tool}`: {detail}")]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// The schema violations.
        detail: String,
    },
    /// The tool's `structuredContent` does not match its output schema.
    #[error("structured content of tool `{tool}` does not match its output schema: {detail}")]
    InvalidStructuredContent {
        /// The tool.
        tool: String,
        /// The schema violations.
        detail: String,
    },
    /// The server process could not be started.
    #[error(transparent)]
    Spawn(#[from] ChildError),
    /// A request could not be encoded, or another local failure.
    #[error("{0}")]
    Local(String),
    /// The transport failed: it could not be set up (an invalid URL, an HTTP client that
    /// cannot be built), or it could not deliver a request or its answer (over HTTP: an error
    /// status, a broken connection, an expired session). Over HTTP the cause is an
    /// `mcp_transport_http::client::HttpRequestError` (or `HttpClientError` at setup):
    /// [`ClientError::http_error`] reaches it.
    #[error("{0}")]
    Transport(#[source] TransportError),
    /// The call does not exist in the connection's protocol revision (`ping`,
    /// `logging/setLevel`, `resources/subscribe`, `initialize` in 2026-07-28; `server/discover`
    /// and `subscriptions/listen` before it).
    #[error("`{what}` does not exist in protocol revision {version}")]
    NotInRevision {
        /// The method or feature.
        what: String,
        /// The connection's revision.
        version: ProtocolVersion,
    },
    /// The server kept asking for input (2026-07-28 `input_required` results) beyond
    /// [`ClientBuilder::max_input_rounds`].
    #[error("`{method}` still needed input after {rounds} rounds")]
    TooManyRounds {
        /// The method called.
        method: String,
        /// The rounds of input answered.
        rounds: usize,
    },
    /// A server's input request (2026-07-28 `input_required`) could not be answered: no
    /// handler for it, or the handler refused.
    #[error("cannot answer the server's `{method}` request: {error}")]
    Input {
        /// The requested method (`elicitation/create`, `sampling/createMessage`,
        /// `roots/list`).
        method: String,
        /// Why.
        error: ErrorObject,
    },
    /// The tool was left out of `tools/list` because its definition is invalid (over
    /// Streamable HTTP in 2026-07-28: its `x-mcp-header` declarations break the rules).
    #[error("tool `{tool}` is not usable: {reason}")]
    RejectedTool {
        /// The tool.
        tool: String,
        /// Why it was rejected.
        reason: String,
    },
}

impl ClientError {
    /// Whether the server ended the HTTP session (404 to a request with `Mcp-Session-Id`).
    /// Unless [`ClientBuilder::reinitialize_on_session_expiry`] turned it off, the client has
    /// already tried a new session and the call once more.
    pub fn is_session_expired(&self) -> bool {
        matches!(self, ClientError::Transport(e) if session_expired(e))
    }

    /// The HTTP transport's account of a failed request, for [`ClientError::Transport`]: its
    /// [`kind`](crate::http::HttpRequestError::kind) and
    /// [`status`](crate::http::HttpRequestError::status).
    #[cfg(feature = "http")]
    pub fn http_error(&self) -> Option<&crate::http::HttpRequestError> {
        match self {
            ClientError::Transport(e) => e.downcast_ref(),
            _ => None,
        }
    }
}

/// Whether the transport says the session the request was sent in is over.
#[cfg(feature = "http")]
fn session_expired(e: &TransportError) -> bool {
    e.downcast_ref::<crate::http::HttpRequestError>().is_some_and(|e| e.is_session_expired())
}

#[cfg(not(feature = "http"))]
fn session_expired(_: &TransportError) -> bool {
    false
}

impl From<CallError> for ClientError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Remote(e) => ClientError::Remote(e),
            CallError::Timeout { method, elapsed } => ClientError::Timeout { method, elapsed },
            CallError::Cancelled => ClientError::Cancelled,
            CallError::Closed => ClientError::Closed(None),
            CallError::Transport(e) => ClientError::Transport(e),
            CallError::Decode { method, source } => ClientError::Decode { method, detail: source.to_string() },
            CallError::NotInRevision { method, version } => {
                ClientError::NotInRevision { what: method.to_owned(), version }
            }
            other => ClientError::Local(other.to_string()),
        }
    }
}

/// A notification from the server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// A log message (`notifications/message`).
    Log(LoggingMessageNotificationParams),
    /// The tool list changed.
    ToolListChanged,
    /// The prompt list changed.
    PromptListChanged,
    /// The resource list changed.
    ResourceListChanged,
    /// A subscribed resource changed.
    ResourceUpdated {
        /// Its URI.
        uri: String,
    },
    /// A URL-mode elicitation was completed out of band (2025-11-25).
    ElicitationComplete {
        /// The elicitation it completes.
        elicitation_id: String,
    },
}

type EventCallback = Arc<dyn Fn(ServerEvent) + Send + Sync>;

/// Which protocol eras the client may speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EraChoice {
    /// Probe with `server/discover`; fall back to `initialize` for earlier servers.
    Auto,
    /// Only the `initialize` handshake (2025-11-25 and earlier).
    Legacy,
    /// `initialize` first; `server/discover` if the server refuses it.
    InitializeFirst,
    /// Only 2026-07-28; no fallback.
    Stateless,
}

/// Configures and connects a [`Client`].
#[derive(Clone)]
pub struct ClientBuilder {
    info: Implementation,
    version: ProtocolVersion,
    era: EraChoice,
    peer_config: PeerConfig,
    sampling: Option<Arc<dyn SamplingHandler>>,
    elicitation: Option<Arc<dyn ElicitationHandler>>,
    elicitation_url: bool,
    apply_defaults: bool,
    roots: Option<Arc<dyn RootsHandler>>,
    on_event: Option<EventCallback>,
    events_capacity: usize,
    validate_arguments: bool,
    validate_structured: bool,
    reinitialize: bool,
    discover_timeout: Duration,
    max_input_rounds: usize,
    cache_lists: bool,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("info", &self.info)
            .field("version", &self.version)
            .field("era", &self.era)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// A client that introduces itself as `name` at `version`.
    ///
    /// It speaks 2026-07-28 to servers that do (found with `server/discover`), and the newest
    /// session revision (2025-11-25, with `initialize`) to the others.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientBuilder {
            info: Implementation::new(name, version),
            version: ProtocolVersion::LATEST_SESSION,
            era: EraChoice::Auto,
            peer_config: PeerConfig::default(),
            sampling: None,
            elicitation: None,
            elicitation_url: false,
            apply_defaults: false,
            roots: None,
            on_event: None,
            events_capacity: 256,
            validate_arguments: false,
            validate_structured: false,
            reinitialize: true,
            discover_timeout: Duration::from_secs(10),
            max_input_rounds: 10,
            cache_lists: false,
        }
    }

    /// Speaks only this revision: 2026-07-28 (the server must list it in its answer to
    /// `server/discover`; no fallback to `initialize`), or an earlier one, offered in
    /// `initialize` (no `server/discover` probe; the server may answer with an older revision,
    /// which the client then speaks).
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        if version.is_stateless() {
            self.era = EraChoice::Stateless;
        } else {
            self.era = EraChoice::Legacy;
            self.version = version;
        }
        self
    }

    /// Speaks only the revisions with the `initialize` handshake (2025-11-25 and earlier): no
    /// `server/discover` probe, before `initialize` or after it failed.
    pub fn legacy_only(mut self) -> Self {
        self.era = EraChoice::Legacy;
        self
    }

    /// Starts with the `initialize` handshake instead of the `server/discover` probe (one round
    /// trip less with servers of the session revisions), and speaks 2026-07-28 with a server
    /// that refuses `initialize` with a JSON-RPC error and answers `server/discover`.
    pub fn initialize_first(mut self) -> Self {
        self.era = EraChoice::InitializeFirst;
        self
    }

    /// How long a stdio server may take to answer the `server/discover` probe (default 10 s)
    /// before it is taken for a server of an earlier revision (over HTTP, where a server
    /// always answers, the connection's request timeout applies and silence is an error).
    pub fn discover_timeout(mut self, timeout: Duration) -> Self {
        self.discover_timeout = timeout;
        self
    }

    /// How many times a call is sent again with the input a 2026-07-28 server asked for
    /// (`input_required`) before it fails with [`ClientError::TooManyRounds`] (default 10).
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// Keeps list pages (`tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list`) while the server's `ttlMs` says they are fresh, and serves
    /// them from memory; a list-changed notification drops the pages of its list. Off by
    /// default; only 2026-07-28 results carry a `ttlMs`.
    pub fn cache_lists(mut self) -> Self {
        self.cache_lists = true;
        self
    }

    /// Sets the title the client reports.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets timeouts and limits of the connection.
    pub fn peer_config(mut self, config: PeerConfig) -> Self {
        self.peer_config = config;
        self
    }

    /// Answers sampling requests (declares the `sampling` capability).
    pub fn on_sampling(mut self, handler: impl SamplingHandler) -> Self {
        self.sampling = Some(Arc::new(handler));
        self
    }

    /// Answers elicitation requests (declares the `elicitation` capability, form mode; call
    /// [`ClientBuilder::elicitation_url_mode`] to declare URL mode too).
    pub fn on_elicitation(mut self, handler: impl ElicitationHandler) -> Self {
        self.elicitation = Some(Arc::new(handler));
        self
    }

    /// Declares URL-mode elicitation as well.
    pub fn elicitation_url_mode(mut self) -> Self {
        self.elicitation_url = true;
        self
    }

    /// Fills in schema defaults the user left out of accepted forms (SEP-1034).
    pub fn apply_elicitation_defaults(mut self) -> Self {
        self.apply_defaults = true;
        self
    }

    /// Answers `roots/list` (declares the `roots` capability with `listChanged`).
    pub fn on_roots(mut self, handler: impl RootsHandler) -> Self {
        self.roots = Some(Arc::new(handler));
        self
    }

    /// Calls `f` for every notification from the server (on the reader task: keep it short).
    ///
    /// With a 2026-07-28 server, change notifications come only on a subscription: the client
    /// opens one at connection for the list changes the server declares (see
    /// [`Client::subscribe`] for resource updates).
    pub fn on_event(mut self, f: impl Fn(ServerEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(f));
        self
    }

    /// Checks tool arguments against the tool's input schema before sending (the schemas are
    /// those of the last `list_tools`). Feature `jsonschema`.
    #[cfg(feature = "jsonschema")]
    pub fn validate_arguments(mut self) -> Self {
        self.validate_arguments = true;
        self
    }

    /// Checks `structuredContent` of tool results against the tool's output schema. Feature
    /// `jsonschema`.
    #[cfg(feature = "jsonschema")]
    pub fn validate_structured_content(mut self) -> Self {
        self.validate_structured = true;
        self
    }

    /// Whether a call that fails because the server ended the HTTP session (404) starts a new
    /// session (a new `initialize` and `notifications/initialized`) and is sent once more
    /// (default: yes, as the specification asks). The new session starts afresh on the
    /// server: subscriptions and the log level are not restored.
    pub fn reinitialize_on_session_expiry(mut self, enabled: bool) -> Self {
        self.reinitialize = enabled;
        self
    }

    fn capabilities(&self, version: ProtocolVersion) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if self.sampling.is_some() {
            caps.sampling = Some(ClientCapabilitiesSampling::default());
        }
        if self.elicitation.is_some() {
            let mut e = ClientCapabilitiesElicitation::default();
            if version >= ProtocolVersion::V2025_11_25 {
                e.form = Some(Default::default());
                if self.elicitation_url {
                    e.url = Some(Default::default());
                }
            }
            caps.elicitation = Some(e);
        }
        if self.roots.is_some() {
            caps.roots = Some(ClientCapabilitiesRoots { list_changed: Some(true), ..Default::default() });
        }
        caps
    }

    fn input_handlers(&self) -> InputHandlers {
        InputHandlers {
            sampling: self.sampling.clone(),
            elicitation: self.elicitation.clone(),
            roots: self.roots.clone(),
            apply_defaults: self.apply_defaults,
            elicitation_url: self.elicitation_url,
        }
    }

    fn request_meta(&self, header_rules: Option<Arc<HeaderRules>>) -> RequestMeta {
        RequestMeta {
            info: self.info.clone(),
            capabilities: self.capabilities(MODERN),
            log_level: Mutex::new(None),
            header_rules,
        }
    }

    /// The handlers of the server's requests (sessions of 2025-11-25 and earlier; a 2026-07-28
    /// server asks in its results instead, and its requests of this kind get -32601).
    fn router(&self) -> Router {
        let mut router = Router::new();
        if let Some(h) = self.sampling.clone() {
            router = router.request::<CreateMessageRequest, _, _>(move |params, ctx| {
                let h = h.clone();
                async move {
                    session_era::<CreateMessageRequest>(&ctx, ProtocolVersion::V2024_11_05)?;
                    h.create_message(params).await
                }
            });
        }
        if let Some(h) = self.elicitation.clone() {
            let defaults = self.apply_defaults;
            let url_mode = self.elicitation_url;
            router = router.request::<ElicitRequest, _, _>(move |params, ctx| {
                let h = h.clone();
                async move {
                    // Elicitation came with 2025-06-18.
                    session_era::<ElicitRequest>(&ctx, ProtocolVersion::V2025_06_18)?;
                    check_elicitation_mode(&params, url_mode)?;
                    let mut result = h.elicit(params.clone()).await?;
                    if defaults {
                        apply_elicitation_defaults(&params, &mut result);
                    }
                    Ok(result)
                }
            });
        }
        if let Some(h) = self.roots.clone() {
            router = router.request::<ListRootsRequest, _, _>(move |_params, ctx| {
                let h = h.clone();
                async move {
                    session_era::<ListRootsRequest>(&ctx, ProtocolVersion::V2024_11_05)?;
                    Ok(ListRootsResult::new(h.roots().await?))
                }
            });
        }
        router
    }

    /// Connects over `transport` and negotiates the protocol revision: `server/discover`
    /// first (a 2026-07-28 server), else the `initialize` handshake. If a server refuses
    /// `initialize` with a JSON-RPC error after a probe that failed without saying that it
    /// speaks only earlier revisions (an error, no answer in time; or no probe, with
    /// [`initialize_first`](Self::initialize_first)), it is asked with `server/discover` once
    /// more, and spoken to in 2026-07-28 if it answers as a 2026-07-28 server.
    pub async fn connect<T: Transport>(self, transport: T) -> Result<Client, ClientError> {
        self.connect_inner(transport, None, false).await.map_err(Failure::into_error)
    }

    /// Connects to the MCP endpoint at `url` over Streamable HTTP (falling back to legacy
    /// HTTP+SSE for a 2024-11-05 server) and negotiates the protocol revision.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), mcp_client::ClientError> {
    /// let client = mcp_client::ClientBuilder::new("my-app", "1.0").connect_http("http://127.0.0.1:8080/mcp").await?;
    /// println!("{} speaks {}", client.server_info().name, client.protocol_version());
    /// client.close().await?; // DELETE ends the session
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "http")]
    pub async fn connect_http(self, url: &str) -> Result<Client, ClientError> {
        let config = crate::http::HttpClientConfig::parse(url).map_err(|e| ClientError::Transport(Arc::new(e)))?;
        self.connect_http_with(config).await
    }

    /// Connects over Streamable HTTP with a full configuration (headers, authorization,
    /// timeouts, a reqwest client of your own; see [`crate::http::HttpClientConfig`]) and
    /// negotiates the protocol revision.
    #[cfg(feature = "http")]
    pub async fn connect_http_with(self, config: crate::http::HttpClientConfig) -> Result<Client, ClientError> {
        let transport =
            crate::http::StreamableHttpTransport::new(config).map_err(|e| ClientError::Transport(Arc::new(e)))?;
        self.connect(transport).await
    }

    /// Runs a server as a child process, connects to it over its stdio, and negotiates the
    /// protocol revision. If the child dies during the handshake, the error carries its exit
    /// status and the tail of its stderr. A server that exits on the `server/discover` probe
    /// (some servers of earlier revisions end on any request before `initialize`) is started
    /// once more and spoken to with `initialize`.
    pub async fn spawn(self, command: ChildCommand) -> Result<Client, ClientError> {
        let (transport, child) = ChildProcess::spawn(command.clone())?;
        let respawnable = self.era == EraChoice::Auto;
        let retry = self.clone();
        match self.connect_inner(transport, Some(child), respawnable).await {
            Ok(client) => Ok(client),
            Err(Failure::ProbeClosed) => {
                tracing::info!("the server exited on server/discover; starting it again for `initialize`");
                let (transport, child) = ChildProcess::spawn(command)?;
                retry.legacy_only().connect_inner(transport, Some(child), false).await.map_err(Failure::into_error)
            }
            Err(Failure::Error(e)) => Err(e),
        }
    }

    async fn connect_inner<T: Transport>(
        self,
        transport: T,
        child: Option<ChildProcess>,
        respawnable: bool,
    ) -> Result<Client, Failure> {
        let over_http = T::KIND == TransportKind::HttpClient;
        let header_rules = over_http.then(|| Arc::new(HeaderRules::default()));
        let (events, _) = broadcast::channel(self.events_capacity.max(1));
        let cache = self.cache_lists.then(|| Arc::new(ListCache::default()));
        let registry = Arc::new(Registry::default());
        let emit = emitter(self.on_event.clone(), events.clone(), cache.clone());
        let service = ClientService { router: self.router(), registry: registry.clone(), emit };
        let peer = Peer::spawn(transport, Arc::new(service), self.peer_config.clone());
        let meta = self.request_meta(header_rules.clone());
        let negotiated = match self.negotiate(&peer, &meta, over_http).await {
            Ok(n) => n,
            Err(err) => {
                peer.close();
                let probe_closed = matches!(err, NegotiationError::ProbeClosed);
                let err = err.into_error();
                return Err(match (err, child) {
                    (_, Some(child)) if respawnable && probe_closed => {
                        let _ = child.shutdown().await;
                        Failure::ProbeClosed
                    }
                    (ClientError::Closed(_), Some(mut child)) => {
                        let report = match tokio::time::timeout(Duration::from_secs(5), child.wait_with_report()).await
                        {
                            Ok(Ok((_, report))) => report,
                            _ => format!("`{}` closed its stdout", child.program()),
                        };
                        let _ = child.shutdown().await;
                        Failure::Error(ClientError::Closed(Some(report)))
                    }
                    (err, Some(child)) => {
                        let _ = child.shutdown().await;
                        Failure::Error(err)
                    }
                    (err, None) => Failure::Error(err),
                });
            }
        };
        let version = peer.protocol_version();
        let ack_timeout = self.peer_config.request_timeout.unwrap_or(Duration::from_secs(60));
        let (server, init, discovered, init_params, modern) = match negotiated {
            Negotiated::Legacy { init, params } => {
                let server = ServerDescription {
                    info: init.server_info.clone(),
                    capabilities: init.capabilities.clone(),
                    instructions: init.instructions.clone(),
                };
                (server, Some(*init), None, Some(*params), None)
            }
            Negotiated::Modern(discovered) => {
                let server = ServerDescription {
                    info: discovered.server_info.clone(),
                    capabilities: discovered.result.capabilities.clone(),
                    instructions: discovered.result.instructions.clone(),
                };
                let modern = ModernState { meta, handlers: self.input_handlers(), max_rounds: self.max_input_rounds };
                (server, None, Some(discovered.result), None, Some(modern))
            }
        };
        let client = Client {
            peer,
            server,
            init,
            discovered,
            init_params,
            modern,
            version,
            events,
            registry,
            cache,
            child: tokio::sync::Mutex::new(child),
            schemas: Mutex::new(HashMap::new()),
            validate_arguments: self.validate_arguments,
            validate_structured: self.validate_structured,
            reinitialize: self.reinitialize,
            session: AtomicU64::new(0),
            renewing: tokio::sync::Mutex::new(()),
            header_rules,
            background: tokio::sync::Mutex::new(Background::default()),
            watch_list_changes: self.on_event.is_some(),
            ack_timeout,
            events_capacity: self.events_capacity.max(1),
        };
        if client.modern.is_some() && client.watch_list_changes {
            let mut background = client.background.lock().await;
            if let Err(e) = client.reopen_background(&mut background).await {
                tracing::warn!(error = %e, "cannot subscribe to the server's list changes");
            }
        }
        Ok(client)
    }

    /// Finds the server's era and starts speaking it.
    ///
    /// The probe first (unless legacy only, or `initialize` first); then `initialize`. A server
    /// that refuses `initialize` with a JSON-RPC error of its own (not one the HTTP transport
    /// makes up from a status), after a probe that did not show a server of the session
    /// revisions only (or no probe), may be a 2026-07-28 server that has no `initialize` (the
    /// probe went unanswered in time, failed transiently, or was not sent): it is probed once
    /// more, without falling back, and if it answers as a 2026-07-28 server it is spoken to as
    /// one; otherwise the error of `initialize` stands.
    async fn negotiate(
        &self,
        peer: &Peer,
        meta: &RequestMeta,
        over_http: bool,
    ) -> Result<Negotiated, NegotiationError> {
        // Whether a probe showed a server that knows 2026-07-28 and speaks only earlier
        // revisions (no use asking it again).
        let mut only_earlier = false;
        if matches!(self.era, EraChoice::Auto | EraChoice::Stateless) {
            peer.set_protocol_version(MODERN);
            let timeout = (!over_http).then_some(self.discover_timeout);
            let fallback = self.era == EraChoice::Auto;
            match modern::probe(peer, meta, timeout, over_http, fallback).await {
                Ok(Probe::Modern(discovered)) => return Ok(Negotiated::Modern(discovered)),
                Ok(Probe::Legacy { why, conclusive }) => {
                    tracing::debug!(reason = %why, "not a 2026-07-28 server; falling back to `initialize`");
                    only_earlier = conclusive;
                }
                Err(ClientError::Closed(_)) if fallback && !over_http => return Err(NegotiationError::ProbeClosed),
                Err(e) => return Err(NegotiationError::Error(e)),
            }
        }
        peer.set_protocol_version(self.version);
        let params =
            InitializeRequestParams::new(self.capabilities(self.version), self.info.clone(), self.version.as_str());
        match handshake(peer, &params).await {
            Ok(init) => Ok(Negotiated::Legacy { init: Box::new(init), params: Box::new(params) }),
            Err(ClientError::Remote(refusal))
                if matches!(self.era, EraChoice::Auto | EraChoice::InitializeFirst) && !only_earlier =>
            {
                tracing::debug!(error = %refusal, "`initialize` refused; asking with `server/discover`");
                peer.set_protocol_version(MODERN);
                match modern::probe(peer, meta, None, over_http, false).await {
                    Ok(Probe::Modern(discovered)) => Ok(Negotiated::Modern(discovered)),
                    other => {
                        if let Err(e) = other {
                            tracing::debug!(error = %e, "not a 2026-07-28 server either");
                        }
                        peer.set_protocol_version(self.version);
                        Err(NegotiationError::Error(ClientError::Remote(refusal)))
                    }
                }
            }
            Err(e) => Err(NegotiationError::Error(e)),
        }
    }
}

/// How connecting failed.
enum Failure {
    Error(ClientError),
    /// A child server exited on the `server/discover` probe: start it again for `initialize`.
    ProbeClosed,
}

impl Failure {
    fn into_error(self) -> ClientError {
        match self {
            Failure::Error(e) => e,
            Failure::ProbeClosed => ClientError::Closed(Some("the server exited on server/discover".to_owned())),
        }
    }
}

enum NegotiationError {
    Error(ClientError),
    ProbeClosed,
}

impl NegotiationError {
    fn into_error(self) -> ClientError {
        match self {
            NegotiationError::Error(e) => e,
            NegotiationError::ProbeClosed => ClientError::Closed(None),
        }
    }
}

enum Negotiated {
    Legacy { init: Box<InitializeResult>, params: Box<InitializeRequestParams> },
    Modern(Box<Discovered>),
}

/// Reports an event: drops the cached pages of a list that changed, calls the callback, feeds
/// the broadcast.
fn emitter(
    callback: Option<EventCallback>,
    events: broadcast::Sender<ServerEvent>,
    cache: Option<Arc<ListCache>>,
) -> Emit {
    Arc::new(move |event: ServerEvent| {
        if let Some(cache) = &cache {
            match &event {
                ServerEvent::ToolListChanged => cache.invalidate(&["tools/list"]),
                ServerEvent::PromptListChanged => cache.invalidate(&["prompts/list"]),
                ServerEvent::ResourceListChanged => cache.invalidate(&["resources/list", "resources/templates/list"]),
                _ => {}
            }
        }
        if let Some(cb) = &callback {
            cb(event.clone());
        }
        let _ = events.send(event);
    })
}

type Emit = Arc<dyn Fn(ServerEvent) + Send + Sync>;

/// What the client serves: the server's requests (sessions of earlier revisions) and its
/// notifications, routed to subscriptions or reported as events.
struct ClientService {
    router: Router,
    registry: Arc<Registry>,
    emit: Emit,
}

impl Service for ClientService {
    fn request(&self, request: message::Request, ctx: RequestContext) -> BoxFuture<Reply> {
        Service::request(&self.router, request, ctx)
    }

    fn notification(&self, n: message::Notification, _peer: &Peer) {
        if n.method == "notifications/cancelled" {
            if !self.registry.server_cancelled(&n) {
                tracing::debug!("cancellation of an unknown request");
            }
            return;
        }
        if let Some(id) = listen::subscription_of(&n)
            && self.registry.deliver(&id, &n, &*self.emit)
        {
            return;
        }
        match listen::event_of(&n) {
            Some(event) => (self.emit)(event),
            None => tracing::debug!(method = %n.method, "unhandled notification"),
        }
    }
}

/// A server's request of a session-era kind (sampling, elicitation, roots) is answered only in
/// a session whose revision has it (from `since`): a 2026-07-28 server asks within its results.
fn session_era<R: mcp_types::Request>(ctx: &RequestContext, since: ProtocolVersion) -> Result<(), ErrorObject> {
    let version = ctx.peer().protocol_version();
    if version.is_stateless() || version < since {
        return Err(ErrorObject::method_not_found(R::METHOD));
    }
    Ok(())
}

/// URL-mode elicitation only where it was declared (2025-11-25: else -32602).
pub(crate) fn check_elicitation_mode(
    params: &mcp_types::ElicitRequestParams,
    url_mode: bool,
) -> Result<(), ErrorObject> {
    if matches!(params, mcp_types::ElicitRequestParams::ElicitRequestURL(_)) && !url_mode {
        return Err(ErrorObject::invalid_params("URL-mode elicitation was not declared by this client"));
    }
    Ok(())
}

/// `initialize`, the revision check, `notifications/initialized`.
async fn handshake(peer: &Peer, params: &InitializeRequestParams) -> Result<InitializeResult, ClientError> {
    let options = CallOptions { hints: tool_headers::initialize(), ..Default::default() };
    let init = peer.request::<InitializeRequest>(params.clone(), options).await?;
    // The server answers the revision offered or another it supports; a client that offered
    // an older one (pinned to it) does not take a newer one.
    let offered = ProtocolVersion::from_wire(&params.protocol_version);
    let version = ProtocolVersion::from_wire(&init.protocol_version)
        .filter(|v| !v.is_stateless() && offered.is_none_or(|o| *v <= o))
        .ok_or_else(|| ClientError::UnsupportedVersion(init.protocol_version.clone()))?;
    peer.set_protocol_version(version);
    match tool_headers::initialized() {
        Some(hints) => peer.notify_with_hints::<InitializedNotification>(Default::default(), hints).await?,
        None => peer.notify::<InitializedNotification>(Default::default()).await?,
    }
    Ok(init)
}

/// Compiled schemas of one tool.
#[derive(Clone, Default)]
struct ToolSchemas {
    input: Option<Arc<Validator>>,
    output: Option<Arc<Validator>>,
}

/// A compiled JSON Schema (feature `jsonschema`; without it none is ever built, and the
/// validation options do not exist).
#[cfg(feature = "jsonschema")]
type Validator = jsonschema::Validator;
#[cfg(not(feature = "jsonschema"))]
enum Validator {}

/// Compiles a tool's schema; `None` if it does not compile (it is then not checked).
fn compile_schema(schema: &mcp_types::JsonObject) -> Option<Arc<Validator>> {
    #[cfg(feature = "jsonschema")]
    return jsonschema::validator_for(&serde_json::Value::Object(schema.clone())).ok().map(Arc::new);
    #[cfg(not(feature = "jsonschema"))]
    {
        let _ = schema;
        None
    }
}

/// Who the server is, from `initialize` or `server/discover`.
#[derive(Debug)]
struct ServerDescription {
    info: Implementation,
    capabilities: ServerCapabilities,
    instructions: Option<String>,
}

/// The state of a 2026-07-28 connection.
struct ModernState {
    meta: RequestMeta,
    handlers: InputHandlers,
    max_rounds: usize,
}

/// The subscription `Client::subscribe` keeps (2026-07-28): the subscribed resources and the
/// list changes, delivered as events.
#[derive(Default)]
struct Background {
    uris: std::collections::BTreeSet<String>,
    subscription: Option<listen::Opened>,
}

/// A connected client.
pub struct Client {
    peer: Peer,
    server: ServerDescription,
    init: Option<InitializeResult>,
    discovered: Option<DiscoverResult>,
    /// What `initialize` sent, to start a new session with (sessions only).
    init_params: Option<InitializeRequestParams>,
    /// Set for a 2026-07-28 connection.
    modern: Option<ModernState>,
    version: ProtocolVersion,
    events: broadcast::Sender<ServerEvent>,
    registry: Arc<Registry>,
    cache: Option<Arc<ListCache>>,
    child: tokio::sync::Mutex<Option<ChildProcess>>,
    schemas: Mutex<HashMap<String, ToolSchemas>>,
    validate_arguments: bool,
    validate_structured: bool,
    reinitialize: bool,
    /// Counts sessions started after the first.
    session: AtomicU64,
    /// Held while a new session is started, so that calls failing together start one.
    renewing: tokio::sync::Mutex<()>,
    /// Over HTTP: in 2026-07-28, the `x-mcp-header` declarations of the tools listed (tools
    /// with invalid ones are rejected), for the headers of their calls.
    header_rules: Option<Arc<HeaderRules>>,
    background: tokio::sync::Mutex<Background>,
    /// Whether the background subscription asks for list changes (`on_event` was set).
    watch_list_changes: bool,
    ack_timeout: Duration,
    events_capacity: usize,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server.info)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

fn violations(validator: &Validator, value: &serde_json::Value) -> Option<String> {
    #[cfg(feature = "jsonschema")]
    {
        let errors: Vec<String> = validator.iter_errors(value).take(8).map(|e| e.to_string()).collect();
        (!errors.is_empty()).then(|| errors.join("; "))
    }
    #[cfg(not(feature = "jsonschema"))]
    {
        let _ = value;
        match *validator {}
    }
}

/// Follows `nextCursor` from page to page and collects every item.
async fn collect_pages<T, F, Fut>(method: &str, mut fetch: F) -> Result<Vec<T>, ClientError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), ClientError>>,
{
    let mut all = Vec::new();
    let mut cursor = None;
    // A server that hands back a cursor it gave before would page forever.
    let mut seen = std::collections::HashSet::new();
    for _ in 0..MAX_PAGES {
        let (items, next) = fetch(cursor).await?;
        all.extend(items);
        match next {
            Some(c) if !seen.insert(c.clone()) => {
                return Err(ClientError::Local(format!("{method} repeated the cursor `{c}`: its pages loop")));
            }
            Some(c) => cursor = Some(c),
            None => return Ok(all),
        }
    }
    Err(ClientError::Local(format!("{method} did not end after {MAX_PAGES} pages")))
}

fn decode_result<R: mcp_types::Request>(value: serde_json::Value) -> Result<R::Result, ClientError> {
    serde_json::from_value(value)
        .map_err(|e| ClientError::Decode { method: R::METHOD.to_owned(), detail: e.to_string() })
}

impl Client {
    /// The server's name, version and other details (from `initialize`, or the `serverInfo`
    /// of `server/discover`).
    pub fn server_info(&self) -> &Implementation {
        &self.server.info
    }

    /// The server's capabilities.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.server.capabilities
    }

    /// The server's instructions, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.server.instructions.as_deref()
    }

    /// The negotiated protocol revision (2026-07-28: [`ProtocolVersion::is_stateless`]).
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// The server's answer to `server/discover` (2026-07-28: its supported revisions and
    /// caching hints), `None` for a session opened with `initialize`.
    pub fn discover_result(&self) -> Option<&DiscoverResult> {
        self.discovered.as_ref()
    }

    /// The server's answer to `initialize`, `None` for a 2026-07-28 connection.
    pub fn initialize_result(&self) -> Option<&InitializeResult> {
        self.init.as_ref()
    }

    /// The connection, for calls this API does not cover. Requests sent through it carry no
    /// 2026-07-28 `_meta`: prefer [`Client::send_request`].
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// A stream of the server's notifications (a bounded broadcast: a slow reader misses the
    /// oldest ones and is told so).
    pub fn events(&self) -> broadcast::Receiver<ServerEvent> {
        self.events.subscribe()
    }

    /// Sends a typed request this API does not cover, with what the connection's revision
    /// needs: in 2026-07-28 the per-request `_meta`, and the input a server asks for
    /// (`input_required`, for `tools/call`, `prompts/get`, `resources/read`); in a session, a
    /// new session when the server ended the old one. No capability is checked.
    pub async fn send_request<R: mcp_types::Request>(
        &self,
        params: R::Params,
        options: CallOptions,
    ) -> Result<R::Result, ClientError>
    where
        R::Params: Clone,
    {
        self.request::<R>(params, options).await
    }

    /// Calls a typed method in the connection's revision (see [`Client::send_request`]).
    async fn request<R: mcp_types::Request>(
        &self,
        params: R::Params,
        options: CallOptions,
    ) -> Result<R::Result, ClientError>
    where
        R::Params: Clone,
    {
        if let Some(m) = &self.modern {
            let value = modern::call::<R>(&self.peer, &m.meta, &m.handlers, m.max_rounds, &params, options).await?;
            return decode_result::<R>(value);
        }
        if !self.reinitialize {
            return Ok(self.peer.request::<R>(params, options).await?);
        }
        let session = self.session.load(Ordering::Acquire);
        match self.peer.request::<R>(params.clone(), options.clone()).await {
            Err(CallError::Transport(e)) if session_expired(&e) => {
                tracing::info!(method = R::METHOD, "the server ended the session; starting a new one");
                self.renew_session(session).await?;
                Ok(self.peer.request::<R>(params, options).await?)
            }
            other => Ok(other?),
        }
    }

    /// A list page, from the cache when it is fresh there (2026-07-28 with
    /// [`ClientBuilder::cache_lists`]).
    async fn list_page<R>(&self, cursor: Option<String>) -> Result<R::Result, ClientError>
    where
        R: mcp_types::Request<Params = PaginatedRequestParams>,
    {
        if let (Some(m), Some(cache)) = (&self.modern, &self.cache) {
            if let Some(page) = cache.get(R::METHOD, &cursor) {
                return decode_result::<R>(page);
            }
            let params = Self::page(cursor.clone());
            let page =
                modern::call::<R>(&self.peer, &m.meta, &m.handlers, m.max_rounds, &params, CallOptions::default())
                    .await?;
            cache.put(R::METHOD, cursor, &page);
            return decode_result::<R>(page);
        }
        self.request::<R>(Self::page(cursor), CallOptions::default()).await
    }

    /// Drops every cached list page (see [`ClientBuilder::cache_lists`]).
    pub fn clear_cache(&self) {
        if let Some(cache) = &self.cache {
            cache.clear();
        }
    }

    /// Starts a new session unless one was started since `seen`.
    async fn renew_session(&self, seen: u64) -> Result<(), ClientError> {
        let _renewing = self.renewing.lock().await;
        if self.session.load(Ordering::Acquire) != seen {
            return Ok(());
        }
        self.reinitialize().await?;
        Ok(())
    }

    fn not_in_revision(&self, what: &str) -> ClientError {
        ClientError::NotInRevision { what: what.to_owned(), version: self.version }
    }

    /// Performs the handshake again over the same connection: over HTTP, a new session (the
    /// server ended the old one, or to start afresh). Returns the server's new answer; the
    /// accessors ([`Client::server_info`], [`Client::server_capabilities`], ...) keep
    /// describing the first one. A 2026-07-28 connection has no handshake:
    /// [`ClientError::NotInRevision`].
    pub async fn reinitialize(&self) -> Result<InitializeResult, ClientError> {
        let Some(init_params) = &self.init_params else { return Err(self.not_in_revision("initialize")) };
        // Offer what the first handshake offered, encoded for it.
        if let Some(offered) = ProtocolVersion::from_wire(&init_params.protocol_version) {
            self.peer.set_protocol_version(offered);
        }
        let init = handshake(&self.peer, init_params).await?;
        self.session.fetch_add(1, Ordering::AcqRel);
        Ok(init)
    }

    fn need(&self, present: bool, what: &'static str) -> Result<(), ClientError> {
        if present { Ok(()) } else { Err(ClientError::NotSupported(what)) }
    }

    /// Checks the connection with a `ping` (in 2026-07-28, which has no `ping`, with
    /// `server/discover`).
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.modern.is_some() {
            self.request::<DiscoverRequest>(Default::default(), CallOptions::default()).await?;
            return Ok(());
        }
        self.request::<PingRequest>(Default::default(), CallOptions::default()).await?;
        Ok(())
    }

    fn page(cursor: Option<String>) -> PaginatedRequestParams {
        PaginatedRequestParams { cursor, ..Default::default() }
    }

    /// One page of the server's tools.
    ///
    /// Over Streamable HTTP in 2026-07-28, a tool whose `x-mcp-header` declarations break the
    /// specification's rules is left out (with a warning in the log), and calling it fails
    /// with [`ClientError::RejectedTool`].
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, ClientError> {
        self.need(self.server.capabilities.tools.is_some(), "tools")?;
        // A listing from its first page starts what is remembered of the tools afresh: tools
        // the server dropped are forgotten, and what is kept stays bounded by one listing.
        let fresh = cursor.is_none();
        let mut result = self.list_page::<ListToolsRequest>(cursor).await?;
        if let (Some(rules), Some(_)) = (&self.header_rules, &self.modern) {
            rules.learn(&mut result.tools, fresh);
        }
        if self.validate_arguments || self.validate_structured {
            if fresh {
                self.schemas.lock_unpoisoned().clear();
            }
            self.remember_schemas(&result.tools);
        }
        Ok(result)
    }

    fn remember_schemas(&self, tools: &[Tool]) {
        let mut schemas = self.schemas.lock_unpoisoned();
        for tool in tools {
            let compile = compile_schema;
            schemas.insert(
                tool.name.clone(),
                ToolSchemas {
                    input: compile(&tool.input_schema),
                    output: tool.output_schema.as_ref().and_then(compile),
                },
            );
        }
    }

    /// Every tool, following `nextCursor` to the end.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        collect_pages("tools/list", |cursor| async move {
            let page = self.list_tools(cursor).await?;
            Ok((page.tools, page.next_cursor))
        })
        .await
    }

    /// Calls a tool with JSON arguments (an object, or `null` for none).
    ///
    /// A tool that fails answers with `isError: true`: that is an `Ok` result here (see
    /// [`CallToolResult::is_error`]); protocol failures are errors.
    pub async fn call_tool(&self, name: &str, arguments: serde_json::Value) -> Result<CallToolResult, ClientError> {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = match arguments {
            serde_json::Value::Object(m) => Some(m),
            serde_json::Value::Null => None,
            other => {
                return Err(ClientError::InvalidArguments {
                    tool: name.to_owned(),
                    detail: format!("arguments must be a JSON object, not {other}"),
                });
            }
        };
        self.call_tool_with(params, CallOptions::default()).await
    }

    /// Calls a tool with full params and per-call options (timeout, progress, cancellation).
    ///
    /// In 2026-07-28, the input the server asks for (`input_required`: elicitation, sampling,
    /// roots) is answered by the handlers of the builder and the call sent again, as often as
    /// [`ClientBuilder::max_input_rounds`] allows; the caller sees only the final result.
    pub async fn call_tool_with(
        &self,
        params: CallToolRequestParams,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        self.need(self.server.capabilities.tools.is_some(), "tools")?;
        let rejected = self.header_rules.as_ref().and_then(|rules| rules.rejected(&params.name));
        if let Some(reason) = rejected {
            return Err(ClientError::RejectedTool { tool: params.name, reason });
        }
        let schemas = self.schemas.lock_unpoisoned().get(&params.name).cloned();
        let schemas = schemas.unwrap_or_default();
        if self.validate_arguments
            && let Some(v) = &schemas.input
        {
            let args = serde_json::Value::Object(params.arguments.clone().unwrap_or_default());
            if let Some(detail) = violations(v, &args) {
                return Err(ClientError::InvalidArguments { tool: params.name, detail });
            }
        }
        let name = params.name.clone();
        let result = self.request::<CallToolRequest>(params, options).await?;
        // A tool with an output schema MUST return conforming structured content (an error
        // result aside).
        if self.validate_structured
            && let Some(v) = &schemas.output
            && !result.is_error()
        {
            let detail = match &result.structured_content {
                Some(structured) => violations(v, structured),
                None => Some("the tool has an output schema but returned no structuredContent".to_owned()),
            };
            if let Some(detail) = detail {
                return Err(ClientError::InvalidStructuredContent { tool: name, detail });
            }
        }
        Ok(result)
    }

    /// One page of the server's prompts.
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult, ClientError> {
        self.need(self.server.capabilities.prompts.is_some(), "prompts")?;
        self.list_page::<ListPromptsRequest>(cursor).await
    }

    /// Every prompt, following `nextCursor` to the end.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        collect_pages("prompts/list", |cursor| async move {
            let page = self.list_prompts(cursor).await?;
            Ok((page.prompts, page.next_cursor))
        })
        .await
    }

    /// Renders a prompt with its arguments (answering the input a 2026-07-28 server asks for,
    /// as [`Client::call_tool_with`] does).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, ClientError> {
        self.need(self.server.capabilities.prompts.is_some(), "prompts")?;
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = (!arguments.is_empty()).then_some(arguments);
        self.request::<GetPromptRequest>(params, CallOptions::default()).await
    }

    /// One page of the server's resources.
    pub async fn list_resources(&self, cursor: Option<String>) -> Result<ListResourcesResult, ClientError> {
        self.need(self.server.capabilities.resources.is_some(), "resources")?;
        self.list_page::<ListResourcesRequest>(cursor).await
    }

    /// Every resource, following `nextCursor` to the end.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        collect_pages("resources/list", |cursor| async move {
            let page = self.list_resources(cursor).await?;
            Ok((page.resources, page.next_cursor))
        })
        .await
    }

    /// One page of the server's resource templates.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.need(self.server.capabilities.resources.is_some(), "resources")?;
        self.list_page::<ListResourceTemplatesRequest>(cursor).await
    }

    /// Every resource template, following `nextCursor` to the end.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        collect_pages("resources/templates/list", |cursor| async move {
            let page = self.list_resource_templates(cursor).await?;
            Ok((page.resource_templates, page.next_cursor))
        })
        .await
    }

    /// Reads a resource (answering the input a 2026-07-28 server asks for, as
    /// [`Client::call_tool_with`] does).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.need(self.server.capabilities.resources.is_some(), "resources")?;
        let params = ReadResourceRequestParams::new(uri);
        self.request::<ReadResourceRequest>(params, CallOptions::default()).await
    }

    fn can_subscribe(&self) -> bool {
        self.server.capabilities.resources.as_ref().is_some_and(|r| r.subscribe == Some(true))
    }

    /// Subscribes to changes of a resource ([`ServerEvent::ResourceUpdated`]).
    ///
    /// In 2026-07-28, which has no `resources/subscribe`, the client keeps one
    /// `subscriptions/listen` subscription for the resources subscribed this way (opened
    /// anew, before the old one is closed, when the set changes); its notifications are
    /// events.
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.need(self.can_subscribe(), "resource subscriptions")?;
        if self.modern.is_some() {
            let mut background = self.background.lock().await;
            if !background.uris.insert(uri.to_owned()) {
                return Ok(());
            }
            let reopened = self.reopen_background(&mut background).await;
            if reopened.is_err() {
                background.uris.remove(uri);
            }
            return reopened;
        }
        let params = SubscribeRequestParams::new(uri);
        self.request::<SubscribeRequest>(params, CallOptions::default()).await?;
        Ok(())
    }

    /// Ends a subscription.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.need(self.can_subscribe(), "resource subscriptions")?;
        if self.modern.is_some() {
            let mut background = self.background.lock().await;
            if !background.uris.remove(uri) {
                return Ok(());
            }
            return self.reopen_background(&mut background).await;
        }
        let params = UnsubscribeRequestParams::new(uri);
        self.request::<UnsubscribeRequest>(params, CallOptions::default()).await?;
        Ok(())
    }

    /// Replaces the background subscription by one for the current resources (and the list
    /// changes the server declares, when `on_event` was set); none when there is nothing to
    /// listen to.
    async fn reopen_background(&self, background: &mut Background) -> Result<(), ClientError> {
        let Some(m) = &self.modern else { return Ok(()) };
        let mut filter = SubscriptionFilter::default();
        if self.watch_list_changes {
            let caps = &self.server.capabilities;
            let declared = |flag: Option<bool>| (flag == Some(true)).then_some(true);
            filter.tools_list_changed = caps.tools.as_ref().and_then(|t| declared(t.list_changed));
            filter.prompts_list_changed = caps.prompts.as_ref().and_then(|p| declared(p.list_changed));
            filter.resources_list_changed = caps.resources.as_ref().and_then(|r| declared(r.list_changed));
        }
        if !background.uris.is_empty() {
            filter.resource_subscriptions = Some(background.uris.iter().cloned().collect());
        }
        if filter == SubscriptionFilter::default() {
            background.subscription = None;
            return Ok(());
        }
        let opened =
            listen::open(&self.peer, &m.meta, &self.registry, &filter, listen::Sink::Events, self.ack_timeout).await?;
        // The new one is acknowledged: the old one can go (dropping it closes it).
        background.subscription = Some(opened);
        Ok(())
    }

    /// Opens a `subscriptions/listen` stream (2026-07-28) for the notifications `filter`
    /// asks for, and waits (at most the connection's request timeout) for the server's
    /// acknowledgment. Its notifications go to the [`Subscription`], not to
    /// [`Client::events`]. Before 2026-07-28, where change notifications come unsolicited:
    /// [`ClientError::NotInRevision`].
    ///
    /// ```no_run
    /// # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
    /// use mcp_types::SubscriptionFilter;
    /// let filter = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    /// let mut subscription = client.listen(filter).await?;
    /// while let Some(event) = subscription.next().await {
    ///     println!("{event:?}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, ClientError> {
        let Some(m) = &self.modern else { return Err(self.not_in_revision("subscriptions/listen")) };
        let (tx, rx) = tokio::sync::mpsc::channel(self.events_capacity);
        let missed = Arc::new(AtomicU64::new(0));
        let sink = listen::Sink::Channel { tx, missed: missed.clone() };
        let opened = listen::open(&self.peer, &m.meta, &self.registry, &filter, sink, self.ack_timeout).await?;
        Ok(Subscription::new(opened, rx, missed))
    }

    /// Asks for completions of a prompt argument or a template variable.
    pub async fn complete(
        &self,
        reference: CompletionReference,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Result<CompleteResult, ClientError> {
        self.need(self.server.capabilities.completions.is_some(), "completions")?;
        let mut params = CompleteRequestParams::new(CompleteRequestParamsArgument::new(argument, value), reference);
        if !context.is_empty() {
            params.context = Some(CompleteRequestParamsContext { arguments: Some(context) });
        }
        self.request::<CompleteRequest>(params, CallOptions::default()).await
    }

    /// Sets the level of the log messages the server sends.
    ///
    /// In 2026-07-28, which has no `logging/setLevel`, the level goes into the `_meta` of
    /// every later request (`io.modelcontextprotocol/logLevel`): the server sends the log
    /// messages of a request on its response stream, as [`ServerEvent::Log`].
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        self.need(self.server.capabilities.logging.is_some(), "logging")?;
        if let Some(m) = &self.modern {
            *m.meta.log_level.lock_unpoisoned() = Some(level);
            return Ok(());
        }
        self.request::<SetLevelRequest>(SetLevelRequestParams::new(level), CallOptions::default()).await?;
        Ok(())
    }

    /// Tells the server the roots changed. In 2026-07-28 there is nothing to tell (the server
    /// asks for the roots with each request that needs them): nothing is sent.
    pub async fn notify_roots_changed(&self) -> Result<(), ClientError> {
        if self.modern.is_some() {
            return Ok(());
        }
        self.peer.notify::<RootsListChangedNotification>(Default::default()).await?;
        Ok(())
    }

    /// Closes the connection. A child server is stopped the way the specification asks (its
    /// stdin closed, then SIGTERM, then SIGKILL) while its stdout is still read, so a server
    /// that is still writing is not cut off mid-message; it is always reaped.
    pub async fn close(&self) -> Result<(), ClientError> {
        self.background.lock().await.subscription = None;
        let child = self.child.lock().await.take();
        let stopped = match child {
            Some(child) => Some(child.shutdown().await),
            None => None,
        };
        self.peer.close();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.peer.closed()).await;
        if let Some(stopped) = stopped {
            stopped?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn paging_stops_at_a_repeated_cursor() {
        let mut pages = 0;
        let err = collect_pages("tools/list", |_cursor| {
            pages += 1;
            async { Ok::<_, ClientError>((vec![1], Some("again".to_owned()))) }
        })
        .await
        .unwrap_err();
        assert_eq!(pages, 2);
        assert!(err.to_string().contains("repeated the cursor"), "{err}");
        let mut next = 0;
        let all = collect_pages("tools/list", |_cursor| {
            next += 1;
            let cursor = (next < 3).then(|| next.to_string());
            async move { Ok::<_, ClientError>((vec![next], cursor)) }
        })
        .await
        .unwrap();
        assert_eq!(all, [1, 2, 3]);
    }
}
