//! [`ClientBuilder`]: what the client declares and which revisions it may speak; and, in
//! `connect`, connecting: the negotiation of the era and the [`Client`](crate::Client) it ends
//! in. The top layer: it may use every other module, and none uses it but the crate's root.

mod connect;

use std::sync::Arc;
use std::time::Duration;

use mcp_jsonrpc::PeerConfig;
use mcp_types::{
    ClientCapabilities, ClientCapabilitiesElicitation, ClientCapabilitiesRoots, ClientCapabilitiesSampling,
    Implementation, ProtocolVersion,
};

use crate::middleware::ClientMiddleware;
use crate::serve::custom::CustomHandlers;
use crate::serve::handlers::{ElicitationHandler, InputHandlers, RootsHandler, SamplingHandler};
use crate::serve::service::EventCallback;
use crate::wire::event::ServerEvent;

/// Which protocol eras the client may speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EraChoice {
    /// Probe with `server/discover`; fall back to `initialize` for earlier servers.
    Auto,
    /// Only the `initialize` handshake (the session revisions).
    Sessions,
    /// `initialize` first; `server/discover` if the server refuses it.
    InitializeFirst,
    /// Only 2026-07-28; no fallback.
    Stateless,
}

/// Configures and connects a [`Client`](crate::Client).
#[derive(Clone)]
pub struct ClientBuilder {
    pub(crate) info: Implementation,
    /// The session revision offered in `initialize`.
    pub(crate) version: ProtocolVersion,
    pub(crate) era: EraChoice,
    pub(crate) peer_config: PeerConfig,
    pub(crate) handlers: InputHandlers,
    pub(crate) on_event: Option<EventCallback>,
    pub(crate) events_capacity: usize,
    pub(crate) validate_arguments: bool,
    pub(crate) validate_structured: bool,
    pub(crate) reinitialize: bool,
    pub(crate) discover_timeout: Duration,
    pub(crate) max_input_rounds: usize,
    pub(crate) cache_lists: bool,
    /// Capabilities declared beyond what the handlers imply.
    pub(crate) declared: Declared,
    /// The handlers of the server's custom requests and notifications.
    pub(crate) custom: CustomHandlers,
    /// The layers around each request, outermost first.
    pub(crate) layers: Vec<Arc<dyn ClientMiddleware>>,
}

/// What a client declares beyond its handlers (see [`ClientBuilder::sampling_tools`] and the
/// methods after it).
#[derive(Debug, Clone, Default)]
pub(crate) struct Declared {
    sampling_tools: bool,
    sampling_context: bool,
    experimental: std::collections::BTreeMap<String, mcp_types::JsonObject>,
    extensions: std::collections::BTreeMap<String, mcp_types::JsonObject>,
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
            handlers: InputHandlers::default(),
            on_event: None,
            events_capacity: 256,
            validate_arguments: false,
            validate_structured: false,
            reinitialize: true,
            discover_timeout: Duration::from_secs(10),
            max_input_rounds: 10,
            cache_lists: false,
            declared: Declared::default(),
            custom: Default::default(),
            layers: Vec::new(),
        }
    }

    /// Adds a layer around every request the client sends (see [`crate::middleware`]): the
    /// first one added is the outermost, which sees a request first and its outcome last.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_client::ClientBuilder;
    /// use mcp_client::middleware::{Logging, Metrics, Retry};
    ///
    /// let builder = ClientBuilder::new("my-app", "1.0")
    ///     .layer(Logging::new())
    ///     .layer(Metrics::new())
    ///     .layer(Retry::new().max_attempts(4).backoff(Duration::from_millis(50), Duration::from_secs(2)));
    /// ```
    pub fn layer(mut self, layer: impl ClientMiddleware) -> Self {
        self.layers.push(Arc::new(layer));
        self
    }

    /// Speaks only this revision: 2026-07-28 (the server must list it in its answer to
    /// `server/discover`; no fallback to `initialize`), or a session revision, offered in
    /// `initialize` (no `server/discover` probe; the server may answer with an older revision,
    /// which the client then speaks).
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        if version.is_stateless() {
            self.era = EraChoice::Stateless;
        } else {
            self.era = EraChoice::Sessions;
            self.version = version;
        }
        self
    }

    /// Speaks only the session revisions (2025-11-25 and earlier, with the `initialize`
    /// handshake): no `server/discover` probe, before `initialize` or after it failed.
    pub fn session_revisions_only(mut self) -> Self {
        self.era = EraChoice::Sessions;
        self
    }

    /// The former name of [`ClientBuilder::session_revisions_only`].
    #[deprecated(note = "renamed `session_revisions_only`")]
    pub fn legacy_only(self) -> Self {
        self.session_revisions_only()
    }

    /// Starts with the `initialize` handshake instead of the `server/discover` probe (one round
    /// trip less with servers of the session revisions), and speaks 2026-07-28 with a server
    /// that refuses `initialize` with a JSON-RPC error and answers `server/discover`.
    pub fn initialize_first(mut self) -> Self {
        self.era = EraChoice::InitializeFirst;
        self
    }

    /// How long a stdio server may take to answer the `server/discover` probe (default 10 s)
    /// before it is taken for a server of a session revision (over HTTP, where a server
    /// always answers, the connection's request timeout applies and silence is an error).
    pub fn discover_timeout(mut self, timeout: Duration) -> Self {
        self.discover_timeout = timeout;
        self
    }

    /// How many times a call is sent again with the input a 2026-07-28 server asked for
    /// (`input_required`) before it fails with
    /// [`ClientError::TooManyRounds`](crate::ClientError::TooManyRounds) (default 10).
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
        self.handlers.sampling = Some(Arc::new(handler));
        self
    }

    /// Answers elicitation requests (declares the `elicitation` capability, form mode; call
    /// [`ClientBuilder::elicitation_url_mode`] to declare URL mode too).
    pub fn on_elicitation(mut self, handler: impl ElicitationHandler) -> Self {
        self.handlers.elicitation = Some(Arc::new(handler));
        self
    }

    /// Declares URL-mode elicitation as well.
    pub fn elicitation_url_mode(mut self) -> Self {
        self.handlers.elicitation_url = true;
        self
    }

    /// Fills in schema defaults the user left out of accepted forms (SEP-1034).
    pub fn apply_elicitation_defaults(mut self) -> Self {
        self.handlers.apply_defaults = true;
        self
    }

    /// Lets the server make its sampling and elicitation requests tasks (protocol revision
    /// 2025-11-25; see [`input_tasks`](crate::input_tasks)): declares
    /// `tasks.requests.sampling.createMessage` and `tasks.requests.elicitation.create` (for the
    /// handlers there are), `tasks.list` and `tasks.cancel`. Such a request is answered at once
    /// with a task, its handler runs in the background, and the server polls it.
    pub fn input_tasks(mut self) -> Self {
        self.handlers.tasks = true;
        self
    }

    /// Declares `sampling.tools` (2025-11-25, SEP-1577): the sampling handler can run a model
    /// with the tools a server passes, so a server may send them. Needs
    /// [`on_sampling`](Self::on_sampling).
    pub fn sampling_tools(mut self) -> Self {
        self.declared.sampling_tools = true;
        self
    }

    /// Declares `sampling.context`: the sampling handler honours `includeContext`
    /// (`thisServer`, `allServers`). Needs [`on_sampling`](Self::on_sampling).
    pub fn sampling_context(mut self) -> Self {
        self.declared.sampling_context = true;
        self
    }

    /// Declares an experimental capability (`experimental[name]`), for a server that knows
    /// what it means.
    pub fn experimental_capability(mut self, name: impl Into<String>, settings: mcp_types::JsonObject) -> Self {
        self.declared.experimental.insert(name.into(), settings);
        self
    }

    /// Declares an extension (`extensions[name]`, 2026-07-28), e.g. one whose methods the
    /// client handles itself.
    pub fn extension(mut self, name: impl Into<String>, settings: mcp_types::JsonObject) -> Self {
        self.declared.extensions.insert(name.into(), settings);
        self
    }

    /// Declares that the client renders MCP Apps (SEP-1865): the extension
    /// `io.modelcontextprotocol/ui` with `mimeTypes: ["text/html;profile=mcp-app"]`. Servers
    /// then link tools to views and may answer with less text (see [`apps`](crate::apps)).
    /// Declared in `capabilities.extensions` at every revision, as hosts do (the session
    /// revisions' schemas have no such member; servers read it all the same).
    pub fn apps(self) -> Self {
        let settings = mcp_types::apps::UiClientCapabilities::html().to_settings();
        self.extension(mcp_types::apps::EXTENSION, settings)
    }

    /// Answers the server's custom request `R` (a method outside the protocol, see
    /// [`CustomRequest`](mcp_types::CustomRequest)) with `handler`, which gets the decoded params
    /// and the request's context (its id, cancellation, the connection). Params that do not
    /// decode are -32602; the handler's error is the request's, its panic an internal error
    /// (-32603). A second handler of the same method replaces the first; a handler of one of
    /// the protocol's methods makes connecting fail
    /// ([`ClientError::ReservedMethod`](crate::ClientError::ReservedMethod)).
    ///
    /// ```
    /// use mcp_client::ClientBuilder;
    /// use mcp_types::CustomRequest;
    ///
    /// enum Confirm {}
    /// impl CustomRequest for Confirm {
    ///     const METHOD: &'static str = "acme/confirm";
    ///     type Params = String;
    ///     type Result = bool;
    /// }
    ///
    /// let builder = ClientBuilder::new("app", "1.0.0")
    ///     .request_handler::<Confirm, _, _>(|question, _ctx| async move { Ok(question.ends_with('?')) });
    /// ```
    pub fn request_handler<R, F, Fut>(mut self, handler: F) -> Self
    where
        R: mcp_types::CustomRequest,
        F: Fn(R::Params, mcp_jsonrpc::RequestContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<R::Result, mcp_types::ErrorObject>> + Send + 'static,
    {
        self.custom.add_request(
            R::METHOD.to_owned(),
            mcp_jsonrpc::custom::typed_request::<R, mcp_jsonrpc::RequestContext, F, Fut>(handler),
        );
        self
    }

    /// Answers the server's custom request `method` with `handler`, its params and result as
    /// JSON. As [`request_handler`](Self::request_handler) otherwise.
    pub fn raw_request_handler<F, Fut>(mut self, method: impl Into<String>, handler: F) -> Self
    where
        F: Fn(Option<serde_json::Value>, mcp_jsonrpc::RequestContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<serde_json::Value, mcp_types::ErrorObject>> + Send + 'static,
    {
        self.custom.add_request(method.into(), mcp_jsonrpc::custom::raw_request(handler));
        self
    }

    /// Calls `handler` with each custom notification `N` the server sends, on the connection's
    /// reader, in order (spawn a task for long work). Such notifications are not reported as
    /// [`ServerEvent::Notification`] (those without a handler are). Params that do not decode
    /// are logged and dropped.
    pub fn notification_handler<N, F>(mut self, handler: F) -> Self
    where
        N: mcp_types::CustomNotification,
        F: Fn(N::Params, &mcp_jsonrpc::Peer) + Send + Sync + 'static,
    {
        self.custom.add_notification(N::METHOD.to_owned(), mcp_jsonrpc::custom::typed_notification::<N, F>(handler));
        self
    }

    /// Calls `handler` with each notification of `method` the server sends, its params as
    /// JSON. As [`notification_handler`](Self::notification_handler) otherwise.
    pub fn raw_notification_handler<F>(mut self, method: impl Into<String>, handler: F) -> Self
    where
        F: Fn(Option<serde_json::Value>, &mcp_jsonrpc::Peer) + Send + Sync + 'static,
    {
        self.custom.add_notification(method.into(), mcp_jsonrpc::custom::raw_notification(handler));
        self
    }

    /// Answers `roots/list` (declares the `roots` capability with `listChanged`).
    pub fn on_roots(mut self, handler: impl RootsHandler) -> Self {
        self.handlers.roots = Some(Arc::new(handler));
        self
    }

    /// Calls `f` for every notification from the server (on the reader task: keep it short).
    ///
    /// With a 2026-07-28 server, change notifications come only on a subscription: the client
    /// opens one at connection for the list changes the server declares (see
    /// [`Client::subscribe`](crate::Client::subscribe) for resource updates).
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

    /// The capabilities declared to a server of `version`.
    pub(crate) fn capabilities(&self, version: ProtocolVersion) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if self.handlers.sampling.is_some() {
            let declared = &self.declared;
            caps.sampling = Some(ClientCapabilitiesSampling {
                tools: declared.sampling_tools.then(Default::default),
                context: declared.sampling_context.then(Default::default),
                ..Default::default()
            });
        }
        if !self.declared.experimental.is_empty() {
            let settings = self.declared.experimental.iter();
            caps.experimental =
                Some(settings.map(|(k, v)| (k.clone(), mcp_types::JSONObject { extra: v.clone() })).collect());
        }
        if !self.declared.extensions.is_empty() {
            let settings = self.declared.extensions.iter();
            caps.extensions =
                Some(settings.map(|(k, v)| (k.clone(), mcp_types::JSONObject { extra: v.clone() })).collect());
        }
        // MCP Apps: hosts declare the extension in `initialize` at every revision, and servers
        // look for it there; the session revisions' encoding leaves `extensions` out, so it
        // rides among the members that are written as they are.
        // (The others are not written for these revisions either way.)
        if !version.is_stateless()
            && let Some(ui) = caps.extensions.take().and_then(|mut e| e.remove(mcp_types::apps::EXTENSION))
        {
            let ui = ui.extra;
            let mut extensions = mcp_types::JsonObject::new();
            extensions.insert(mcp_types::apps::EXTENSION.to_owned(), serde_json::Value::Object(ui));
            caps.extra.insert("extensions".to_owned(), serde_json::Value::Object(extensions));
        }
        if self.handlers.elicitation.is_some() {
            let mut e = ClientCapabilitiesElicitation::default();
            if version >= ProtocolVersion::V2025_11_25 {
                e.form = Some(Default::default());
                if self.handlers.elicitation_url {
                    e.url = Some(Default::default());
                }
            }
            caps.elicitation = Some(e);
        }
        if self.handlers.roots.is_some() {
            caps.roots = Some(ClientCapabilitiesRoots { list_changed: Some(true), ..Default::default() });
        }
        let (sampling, elicitation) = (self.handlers.sampling.is_some(), self.handlers.elicitation.is_some());
        if self.handlers.tasks && (sampling || elicitation) && version == ProtocolVersion::V2025_11_25 {
            caps.tasks = Some(mcp_types::ClientCapabilitiesTasks {
                list: Some(Default::default()),
                cancel: Some(Default::default()),
                requests: Some(mcp_types::ClientCapabilitiesTasksRequests {
                    sampling: sampling.then(|| mcp_types::ClientCapabilitiesTasksRequestsSampling {
                        create_message: Some(Default::default()),
                        ..Default::default()
                    }),
                    elicitation: elicitation.then(|| mcp_types::ClientCapabilitiesTasksRequestsElicitation {
                        create: Some(Default::default()),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        caps
    }
}
