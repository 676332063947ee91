//! Servers composed into one: a gateway mounts local [`Server`]s and remote servers (a child
//! process over stdio, a Streamable HTTP endpoint with its own authorization) under prefixes,
//! and is itself a [`Server`], served like any other (stdio, HTTP, every revision).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_gateway::{Gateway, Source};
//! use mcp_server::{Server, ToolDef, ToolError};
//! use mcp_types::{CallToolResult, ContentBlock};
//!
//! let search = ToolDef::new("search", serde_json::json!({"type": "object"}), |_args, _ctx| async {
//!     Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("found")]))
//! })?;
//! let github = Server::builder("github", "1.0").tool(search).build()?;
//! let gateway: Server = Gateway::builder("gateway", "1.0").mount("github", Source::local(github)).build().await?;
//! assert_eq!(gateway.tools()[0].name, "github_search");
//! # Ok(()) }
//! ```
//!
//! ## Names
//! A mount's tools and prompts are named `prefix_name` (`github_search`); its resource URIs
//! and URI templates become `prefix+uri` (`github+file:///readme`): the prefix joins the URI's
//! scheme, so the result is a URI still, and the gateway strips `prefix+` to read it. A prefix
//! is ASCII letters, digits, `-` and `.`; the empty prefix mounts a server unprefixed.
//!
//! ## MCP Apps
//! A view of an MCP App (SEP-1865) keeps its `ui://` scheme: the prefix joins its authority
//! (`ui://weather/view` under `ev` is `ui://ev+weather/view`), and the tools linked to it
//! (`_meta.ui.resourceUri`, the deprecated `_meta["ui/resourceUri"]`) point at that URI; its
//! `_meta.ui` passes unchanged. The catalog connection declares the extension; a call's
//! connection declares it when the gateway's client did (a session's, or a 2026-07-28
//! request's). The gateway declares it when, at build, a mounted server declares it or lists a
//! `ui://` resource.
//!
//! ## Lists
//! The gateway reads each mounted server's lists (every page, within the client's bound on
//! pages) over a connection of its own, the catalog, and mirrors them into its server, which
//! pages them to its clients as it pages its own items. When a mounted server says a list
//! changed, the gateway reads that list again and its clients hear `list_changed` for what
//! changed. Resource updates of the mounted server reach the gateway's subscribers (the
//! catalog subscribes to every resource the mounted server lists, if it supports
//! subscriptions).
//!
//! ## Calls
//! Each gateway session (a client's connection) gets its own connection to each mounted
//! server it calls, opened at its first call, declaring what the session's client declared,
//! and closed when the session ends. A request of the stateless revision (2026-07-28)
//! borrows an idle connection to the mounted server, one that declared what its client
//! declared, or opens one, and gives it back once answered: requests one after the other share
//! one connection (one child process), concurrent ones each hold one of their own meanwhile.
//! What the mounted server keeps per connection (its session,
//! for a server of the session revisions) is thus shared by the stateless requests that
//! borrow it. So every request the mounted server sends on a connection (sampling,
//! elicitation, roots) is for the client whose session or request holds it, and is passed to
//! it through the latest of that session's calls in flight on that connection; so are its log
//! messages. Outside any call, a session of the session
//! revisions gets them itself (the log messages filtered by the level its client set), and
//! its client's `notifications/roots/list_changed` reaches each of its connections to the
//! mounted servers; a stateless request's connection has no one to pass them to. A call's
//! progress comes back as the gateway call's progress, in order; cancelling the gateway call
//! cancels the mounted server's.
//!
//! A mounted server that is down (its process ended, its endpoint unreachable) fails only its
//! own calls: a tool call answers an `isError` result naming the mount, a prompt or resource
//! read a JSON-RPC error; the next call tries to connect again. Its items stay listed as last
//! read.
//!
//! A dropped gateway (its last clone and the connections it serves gone) closes its
//! connections to the mounted servers, the catalog's included.
//!
//! ## Tasks
//! When a mounted server runs tools as tasks, the gateway declares tasks too and passes them
//! through, keeping none of its own: a call that asks for a task (the `task` member at
//! 2025-11-25, the tasks extension declared at 2026-07-28) asks the mounted server, which
//! decides; its task is answered under an id that names the mount (`prefix:id`), and the
//! task methods go to that mount (see [`ServerBuilder::forward_tasks`]). A mounted server's
//! `notifications/tasks/status` (2025-11-25) reach the gateway session that owns the task,
//! under the gateway's id. At 2026-07-28 a client that follows a task on a
//! `subscriptions/listen` stream (its gateway id in `notifications.taskIds`) hears each change
//! of it there (`notifications/tasks`), under the gateway's id: the gateway follows the task
//! on the mounted server, over the catalog connection (when it speaks 2026-07-28).
//!
//! ## Custom methods
//! A custom method (outside the protocol) passes through only when the builder names it and
//! its mount ([`GatewayBuilder::forward`]): both ways, as calls and the mounted server's own
//! requests do. At 2026-07-28 the mounted server's answer loses what it added for the revision
//! (`resultType`, its `serverInfo`); the gateway adds its own.
//!
//! (At 2026-07-28, the input a mounted server asks for in an `input_required` result is
//! asked of the gateway's client under the mounted server's keys, all in one round.)

mod custom;
mod link;
mod mount;
mod names;
mod pool;
mod session;
mod source;
mod tasks;
mod upstream;

use std::sync::Arc;

use mcp_server::{Server, ServerBuilder};

pub use source::Source;

use mount::Mount;
use names::Naming;

/// What can go wrong building a gateway.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// A prefix with characters other than ASCII letters, digits, `-` and `.`, or longer
    /// than 64.
    #[error("invalid mount prefix `{0}`: only ASCII letters, digits, `-` and `.` (at most 64)")]
    InvalidPrefix(String),
    /// Two mounts with the same prefix.
    #[error("two mounts with the prefix `{0}`")]
    DuplicatePrefix(String),
    /// A custom method passed to a prefix no source is mounted under.
    #[error("no mount with the prefix `{0}`")]
    UnknownMount(String),
    /// An HTTP source's URL does not parse.
    #[error("invalid URL `{0}`: {1}")]
    InvalidUrl(String, String),
    /// The gateway's own server was refused.
    #[error(transparent)]
    Definition(#[from] mcp_server::DefinitionError),
    /// A mounted server could not be reached or read at start.
    #[error("mount `{prefix}`: {source}")]
    Mount {
        /// The mount's prefix.
        prefix: String,
        /// What failed.
        #[source]
        source: mcp_client::ClientError,
    },
}

/// Builds a gateway: [`Gateway::builder`].
pub struct Gateway;

impl Gateway {
    /// A gateway named `name` (its `serverInfo`), with no mount yet.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> GatewayBuilder {
        GatewayBuilder { server: Server::builder(name, version), mounts: Vec::new(), forwarded: Vec::new() }
    }
}

/// The mounts of a gateway and its own server's settings.
#[must_use = "a gateway is made with `.build().await`"]
pub struct GatewayBuilder {
    server: ServerBuilder,
    mounts: Vec<(String, Source)>,
    /// Custom methods passed through, with the prefix of their mount.
    forwarded: Vec<(String, String)>,
}

impl std::fmt::Debug for GatewayBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayBuilder").field("mounts", &self.mounts).finish_non_exhaustive()
    }
}

impl GatewayBuilder {
    /// Mounts `source` under `prefix` (`""`: unprefixed).
    pub fn mount(mut self, prefix: impl Into<String>, source: impl Into<Source>) -> Self {
        self.mounts.push((prefix.into(), source.into()));
        self
    }

    /// Passes the custom method `method` (a method outside the protocol) through, both ways,
    /// between the gateway's clients and the mount `prefix`: a client's request of it is
    /// sent to the mounted server (over the session's connection, as a call is) and its
    /// answer returned, its progress passed back; a client's notification of it
    /// goes to the session's connection to that mount, if the session has one open; the
    /// mounted server's requests and notifications of it go to the client of the session
    /// whose connection they came on, as its sampling requests and log messages do. Once per
    /// method: a method of the protocol, or one passed twice, fails the build
    /// ([`GatewayError::Definition`]), an unknown prefix too ([`GatewayError::UnknownMount`]).
    pub fn forward(mut self, method: impl Into<String>, prefix: impl Into<String>) -> Self {
        self.forwarded.push((method.into(), prefix.into()));
        self
    }

    /// Changes the gateway's own server: its page size, instructions, items of its own
    /// beside the mounted ones. Its `on_roots_changed` is the gateway's (which passes the
    /// notification on to the mounted servers): one set here is replaced.
    pub fn server(mut self, configure: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Self {
        self.server = configure(self.server);
        self
    }

    /// Connects to every mounted server, reads its lists, and returns the gateway's server.
    /// Fails if a prefix is invalid or repeated, or a mounted server cannot be reached.
    pub async fn build(self) -> Result<Server, GatewayError> {
        let mut mounts = Vec::with_capacity(self.mounts.len());
        for (prefix, source) in self.mounts {
            let naming = Naming::new(&prefix)?;
            if mounts.iter().any(|m: &Arc<Mount>| m.naming.prefix() == prefix) {
                return Err(GatewayError::DuplicatePrefix(prefix));
            }
            let mut mount = Mount::new(naming, source);
            mount.forwarded = self.forwarded.iter().filter(|(_, p)| *p == prefix).map(|(m, _)| m.clone()).collect();
            mounts.push(Arc::new(mount));
        }
        let failed = |mount: &Mount| {
            let prefix = mount.naming.prefix().to_owned();
            move |source| GatewayError::Mount { prefix, source }
        };
        let mut forwarded = Vec::with_capacity(self.forwarded.len());
        for (method, prefix) in self.forwarded {
            let mount = mounts.iter().find(|m| m.naming.prefix() == prefix);
            forwarded.push((method, mount.ok_or(GatewayError::UnknownMount(prefix))?.clone()));
        }
        for mount in &mounts {
            mount.open().await.map_err(failed(mount))?;
        }
        let server = self.server.enable_tools().enable_prompts().enable_resources();
        let mut server = custom::server(server, &forwarded).on_roots_changed(session::roots_changed(mounts.clone()));
        for mount in &mounts {
            // A mounted server serves MCP Apps: so does the gateway (its views under the
            // gateway's `ui://` URIs).
            if let Some(settings) = mount.apps().await.map_err(failed(mount))? {
                server = server.extension(mcp_types::apps::EXTENSION, settings);
                break;
            }
        }
        if mounts.iter().any(|m| m.runs_tasks()) {
            // A mounted server runs tools as tasks: their task methods go to it.
            server = server.forward_tasks(tasks::Forwarder(mounts.iter().cloned().collect()));
        }
        let server = server.build()?;
        for mount in &mounts {
            mount.start(&server).await.map_err(failed(mount))?;
        }
        Ok(server)
    }
}
