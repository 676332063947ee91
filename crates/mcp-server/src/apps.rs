//! MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`): interactive HTML views a server serves
//! as `ui://` resources (`text/html;profile=mcp-app`) and links to its tools, for hosts that
//! render them in a sandboxed iframe.
//!
//! [`ServerBuilder::app`](crate::ServerBuilder::app) serves a [`UiResource`] (listed by
//! `resources/list`, read by `resources/read` with its `_meta.ui`: CSP, permissions, domain,
//! border) and declares the extension; [`ToolDef::ui`](crate::ToolDef::ui) links a tool to it
//! (`_meta.ui.resourceUri`) and [`ToolDef::ui_visibility`](crate::ToolDef::ui_visibility) says
//! who may use it. A tool asks [`Context::client_supports_apps`](crate::Context::client_supports_apps)
//! to answer a text-only client in text.
//!
//! ```
//! use mcp_server::apps::{UiCsp, UiResource, Visibility};
//! use mcp_server::{Server, ToolDef, ToolError};
//!
//! let view = UiResource::new("ui://clock/view", "clock", "<!DOCTYPE html><html><body>...</body></html>")
//!     .csp(UiCsp { connect_domains: vec!["https://time.example".into()], ..Default::default() })
//!     .prefers_border(true);
//! let now = ToolDef::new("now", serde_json::json!({"type": "object"}), |_args, _ctx| async move {
//!     Ok::<_, ToolError>(mcp_types::CallToolResult::success(vec![mcp_types::ContentBlock::text("12:00")]))
//! })
//! .unwrap()
//! .ui("ui://clock/view");
//! let tick = ToolDef::new("tick", serde_json::json!({"type": "object"}), |_args, _ctx| async move {
//!     Ok::<_, ToolError>(mcp_types::CallToolResult::success(vec![]))
//! })
//! .unwrap()
//! .ui("ui://clock/view")
//! .ui_visibility([Visibility::App]);
//! let server = Server::builder("clock", "1.0").app(view).tool(now).tool(tick).build().unwrap();
//! # let _ = server;
//! ```

use std::sync::Arc;

use mcp_types::{ErrorObject, JsonObject, TextResourceContents};

use crate::def::resource::ResourceDef;
use crate::def::tool::ToolDef;
use crate::error::DefinitionError;

pub use mcp_types::apps::{
    EXTENSION, MIME_TYPE, SCHEME, UiClientCapabilities, UiCsp, UiPermissions, UiResourceMeta, UiToolMeta, Visibility,
};

/// A view of an MCP App: an HTML5 document served at a `ui://` URI with the
/// `text/html;profile=mcp-app` type, and the settings a host applies to its sandbox.
#[derive(Debug, Clone)]
pub struct UiResource {
    uri: String,
    name: String,
    html: Arc<str>,
    title: Option<String>,
    description: Option<String>,
    meta: UiResourceMeta,
}

impl UiResource {
    /// The view at `uri` (which must start with `ui://`), named `name`, of the document `html`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>, html: impl Into<Arc<str>>) -> Self {
        UiResource {
            uri: uri.into(),
            name: name.into(),
            html: html.into(),
            title: None,
            description: None,
            meta: UiResourceMeta::default(),
        }
    }

    /// Its URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The origins the view may reach (`_meta.ui.csp`); without, hosts apply the restrictive
    /// default (no network at all).
    pub fn csp(mut self, csp: UiCsp) -> Self {
        self.meta.csp = Some(csp);
        self
    }

    /// The browser permissions the view asks for (`_meta.ui.permissions`).
    pub fn permissions(mut self, permissions: UiPermissions) -> Self {
        self.meta.permissions = Some(permissions);
        self
    }

    /// A dedicated sandbox origin (`_meta.ui.domain`; its format is the host's).
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.meta.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border and background (`_meta.ui.prefersBorder`).
    pub fn prefers_border(mut self, border: bool) -> Self {
        self.meta.prefers_border = Some(border);
        self
    }

    /// Refuses a URI that is not `ui://`.
    pub(crate) fn check(&self) -> Result<(), DefinitionError> {
        match self.uri.strip_prefix(SCHEME) {
            Some(rest) if !rest.is_empty() => Ok(()),
            _ => Err(DefinitionError::InvalidApp {
                name: self.uri.clone(),
                reason: "its URI must start with `ui://`".into(),
            }),
        }
    }

    /// The resource served: listed with its type and `_meta.ui`, read as one text content
    /// with both.
    pub(crate) fn into_resource_def(self) -> ResourceDef {
        let meta = (!self.meta.is_empty()).then(|| {
            let mut meta = JsonObject::new();
            meta.insert(mcp_types::apps::META_KEY.to_owned(), serde_json::to_value(&self.meta).expect("serializes"));
            mcp_types::MetaObject { extra: meta }
        });
        let html = self.html;
        let content_meta = meta.clone();
        let mut def = ResourceDef::new(self.name, self.uri, move |uri: String, _vars, _ctx| {
            let mut contents = TextResourceContents::new(uri, &*html);
            contents.mime_type = Some(MIME_TYPE.to_owned());
            contents.meta = content_meta.clone();
            async move { Ok::<_, ErrorObject>(vec![contents.into()]) }
        })
        .mime_type(MIME_TYPE);
        if let Some(title) = self.title {
            def = def.title(title);
        }
        if let Some(description) = self.description {
            def = def.description(description);
        }
        match meta {
            Some(meta) => def.meta(meta.extra),
            None => def,
        }
    }
}

/// The settings the server declares under `extensions["io.modelcontextprotocol/ui"]`: the
/// content type of its views.
pub(crate) fn settings() -> JsonObject {
    UiClientCapabilities::html().to_settings()
}

/// Refuses a tool linked to a view the server does not serve (`ui_uris`: the URIs of its UI
/// resources): the specification requires the resource to exist.
pub(crate) fn check_tool(tool: &ToolDef, ui_uris: &[&str]) -> Result<(), DefinitionError> {
    let Some(uri) = UiToolMeta::of(tool.definition()).and_then(|ui| ui.resource_uri) else { return Ok(()) };
    if ui_uris.contains(&uri.as_str()) {
        return Ok(());
    }
    Err(DefinitionError::InvalidApp {
        name: tool.definition().name.clone(),
        reason: format!("its `_meta.ui.resourceUri` `{uri}` is no UI resource of the server (add it with `app`)"),
    })
}
