//! The server: built once from its tools, prompts and resources, then served over any number
//! of connections. Items can be added and removed at runtime; connected clients are told.
//!
//! This module holds [`Server`] itself; its files: `builder` ([`ServerBuilder`], what a server
//! declares), `connect` (serving connections), `update` (items added and removed at runtime),
//! `notify` (telling connected clients, and a fleet's relay), `http` (Streamable HTTP, feature
//! `http`) and `shutdown` (the ready-made shutdown signal).
//!
//! The top layer: it uses every layer below (the serving, the definitions, the context, tasks
//! and the foundations), and nothing uses it but the crate root's re-exports.

use std::sync::Arc;

use mcp_types::{ResourceTemplate, ServerCapabilities, Tool};

use crate::serve::session::Serving;

pub(crate) mod builder;
mod connect;
#[cfg(feature = "http")]
mod http;
mod notify;
pub(crate) mod shutdown;
mod update;

/// An MCP server: cheap to clone, served over any number of connections at once.
#[derive(Clone)]
pub struct Server {
    pub(crate) shared: Arc<Serving>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("info", &self.shared.info).finish_non_exhaustive()
    }
}

impl Server {
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

    /// The resource templates, as listed.
    pub fn resource_templates(&self) -> Vec<ResourceTemplate> {
        self.shared.registry().template_list.clone()
    }

    /// A handle that does not keep the server alive: for what the server itself holds (a
    /// task its tools own) and that must not keep it from being dropped.
    pub fn downgrade(&self) -> WeakServer {
        WeakServer { shared: Arc::downgrade(&self.shared) }
    }
}

/// A [`Server`] that may have been dropped: [`Server::downgrade`].
#[derive(Clone, Debug)]
pub struct WeakServer {
    shared: std::sync::Weak<Serving>,
}

impl WeakServer {
    /// The server, if a clone of it (or a connection it serves) is still alive.
    pub fn upgrade(&self) -> Option<Server> {
        self.shared.upgrade().map(|shared| Server { shared })
    }
}
