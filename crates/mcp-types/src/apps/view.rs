//! The view protocol of MCP Apps: JSON-RPC 2.0 between a host and a view (the HTML of a UI
//! resource in a sandboxed iframe or webview) over `postMessage`. The view speaks first
//! (`ui/initialize`, then `ui/notifications/initialized`); the host then sends the tool's input
//! and result; the view may call the server's tools (`tools/call`) and read its resources
//! (`resources/read`) through the host, which proxies them, and asks the host to open links,
//! post messages to the conversation, or resize it.
//!
//! Each method is a marker type implementing [`CustomRequest`] or [`CustomNotification`], with
//! the params and result types of the specification's `spec.types.ts` (members this crate
//! does not name are kept in `extra` where the specification allows them).

use serde::{Deserialize, Serialize};

use crate::{
    CallToolResult, ContentBlock, CustomNotification, CustomRequest, Implementation, JsonObject, RequestId, Tool,
};

use super::{UiCsp, UiPermissions};

/// The revision of the view protocol this crate speaks.
pub const PROTOCOL_VERSION: &str = "2026-01-26";

macro_rules! request {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty, $result:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub enum $name {}
        impl CustomRequest for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
            type Result = $result;
        }
    };
}

macro_rules! notification {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub enum $name {}
        impl CustomNotification for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
        }
    };
}

request!(
    /// `ui/initialize` (view → host): the view's first message.
    Initialize, "ui/initialize", InitializeParams, InitializeResult
);
notification!(
    /// `ui/notifications/initialized` (view → host): the view is ready; the host sends nothing
    /// before it.
    Initialized, "ui/notifications/initialized", JsonObject
);
notification!(
    /// `ui/notifications/tool-input` (host → view): the complete arguments of the tool call.
    ToolInput, "ui/notifications/tool-input", ToolInputParams
);
notification!(
    /// `ui/notifications/tool-input-partial` (host → view): arguments still streaming.
    ToolInputPartial, "ui/notifications/tool-input-partial", ToolInputParams
);
notification!(
    /// `ui/notifications/tool-result` (host → view): the tool's result.
    ToolResult, "ui/notifications/tool-result", CallToolResult
);
notification!(
    /// `ui/notifications/tool-cancelled` (host → view): the tool call was cancelled.
    ToolCancelled, "ui/notifications/tool-cancelled", ToolCancelledParams
);
notification!(
    /// `ui/notifications/size-changed` (view → host): the view's content size.
    SizeChanged, "ui/notifications/size-changed", SizeChangedParams
);
notification!(
    /// `ui/notifications/host-context-changed` (host → view): the fields of the context that
    /// changed.
    HostContextChanged, "ui/notifications/host-context-changed", HostContext
);
notification!(
    /// `ui/notifications/request-teardown` (view → host): the view asks to be closed.
    RequestTeardown, "ui/notifications/request-teardown", JsonObject
);
request!(
    /// `ui/open-link` (view → host): open a URL in the user's browser.
    OpenLink, "ui/open-link", OpenLinkParams, HostActionResult
);
request!(
    /// `ui/message` (view → host): a message for the conversation.
    Message, "ui/message", MessageParams, HostActionResult
);
request!(
    /// `ui/update-model-context` (view → host): context for the model's next turns, replacing
    /// what the view sent before.
    UpdateModelContext, "ui/update-model-context", UpdateModelContextParams, HostActionResult
);
request!(
    /// `ui/request-display-mode` (view → host): inline, fullscreen or picture-in-picture.
    RequestDisplayMode, "ui/request-display-mode", DisplayModeParams, DisplayModeParams
);
request!(
    /// `ui/resource-teardown` (host → view): the view is about to be torn down.
    ResourceTeardown, "ui/resource-teardown", JsonObject, JsonObject
);

/// The params of `ui/initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The view's name and version.
    pub app_info: Implementation,
    /// What the view offers.
    #[serde(default)]
    pub app_capabilities: AppCapabilities,
    /// The view protocol revision it speaks.
    pub protocol_version: String,
}

/// What a view offers (`appCapabilities`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppCapabilities {
    /// The display modes it supports (`"inline"`, `"fullscreen"`, `"pip"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_display_modes: Option<Vec<String>>,
    /// Tools of its own the host may call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Members this crate does not name (`experimental`, ...).
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The result of `ui/initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The view protocol revision the host speaks.
    pub protocol_version: String,
    /// The host's name and version.
    pub host_info: Implementation,
    /// What the host does for the view.
    pub host_capabilities: HostCapabilities,
    /// The host's environment.
    pub host_context: HostContext,
}

/// What a host does for its views (`hostCapabilities`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostCapabilities {
    /// It opens links (`ui/open-link`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_links: Option<JsonObject>,
    /// It proxies `tools/call` to the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_tools: Option<ListChanged>,
    /// It proxies `resources/read` to the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_resources: Option<ListChanged>,
    /// It takes log messages (`notifications/message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// It takes messages for the conversation (`ui/message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<JsonObject>,
    /// It takes context for the model (`ui/update-model-context`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_model_context: Option<JsonObject>,
    /// The sandbox it applied: the permissions and origins it granted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Sandbox>,
    /// Members this crate does not name (`experimental`, `downloadFile`, ...).
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `{ listChanged? }`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChanged {
    /// Whether list changes are forwarded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The sandbox a host applied to a view.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sandbox {
    /// The permissions granted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<UiPermissions>,
    /// The origins allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiCsp>,
}

/// The host's environment as a view sees it (`hostContext`; the params of
/// `ui/notifications/host-context-changed`, where only what changed is set).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostContext {
    /// The tool call that made the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_info: Option<ToolInfo>,
    /// `"light"` or `"dark"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// How the view is shown (`"inline"`, `"fullscreen"`, `"pip"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_mode: Option<String>,
    /// The display modes the host supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_display_modes: Option<Vec<String>>,
    /// The container's size: `width` or `maxWidth`, `height` or `maxHeight`, in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_dimensions: Option<JsonObject>,
    /// The user's language (BCP 47).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// The user's time zone (IANA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// The host application.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// `"web"`, `"desktop"` or `"mobile"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// Members this crate does not name (`styles`, `deviceCapabilities`, `safeAreaInsets`, ...).
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The tool call a view was made for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// The JSON-RPC id of the `tools/call` request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The tool, as listed.
    pub tool: Tool,
}

/// The params of `ui/notifications/tool-input` and `-partial`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolInputParams {
    /// The tool call's arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
}

/// The params of `ui/notifications/tool-cancelled`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCancelledParams {
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The params of `ui/notifications/size-changed`, in CSS pixels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SizeChangedParams {
    /// The content's width.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<f64>,
    /// The content's height.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<f64>,
}

/// The params of `ui/open-link`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenLinkParams {
    /// The URL to open.
    pub url: String,
}

/// The params of `ui/message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageParams {
    /// `"user"`.
    pub role: String,
    /// The message's content blocks.
    #[serde(deserialize_with = "one_or_many")]
    pub content: Vec<ContentBlock>,
}

/// The params of `ui/update-model-context`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateModelContextParams {
    /// Content for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
    /// Structured data for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<JsonObject>,
}

/// The params and result of `ui/request-display-mode`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisplayModeParams {
    /// `"inline"`, `"fullscreen"` or `"pip"`.
    pub mode: String,
}

/// The result of a view's request to its host (`ui/open-link`, `ui/message`,
/// `ui/update-model-context`): empty on success.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostActionResult {
    /// Set when the host refused or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Members this crate does not name.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The content of `ui/message`: an array of blocks (`spec.types.ts`), or the one block the
/// specification's prose shows.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ContentBlock>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        Many(Vec<ContentBlock>),
        One(Box<ContentBlock>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::Many(blocks) => blocks,
        OneOrMany::One(block) => vec![*block],
    })
}
