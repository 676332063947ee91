//! The MCP Apps extension (SEP-1865, `io.modelcontextprotocol/ui`, specification 2026-01-26):
//! interactive HTML views a server offers as `ui://` resources and links to its tools. The
//! metadata a server writes under `_meta.ui` (of a UI resource, of its contents, of a tool),
//! the client's capability, and in [`view`] the messages a host and a view exchange over
//! `postMessage`.

use serde::{Deserialize, Serialize};

use crate::{ClientCapabilities, JsonObject, Tool};

/// The extension's identifier under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The `mimeType` of a UI resource (an HTML5 document).
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme of UI resources.
pub const SCHEME: &str = "ui://";

/// The `_meta` key everything of the extension sits under.
pub const META_KEY: &str = "ui";

/// The deprecated flat `_meta` key of a tool's UI resource (`_meta["ui/resourceUri"]`), read
/// when `_meta.ui.resourceUri` is absent.
pub const DEPRECATED_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// The origins a view may reach (`_meta.ui.csp`); the host builds the view's Content Security
/// Policy from them. Each list empty (the default) is the restrictive default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiCsp {
    /// Origins for fetch, XHR and WebSocket (`connect-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// Origins for scripts, images, styles, fonts and media.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// Origins of nested iframes (`frame-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// Allowed base URIs of the document (`base-uri`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

/// The browser permissions a view asks for (`_meta.ui.permissions`); each one asked for is
/// written as an empty object, as the specification has it. Hosts may refuse them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiPermissions {
    /// The camera.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<JsonObject>,
    /// The microphone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<JsonObject>,
    /// Geolocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<JsonObject>,
    /// Writing to the clipboard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<JsonObject>,
    /// Permissions this crate does not name, kept as they came.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `_meta.ui` of a UI resource and of its contents: security and rendering settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourceMeta {
    /// The origins the view may reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiCsp>,
    /// The browser permissions it asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<UiPermissions>,
    /// A dedicated origin for the view's sandbox (its format is the host's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host should draw a border and background around the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

impl UiResourceMeta {
    /// Whether nothing is set (no `_meta.ui` needs writing).
    pub fn is_empty(&self) -> bool {
        self.csp.is_none() && self.permissions.is_none() && self.domain.is_none() && self.prefers_border.is_none()
    }

    /// Reads the `_meta.ui` of a resource or of its contents (`None`: absent, or not this shape).
    pub fn from_meta(meta: &JsonObject) -> Option<Self> {
        serde_json::from_value(meta.get(META_KEY)?.clone()).ok()
    }
}

/// Who may use a tool (`_meta.ui.visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The model: the host lists the tool to the agent, which may call it.
    Model,
    /// The app: a view of this server may call it through the host.
    App,
}

/// The `_meta.ui` of a tool: the view that renders its results, and who may call it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiToolMeta {
    /// The `ui://` resource that renders the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may use the tool; absent means both the model and the app.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
}

impl UiToolMeta {
    /// Reads a tool's `_meta.ui`, or the deprecated `_meta["ui/resourceUri"]` when that is all
    /// it has; `None` when it has neither.
    pub fn of(tool: &Tool) -> Option<Self> {
        let meta = &tool.meta.as_ref()?.extra;
        if let Some(ui) = meta.get(META_KEY).and_then(|v| serde_json::from_value::<Self>(v.clone()).ok())
            && (ui.resource_uri.is_some() || ui.visibility.is_some())
        {
            return Some(ui);
        }
        let uri = meta.get(DEPRECATED_RESOURCE_URI_KEY)?.as_str()?;
        Some(Self { resource_uri: Some(uri.to_owned()), visibility: None })
    }

    /// Whether `who` may use the tool (the default, no `visibility`, is everyone).
    pub fn visible_to(&self, who: Visibility) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&who))
    }
}

/// Whether the host should list `tool` to the model: a tool whose `_meta.ui.visibility` leaves
/// out `"model"` is for its app only.
pub fn visible_to_model(tool: &Tool) -> bool {
    UiToolMeta::of(tool).is_none_or(|ui| ui.visible_to(Visibility::Model))
}

/// Whether a view may call `tool` (through its host): a tool whose `_meta.ui.visibility` leaves
/// out `"app"` is the model's only.
pub fn callable_by_app(tool: &Tool) -> bool {
    UiToolMeta::of(tool).is_none_or(|ui| ui.visible_to(Visibility::App))
}

/// What a [`Tool`]'s `_meta.ui` says, as methods: `use mcp_types::apps::UiTool as _;`.
pub trait UiTool {
    /// The `ui://` view that renders the tool's results, if it has one.
    fn ui_resource_uri(&self) -> Option<String>;
    /// Whether the host lists it to the model (see [`visible_to_model`]).
    fn visible_to_model(&self) -> bool;
    /// Whether a view may call it (see [`callable_by_app`]).
    fn callable_by_app(&self) -> bool;
}

impl UiTool for Tool {
    fn ui_resource_uri(&self) -> Option<String> {
        UiToolMeta::of(self)?.resource_uri
    }
    fn visible_to_model(&self) -> bool {
        visible_to_model(self)
    }
    fn callable_by_app(&self) -> bool {
        callable_by_app(self)
    }
}

/// The client's settings of the extension (`capabilities.extensions["io.modelcontextprotocol/ui"]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiClientCapabilities {
    /// The content types of views it renders (`text/html;profile=mcp-app`).
    #[serde(default)]
    pub mime_types: Vec<String>,
}

impl UiClientCapabilities {
    /// The settings a host that renders HTML views declares.
    pub fn html() -> Self {
        Self { mime_types: vec![MIME_TYPE.to_owned()] }
    }

    /// The settings as the JSON object declared under `extensions`.
    pub fn to_settings(&self) -> JsonObject {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => JsonObject::new(),
        }
    }

    /// The client's settings, if it declared the extension.
    pub fn of(capabilities: &ClientCapabilities) -> Option<Self> {
        let settings = capabilities.extensions.as_ref()?.get(EXTENSION)?;
        serde_json::from_value(serde_json::Value::Object(settings.extra.clone())).ok()
    }
}

/// Whether a client with `capabilities` renders HTML views: it declared the extension with
/// [`MIME_TYPE`] among its `mimeTypes`.
pub fn supports_html(capabilities: &ClientCapabilities) -> bool {
    let Some(settings) = capabilities.extensions.as_ref().and_then(|e| e.get(EXTENSION)) else { return false };
    settings
        .extra
        .get("mimeTypes")
        .and_then(|m| m.as_array())
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(MIME_TYPE)))
}

pub mod view;
