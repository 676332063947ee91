//! The client: the handshake, typed calls, handlers for the server's requests, notifications.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_jsonrpc::{CallError, Peer, PeerConfig, Router, Transport};
use mcp_transport_stdio::{ChildCommand, ChildError, ChildProcess};
use mcp_types::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientCapabilitiesElicitation,
    ClientCapabilitiesRoots, ClientCapabilitiesSampling, CompleteRequest, CompleteRequestParams,
    CompleteRequestParamsArgument, CompleteRequestParamsContext, CompleteResult, CompletionReference,
    CreateMessageRequest, ElicitRequest, ElicitationCompleteNotification, ErrorObject, GetPromptRequest,
    GetPromptRequestParams, GetPromptResult, Implementation, InitializeRequest, InitializeRequestParams,
    InitializeResult, InitializedNotification, ListPromptsRequest, ListPromptsResult, ListResourceTemplatesRequest,
    ListResourceTemplatesResult, ListResourcesRequest, ListResourcesResult, ListRootsRequest, ListRootsResult,
    ListToolsRequest, ListToolsResult, LoggingLevel, LoggingMessageNotification, LoggingMessageNotificationParams,
    PaginatedRequestParams, PingRequest, Prompt, PromptListChangedNotification, ProtocolVersion, ReadResourceRequest,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceListChangedNotification, ResourceTemplate,
    ResourceUpdatedNotification, RootsListChangedNotification, ServerCapabilities, SetLevelRequest,
    SetLevelRequestParams, SubscribeRequest, SubscribeRequestParams, Tool, ToolListChangedNotification,
    UnsubscribeRequest, UnsubscribeRequestParams,
};
use tokio::sync::broadcast;

use crate::handlers::{ElicitationHandler, RootsHandler, SamplingHandler, apply_elicitation_defaults};

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
    /// The transport could not be set up (an invalid URL, an HTTP client that cannot be
    /// built).
    #[error("cannot set up the transport: {0}")]
    Transport(String),
}

impl ClientError {
    /// Whether the server ended the HTTP session (404 to a request with `Mcp-Session-Id`).
    /// Unless [`ClientBuilder::reinitialize_on_session_expiry`] turned it off, the client has
    /// already tried a new session and the call once more.
    pub fn is_session_expired(&self) -> bool {
        matches!(self, ClientError::Remote(e) if session_expired(e))
    }
}

/// Whether the transport says the session the request was sent in is over.
#[cfg(feature = "http")]
fn session_expired(e: &ErrorObject) -> bool {
    mcp_transport_http::client::is_session_expired(e)
}

#[cfg(not(feature = "http"))]
fn session_expired(_: &ErrorObject) -> bool {
    false
}

impl From<CallError> for ClientError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Remote(e) => ClientError::Remote(e),
            CallError::Timeout { method, elapsed } => ClientError::Timeout { method, elapsed },
            CallError::Cancelled => ClientError::Cancelled,
            CallError::Closed => ClientError::Closed(None),
            CallError::Decode { method, source } => ClientError::Decode { method, detail: source.to_string() },
            CallError::NotInRevision { method, version } => {
                ClientError::Local(format!("`{method}` is not part of protocol revision {version}"))
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

/// Configures and connects a [`Client`].
pub struct ClientBuilder {
    info: Implementation,
    version: ProtocolVersion,
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
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("info", &self.info)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// A client that introduces itself as `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientBuilder {
            info: Implementation::new(name, version),
            version: ProtocolVersion::LATEST_SESSION,
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
        }
    }

    /// Offers this revision in `initialize` instead of the newest session revision.
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.version = version;
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
    pub fn on_event(mut self, f: impl Fn(ServerEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(f));
        self
    }

    /// Checks tool arguments against the tool's input schema before sending (the schemas are
    /// those of the last `list_tools`).
    pub fn validate_arguments(mut self) -> Self {
        self.validate_arguments = true;
        self
    }

    /// Checks `structuredContent` of tool results against the tool's output schema.
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

    fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if self.sampling.is_some() {
            caps.sampling = Some(ClientCapabilitiesSampling::default());
        }
        if self.elicitation.is_some() {
            let mut e = ClientCapabilitiesElicitation::default();
            if self.version >= ProtocolVersion::V2025_11_25 {
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

    fn router(&self, events: broadcast::Sender<ServerEvent>) -> Router {
        let mut router = Router::new();
        if let Some(h) = self.sampling.clone() {
            router = router.request::<CreateMessageRequest, _, _>(move |params, _ctx| {
                let h = h.clone();
                async move { h.create_message(params).await }
            });
        }
        if let Some(h) = self.elicitation.clone() {
            let defaults = self.apply_defaults;
            router = router.request::<ElicitRequest, _, _>(move |params, _ctx| {
                let h = h.clone();
                async move {
                    let mut result = h.elicit(params.clone()).await?;
                    if defaults {
                        apply_elicitation_defaults(&params, &mut result);
                    }
                    Ok(result)
                }
            });
        }
        if let Some(h) = self.roots.clone() {
            router = router.request::<ListRootsRequest, _, _>(move |_params, _ctx| {
                let h = h.clone();
                async move { Ok(ListRootsResult::new(h.roots().await?)) }
            });
        }
        let emit = {
            let callback = self.on_event.clone();
            move |event: ServerEvent| {
                if let Some(cb) = &callback {
                    cb(event.clone());
                }
                let _ = events.send(event);
            }
        };
        let e = emit.clone();
        router = router.notification::<LoggingMessageNotification, _>(move |p, _| e(ServerEvent::Log(p)));
        let e = emit.clone();
        router = router.notification::<ToolListChangedNotification, _>(move |_, _| e(ServerEvent::ToolListChanged));
        let e = emit.clone();
        router = router.notification::<PromptListChangedNotification, _>(move |_, _| e(ServerEvent::PromptListChanged));
        let e = emit.clone();
        router =
            router.notification::<ResourceListChangedNotification, _>(move |_, _| e(ServerEvent::ResourceListChanged));
        let e = emit.clone();
        router = router
            .notification::<ResourceUpdatedNotification, _>(move |p, _| e(ServerEvent::ResourceUpdated { uri: p.uri }));
        let e = emit;
        router = router.notification::<ElicitationCompleteNotification, _>(move |p, _| {
            e(ServerEvent::ElicitationComplete { elicitation_id: p.elicitation_id })
        });
        router
    }

    /// Connects over `transport` and performs the handshake.
    pub async fn connect<T: Transport>(self, transport: T) -> Result<Client, ClientError> {
        self.connect_inner(transport, None).await
    }

    /// Connects to the MCP endpoint at `url` over Streamable HTTP (falling back to legacy
    /// HTTP+SSE for a 2024-11-05 server) and performs the handshake.
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
        let config = crate::http::HttpClientConfig::parse(url).map_err(|e| ClientError::Transport(e.to_string()))?;
        self.connect_http_with(config).await
    }

    /// Connects over Streamable HTTP with a full configuration (headers, authorization,
    /// timeouts, a reqwest client of your own; see [`crate::http::HttpClientConfig`]) and
    /// performs the handshake.
    #[cfg(feature = "http")]
    pub async fn connect_http_with(self, config: crate::http::HttpClientConfig) -> Result<Client, ClientError> {
        let transport =
            crate::http::StreamableHttpTransport::new(config).map_err(|e| ClientError::Transport(e.to_string()))?;
        self.connect(transport).await
    }

    /// Runs a server as a child process, connects to it over its stdio, and performs the
    /// handshake. If the child dies during the handshake, the error carries its exit status
    /// and the tail of its stderr.
    pub async fn spawn(self, command: ChildCommand) -> Result<Client, ClientError> {
        let (transport, child) = ChildProcess::spawn(command)?;
        self.connect_inner(transport, Some(child)).await
    }

    async fn connect_inner<T: Transport>(
        self,
        transport: T,
        child: Option<ChildProcess>,
    ) -> Result<Client, ClientError> {
        let (events, _) = broadcast::channel(self.events_capacity.max(1));
        let router = self.router(events.clone());
        let peer = Peer::spawn(transport, Arc::new(router), self.peer_config.clone());
        peer.set_protocol_version(self.version);
        let params = InitializeRequestParams::new(self.capabilities(), self.info.clone(), self.version.as_str());
        let init = match handshake(&peer, &params).await {
            Ok(init) => init,
            Err(err) => {
                peer.close();
                return Err(match (err, child) {
                    (ClientError::Closed(_), Some(mut child)) => {
                        let report = match tokio::time::timeout(Duration::from_secs(5), child.wait_with_report()).await
                        {
                            Ok(Ok((_, report))) => report,
                            _ => format!("`{}` closed its stdout", child.program()),
                        };
                        let _ = child.shutdown().await;
                        ClientError::Closed(Some(report))
                    }
                    (err, Some(child)) => {
                        let _ = child.shutdown().await;
                        err
                    }
                    (err, None) => err,
                });
            }
        };
        let version = peer.protocol_version();
        Ok(Client {
            peer,
            init,
            init_params: params,
            version,
            events,
            child: tokio::sync::Mutex::new(child),
            schemas: Mutex::new(HashMap::new()),
            validate_arguments: self.validate_arguments,
            validate_structured: self.validate_structured,
            reinitialize: self.reinitialize,
            session: AtomicU64::new(0),
            renewing: tokio::sync::Mutex::new(()),
        })
    }
}

/// `initialize`, the revision check, `notifications/initialized`.
async fn handshake(peer: &Peer, params: &InitializeRequestParams) -> Result<InitializeResult, ClientError> {
    let init = peer.request::<InitializeRequest>(params.clone(), CallOptions::default()).await?;
    let version = ProtocolVersion::from_wire(&init.protocol_version)
        .filter(|v| !v.is_stateless())
        .ok_or_else(|| ClientError::UnsupportedVersion(init.protocol_version.clone()))?;
    peer.set_protocol_version(version);
    peer.notify::<InitializedNotification>(Default::default()).await?;
    Ok(init)
}

/// Compiled schemas of one tool.
#[derive(Clone, Default)]
struct ToolSchemas {
    input: Option<Arc<jsonschema::Validator>>,
    output: Option<Arc<jsonschema::Validator>>,
}

/// A connected client.
pub struct Client {
    peer: Peer,
    init: InitializeResult,
    version: ProtocolVersion,
    events: broadcast::Sender<ServerEvent>,
    child: tokio::sync::Mutex<Option<ChildProcess>>,
    schemas: Mutex<HashMap<String, ToolSchemas>>,
    validate_arguments: bool,
    validate_structured: bool,
    /// What `initialize` sent, to start a new session with.
    init_params: InitializeRequestParams,
    reinitialize: bool,
    /// Counts sessions started after the first.
    session: AtomicU64,
    /// Held while a new session is started, so that calls failing together start one.
    renewing: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.init.server_info)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

fn violations(validator: &jsonschema::Validator, value: &serde_json::Value) -> Option<String> {
    let errors: Vec<String> = validator.iter_errors(value).take(8).map(|e| e.to_string()).collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}

/// Follows `nextCursor` from page to page and collects every item.
async fn collect_pages<T, F, Fut>(method: &str, mut fetch: F) -> Result<Vec<T>, ClientError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), ClientError>>,
{
    let mut all = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let (items, next) = fetch(cursor).await?;
        all.extend(items);
        match next {
            Some(c) => cursor = Some(c),
            None => return Ok(all),
        }
    }
    Err(ClientError::Local(format!("{method} did not end after {MAX_PAGES} pages")))
}

impl Client {
    /// The server's name, version and other details.
    pub fn server_info(&self) -> &Implementation {
        &self.init.server_info
    }

    /// The server's capabilities.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.init.capabilities
    }

    /// The server's instructions, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.init.instructions.as_deref()
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// The connection, for calls this API does not cover.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// A stream of the server's notifications (a bounded broadcast: a slow reader misses the
    /// oldest ones and is told so).
    pub fn events(&self) -> broadcast::Receiver<ServerEvent> {
        self.events.subscribe()
    }

    /// Calls a typed method; when the server ended the HTTP session, starts a new one and
    /// calls once more (see [`ClientBuilder::reinitialize_on_session_expiry`]).
    async fn request<R: mcp_types::Request>(
        &self,
        params: R::Params,
        options: CallOptions,
    ) -> Result<R::Result, ClientError>
    where
        R::Params: Clone,
    {
        if !self.reinitialize {
            return Ok(self.peer.request::<R>(params, options).await?);
        }
        let session = self.session.load(Ordering::Acquire);
        match self.peer.request::<R>(params.clone(), options.clone()).await {
            Err(CallError::Remote(e)) if session_expired(&e) => {
                tracing::info!(method = R::METHOD, "the server ended the session; starting a new one");
                self.renew_session(session).await?;
                Ok(self.peer.request::<R>(params, options).await?)
            }
            other => Ok(other?),
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

    /// Performs the handshake again over the same connection: over HTTP, a new session (the
    /// server ended the old one, or to start afresh). Returns the server's new answer; the
    /// accessors ([`Client::server_info`], [`Client::server_capabilities`], ...) keep
    /// describing the first one.
    pub async fn reinitialize(&self) -> Result<InitializeResult, ClientError> {
        // Offer what the first handshake offered, encoded for it.
        if let Some(offered) = ProtocolVersion::from_wire(&self.init_params.protocol_version) {
            self.peer.set_protocol_version(offered);
        }
        let init = handshake(&self.peer, &self.init_params).await?;
        self.session.fetch_add(1, Ordering::AcqRel);
        Ok(init)
    }

    fn need(&self, present: bool, what: &'static str) -> Result<(), ClientError> {
        if present { Ok(()) } else { Err(ClientError::NotSupported(what)) }
    }

    /// Checks the connection with a `ping`.
    pub async fn ping(&self) -> Result<(), ClientError> {
        self.request::<PingRequest>(Default::default(), CallOptions::default()).await?;
        Ok(())
    }

    fn page(cursor: Option<String>) -> PaginatedRequestParams {
        PaginatedRequestParams { cursor, ..Default::default() }
    }

    /// One page of the server's tools.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, ClientError> {
        self.need(self.init.capabilities.tools.is_some(), "tools")?;
        let result = self.request::<ListToolsRequest>(Self::page(cursor), CallOptions::default()).await?;
        if self.validate_arguments || self.validate_structured {
            self.remember_schemas(&result.tools);
        }
        Ok(result)
    }

    fn remember_schemas(&self, tools: &[Tool]) {
        let mut schemas = self.schemas.lock().unwrap_or_else(|e| e.into_inner());
        for tool in tools {
            let compile = |s: &mcp_types::JsonObject| {
                jsonschema::validator_for(&serde_json::Value::Object(s.clone())).ok().map(Arc::new)
            };
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
    pub async fn call_tool_with(
        &self,
        params: CallToolRequestParams,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        self.need(self.init.capabilities.tools.is_some(), "tools")?;
        let schemas = self.schemas.lock().unwrap_or_else(|e| e.into_inner()).get(&params.name).cloned();
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
        if self.validate_structured
            && let (Some(v), Some(structured)) = (&schemas.output, &result.structured_content)
            && let Some(detail) = violations(v, structured)
        {
            return Err(ClientError::InvalidStructuredContent { tool: name, detail });
        }
        Ok(result)
    }

    /// One page of the server's prompts.
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult, ClientError> {
        self.need(self.init.capabilities.prompts.is_some(), "prompts")?;
        self.request::<ListPromptsRequest>(Self::page(cursor), CallOptions::default()).await
    }

    /// Every prompt, following `nextCursor` to the end.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        collect_pages("prompts/list", |cursor| async move {
            let page = self.list_prompts(cursor).await?;
            Ok((page.prompts, page.next_cursor))
        })
        .await
    }

    /// Renders a prompt with its arguments.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, ClientError> {
        self.need(self.init.capabilities.prompts.is_some(), "prompts")?;
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = (!arguments.is_empty()).then_some(arguments);
        self.request::<GetPromptRequest>(params, CallOptions::default()).await
    }

    /// One page of the server's resources.
    pub async fn list_resources(&self, cursor: Option<String>) -> Result<ListResourcesResult, ClientError> {
        self.need(self.init.capabilities.resources.is_some(), "resources")?;
        self.request::<ListResourcesRequest>(Self::page(cursor), CallOptions::default()).await
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
        self.need(self.init.capabilities.resources.is_some(), "resources")?;
        self.request::<ListResourceTemplatesRequest>(Self::page(cursor), CallOptions::default()).await
    }

    /// Every resource template, following `nextCursor` to the end.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        collect_pages("resources/templates/list", |cursor| async move {
            let page = self.list_resource_templates(cursor).await?;
            Ok((page.resource_templates, page.next_cursor))
        })
        .await
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.need(self.init.capabilities.resources.is_some(), "resources")?;
        let params = ReadResourceRequestParams::new(uri);
        self.request::<ReadResourceRequest>(params, CallOptions::default()).await
    }

    fn can_subscribe(&self) -> bool {
        self.init.capabilities.resources.as_ref().is_some_and(|r| r.subscribe == Some(true))
    }

    /// Subscribes to changes of a resource ([`ServerEvent::ResourceUpdated`]).
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.need(self.can_subscribe(), "resource subscriptions")?;
        let params = SubscribeRequestParams::new(uri);
        self.request::<SubscribeRequest>(params, CallOptions::default()).await?;
        Ok(())
    }

    /// Ends a subscription.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.need(self.can_subscribe(), "resource subscriptions")?;
        let params = UnsubscribeRequestParams::new(uri);
        self.request::<UnsubscribeRequest>(params, CallOptions::default()).await?;
        Ok(())
    }

    /// Asks for completions of a prompt argument or a template variable.
    pub async fn complete(
        &self,
        reference: CompletionReference,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Result<CompleteResult, ClientError> {
        self.need(self.init.capabilities.completions.is_some(), "completions")?;
        let mut params = CompleteRequestParams::new(CompleteRequestParamsArgument::new(argument, value), reference);
        if !context.is_empty() {
            params.context = Some(CompleteRequestParamsContext { arguments: Some(context) });
        }
        self.request::<CompleteRequest>(params, CallOptions::default()).await
    }

    /// Sets the level of the log messages the server sends.
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        self.need(self.init.capabilities.logging.is_some(), "logging")?;
        self.request::<SetLevelRequest>(SetLevelRequestParams::new(level), CallOptions::default()).await?;
        Ok(())
    }

    /// Tells the server the roots changed.
    pub async fn notify_roots_changed(&self) -> Result<(), ClientError> {
        self.peer.notify::<RootsListChangedNotification>(Default::default()).await?;
        Ok(())
    }

    /// Closes the connection. A child server is stopped the way the specification asks (its
    /// stdin closed, then SIGTERM, then SIGKILL) while its stdout is still read, so a server
    /// that is still writing is not cut off mid-message; it is always reaped.
    pub async fn close(&self) -> Result<(), ClientError> {
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
