//! The server: built once from its tools, prompts and resources, then served over any number
//! of connections. Items can be added and removed at runtime; connected clients are told.

use mcp_jsonrpc::sync::{MutexExt as _, RwLockExt as _};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock, Weak};

use mcp_jsonrpc::{Peer, PeerConfig, Transport};
use mcp_types::{
    Implementation, JsonObject, PromptListChangedNotification, ResourceListChangedNotification, ResourceTemplate,
    ResourceUpdatedNotification, ResourceUpdatedNotificationParams, ServerCapabilities, ServerCapabilitiesPrompts,
    ServerCapabilitiesResources, ServerCapabilitiesTools, Tool, ToolListChangedNotification,
};

use crate::context::StateMap;
use crate::context::session::SessionState;
use crate::def::custom::CustomMethods;
use crate::def::handlers::Handlers;
use crate::def::prompt::PromptDef;
use crate::def::registry::Registry;
use crate::def::resource::{ResourceDef, TemplateDef};
use crate::def::tool::ToolDef;
use crate::error::DefinitionError;
use crate::serve::session::Session;
use crate::serve::shared::{RootsChangedCallback, ServerShared};

/// Builds a [`Server`].
///
/// ```
/// use mcp_server::{Server, ToolDef, ToolError};
/// use mcp_types::{CallToolResult, ContentBlock};
///
/// let server = Server::builder("greeter", "1.0.0")
///     .title("Greeter")
///     .instructions("Call `greet` with a name.")
///     .tool(ToolDef::new(
///         "greet",
///         serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}}),
///         |args, _ctx| async move {
///             let name = args.get("name").and_then(|n| n.as_str()).unwrap_or("world").to_owned();
///             Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!("Hello, {name}!"))]))
///         },
///     ).unwrap())
///     .build()
///     .unwrap();
/// assert_eq!(server.tools().len(), 1);
/// ```
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    page_size: usize,
    check_structured_content: bool,
    peer_config: PeerConfig,
    tools: Vec<ToolDef>,
    prompts: Vec<PromptDef>,
    resources: Vec<ResourceDef>,
    templates: Vec<TemplateDef>,
    state: StateMap,
    on_roots_changed: Option<RootsChangedCallback>,
    cache_hints: crate::def::cache::CachePolicy,
    state_keys: Option<Vec<Vec<u8>>>,
    state_ttl: std::time::Duration,
    bus: Option<Arc<dyn crate::bus::SubscriptionBus>>,
    tasks: Option<crate::tasks::config::TaskConfig>,
    task_store: Option<Arc<dyn crate::tasks::store::TaskStore>>,
    enable_tools: bool,
    enable_prompts: bool,
    enable_resources: bool,
    custom: CustomMethods,
    experimental: BTreeMap<String, JsonObject>,
    extensions: BTreeMap<String, JsonObject>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .field("tools", &self.tools)
            .field("prompts", &self.prompts)
            .field("resources", &self.resources)
            .field("templates", &self.templates)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// Cache hints of `server/discover`, the list results and `resources/read` for 2026-07-28
    /// clients: how long a result stays fresh and whether shared caches may keep it (default:
    /// 0 ms, private). Sets all of them; [`cache_hints_for`](Self::cache_hints_for) sets one.
    pub fn cache_hints(mut self, ttl: std::time::Duration, scope: mcp_types::CacheScope) -> Self {
        self.cache_hints = crate::def::cache::CachePolicy::all(crate::def::cache::CacheHints::new(ttl, scope));
        self
    }

    /// Cache hints of one kind of result (after [`cache_hints`](Self::cache_hints), which sets
    /// them all). Resources and templates may still have hints of their own, which win for
    /// their `resources/read`.
    pub fn cache_hints_for(
        mut self,
        target: crate::def::cache::CacheTarget,
        ttl: std::time::Duration,
        scope: mcp_types::CacheScope,
    ) -> Self {
        self.cache_hints.set(target, crate::def::cache::CacheHints::new(ttl, scope));
        self
    }

    /// The keys that seal `requestState` in input-required round trips (2026-07-28), HMAC-SHA256:
    /// the first seals, every one opens (rotation: put the new key first, keep the old one
    /// until its states expired). Every instance serving the same clients needs the same keys.
    /// Default: a random key of this process.
    pub fn request_state_keys(mut self, keys: impl IntoIterator<Item = Vec<u8>>) -> Self {
        self.state_keys = Some(keys.into_iter().collect());
        self
    }

    /// Where changes go to reach `subscriptions/listen` streams (2026-07-28); default: an
    /// [`InMemoryBus`](crate::InMemoryBus) of this process.
    pub fn subscription_bus(mut self, bus: Arc<dyn crate::bus::SubscriptionBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// How long a sealed `requestState` stays valid (default 10 minutes).
    pub fn request_state_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }
    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }
    /// Sets the website URL.
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.info.website_url = Some(url.into());
        self
    }
    /// Sets the icons.
    pub fn icons(mut self, icons: Vec<mcp_types::Icon>) -> Self {
        self.info.icons = Some(icons);
        self
    }
    /// Sets the instructions sent at initialization.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }
    /// Sets how many items one page of a list holds (default 100).
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size.max(1);
        self
    }
    /// Whether the server checks the `structuredContent` of each tool result against the tool's
    /// output schema (default: on in debug builds, `cfg(debug_assertions)`, off in release
    /// builds). A result that is not an error, from a tool with an output schema, must carry
    /// structured content that matches it; one that does not is answered with a JSON-RPC
    /// internal error (-32603) naming the problems, since the fault is the server's, not
    /// something the model could correct (see docs/server.md).
    ///
    /// Each output schema is compiled once, when its tool is registered (by
    /// [`build`](Self::build) or [`Server::add_tool`]), and only when the check is on: off, a
    /// call costs nothing more than a branch on a field that is `None`.
    ///
    /// ```
    /// use mcp_server::Server;
    ///
    /// let server = Server::builder("strict", "1.0.0").check_structured_content(true).build().unwrap();
    /// # let _ = server;
    /// ```
    pub fn check_structured_content(mut self, check: bool) -> Self {
        self.check_structured_content = check;
        self
    }
    /// Sets the limits and timeouts of every connection.
    pub fn peer_config(mut self, config: PeerConfig) -> Self {
        self.peer_config = config;
        self
    }
    /// Adds a tool.
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.tools.push(tool);
        self
    }
    /// Adds a prompt.
    pub fn prompt(mut self, prompt: PromptDef) -> Self {
        self.prompts.push(prompt);
        self
    }
    /// Adds a fixed resource.
    pub fn resource(mut self, resource: ResourceDef) -> Self {
        self.resources.push(resource);
        self
    }
    /// Adds a resource template.
    pub fn resource_template(mut self, template: TemplateDef) -> Self {
        self.templates.push(template);
        self
    }
    /// Adds tools.
    pub fn tools(mut self, tools: impl IntoIterator<Item = ToolDef>) -> Self {
        self.tools.extend(tools);
        self
    }
    /// Adds prompts.
    pub fn prompts(mut self, prompts: impl IntoIterator<Item = PromptDef>) -> Self {
        self.prompts.extend(prompts);
        self
    }
    /// Adds fixed resources.
    pub fn resources(mut self, resources: impl IntoIterator<Item = ResourceDef>) -> Self {
        self.resources.extend(resources);
        self
    }
    /// Adds resource templates.
    pub fn resource_templates(mut self, templates: impl IntoIterator<Item = TemplateDef>) -> Self {
        self.templates.extend(templates);
        self
    }
    /// Adds the tools, prompts, resources and resource templates of `handlers` (an `impl` block
    /// marked `#[mcp_sdk::handlers]`, say).
    pub fn handlers<H: Handlers>(self, handlers: Arc<H>) -> Self {
        self.tools(handlers.tools())
            .prompts(handlers.prompts())
            .resources(handlers.resources())
            .resource_templates(handlers.resource_templates())
    }
    /// Shares `value` with every handler: they take it as a [`State<T>`](crate::State)
    /// parameter or through [`Context::state`](crate::Context::state). One value per type; a
    /// second one of the same type replaces the first.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(std::any::TypeId::of::<T>(), Arc::new(value));
        self
    }
    /// Calls `f` when a client sends `notifications/roots/list_changed`, with the connection
    /// to that client.
    pub fn on_roots_changed(mut self, f: impl Fn(Peer) + Send + Sync + 'static) -> Self {
        self.on_roots_changed = Some(Arc::new(f));
        self
    }
    /// Declares the tools capability even with no tool yet (to add them at runtime).
    pub fn enable_tools(mut self) -> Self {
        self.enable_tools = true;
        self
    }
    /// Runs tools called as tasks (protocol revision 2025-11-25) with this configuration: the
    /// store and ttls (see [`TaskConfig`](crate::TaskConfig)). Without it, a server with a tool
    /// of [`TaskSupport`](crate::TaskSupport) `Optional` or `Required` uses the defaults
    /// (an in-memory store). Either way the server declares the `tasks` capability.
    pub fn tasks(mut self, config: crate::tasks::config::TaskConfig) -> Self {
        self.tasks = Some(config);
        self
    }
    /// Keeps tasks in `store` if the server runs tasks (a tool that supports them, or
    /// [`tasks`](Self::tasks)), whatever the rest of their configuration; unlike `tasks`, it
    /// does not by itself make the server declare the `tasks` capability. For a fleet: every
    /// instance's tasks in one shared store (`mcp_redis::Redis::task_store`).
    pub fn task_store(mut self, store: impl crate::tasks::store::TaskStore) -> Self {
        self.task_store = Some(Arc::new(store));
        self
    }
    /// Serves the custom request `R` (a method outside the protocol, see
    /// [`CustomRequest`](mcp_types::CustomRequest)) with `handler`, which gets the decoded params
    /// and a [`Context`](crate::Context) as a tool does. Params that do not decode are -32602
    /// (the handler does not run); the handler's error is the request's error, its panic an
    /// internal error (-32603). A method of the protocol cannot be served so:
    /// [`build`](Self::build) refuses it ([`DefinitionError::ReservedMethod`]).
    ///
    /// ```
    /// use mcp_server::Server;
    /// use mcp_types::CustomRequest;
    ///
    /// enum Add {}
    /// impl CustomRequest for Add {
    ///     const METHOD: &'static str = "acme/add";
    ///     type Params = [i64; 2];
    ///     type Result = i64;
    /// }
    ///
    /// let server = Server::builder("calc", "1.0.0")
    ///     .request_handler::<Add, _, _>(|[a, b], _ctx| async move { Ok(a + b) })
    ///     .build()
    ///     .unwrap();
    /// ```
    pub fn request_handler<R, F, Fut>(mut self, handler: F) -> Self
    where
        R: mcp_types::CustomRequest,
        F: Fn(R::Params, crate::Context) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<R::Result, mcp_types::ErrorObject>> + Send + 'static,
    {
        self.custom.add_request(
            R::METHOD.to_owned(),
            mcp_jsonrpc::custom::typed_request::<R, crate::context::Context, F, Fut>(handler),
        );
        self
    }

    /// Serves the custom request `method` with `handler`, which gets its params as JSON
    /// (`None`: the request had none) and answers with the result as JSON. As
    /// [`request_handler`](Self::request_handler) otherwise.
    pub fn raw_request_handler<F, Fut>(mut self, method: impl Into<String>, handler: F) -> Self
    where
        F: Fn(Option<serde_json::Value>, crate::Context) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<serde_json::Value, mcp_types::ErrorObject>> + Send + 'static,
    {
        self.custom.add_request(method.into(), mcp_jsonrpc::custom::raw_request(handler));
        self
    }

    /// Calls `handler` with each custom notification `N` a client sends, on the connection's
    /// reader, in order (spawn a task for long work); the [`Peer`] reaches that client.
    /// Params that do not decode are logged and dropped; a panic is logged.
    pub fn notification_handler<N, F>(mut self, handler: F) -> Self
    where
        N: mcp_types::CustomNotification,
        F: Fn(N::Params, &Peer) + Send + Sync + 'static,
    {
        self.custom.add_notification(N::METHOD.to_owned(), mcp_jsonrpc::custom::typed_notification::<N, F>(handler));
        self
    }

    /// Calls `handler` with each notification of `method` a client sends, its params as JSON.
    /// As [`notification_handler`](Self::notification_handler) otherwise.
    pub fn raw_notification_handler<F>(mut self, method: impl Into<String>, handler: F) -> Self
    where
        F: Fn(Option<serde_json::Value>, &Peer) + Send + Sync + 'static,
    {
        self.custom.add_notification(method.into(), mcp_jsonrpc::custom::raw_notification(handler));
        self
    }

    /// Declares an experimental capability (`experimental[name]`, every revision), for
    /// clients that know what it means. A second declaration of `name` replaces the first.
    pub fn experimental_capability(mut self, name: impl Into<String>, settings: JsonObject) -> Self {
        self.experimental.insert(name.into(), settings);
        self
    }

    /// Declares an extension (`extensions[name]`, 2026-07-28: a map of extension identifiers
    /// to their settings; an empty object is support without settings). Identifiers have a
    /// prefix (`com.example/search`), or [`build`](Self::build) refuses them
    /// ([`DefinitionError::InvalidExtension`]). The schemas of the session revisions have no
    /// `extensions` member: their clients do not see it (declare an
    /// [`experimental_capability`](Self::experimental_capability) for them).
    pub fn extension(mut self, name: impl Into<String>, settings: JsonObject) -> Self {
        self.extensions.insert(name.into(), settings);
        self
    }

    /// Declares the prompts capability even with no prompt yet.
    pub fn enable_prompts(mut self) -> Self {
        self.enable_prompts = true;
        self
    }
    /// Declares the resources capability even with no resource yet.
    pub fn enable_resources(mut self) -> Self {
        self.enable_resources = true;
        self
    }

    /// The custom methods (none registered under a protocol name, or twice) and the extension
    /// identifiers (each with its prefix).
    fn check_custom(&self) -> Result<(), DefinitionError> {
        if let Some(refused) = self.custom.refused.clone() {
            return Err(refused);
        }
        match self.extensions.keys().find(|name| !valid_extension_id(name)) {
            Some(name) => Err(DefinitionError::InvalidExtension { name: name.clone() }),
            None => Ok(()),
        }
    }

    /// Checks the items (unique names and URIs) and builds the server.
    pub fn build(self) -> Result<Server, DefinitionError> {
        self.check_custom()?;
        let mut registry = Registry {
            tools: self.tools,
            prompts: self.prompts,
            resources: self.resources,
            templates: self.templates,
            ..Registry::default()
        };
        check_unique("tool", registry.tools.iter().map(|t| t.tool.name.as_str()))?;
        if self.check_structured_content {
            registry.tools.iter_mut().try_for_each(ToolDef::compile_output_check)?;
        }
        check_unique("prompt", registry.prompts.iter().map(|p| p.prompt.name.as_str()))?;
        registry.prompts.iter().try_for_each(PromptDef::check)?;
        registry.resources.iter().try_for_each(ResourceDef::check_uri)?;
        check_unique("resource", registry.resources.iter().map(|r| r.resource.uri.as_str()))?;
        check_unique("resource template", registry.templates.iter().map(|t| t.template.uri_template.as_str()))?;
        registry.rebuild();
        let has_resources = self.enable_resources || !registry.resources.is_empty() || !registry.templates.is_empty();
        let has_prompts = self.enable_prompts || !registry.prompts.is_empty();
        let mut tasks = match self.tasks {
            Some(config) => Some(config),
            None => registry
                .tools
                .iter()
                .any(|t| t.task_support != crate::tasks::TaskSupport::Forbidden)
                .then(crate::tasks::config::TaskConfig::default),
        };
        if let (Some(config), Some(store)) = (&mut tasks, self.task_store) {
            config.store = store;
        }
        let capabilities = ServerCapabilities {
            tools: (self.enable_tools || !registry.tools.is_empty())
                .then(|| ServerCapabilitiesTools { list_changed: Some(true), ..Default::default() }),
            prompts: has_prompts.then(|| ServerCapabilitiesPrompts { list_changed: Some(true), ..Default::default() }),
            resources: has_resources.then(|| ServerCapabilitiesResources {
                list_changed: Some(true),
                subscribe: Some(true),
                ..Default::default()
            }),
            logging: Some(Default::default()),
            completions: (has_prompts || has_resources).then(Default::default),
            tasks: tasks.is_some().then(tasks_capability),
            experimental: capability_map(self.experimental, None),
            // 2026-07-28: tasks are the `io.modelcontextprotocol/tasks` extension (the
            // `tasks` member above belongs to 2025-11-25 and is not written for 2026-07-28),
            // beside the user's (whose own settings of it win).
            extensions: capability_map(self.extensions, tasks.is_some().then_some(crate::tasks::EXTENSION)),
            ..Default::default()
        };
        let bus = self.bus.unwrap_or_else(crate::bus::default_bus);
        let info_json = serde_json::value::to_raw_value(&self.info).expect("an Implementation serializes");
        Ok(Server {
            shared: Arc::new(ServerShared {
                info_json: Arc::from(info_json),
                info: self.info,
                instructions: self.instructions,
                capabilities,
                page_size: self.page_size,
                check_structured_content: self.check_structured_content,
                peer_config: self.peer_config,
                state: Arc::new(self.state),
                on_roots_changed: self.on_roots_changed,
                cache_hints: self.cache_hints,
                state_keys: match self.state_keys {
                    Some(keys) if !keys.is_empty() => crate::serve::seal::StateKeys::new(keys, self.state_ttl),
                    _ => crate::serve::seal::StateKeys::random(self.state_ttl),
                },
                tasks: tasks.map(|config| Arc::new(crate::tasks::running::Tasks::new(config, bus.clone()))),
                custom: self.custom,
                bus,
                registry: RwLock::new(Arc::new(registry)),
                sessions: Mutex::new(Vec::new()),
                ended: std::sync::atomic::AtomicUsize::new(0),
                relay: std::sync::atomic::AtomicBool::new(false),
            }),
        })
    }
}

/// The `tasks` capability (2025-11-25) of a server with task tools: listed, cancelled,
/// `tools/call` as a task.
fn tasks_capability() -> mcp_types::ServerCapabilitiesTasks {
    mcp_types::ServerCapabilitiesTasks {
        list: Some(Default::default()),
        cancel: Some(Default::default()),
        requests: Some(mcp_types::ServerCapabilitiesTasksRequests {
            tools: Some(mcp_types::ServerCapabilitiesTasksRequestsTools {
                call: Some(Default::default()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A capability map (`experimental`, `extensions`) as declared: the user's entries, and the
/// SDK's own (`ours`, with empty settings) where the user did not set it; `None` when empty.
fn capability_map(
    mut entries: BTreeMap<String, JsonObject>,
    ours: Option<&str>,
) -> Option<BTreeMap<String, mcp_types::JSONObject>> {
    if let Some(ours) = ours {
        entries.entry(ours.to_owned()).or_default();
    }
    (!entries.is_empty()).then(|| entries.into_iter().map(|(k, v)| (k, mcp_types::JSONObject { extra: v })).collect())
}

/// Whether `id` is an extension identifier of 2026-07-28: a `_meta` key name with its prefix,
/// `label(.label)*/name`, labels starting with a letter and ending with a letter or digit
/// (hyphens within), the name starting and ending alphanumeric (`-`, `_`, `.` within).
fn valid_extension_id(id: &str) -> bool {
    let Some((prefix, name)) = id.split_once('/') else { return false };
    let label = |l: &str| {
        let b = l.as_bytes();
        b.first().is_some_and(u8::is_ascii_alphabetic)
            && b.last().is_some_and(u8::is_ascii_alphanumeric)
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
    };
    let n = name.as_bytes();
    prefix.split('.').all(label)
        && n.first().is_some_and(u8::is_ascii_alphanumeric)
        && n.last().is_some_and(u8::is_ascii_alphanumeric)
        && n.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn check_unique<'a>(kind: &'static str, names: impl Iterator<Item = &'a str>) -> Result<(), DefinitionError> {
    let mut seen = std::collections::HashSet::new();
    for n in names {
        if !seen.insert(n) {
            return Err(DefinitionError::Duplicate { kind, name: n.to_owned() });
        }
    }
    Ok(())
}

/// An MCP server: cheap to clone, served over any number of connections at once.
#[derive(Clone)]
pub struct Server {
    pub(crate) shared: Arc<ServerShared>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("info", &self.shared.info).finish_non_exhaustive()
    }
}

impl Server {
    /// Starts building a server named `name` at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            page_size: 100,
            check_structured_content: cfg!(debug_assertions),
            peer_config: PeerConfig::default(),
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            state: StateMap::new(),
            on_roots_changed: None,
            cache_hints: Default::default(),
            state_keys: None,
            state_ttl: std::time::Duration::from_secs(600),
            bus: None,
            tasks: None,
            task_store: None,
            enable_tools: false,
            enable_prompts: false,
            enable_resources: false,
            custom: CustomMethods::default(),
            experimental: BTreeMap::new(),
            extensions: BTreeMap::new(),
        }
    }

    /// The capabilities this server declares.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.shared.capabilities
    }

    /// The definition of one tool.
    pub fn tool(&self, name: &str) -> Option<Tool> {
        self.shared.registry().tool(name).map(|t| t.tool.clone())
    }

    /// The tools, as listed.
    pub fn tools(&self) -> Vec<Tool> {
        self.shared.registry().tool_list.clone()
    }

    /// Serves one connection until it ends.
    pub async fn serve<T: Transport>(&self, transport: T) {
        self.connect(transport).closed().await;
    }

    /// Serves this process's stdin and stdout until stdin closes (feature `stdio`);
    /// [`Server::serve_stdio_until`] also stops on a signal.
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio(&self) {
        self.serve(mcp_transport_stdio::StdioTransport::new()).await;
    }

    /// Serves one connection until it ends or `signal` completes. On the signal the server
    /// stops reading; requests in flight get the peer's
    /// [`shutdown_grace`](mcp_jsonrpc::PeerConfig::shutdown_grace) to finish (their responses
    /// are written), those still running then are cancelled, and it returns once the
    /// connection is closed.
    ///
    /// ```no_run
    /// # async fn run(server: mcp_server::Server, transport: impl mcp_jsonrpc::Transport) {
    /// server.serve_until(transport, mcp_server::shutdown_signal()).await;
    /// # }
    /// ```
    pub async fn serve_until<T: Transport>(&self, transport: T, signal: impl std::future::Future<Output = ()>) {
        let peer = self.connect(transport);
        tokio::select! {
            () = peer.closed() => return,
            () = signal => {}
        }
        tracing::info!("shutting down: finishing the requests in flight");
        peer.close();
        peer.closed().await;
    }

    /// Serves stdin and stdout until stdin closes or `signal` completes (feature `stdio`); on
    /// the signal, as [`Server::serve_until`] does.
    ///
    /// ```no_run
    /// # async fn run(server: mcp_server::Server) {
    /// server.serve_stdio_until(mcp_server::shutdown_signal()).await;
    /// # }
    /// ```
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio_until(&self, signal: impl std::future::Future<Output = ()>) {
        self.serve_until(mcp_transport_stdio::StdioTransport::new(), signal).await;
    }

    /// Starts serving one connection and returns its handle at once.
    pub fn connect<T: Transport>(&self, transport: T) -> Peer {
        self.connect_with(transport, SessionState::new(), None, self.shared.peer_config.clone())
    }

    /// Serves one connection without the handshake, as for a client that negotiated
    /// `version` before (stateless HTTP serves each POST so). The client's capabilities are
    /// unknown: sampling, elicitation and roots calls fail with `NotSupported`.
    ///
    /// Such a connection usually carries one request, so its handler is polled where the
    /// request is read and spawned only if it has to wait (unless the server's
    /// [`PeerConfig::inline_handlers`](mcp_jsonrpc::PeerConfig::inline_handlers) says otherwise).
    pub fn connect_preinitialized<T: Transport>(&self, transport: T, version: mcp_types::ProtocolVersion) -> Peer {
        let mut config = self.shared.peer_config.clone();
        config.inline_handlers.get_or_insert(true);
        self.connect_with(transport, SessionState::preinitialized(), Some(version), config)
    }

    fn connect_with<T: Transport>(
        &self,
        transport: T,
        state: SessionState,
        version: Option<mcp_types::ProtocolVersion>,
        config: mcp_jsonrpc::PeerConfig,
    ) -> Peer {
        let (state, service) = self.new_session(state);
        let peer = Peer::spawn(transport, service, config);
        if let Some(version) = version {
            peer.set_protocol_version(version);
        }
        self.register(&state, &peer, true);
        peer
    }

    /// A new connection's state, and the service that serves it.
    pub(crate) fn new_session(&self, state: SessionState) -> (Arc<SessionState>, Arc<dyn mcp_jsonrpc::Service>) {
        let state = Arc::new(state);
        (state.clone(), Arc::new(Session { server: self.shared.clone(), state }))
    }

    /// Gives a connection's state its peer; `live`: it hears of changes (list_changed and
    /// resource updates) from now on.
    pub(crate) fn register(&self, state: &Arc<SessionState>, peer: &Peer, live: bool) {
        let _ = state.peer.set(peer.clone());
        if !live {
            return;
        }
        if self.shared.bus.fans_out() {
            self.start_relay();
        }
        let mut sessions = self.shared.sessions.lock_unpoisoned();
        // Forget the ended ones before the list would grow: amortized, not on every connect.
        if sessions.len() == sessions.capacity() {
            sessions.retain(|s| s.upgrade().is_some_and(|s| s.peer.get().is_some_and(|p| !p.is_closed())));
        }
        sessions.push(Arc::downgrade(state));
    }

    /// Connected, initialized sessions.
    fn live_sessions(&self) -> Vec<Arc<SessionState>> {
        let sessions = self.shared.sessions.lock_unpoisoned();
        sessions.iter().filter_map(Weak::upgrade).filter(|s| s.is_initialized()).collect()
    }

    /// Applies `change` to a copy of the registry and swaps it in (requests in flight keep the
    /// snapshot they took).
    fn update<R>(&self, change: impl FnOnce(&mut Registry) -> R) -> R {
        let mut guard = self.shared.registry.write_unpoisoned();
        let mut next = Registry::clone(&guard);
        let out = change(&mut next);
        next.rebuild();
        *guard = Arc::new(next);
        out
    }

    /// Tells the subscription bus and every connected session that a list changed.
    async fn broadcast<N: crate::bus::ListChanged>(&self) {
        self.shared.bus.publish(N::EVENT);
        if self.shared.bus.fans_out() {
            // The relay tells the sessions, of this change as of other instances'.
            return self.start_relay();
        }
        let sends = self.live_sessions().into_iter().filter_map(|session| {
            let peer = session.peer.get()?.clone();
            Some(notify_within::<N>(peer, Default::default()))
        });
        futures_util::future::join_all(sends).await;
    }

    /// Adds a tool (or replaces the one of the same name) and tells connected clients.
    ///
    /// The server must declare the tools capability: built with a tool, or with
    /// [`ServerBuilder::enable_tools`].
    pub async fn add_tool(&self, mut tool: ToolDef) -> Result<(), DefinitionError> {
        if self.shared.check_structured_content {
            tool.compile_output_check()?;
        }
        self.add(tool).await
    }

    /// Removes a tool and tells connected clients; whether it existed.
    pub async fn remove_tool(&self, name: &str) -> bool {
        self.remove::<ToolDef>(name).await
    }

    /// Adds a prompt (or replaces the one of the same name) and tells connected clients.
    ///
    /// The server must declare the prompts capability: built with a prompt, or with
    /// [`ServerBuilder::enable_prompts`].
    pub async fn add_prompt(&self, prompt: PromptDef) -> Result<(), DefinitionError> {
        prompt.check()?;
        self.add(prompt).await
    }

    /// Removes a prompt and tells connected clients; whether it existed.
    pub async fn remove_prompt(&self, name: &str) -> bool {
        self.remove::<PromptDef>(name).await
    }

    /// Adds a resource (or replaces the one at the same URI) and tells connected clients.
    ///
    /// The server must declare the resources capability: built with a resource or template, or
    /// with [`ServerBuilder::enable_resources`].
    pub async fn add_resource(&self, resource: ResourceDef) -> Result<(), DefinitionError> {
        resource.check_uri()?;
        self.add(resource).await
    }

    /// Removes a resource and tells connected clients; whether it existed.
    pub async fn remove_resource(&self, uri: &str) -> bool {
        self.remove::<ResourceDef>(uri).await
    }

    /// Adds a resource template (or replaces the one of the same URI template) and tells
    /// connected clients (`notifications/resources/list_changed`; 2026-07-28
    /// `subscriptions/listen` streams that asked for resource list changes hear of it too).
    ///
    /// The server must declare the resources capability: built with a resource or template, or
    /// with [`ServerBuilder::enable_resources`].
    ///
    /// ```
    /// use mcp_server::{Server, TemplateDef};
    /// use mcp_types::{ErrorObject, TextResourceContents};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let server = Server::builder("notes", "1.0").enable_resources().build().unwrap();
    /// let note = TemplateDef::new("note", "notes://{id}", |uri, vars, _ctx| async move {
    ///     Ok::<_, ErrorObject>(vec![TextResourceContents::new(uri, format!("note {}", vars["id"])).into()])
    /// })
    /// .unwrap();
    /// server.add_resource_template(note).await.unwrap();
    /// assert_eq!(server.resource_templates()[0].uri_template, "notes://{id}");
    /// assert!(server.remove_resource_template("notes://{id}").await);
    /// assert!(server.resource_templates().is_empty());
    /// # });
    /// ```
    pub async fn add_resource_template(&self, template: TemplateDef) -> Result<(), DefinitionError> {
        self.add(template).await
    }

    /// Removes the resource template of `uri_template` (as written in its definition) and
    /// tells connected clients; whether it existed.
    pub async fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.remove::<TemplateDef>(uri_template).await
    }

    /// The resource templates, as listed.
    pub fn resource_templates(&self) -> Vec<ResourceTemplate> {
        self.shared.registry().template_list.clone()
    }

    /// Adds `item` (or replaces the one of the same key) and tells connected clients.
    async fn add<T: Item>(&self, item: T) -> Result<(), DefinitionError> {
        declared(T::CAPABILITY, T::declared(&self.shared.capabilities))?;
        self.update(|r| upsert(T::items(r), item, |a, b| a.key() == b.key()));
        self.broadcast::<T::Changed>().await;
        Ok(())
    }

    /// Removes the item of `key` and tells connected clients; whether it existed.
    async fn remove<T: Item>(&self, key: &str) -> bool {
        let found = self.update(|r| remove_where(T::items(r), |x| x.key() == key));
        if found {
            self.broadcast::<T::Changed>().await;
        }
        found
    }

    /// Tells the clients subscribed to `uri` that it changed.
    pub async fn notify_resource_updated(&self, uri: &str) {
        self.shared.bus.publish(crate::bus::ChangeEvent::ResourceUpdated(uri.to_owned()));
        if self.shared.bus.fans_out() {
            return self.start_relay();
        }
        let sends =
            self.live_sessions().into_iter().filter(|session| session.is_subscribed(uri)).filter_map(|session| {
                let peer = session.peer.get()?.clone();
                Some(notify_within::<ResourceUpdatedNotification>(peer, ResourceUpdatedNotificationParams::new(uri)))
            });
        futures_util::future::join_all(sends).await;
    }
}

/// A fleet: the changes a bus that fans out brings (this instance's and the others'), told to
/// this process's sessions.
impl Server {
    /// Starts the relay (once, in a runtime).
    fn start_relay(&self) {
        use std::sync::atomic::Ordering;
        if tokio::runtime::Handle::try_current().is_err() || self.shared.relay.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut events = self.shared.bus.subscribe();
        let server = Arc::downgrade(&self.shared);
        tokio::spawn(async move {
            loop {
                let event = match events.recv().await {
                    Ok(event) => Some(event),
                    // Missed some: every list may have changed.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => None,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                let Some(shared) = server.upgrade() else { return };
                Server { shared }.tell_sessions(event).await;
            }
        });
    }

    /// Tells this process's sessions of a change (`None`: of every list).
    async fn tell_sessions(&self, event: Option<crate::bus::ChangeEvent>) {
        use crate::bus::ChangeEvent;
        let sessions = self.live_sessions();
        let peers = |filter: &dyn Fn(&SessionState) -> bool| {
            sessions.iter().filter(|s| filter(s)).filter_map(|s| s.peer.get().cloned()).collect::<Vec<_>>()
        };
        let all = peers(&|_| true);
        let sends: Vec<futures_util::future::BoxFuture<'static, ()>> = match event {
            Some(ChangeEvent::ToolsListChanged) => fanout::<ToolListChangedNotification>(all, Default::default),
            Some(ChangeEvent::PromptsListChanged) => fanout::<PromptListChangedNotification>(all, Default::default),
            Some(ChangeEvent::ResourcesListChanged) => fanout::<ResourceListChangedNotification>(all, Default::default),
            Some(ChangeEvent::ResourceUpdated(uri)) => {
                let subscribed = peers(&|s| s.is_subscribed(&uri));
                fanout::<ResourceUpdatedNotification>(subscribed, || ResourceUpdatedNotificationParams::new(&uri))
            }
            Some(ChangeEvent::TaskChanged(_)) => Vec::new(),
            Some(ChangeEvent::Resync) | None => {
                let mut sends = fanout::<ToolListChangedNotification>(all.clone(), Default::default);
                sends.extend(fanout::<PromptListChangedNotification>(all.clone(), Default::default));
                sends.extend(fanout::<ResourceListChangedNotification>(all, Default::default));
                sends
            }
        };
        futures_util::future::join_all(sends).await;
    }
}

/// Notification `N` to each of `peers` (of a server whose capabilities declare it), hinted
/// [`Fanout`](mcp_transport_http::server::Fanout): of the copies of a session a fleet shares,
/// the one that holds its GET stream sends it.
fn fanout<N>(
    peers: Vec<mcp_jsonrpc::Peer>,
    params: impl Fn() -> N::Params,
) -> Vec<futures_util::future::BoxFuture<'static, ()>>
where
    N: mcp_types::Notification<Params: Send + Sync + 'static>,
{
    peers
        .into_iter()
        .map(|peer| {
            let params = params();
            Box::pin(async move {
                #[cfg(feature = "http")]
                let sent = peer.notify_with_hints::<N>(params, Arc::new(mcp_transport_http::server::Fanout));
                #[cfg(not(feature = "http"))]
                let sent = peer.notify::<N>(params);
                match tokio::time::timeout(NOTIFY_WAIT, sent).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => tracing::debug!(error = %e, method = N::METHOD, "notification not sent"),
                    Err(_) => tracing::warn!(method = N::METHOD, "a client reads nothing: notification not sent to it"),
                }
            }) as futures_util::future::BoxFuture<'static, ()>
        })
        .collect()
}

/// A kind of item added and removed at runtime: where the registry keeps it, what identifies
/// it, the capability that declares its kind, and the notification of its list's changes.
trait Item: Sized {
    /// `tools`, `prompts` or `resources`.
    const CAPABILITY: &'static str;
    /// The notification that its list changed.
    type Changed: crate::bus::ListChanged;
    /// Whether `capabilities` declare its kind.
    fn declared(capabilities: &ServerCapabilities) -> bool;
    /// Its list in `registry`.
    fn items(registry: &mut Registry) -> &mut Vec<Self>;
    /// Its name (or URI), unique in its list.
    fn key(&self) -> &str;
}

/// `impl Item for $def`: its capability, notification, list in the registry and key.
macro_rules! item {
    ($def:ty, $capability:ident, $changed:ty, $list:ident, $($key:ident).+) => {
        impl Item for $def {
            const CAPABILITY: &'static str = stringify!($capability);
            type Changed = $changed;
            fn declared(capabilities: &ServerCapabilities) -> bool {
                capabilities.$capability.is_some()
            }
            fn items(registry: &mut Registry) -> &mut Vec<Self> {
                &mut registry.$list
            }
            fn key(&self) -> &str {
                &self.$($key).+
            }
        }
    };
}

item!(ToolDef, tools, ToolListChangedNotification, tools, tool.name);
item!(PromptDef, prompts, PromptListChangedNotification, prompts, prompt.name);
item!(ResourceDef, resources, ResourceListChangedNotification, resources, resource.uri);
item!(TemplateDef, resources, ResourceListChangedNotification, templates, template.uri_template);

/// Clients were told at connection what the server has: an item of a kind it did not declare
/// could be neither listed nor called.
fn declared(capability: &'static str, declared: bool) -> Result<(), DefinitionError> {
    if declared { Ok(()) } else { Err(DefinitionError::NotDeclared { capability }) }
}

/// How long a notification to every client waits for room in one client's outgoing queue: a
/// client that reads nothing for that long misses it, and the others do not wait for it.
const NOTIFY_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Sends a notification to one client of many, waiting at most [`NOTIFY_WAIT`] for room.
async fn notify_within<N: mcp_types::Notification>(peer: mcp_jsonrpc::Peer, params: N::Params) {
    match tokio::time::timeout(NOTIFY_WAIT, peer.notify::<N>(params)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::debug!(error = %e, method = N::METHOD, "notification not sent"),
        Err(_) => tracing::warn!(method = N::METHOD, "a client reads nothing: notification not sent to it"),
    }
}

/// Puts `item` in place of the one `same` matches (keeping the list's order), or at the end.
fn upsert<T>(items: &mut Vec<T>, item: T, same: impl Fn(&T, &T) -> bool) {
    match items.iter().position(|x| same(x, &item)) {
        Some(i) => items[i] = item,
        None => items.push(item),
    }
}

/// Removes the items `hit` matches; whether there were any.
fn remove_where<T>(items: &mut Vec<T>, hit: impl Fn(&T) -> bool) -> bool {
    let before = items.len();
    items.retain(|x| !hit(x));
    items.len() != before
}
