//! Per-client visibility: which tools, prompts, resources and templates a request sees. Two
//! things hide an item: the server's predicate
//! ([`ServerBuilder::visibility`](crate::ServerBuilder::visibility)) over the item's
//! definition ([`Item`]) and who asks ([`Viewer`]), and the session's own hidden set, changed at
//! run time through a [`SessionControl`]. A hidden item is unknown: not listed, and called,
//! read, got or completed with exactly the error of an item that does not exist.

use std::sync::Arc;

use mcp_jsonrpc::ErrorObject;
use mcp_types::{
    Implementation, PromptListChangedNotification, ProtocolVersion, ResourceListChangedNotification,
    ToolListChangedNotification,
};

pub use super::session::ItemKind;
use super::session::{RecordChange, SessionState, update_shared_with};
use crate::error::ToolError;

/// The server's visibility predicate: whether `who` sees `item`.
pub(crate) type VisibilityFn = Arc<dyn Fn(Item<'_>, &Viewer<'_>) -> bool + Send + Sync>;

/// The definition of one tool, prompt, resource or template, as the visibility predicate sees
/// it: as listed (name, title, annotations, `_meta`, ...) and the scopes it asks for
/// ([`ToolDef::scopes`](crate::ToolDef::scopes)).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Item<'a> {
    /// A tool.
    Tool(&'a mcp_types::Tool, &'a [String]),
    /// A prompt.
    Prompt(&'a mcp_types::Prompt, &'a [String]),
    /// A resource.
    Resource(&'a mcp_types::Resource, &'a [String]),
    /// A resource template.
    ResourceTemplate(&'a mcp_types::ResourceTemplate, &'a [String]),
}

impl<'a> Item<'a> {
    /// Its kind.
    pub fn kind(&self) -> ItemKind {
        match self {
            Item::Tool(..) => ItemKind::Tool,
            Item::Prompt(..) => ItemKind::Prompt,
            Item::Resource(..) => ItemKind::Resource,
            Item::ResourceTemplate(..) => ItemKind::ResourceTemplate,
        }
    }
    /// What it is known by: a tool's or prompt's name, a resource's URI, a template's URI
    /// template (what [`SessionControl`] hides).
    pub fn key(&self) -> &'a str {
        match self {
            Item::Tool(t, _) => &t.name,
            Item::Prompt(p, _) => &p.name,
            Item::Resource(r, _) => &r.uri,
            Item::ResourceTemplate(t, _) => &t.uri_template,
        }
    }
    /// Its name (a resource's and a template's `name` member, not their URI).
    pub fn name(&self) -> &'a str {
        match self {
            Item::Tool(t, _) => &t.name,
            Item::Prompt(p, _) => &p.name,
            Item::Resource(r, _) => &r.name,
            Item::ResourceTemplate(t, _) => &t.name,
        }
    }
    /// The scopes its definition asks for (empty if none).
    pub fn scopes(&self) -> &'a [String] {
        match self {
            Item::Tool(_, s) | Item::Prompt(_, s) | Item::Resource(_, s) | Item::ResourceTemplate(_, s) => s,
        }
    }
    /// Its `_meta`, if any.
    pub fn meta(&self) -> Option<&'a mcp_types::MetaObject> {
        match self {
            Item::Tool(t, _) => t.meta.as_ref(),
            Item::Prompt(p, _) => p.meta.as_ref(),
            Item::Resource(r, _) => r.meta.as_ref(),
            Item::ResourceTemplate(t, _) => t.meta.as_ref(),
        }
    }
}

/// Who asks: what the visibility predicate knows of the request. Read lazily: nothing is
/// decoded or copied unless the predicate asks for it.
pub struct Viewer<'a> {
    pub(crate) session: &'a SessionState,
    pub(crate) attachment: Option<&'a mcp_jsonrpc::Attachment>,
    pub(crate) version: ProtocolVersion,
}

impl std::fmt::Debug for Viewer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Viewer").field("version", &self.version).finish_non_exhaustive()
    }
}

impl Viewer<'_> {
    /// The revision the request is served in (2026-07-28: a request of the stateless revision,
    /// which has no session).
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }
    /// The client's name and version, as it reported them (at `initialize`, or in a
    /// stateless request's `_meta`).
    pub fn client_info(&self) -> Option<Implementation> {
        self.session.client_info()
    }
    /// What the transport attached to the request.
    pub fn attachment(&self) -> Option<&mcp_jsonrpc::Attachment> {
        self.attachment
    }
    /// The HTTP request that carried the request, when served over HTTP.
    #[cfg(feature = "http")]
    pub fn http_request(&self) -> Option<&mcp_transport_http::server::RequestInfo> {
        self.attachment?.downcast_ref()
    }
    /// The HTTP session (`Mcp-Session-Id`) the request belongs to; `None` outside HTTP and for
    /// a request of the stateless revision.
    pub fn session_id(&self) -> Option<&str> {
        #[cfg(feature = "http")]
        if !self.version.is_stateless() {
            return self.http_request()?.session_id();
        }
        None
    }
    /// Who the request's access token speaks for (its scopes and claims), when the HTTP
    /// endpoint checks tokens (feature `auth`).
    #[cfg(feature = "auth")]
    pub fn principal(&self) -> Option<&mcp_transport_http::server::auth::Principal> {
        self.http_request()?.extensions().get()
    }
}

/// Whether the server shows `item` to `who`: its predicate `visibility`, and with
/// `hide_out_of_scope` the scopes of `who`'s token; whatever the session hides.
pub(crate) fn server_shows(
    visibility: Option<&VisibilityFn>,
    hide_out_of_scope: bool,
    item: Item<'_>,
    who: &Viewer<'_>,
) -> bool {
    #[cfg(feature = "auth")]
    if hide_out_of_scope && !item.scopes().is_empty() && !granted(who, item.scopes()) {
        return false;
    }
    #[cfg(not(feature = "auth"))]
    let _ = hide_out_of_scope;
    visibility.is_none_or(|f| f(item, who))
}

/// Whether the token of `who` grants `scopes` (a request without a principal: yes, as scopes
/// are not checked there).
#[cfg(feature = "auth")]
fn granted(who: &Viewer<'_>, scopes: &[String]) -> bool {
    who.principal().is_none_or(|p| scopes.iter().all(|s| p.has_scope(s)))
}

/// One session's visibility, changed at run time: items hidden from that session only, which
/// is told with `list_changed` (the other sessions are not). Made by
/// [`Context::session`](crate::Context::session) or [`Server::session`](crate::Server::session).
///
/// A session a fleet shares keeps its hidden set in the fleet's record, so every instance
/// hides the items, whether it is changed from a handler or from outside its requests (one
/// round trip to the store per change). A request of the stateless revision (2026-07-28) has
/// no session: its changes do nothing (the server's predicate applies per request).
#[derive(Clone)]
pub struct SessionControl {
    pub(crate) state: Arc<SessionState>,
    pub(crate) attachment: Option<mcp_jsonrpc::Attachment>,
    pub(crate) version: ProtocolVersion,
    /// The server's middleware, if any: the list changes it sends go through it.
    pub(crate) layers: Option<crate::middleware::outgoing::Layers>,
}

impl std::fmt::Debug for SessionControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionControl").field("id", &self.state.id).finish_non_exhaustive()
    }
}

impl SessionControl {
    /// The session's id: its HTTP `Mcp-Session-Id`, else a number unique in this process;
    /// what [`Server::session`](crate::Server::session) finds it by. `None` for a request of
    /// the stateless revision.
    pub fn id(&self) -> Option<String> {
        (!self.version.is_stateless()).then(|| self.state.public_id())
    }
    /// Hides the tool `name` from this session (see [`hide`](Self::hide)).
    pub async fn hide_tool(&self, name: &str) -> Result<bool, ToolError> {
        self.hide(ItemKind::Tool, name).await
    }
    /// Shows the tool `name` to this session again (see [`show`](Self::show)).
    pub async fn show_tool(&self, name: &str) -> Result<bool, ToolError> {
        self.show(ItemKind::Tool, name).await
    }
    /// Hides the prompt `name` from this session.
    pub async fn hide_prompt(&self, name: &str) -> Result<bool, ToolError> {
        self.hide(ItemKind::Prompt, name).await
    }
    /// Shows the prompt `name` to this session again.
    pub async fn show_prompt(&self, name: &str) -> Result<bool, ToolError> {
        self.show(ItemKind::Prompt, name).await
    }
    /// Hides the resource at `uri` from this session.
    pub async fn hide_resource(&self, uri: &str) -> Result<bool, ToolError> {
        self.hide(ItemKind::Resource, uri).await
    }
    /// Shows the resource at `uri` to this session again.
    pub async fn show_resource(&self, uri: &str) -> Result<bool, ToolError> {
        self.show(ItemKind::Resource, uri).await
    }
    /// Hides the resource template `uri_template` from this session.
    pub async fn hide_resource_template(&self, uri_template: &str) -> Result<bool, ToolError> {
        self.hide(ItemKind::ResourceTemplate, uri_template).await
    }
    /// Shows the resource template `uri_template` to this session again.
    pub async fn show_resource_template(&self, uri_template: &str) -> Result<bool, ToolError> {
        self.show(ItemKind::ResourceTemplate, uri_template).await
    }
    /// Whether this session hides `key` (a name, URI or URI template) of `kind`.
    pub fn is_hidden(&self, kind: ItemKind, key: &str) -> bool {
        self.state.hides(kind, key)
    }

    /// Hides the item `key` of `kind` from this session (whether it exists yet or not): it is
    /// not listed, and is unknown to calls, reads, gets and completions. The session is sent
    /// the kind's `list_changed` (resources and templates: `notifications/resources/list_changed`).
    /// Whether that changed anything (`false`: hidden already, or no session). Fails when the
    /// fleet's store does, or when the session hides as many items as it may already.
    pub async fn hide(&self, kind: ItemKind, key: &str) -> Result<bool, ToolError> {
        self.set(kind, key, true).await
    }
    /// Shows the item `key` of `kind` to this session again (undoes [`hide`](Self::hide)),
    /// with `list_changed` as `hide` sends it. The server's predicate still applies.
    pub async fn show(&self, kind: ItemKind, key: &str) -> Result<bool, ToolError> {
        self.set(kind, key, false).await
    }

    async fn set(&self, kind: ItemKind, key: &str, hidden: bool) -> Result<bool, ToolError> {
        // A shared session's copy here may not have heard of another instance's change yet:
        // its record is changed whatever the copy says.
        let before = self.state.hides(kind, key);
        if self.version.is_stateless() || (before == hidden && !self.state.is_shared()) {
            return Ok(false);
        }
        let change = RecordChange::Hidden { kind, key, hidden };
        if !update_shared_with(&self.state, self.attachment.as_ref(), self.version, change).await? {
            if self.state.is_shared() {
                return Err(ToolError::Protocol(ErrorObject::internal_error(
                    "the fleet's record of the session is out of reach",
                )));
            }
            self.state.set_hidden(kind, key, hidden)?;
        }
        if before == hidden {
            return Ok(false);
        }
        self.notify(kind).await;
        Ok(true)
    }

    /// Tells the session its list of `kind` changed, waiting at most a second for room in its
    /// outgoing queue (a client that reads nothing misses it, and the handler goes on).
    async fn notify(&self, kind: ItemKind) {
        let Some(peer) = self.state.peer.get() else { return };
        let layers = self.layers.as_ref();
        let sent = async {
            use crate::middleware::outgoing::notify;
            match kind {
                ItemKind::Tool => notify::<ToolListChangedNotification>(layers, peer, Default::default(), None).await,
                ItemKind::Prompt => {
                    notify::<PromptListChangedNotification>(layers, peer, Default::default(), None).await
                }
                ItemKind::Resource | ItemKind::ResourceTemplate => {
                    notify::<ResourceListChangedNotification>(layers, peer, Default::default(), None).await
                }
            }
        };
        match tokio::time::timeout(std::time::Duration::from_secs(1), sent).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::debug!(error = %e, "list_changed not sent"),
            Err(_) => tracing::warn!("a client reads nothing: list_changed not sent to it"),
        }
    }
}
