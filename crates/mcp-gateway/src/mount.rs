//! One mounted server: its items mirrored into the gateway's [`Server`] under the mount's
//! prefix (from a catalog connection, refreshed when the mounted server says a list changed),
//! and the calls of each gateway session passed on over that session's own connection.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use mcp_client::{CallOptions, Client, ClientBuilder, ClientError, ServerEvent};
use mcp_jsonrpc::sync::MutexExt as _;
use mcp_server::{Context, PromptDef, ResourceDef, Server, TemplateDef, ToolDef, ToolError};
use mcp_types::{
    AnyResourceContents, CallToolRequestParams, CallToolResult, ClientCapabilities, CompleteRequestParams,
    CompleteRequestParamsArgument, CompleteRequestParamsContext, CompletionReference, ErrorObject, GetPromptResult,
    JsonObject, Prompt, PromptReference, ProtocolVersion, Resource, ResourceTemplate, ResourceTemplateReference, Tool,
};
use serde_json::Value;

use crate::names::Naming;
use crate::pool::Pool;
use crate::source::Source;
use crate::upstream::{Down, Upstream, flush, options};
use crate::{custom, tasks};

/// A mounted server.
pub(crate) struct Mount {
    pub(crate) naming: Naming,
    /// The custom methods passed through to and from it (see [`crate::custom`]).
    pub(crate) forwarded: Vec<String>,
    /// The idle connections the stateless requests borrow (see [`crate::pool`]).
    pub(crate) pool: Pool,
    source: Source,
    /// The connection the lists are read from, whose list changes refresh them.
    catalog: Mutex<Option<Arc<Client>>>,
    /// Each gateway session's own connection, by [`Context::session_id`].
    sessions: Mutex<HashMap<u64, Arc<Upstream>>>,
    /// Whose the tasks made through this mount are.
    owners: tasks::TaskOwners,
    /// What is mirrored into the gateway: the mounted server's definitions by their gateway
    /// name (or URI).
    mirrored: Mutex<Mirrored>,
    /// Serializes refreshes of the mirrored lists.
    refreshing: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Mirrored {
    tools: HashMap<String, Tool>,
    prompts: HashMap<String, Prompt>,
    resources: HashMap<String, Resource>,
    templates: HashMap<String, ResourceTemplate>,
}

impl Mount {
    pub(crate) fn new(naming: Naming, source: Source) -> Self {
        Mount {
            naming,
            forwarded: Vec::new(),
            pool: Pool::default(),
            source,
            catalog: Mutex::new(None),
            sessions: Mutex::new(HashMap::new()),
            owners: tasks::TaskOwners::default(),
            mirrored: Mutex::new(Mirrored::default()),
            refreshing: tokio::sync::Mutex::new(()),
        }
    }

    /// The client every connection of the gateway starts from.
    fn builder() -> ClientBuilder {
        ClientBuilder::new("mcp-gateway", env!("CARGO_PKG_VERSION"))
    }

    /// Opens the catalog connection (before the gateway's server is built: what the mounted
    /// server declares decides some of the gateway's capabilities). It declares that it
    /// renders MCP Apps (SEP-1865): a mounted server that links its tools to views only for
    /// such clients lists the links, which the gateway's clients that render none ignore.
    pub(crate) async fn open(&self) -> Result<(), ClientError> {
        let catalog = Arc::new(self.source.open(Self::builder().apps().on_event(|_| {})).await?);
        *self.catalog.lock_unpoisoned() = Some(catalog);
        Ok(())
    }

    /// The settings of the MCP Apps extension the mounted server declares (seen at
    /// 2026-07-28), or those of a server of views (`text/html;profile=mcp-app`) if it lists a
    /// `ui://` resource, as read by the catalog [`open`](Self::open); `None`: neither.
    pub(crate) async fn apps(&self) -> Result<Option<JsonObject>, ClientError> {
        use mcp_types::apps;
        let catalog = self.catalog()?;
        let caps = catalog.server_capabilities();
        if let Some(settings) = caps.extensions.as_ref().and_then(|e| e.get(apps::EXTENSION)) {
            return Ok(Some(settings.extra.clone()));
        }
        if caps.resources.is_none() {
            return Ok(None);
        }
        let resources = catalog.list_all_resources().await?;
        let views = resources.iter().any(|r| r.uri.starts_with(apps::SCHEME));
        Ok(views.then(|| apps::UiClientCapabilities::html().to_settings()))
    }

    /// Mirrors the mounted server's lists into `server` (the catalog [`open`](Self::open));
    /// from then on its list changes refresh them, and its resource updates reach `server`'s
    /// subscribers.
    pub(crate) async fn start(self: &Arc<Self>, server: &Server) -> Result<(), ClientError> {
        let catalog = self.catalog()?;
        let mut events = catalog.events();
        self.refresh(server, Lists::ALL, false).await?;
        // Weak both: the server holds the mount (its tools call it), the mount the catalog,
        // whose events keep this task; a dropped gateway ends it all.
        let mount = Arc::downgrade(self);
        let server = server.downgrade();
        tokio::spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                let lists = match events.recv().await {
                    Ok(ServerEvent::ToolListChanged) => Lists::TOOLS,
                    Ok(ServerEvent::PromptListChanged) => Lists::PROMPTS,
                    Ok(ServerEvent::ResourceListChanged) => Lists::RESOURCES,
                    Ok(ServerEvent::ResourceUpdated { uri }) => {
                        let (Some(mount), Some(server)) = (mount.upgrade(), server.upgrade()) else { return };
                        server.notify_resource_updated(&mount.naming.uri(&uri)).await;
                        continue;
                    }
                    Ok(_) => continue,
                    Err(RecvError::Lagged(_)) => Lists::ALL,
                    Err(RecvError::Closed) => return,
                };
                let (Some(mount), Some(server)) = (mount.upgrade(), server.upgrade()) else { return };
                if let Err(e) = mount.refresh(&server, lists, true).await {
                    tracing::warn!(mount = mount.naming.prefix(), error = %e, "the mounted server's lists were not read");
                }
            }
        });
        Ok(())
    }

    /// The connections of the gateway session on `peer` (those it opened).
    pub(crate) fn upstreams_of(&self, peer: &mcp_jsonrpc::Peer) -> Vec<Arc<Upstream>> {
        self.sessions.lock_unpoisoned().values().filter(|u| u.link.serves(peer)).cloned().collect()
    }

    /// Whether the mounted server runs tools as tasks, as its catalog connection found it.
    pub(crate) fn runs_tasks(&self) -> bool {
        self.catalog().is_ok_and(|c| tasks::runs_tasks(c.server_capabilities()))
    }

    pub(crate) fn catalog(&self) -> Result<Arc<Client>, ClientError> {
        self.catalog.lock_unpoisoned().clone().ok_or(ClientError::Closed(None))
    }

    /// Reads the mounted server's `lists` again and mirrors them into `server`: what is new
    /// or changed added, what is gone removed (each change tells the gateway's clients).
    /// `told`: the mounted server said these lists changed.
    async fn refresh(self: &Arc<Self>, server: &Server, lists: Lists, told: bool) -> Result<(), ClientError> {
        let _one_at_a_time = self.refreshing.lock().await;
        let catalog = self.catalog()?;
        let caps = catalog.server_capabilities().clone();
        // A list the mounted server says changed, whose mirror did not: its clients hear it
        // all the same (at start, `told` is false: there is no one to tell).
        if lists.tools && caps.tools.is_some() {
            let mut tools = catalog.list_all_tools().await?;
            if catalog.protocol_version().is_stateless() && self.runs_tasks() {
                self.read_task_support(&mut tools).await;
            }
            if !self.mirror_tools(server, tools).await && told {
                server.notify_tool_list_changed().await;
            }
        }
        if lists.prompts && caps.prompts.is_some() {
            let prompts = catalog.list_all_prompts().await?;
            if !self.mirror_prompts(server, prompts, caps.completions.is_some()).await && told {
                server.notify_prompt_list_changed().await;
            }
        }
        if lists.resources && caps.resources.is_some() {
            let resources = catalog.list_all_resources().await?;
            let templates = catalog.list_all_resource_templates().await?;
            let subscribe = caps.resources.as_ref().and_then(|r| r.subscribe).unwrap_or(false);
            let changed = self.mirror_resources(server, resources, subscribe.then_some(&*catalog)).await;
            let changed = self.mirror_templates(server, templates, caps.completions.is_some()).await || changed;
            if !changed && told {
                server.notify_resource_list_changed().await;
            }
        }
        Ok(())
    }

    /// Sets the `execution` of the mounted server's `tools`, read at 2026-07-28 (whose tools
    /// carry none: the tasks extension has the server decide per call), from a listing in the
    /// session revision 2025-11-25 over a connection of its own, opened for it and closed: the
    /// gateway's clients of the session revisions learn from it which tools they may call as
    /// tasks. A mounted server that cannot be read so keeps its tools as they are.
    async fn read_task_support(&self, tools: &mut [Tool]) {
        let builder = Self::builder().on_event(|_| {}).protocol_version(ProtocolVersion::V2025_11_25);
        let listed = match self.source.open(builder).await {
            Ok(session) if !session.protocol_version().is_stateless() => {
                let listed = session.list_all_tools().await;
                let _ = session.close().await;
                listed.map_err(|e| e.to_string())
            }
            Ok(session) => {
                let _ = session.close().await;
                Err(format!("it speaks {}", session.protocol_version()))
            }
            Err(e) => Err(e.to_string()),
        };
        let listed = match listed {
            Ok(listed) => listed,
            Err(e) => {
                tracing::debug!(mount = self.naming.prefix(), error = %e, "task support of tools not read");
                return;
            }
        };
        let mut execution: HashMap<String, _> =
            listed.into_iter().filter_map(|t| Some((t.name, t.execution?))).collect();
        for tool in tools {
            tool.execution = execution.remove(&tool.name);
        }
    }

    async fn mirror_tools(self: &Arc<Self>, server: &Server, tools: Vec<Tool>) -> bool {
        let next: Vec<(String, Tool)> = tools.into_iter().map(|t| (self.naming.name(&t.name), t)).collect();
        let (gone, changed) = diff(&self.mirrored.lock_unpoisoned().tools, &next);
        let any = !gone.is_empty() || !changed.is_empty();
        for name in gone {
            server.remove_tool(&name).await;
        }
        let mut mirrored: HashMap<_, _> = next.iter().cloned().collect();
        for i in changed {
            let (name, tool) = (&next[i].0, &next[i].1);
            let mut def = tool.clone();
            def.name = name.clone();
            self.link_views(&mut def);
            // Listed with its `execution` (read in a session revision: 2026-07-28 lists none);
            // a call that asks for a task passes the ask on, and the mounted server decides
            // (`tasks`).
            let mount = self.clone();
            let original = tool.name.clone();
            let mirrors = serde_json::to_string(&tool.input_schema).is_ok_and(|s| s.contains("\"x-mcp-header\""));
            let handler = move |arguments: JsonObject, ctx: Context| {
                let mount = mount.clone();
                let original = original.clone();
                let task = if mount.runs_tasks() { tasks::requested(&ctx) } else { None };
                async move { mount.call_tool(original, arguments, ctx, mirrors, task).await }
            };
            let added = match ToolDef::from_tool(def, handler) {
                Ok(def) => server.add_tool(def).await,
                Err(e) => Err(e),
            };
            if let Err(e) = added {
                tracing::warn!(mount = self.naming.prefix(), tool = %tool.name, error = %e, "tool not mounted");
                mirrored.remove(name);
            }
        }
        self.mirrored.lock_unpoisoned().tools = mirrored;
        any
    }

    /// Points the tool's links to MCP App views (`_meta.ui.resourceUri`, and the deprecated
    /// `_meta["ui/resourceUri"]`) at the gateway's URIs of those views; other URIs stay.
    fn link_views(&self, tool: &mut Tool) {
        let Some(meta) = tool.meta.as_mut() else { return };
        let gateway_uri = |value: &mut Value| {
            if let Some(uri) = value.as_str().filter(|uri| uri.starts_with(mcp_types::apps::SCHEME)) {
                *value = Value::String(self.naming.uri(uri));
            }
        };
        if let Some(uri) = meta.extra.get_mut(mcp_types::apps::META_KEY).and_then(|ui| ui.get_mut("resourceUri")) {
            gateway_uri(uri);
        }
        if let Some(uri) = meta.extra.get_mut(mcp_types::apps::DEPRECATED_RESOURCE_URI_KEY) {
            gateway_uri(uri);
        }
    }

    async fn mirror_prompts(self: &Arc<Self>, server: &Server, prompts: Vec<Prompt>, completions: bool) -> bool {
        let next: Vec<(String, Prompt)> = prompts.into_iter().map(|p| (self.naming.name(&p.name), p)).collect();
        let (gone, changed) = diff(&self.mirrored.lock_unpoisoned().prompts, &next);
        let any = !gone.is_empty() || !changed.is_empty();
        for name in gone {
            server.remove_prompt(&name).await;
        }
        let mut mirrored: HashMap<_, _> = next.iter().cloned().collect();
        for i in changed {
            let (name, prompt) = (&next[i].0, &next[i].1);
            let mut def = prompt.clone();
            def.name = name.clone();
            let mount = self.clone();
            let original = prompt.name.clone();
            let mut def = PromptDef::from_prompt(def, move |arguments: BTreeMap<String, String>, ctx: Context| {
                let mount = mount.clone();
                let original = original.clone();
                async move { mount.get_prompt(original, arguments, ctx).await }
            });
            if completions {
                for argument in prompt.arguments.iter().flatten() {
                    let reference = CompletionReference::PromptReference(PromptReference::new(prompt.name.clone()));
                    def = def.complete(argument.name.clone(), self.completer(reference));
                }
            }
            if let Err(e) = server.add_prompt(def).await {
                tracing::warn!(mount = self.naming.prefix(), prompt = %prompt.name, error = %e, "prompt not mounted");
                mirrored.remove(name);
            }
        }
        self.mirrored.lock_unpoisoned().prompts = mirrored;
        any
    }

    async fn mirror_resources(
        self: &Arc<Self>,
        server: &Server,
        resources: Vec<Resource>,
        subscribe: Option<&Client>,
    ) -> bool {
        let next: Vec<(String, Resource)> = resources.into_iter().map(|r| (self.naming.uri(&r.uri), r)).collect();
        let (gone, changed) = diff(&self.mirrored.lock_unpoisoned().resources, &next);
        let any = !gone.is_empty() || !changed.is_empty();
        for uri in gone {
            server.remove_resource(&uri).await;
        }
        let mut mirrored: HashMap<_, _> = next.iter().cloned().collect();
        for i in changed {
            let (uri, resource) = (&next[i].0, &next[i].1);
            let mut def = resource.clone();
            def.uri = uri.clone();
            let mount = self.clone();
            let original = resource.uri.clone();
            let def =
                ResourceDef::from_resource(def, move |_uri: String, _vars: BTreeMap<String, String>, ctx: Context| {
                    let mount = mount.clone();
                    let original = original.clone();
                    async move { mount.read_resource(original, ctx).await }
                });
            if let Err(e) = server.add_resource(def).await {
                tracing::warn!(mount = self.naming.prefix(), resource = %resource.uri, error = %e, "resource not mounted");
                mirrored.remove(uri);
                continue;
            }
            // The gateway's clients subscribe to the gateway, which hears of every update
            // the mounted server sends and tells the subscribed ones.
            if let Some(catalog) = subscribe
                && let Err(e) = catalog.subscribe(&resource.uri).await
            {
                tracing::debug!(mount = self.naming.prefix(), resource = %resource.uri, error = %e, "not subscribed");
            }
        }
        self.mirrored.lock_unpoisoned().resources = mirrored;
        any
    }

    async fn mirror_templates(
        self: &Arc<Self>,
        server: &Server,
        templates: Vec<ResourceTemplate>,
        completions: bool,
    ) -> bool {
        let next: Vec<(String, ResourceTemplate)> =
            templates.into_iter().map(|t| (self.naming.uri(&t.uri_template), t)).collect();
        let (gone, changed) = diff(&self.mirrored.lock_unpoisoned().templates, &next);
        let any = !gone.is_empty() || !changed.is_empty();
        for uri_template in gone {
            server.remove_resource_template(&uri_template).await;
        }
        let mut mirrored: HashMap<_, _> = next.iter().cloned().collect();
        for i in changed {
            let (uri_template, template) = (&next[i].0, &next[i].1);
            let mount = self.clone();
            let def = TemplateDef::new(
                template.name.clone(),
                uri_template.clone(),
                move |uri: String, _vars: BTreeMap<String, String>, ctx: Context| {
                    let mount = mount.clone();
                    async move {
                        let original =
                            mount.naming.original_uri(&uri).ok_or_else(|| ErrorObject::resource_not_found(&uri))?;
                        mount.read_resource(original, ctx).await
                    }
                },
            );
            let added = match def {
                Ok(mut def) => {
                    if let Some(text) = &template.description {
                        def = def.description(text.clone());
                    }
                    if let Some(text) = &template.mime_type {
                        def = def.mime_type(text.clone());
                    }
                    if let Some(text) = &template.title {
                        def = def.title(text.clone());
                    }
                    if let Some(icons) = &template.icons {
                        def = def.icons(icons.clone());
                    }
                    if let Some(annotations) = &template.annotations {
                        def = def.annotations(annotations.clone());
                    }
                    if completions {
                        let reference = CompletionReference::ResourceTemplateReference(ResourceTemplateReference::new(
                            template.uri_template.clone(),
                        ));
                        for variable in template_variables(&template.uri_template) {
                            def = def.complete(variable, self.completer(reference.clone()));
                        }
                    }
                    server.add_resource_template(def).await.map_err(|e| e.to_string())
                }
                Err(e) => Err(e.to_string()),
            };
            if let Err(e) = added {
                tracing::warn!(mount = self.naming.prefix(), template = %template.uri_template, error = %e, "template not mounted");
                mirrored.remove(uri_template);
            }
        }
        self.mirrored.lock_unpoisoned().templates = mirrored;
        any
    }

    /// A completer that asks the mounted server about `reference`.
    fn completer(
        self: &Arc<Self>,
        reference: CompletionReference,
    ) -> impl Fn(
        mcp_server::CompletionRequest,
        Context,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<mcp_server::Completion, ErrorObject>> + Send>,
    > + Send
    + Sync
    + 'static {
        let mount = self.clone();
        move |request, ctx| {
            let mount = mount.clone();
            let reference = reference.clone();
            Box::pin(async move {
                let mut params = CompleteRequestParams::new(
                    CompleteRequestParamsArgument::new(request.name, request.value),
                    reference,
                );
                if !request.context.is_empty() {
                    let mut context = CompleteRequestParamsContext::default();
                    context.arguments = Some(request.context);
                    params.context = Some(context);
                }
                let (upstream, client) =
                    mount.upstream(&ctx).await.map_err(|Down(e)| ErrorObject::internal_error(e))?;
                let _call = upstream.link.enter(&ctx);
                let result = client.complete_with(params, CallOptions::default()).await;
                let result = result.map_err(|e| upstream.error(mount.naming.prefix(), e))?;
                Ok(mcp_server::Completion { values: result.completion.values })
            })
        }
    }

    /// The connection of `ctx`'s gateway session to the mounted server: opened now if there
    /// is none or it was lost.
    pub(crate) async fn upstream(self: &Arc<Self>, ctx: &Context) -> Result<(Arc<Upstream>, Arc<Client>), Down> {
        let id = ctx.session_id();
        // A request of the stateless revision is a session of its own, whose peer is never
        // told it ended: it borrows a connection of the pool (see `crate::pool`).
        let stateless = ctx.protocol_version().is_stateless();
        let (upstream, new) = if stateless {
            (self.pool.lease(&ctx.client_capabilities()), false)
        } else {
            let mut sessions = self.sessions.lock_unpoisoned();
            match sessions.get(&id) {
                Some(upstream) => (upstream.clone(), false),
                None => {
                    let upstream = Arc::new(Upstream::default());
                    sessions.insert(id, upstream.clone());
                    (upstream, true)
                }
            }
        };
        if new {
            upstream.link.set_home(ctx);
            let _ = upstream.link.mount.set(self.naming.prefix().to_owned());
            // The connection ends with the gateway session.
            let mount = Arc::downgrade(self);
            let peer = ctx.peer().clone();
            tokio::spawn(async move {
                peer.closed().await;
                let Some(mount) = mount.upgrade() else { return };
                let upstream = mount.sessions.lock_unpoisoned().remove(&id);
                if let Some(client) = upstream.and_then(|u| u.client.try_lock().ok().and_then(|mut c| c.take())) {
                    let _ = client.close().await;
                }
            });
        }
        let mut client = upstream.client.lock().await;
        if let Some(client) = client.as_ref().filter(|c| !c.peer().is_closed()) {
            return Ok((upstream.clone(), client.clone()));
        }
        let caps: ClientCapabilities = ctx.client_capabilities();
        let builder = upstream.link.client(Self::builder(), &caps);
        let mut builder = custom::client(builder, &self.forwarded, &upstream.link);
        if ctx.protocol_version() == ProtocolVersion::V2025_11_25 && self.runs_tasks() {
            // A session's tasks are the session's (2025-11-25): asked for, read and listed
            // over a connection in its revision (the tasks extension has other methods).
            builder = builder.protocol_version(ProtocolVersion::V2025_11_25);
        }
        match self.source.open(builder).await {
            Ok(opened) => {
                // The gateway's clients filter what they get by their own levels.
                if opened.server_capabilities().logging.is_some()
                    && let Err(e) = opened.set_logging_level(mcp_types::LoggingLevel::Debug).await
                {
                    tracing::debug!(mount = self.naming.prefix(), error = %e, "the mounted server's log level not set");
                }
                let opened = Arc::new(opened);
                *client = Some(opened.clone());
                Ok((upstream.clone(), opened))
            }
            Err(e) => {
                *client = None;
                Err(Down(format!("mounted server `{}` is unavailable: {e}", self.naming.prefix())))
            }
        }
    }

    /// Calls tool `name` of the mounted server. `mirrors`: its input schema mirrors arguments
    /// in headers (`x-mcp-header`, 2026-07-28), which a client sends only for the tools it
    /// listed: a connection in that revision lists them once before such a call. `task`: the
    /// gateway's client asked for a task, which the mounted server is asked for (`tasks`).
    async fn call_tool(
        self: Arc<Self>,
        name: String,
        arguments: JsonObject,
        ctx: Context,
        mirrors: bool,
        task: Option<mcp_types::TaskMetadata>,
    ) -> Result<CallToolResult, ToolError> {
        let (upstream, client) = match self.upstream(&ctx).await {
            Ok(found) => found,
            Err(Down(message)) => return Ok(CallToolResult::error(message)),
        };
        if mirrors
            && client.protocol_version().is_stateless()
            && !upstream.listed.swap(true, std::sync::atomic::Ordering::AcqRel)
            && let Err(e) = client.list_all_tools().await
        {
            tracing::debug!(mount = self.naming.prefix(), error = %e, "tools not listed");
        }
        let _call = upstream.link.enter(&ctx);
        let mut params = CallToolRequestParams::new(name);
        params.arguments = Some(arguments);
        if task.is_some() {
            params.task = task;
            return tasks::call_as_task(self.naming.prefix(), &self.owners, &upstream, &client, params, &ctx).await;
        }
        let (options, progress) = options(&ctx);
        let result = client.call_tool_with(params, options).await;
        // The result goes after the progress and log messages that came before it.
        flush(progress).await;
        upstream.link.flushed().await;
        result.or_else(|e| crate::upstream::call_failed(self.naming.prefix(), &upstream, e))
    }

    async fn get_prompt(
        self: Arc<Self>,
        name: String,
        arguments: BTreeMap<String, String>,
        ctx: Context,
    ) -> Result<GetPromptResult, ErrorObject> {
        let (upstream, client) = self.upstream(&ctx).await.map_err(|Down(e)| ErrorObject::internal_error(e))?;
        let _call = upstream.link.enter(&ctx);
        let result = client.get_prompt(&name, arguments).await;
        upstream.link.flushed().await;
        result.map_err(|e| upstream.error(self.naming.prefix(), e))
    }

    async fn read_resource(
        self: Arc<Self>,
        uri: String,
        ctx: Context,
    ) -> Result<Vec<AnyResourceContents>, ErrorObject> {
        let (upstream, client) = self.upstream(&ctx).await.map_err(|Down(e)| ErrorObject::internal_error(e))?;
        let _call = upstream.link.enter(&ctx);
        let result = client.read_resource(&uri).await;
        upstream.link.flushed().await;
        let result = result.map_err(|e| upstream.error(self.naming.prefix(), e))?;
        let mut contents = result.contents;
        for content in &mut contents {
            let uri = match content {
                AnyResourceContents::TextResourceContents(c) => &mut c.uri,
                AnyResourceContents::BlobResourceContents(c) => &mut c.uri,
            };
            *uri = self.naming.uri(uri);
        }
        Ok(contents)
    }
}

impl tasks::TaskMount for Mount {
    fn prefix(&self) -> &str {
        self.naming.prefix()
    }

    fn runs_tasks(&self) -> bool {
        Mount::runs_tasks(self)
    }

    async fn forward(self: Arc<Self>, method: &str, params: JsonObject, ctx: Context) -> Result<Value, ErrorObject> {
        let (upstream, client) = self.upstream(&ctx).await.map_err(|Down(e)| ErrorObject::internal_error(e))?;
        tasks::pass(self.naming.prefix(), &self.owners, &upstream, &client, method, params, &ctx).await
    }

    async fn follow(&self, theirs: &[&str]) -> Result<mcp_client::Subscription, ClientError> {
        self.catalog()?.follow_tasks(theirs).await
    }
}

impl custom::CustomMount for Mount {
    async fn request(
        self: Arc<Self>,
        method: String,
        params: Option<Value>,
        ctx: Context,
    ) -> Result<Value, ErrorObject> {
        let (upstream, client) = self.upstream(&ctx).await.map_err(|Down(e)| ErrorObject::internal_error(e))?;
        custom::request(self.naming.prefix(), &upstream, &client, &method, params, &ctx).await
    }

    fn notify(&self, method: &str, params: Option<Value>, peer: &mcp_jsonrpc::Peer) {
        custom::notify(self.naming.prefix(), self.upstreams_of(peer), method, params);
    }
}

/// Which lists to read again.
#[derive(Debug, Clone, Copy)]
struct Lists {
    tools: bool,
    prompts: bool,
    resources: bool,
}

impl Lists {
    const ALL: Lists = Lists { tools: true, prompts: true, resources: true };
    const TOOLS: Lists = Lists { tools: true, prompts: false, resources: false };
    const PROMPTS: Lists = Lists { tools: false, prompts: true, resources: false };
    const RESOURCES: Lists = Lists { tools: false, prompts: false, resources: true };
}

/// What went from `old` to `new` (keys gone) and what is new or changed (indices in `new`, in
/// its order: the mounted server's order is the gateway's).
fn diff<T: PartialEq>(old: &HashMap<String, T>, new: &[(String, T)]) -> (Vec<String>, Vec<usize>) {
    let gone = old.keys().filter(|k| !new.iter().any(|(n, _)| n == *k)).cloned().collect();
    let changed = new.iter().enumerate().filter(|(_, (k, v))| old.get(k) != Some(v)).map(|(i, _)| i).collect();
    (gone, changed)
}

/// The variable names of a URI template (`{a}`, `{+a,b}`, `{?x*}`).
fn template_variables(template: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else { break };
        let expression = rest[open + 1..open + close].trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for name in expression.split(',') {
            let name = name.trim_end_matches('*');
            let name = name.split(':').next().unwrap_or(name);
            if !name.is_empty() {
                names.push(name.to_owned());
            }
        }
        rest = &rest[open + close + 1..];
    }
    names
}

#[cfg(test)]
mod tests {
    #[test]
    fn template_variables_are_read() {
        assert_eq!(super::template_variables("file:///{path}"), ["path"]);
        assert_eq!(super::template_variables("x://{+a,b}/{?q*}{#f:3}"), ["a", "b", "q", "f"]);
        assert!(super::template_variables("x://plain").is_empty());
    }
}
