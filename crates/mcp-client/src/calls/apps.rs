//! MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`) from the client, for a host that renders
//! a server's views: which tools have one ([`UiTool`]), the view read and checked
//! ([`Client::read_ui_resource`]), a view's `tools/call` passed on only for tools it may call
//! ([`Client::call_tool_for_app`]), and in [`host`] the view protocol's messages, read and
//! written as the JSON a webview's `postMessage` carries. Declare the extension with
//! [`ClientBuilder::apps`](crate::ClientBuilder::apps).
//!
//! ```no_run
//! # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::apps::AppError> {
//! use mcp_client::apps::UiTool as _;
//!
//! let tools = client.list_all_tools().await?;
//! for tool in tools.iter().filter(|t| t.visible_to_model()) {
//!     if let Some(uri) = tool.ui_resource_uri() {
//!         let view = client.read_ui_resource(&uri).await?; // text/html;profile=mcp-app
//!         println!("{} renders in {} ({} bytes)", tool.name, uri, view.html.len());
//!     }
//! }
//! # Ok(()) }
//! ```

use base64::Engine as _;
use mcp_types::{AnyResourceContents, CallToolRequestParams, CallToolResult, Tool};

use crate::client::Client;
use crate::error::ClientError;

pub use mcp_types::apps::{
    EXTENSION, MIME_TYPE, SCHEME, UiClientCapabilities, UiCsp, UiPermissions, UiResourceMeta, UiTool, UiToolMeta,
    Visibility, callable_by_app, view, visible_to_model,
};

pub mod host;

/// Why a view could not be read, or a view's call was not passed on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// The request failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The URI is not a `ui://` one.
    #[error("{uri} is not a ui:// resource")]
    NotUi {
        /// The URI.
        uri: String,
    },
    /// The resource read is not an MCP App view: no content for the URI, a type other than
    /// `text/html;profile=mcp-app`, or a blob that is not base64 of UTF-8.
    #[error("{uri} is not an MCP App view: {reason}")]
    NotAView {
        /// The URI.
        uri: String,
        /// What is wrong.
        reason: String,
    },
    /// A view asked to call a tool whose `_meta.ui.visibility` leaves out `"app"`, or a tool
    /// of another name than the one given: the host must refuse it.
    #[error("tool `{tool}` is not callable by an app")]
    NotForApp {
        /// The tool asked for.
        tool: String,
    },
}

/// A view read: its HTML and the settings its host applies.
#[derive(Debug, Clone, PartialEq)]
pub struct UiView {
    /// Its `ui://` URI.
    pub uri: String,
    /// The HTML document.
    pub html: String,
    /// The content's `_meta.ui`, or the listed resource's where the content has none (as the
    /// specification lets hosts fall back to); empty when neither has one.
    pub meta: UiResourceMeta,
}

impl Client {
    /// Reads the view at `uri` (`resources/read`) and checks it is one: a `ui://` URI, a
    /// content for it of type `text/html;profile=mcp-app`, as text or base64 of UTF-8. Its
    /// `_meta.ui` (CSP, permissions, domain, border) is the content's.
    pub async fn read_ui_resource(&self, uri: &str) -> Result<UiView, AppError> {
        if !uri.starts_with(SCHEME) {
            return Err(AppError::NotUi { uri: uri.to_owned() });
        }
        let result = self.read_resource(uri).await?;
        let not_a_view = |reason: String| AppError::NotAView { uri: uri.to_owned(), reason };
        let content = result
            .contents
            .into_iter()
            .find(|c| content_uri(c) == uri)
            .ok_or_else(|| not_a_view("no content for its URI".into()))?;
        let (mime, meta, html) = match content {
            AnyResourceContents::TextResourceContents(t) => (t.mime_type, t.meta, t.text),
            AnyResourceContents::BlobResourceContents(b) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(&b.blob)
                    .map_err(|e| not_a_view(format!("its blob is not base64: {e}")))?;
                let html = String::from_utf8(bytes).map_err(|_| not_a_view("its blob is not UTF-8".into()))?;
                (b.mime_type, b.meta, html)
            }
        };
        if mime.as_deref() != Some(MIME_TYPE) {
            return Err(not_a_view(format!("its type is {mime:?}, not {MIME_TYPE:?}")));
        }
        let meta = meta.and_then(|m| UiResourceMeta::from_meta(&m.extra)).unwrap_or_default();
        Ok(UiView { uri: uri.to_owned(), html, meta })
    }

    /// Calls `tool` for a view (its `tools/call`, passed on by the host) with `params`, if the
    /// view may: `params` names `tool`, and the tool's `_meta.ui.visibility` has `"app"` (or
    /// none). Anything else is [`AppError::NotForApp`], not sent. `tool` is the server's
    /// listing of it (a view may call only tools of the server that served it).
    pub async fn call_tool_for_app(
        &self,
        tool: &Tool,
        params: CallToolRequestParams,
    ) -> Result<CallToolResult, AppError> {
        if params.name != tool.name || !callable_by_app(tool) {
            return Err(AppError::NotForApp { tool: params.name });
        }
        Ok(self.call_tool_with(params, Default::default()).await?)
    }
}

fn content_uri(c: &AnyResourceContents) -> &str {
    match c {
        AnyResourceContents::TextResourceContents(t) => &t.uri,
        AnyResourceContents::BlobResourceContents(b) => &b.uri,
    }
}
