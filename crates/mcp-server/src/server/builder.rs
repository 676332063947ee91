//! Building a server: [`ServerBuilder`] collects the items, the settings and the custom
//! methods, checks them, and declares the capabilities they make.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

use mcp_jsonrpc::{Peer, PeerConfig};
use mcp_types::{
    Implementation, JsonObject, ServerCapabilities, ServerCapabilitiesPrompts, ServerCapabilitiesResources,
    ServerCapabilitiesTools,
};

use super::Server;
use crate::context::StateMap;
use crate::context::visibility::{Item, Viewer};
use crate::def::cache::CacheTarget;
use crate::def::custom::CustomMethods;
use crate::def::handlers::Handlers;
use crate::def::prompt::PromptDef;
use crate::def::registry::Registry;
use crate::def::resource::{ResourceDef, TemplateDef};
use crate::def::tool::ToolDef;
use crate::error::DefinitionError;
use crate::serve::session::Serving;
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
    visibility: Option<crate::context::visibility::VisibilityFn>,
    hide_out_of_scope: bool,
    cache_hints: crate::def::cache::CachePolicy,
    state_keys: Option<Vec<Vec<u8>>>,
    state_ttl: std::time::Duration,
    bus: Option<Arc<dyn crate::bus::SubscriptionBus>>,
    tasks: Option<crate::tasks::config::TaskConfig>,
    task_store: Option<Arc<dyn crate::tasks::store::TaskStore>>,
    task_forwarder: Option<Arc<dyn crate::def::forward::TaskForwarder>>,
    enable_tools: bool,
    enable_prompts: bool,
    enable_resources: bool,
    custom: CustomMethods,
    middleware: Vec<Arc<dyn crate::middleware::Middleware>>,
    /// The same layers, as the senders call them.
    outgoing: Vec<Arc<dyn crate::middleware::outgoing::OutgoingLayer>>,
    experimental: BTreeMap<String, JsonObject>,
    extensions: BTreeMap<String, JsonObject>,
    /// The skills served (the Skills extension), or why they could not be read.
    skills: Option<Result<crate::skills::Skills, Arc<crate::skills::SkillsError>>>,
    /// The files of the skills served, to their skill's `SKILL.md` (filled by `build`).
    skill_files: Arc<hashbrown::HashMap<String, String>>,
    /// The generated files of the dynamic skills served (filled by `build`).
    skill_generated: Arc<crate::skills::GeneratedFiles>,
    /// The views of MCP Apps served.
    apps: Vec<crate::apps::UiResource>,
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
    /// Shows each tool, prompt, resource and template only to the requests `f` says see it:
    /// `f` is asked with the item's definition ([`Item`](crate::Item)) and who asks
    /// ([`Viewer`](crate::Viewer): the principal and its scopes and claims, the session, the
    /// client), for every list (before paging: pages and cursors stay right) and for every
    /// call, get, read and completion. An item `f` hides is unknown, with exactly the error of
    /// an item that does not exist (not a refusal). Asked per request in the stateless revision
    /// too. A session can also hide items of its own at run time
    /// ([`Context::session`](crate::Context::session)). `f` should be quick: it is asked for
    /// every item of every list request. Without it, nothing is filtered.
    ///
    /// ```
    /// use mcp_server::{Item, Server, Viewer};
    ///
    /// // Tools whose name starts with `admin_` only for the stdio client named "console".
    /// let server = Server::builder("demo", "1.0")
    ///     .visibility(|item: Item<'_>, who: &Viewer<'_>| {
    ///         !item.name().starts_with("admin_") || who.client_info().is_some_and(|c| c.name == "console")
    ///     })
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn visibility(mut self, f: impl Fn(Item<'_>, &Viewer<'_>) -> bool + Send + Sync + 'static) -> Self {
        self.visibility = Some(Arc::new(f));
        self
    }
    /// Hides each tool, prompt, resource and template whose
    /// [`scopes`](crate::ToolDef::scopes) the request's token lacks (feature `auth`): not
    /// listed to it, and unknown to its calls, gets, reads and completions, as an item that
    /// does not exist. By default such a request is refused with 403 `insufficient_scope`
    /// instead, which tells the client the item exists and which scopes to step up to. A
    /// request with no principal (over stdio, or HTTP without `auth`) sees every item, as
    /// scopes are not checked there.
    #[cfg(feature = "auth")]
    pub fn hide_out_of_scope(mut self, hide: bool) -> Self {
        self.hide_out_of_scope = hide;
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
    /// Declares tasks (the `tasks` capability of 2025-11-25, the tasks extension of
    /// 2026-07-28) for tools whose tasks another server runs, and answers the task methods
    /// through `forwarder` (a gateway passes them to the server it mounts, see
    /// [`TaskForwarder`](crate::TaskForwarder)). Such a tool's handler sees the client ask for a
    /// task ([`Context::requested_task`](crate::Context::requested_task) in 2025-11-25, the
    /// extension in [`Context::client_capabilities`](crate::Context::client_capabilities) in
    /// 2026-07-28) and answers the task that other server made with
    /// [`ToolError::Task`](crate::ToolError::Task). Ignored by a server that runs tasks of its
    /// own ([`tasks`](Self::tasks), a tool with [`TaskSupport`](crate::TaskSupport)).
    pub fn forward_tasks(mut self, forwarder: impl crate::def::forward::TaskForwarder) -> Self {
        self.task_forwarder = Some(Arc::new(forwarder));
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
        F: Fn(R::Params, crate::context::Context) -> Fut + Send + Sync + 'static,
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
        F: Fn(Option<serde_json::Value>, crate::context::Context) -> Fut + Send + Sync + 'static,
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

    /// Adds a middleware layer around the requests and notifications the server serves (see
    /// [`middleware`](crate::middleware)). Layers run in the order they are added: the first
    /// added is the outermost (it sees a request first and its reply last).
    pub fn middleware(mut self, layer: impl crate::middleware::Middleware) -> Self {
        let layer = Arc::new(layer);
        self.outgoing.push(layer.clone());
        self.middleware.push(layer);
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

    /// Serves the Agent Skills of a folder (the Skills extension, SEP-2640): every directory
    /// below it with a `SKILL.md` is a skill, its files `skill://` resources, listed by
    /// `skills/list`, described by `skills/get` and their directories read by
    /// `resources/directory/read`; the server declares the extension
    /// (`io.modelcontextprotocol/skills`, `directoryRead: true`) and the resources capability.
    /// The files are read now, once; [`build`](Self::build) fails if they cannot be, or if a
    /// skill breaks the format ([`DefinitionError::InvalidSkills`]). Replaces earlier skills.
    pub fn skills_dir(mut self, dir: impl AsRef<std::path::Path>) -> Self {
        self.skills = Some(crate::skills::Skills::from_dir(dir).map_err(Arc::new));
        self
    }

    /// Serves `skills` (see [`skills_dir`](Self::skills_dir)): skills compiled into the binary
    /// ([`Skills::from_files`](crate::skills::Skills::from_files)). Replaces earlier skills.
    pub fn skills(mut self, skills: crate::skills::Skills) -> Self {
        self.skills = Some(Ok(skills));
        self
    }

    /// Serves the view of an MCP App (SEP-1865): a `ui://` resource of type
    /// `text/html;profile=mcp-app`, listed and read with its `_meta.ui`; link tools to it with
    /// [`ToolDef::ui`]. The server declares the extension (`io.modelcontextprotocol/ui`) and the
    /// resources capability. [`build`](Self::build) refuses a URI that is not `ui://`, and a
    /// tool linked to a `ui://` URI that no resource of the server has
    /// ([`DefinitionError::InvalidApp`]).
    pub fn app(mut self, view: crate::apps::UiResource) -> Self {
        self.apps.push(view);
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
    pub fn build(mut self) -> Result<Server, DefinitionError> {
        if let Some(skills) = self.skills.take() {
            let skills = skills.map_err(|e| DefinitionError::InvalidSkills { reason: e.to_string() })?;
            self.resources.extend(skills.resource_defs());
            self.enable_resources = true;
            let hints = |t| self.cache_hints.get(t).clone();
            let (list, get) = (hints(CacheTarget::ResourcesList), hints(CacheTarget::ResourcesRead));
            let skill_files = Arc::new(skills.skill_files());
            self.skill_files = skill_files.clone();
            self.skill_generated = Arc::new(skills.generated_files());
            let sight = crate::skills::Sight {
                visibility: self.visibility.clone(),
                hide_out_of_scope: self.hide_out_of_scope,
                skill_files,
            };
            skills.register(&mut self.custom, self.page_size, list, get, sight);
            self.extensions.entry(mcp_types::skills::EXTENSION.to_owned()).or_insert_with(crate::skills::settings);
        }
        if !self.apps.is_empty() {
            for view in std::mem::take(&mut self.apps) {
                view.check()?;
                self.resources.push(view.into_resource_def());
            }
            self.extensions.entry(crate::apps::EXTENSION.to_owned()).or_insert_with(crate::apps::settings);
        }
        let ui_uris: Vec<&str> = self
            .resources
            .iter()
            .map(|r| r.resource.uri.as_str())
            .filter(|uri| uri.starts_with(crate::apps::SCHEME))
            .collect();
        self.tools.iter().try_for_each(|t| crate::apps::check_tool(t, &ui_uris))?;
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
        let task_forwarder = if tasks.is_some() { None } else { self.task_forwarder };
        let declares_tasks = tasks.is_some() || task_forwarder.is_some();
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
            tasks: declares_tasks.then(tasks_capability),
            experimental: capability_map(self.experimental, None),
            // 2026-07-28: tasks are the `io.modelcontextprotocol/tasks` extension (the
            // `tasks` member above belongs to 2025-11-25 and is not written for 2026-07-28),
            // beside the user's (whose own settings of it win).
            extensions: capability_map(self.extensions, declares_tasks.then_some(crate::tasks::EXTENSION)),
            ..Default::default()
        };
        let bus = self.bus.unwrap_or_else(crate::bus::default_bus);
        let info_json = serde_json::value::to_raw_value(&self.info).expect("an Implementation serializes");
        Ok(Server {
            shared: Arc::new(Serving {
                middleware: self.middleware.into(),
                shared: ServerShared {
                    info_json: Arc::from(info_json),
                    info: self.info,
                    instructions: self.instructions,
                    capabilities,
                    page_size: self.page_size,
                    check_structured_content: self.check_structured_content,
                    peer_config: self.peer_config,
                    state: Arc::new(self.state),
                    on_roots_changed: self.on_roots_changed,
                    visibility: self.visibility,
                    hide_out_of_scope: self.hide_out_of_scope,
                    skill_files: self.skill_files,
                    skill_generated: self.skill_generated,
                    cache_hints: self.cache_hints,
                    state_keys: match self.state_keys {
                        Some(keys) if !keys.is_empty() => crate::serve::seal::StateKeys::new(keys, self.state_ttl),
                        _ => crate::serve::seal::StateKeys::random(self.state_ttl),
                    },
                    tasks: tasks.map(|config| Arc::new(crate::tasks::running::Tasks::new(config, bus.clone()))),
                    task_forwarder,
                    custom: self.custom,
                    outgoing: self.outgoing.into(),
                    lists_generation: Default::default(),
                    bus,
                    registry: RwLock::new(Arc::new(registry)),
                    sessions: Mutex::new(Vec::new()),
                    ended: std::sync::atomic::AtomicUsize::new(0),
                    relay: std::sync::atomic::AtomicBool::new(false),
                    #[cfg(feature = "http")]
                    loaders: Mutex::new(Vec::new()),
                },
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
            visibility: None,
            hide_out_of_scope: false,
            cache_hints: Default::default(),
            state_keys: None,
            state_ttl: std::time::Duration::from_secs(600),
            bus: None,
            tasks: None,
            task_store: None,
            task_forwarder: None,
            enable_tools: false,
            enable_prompts: false,
            enable_resources: false,
            custom: CustomMethods::default(),
            middleware: Vec::new(),
            outgoing: Vec::new(),
            experimental: BTreeMap::new(),
            extensions: BTreeMap::new(),
            skills: None,
            skill_files: Default::default(),
            skill_generated: Default::default(),
            apps: Vec::new(),
        }
    }
}
