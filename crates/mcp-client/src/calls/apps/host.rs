//! The host's side of the view protocol (JSON-RPC 2.0 over `postMessage`): what a view sends,
//! read into [`FromView`], and what the host sends it, written as JSON
//! ([`notification`], [`request`], [`response`], [`error`]). No I/O: the host carries the
//! values over its webview's message channel, and answers the view's `tools/call` and
//! `resources/read` through its [`Client`](crate::Client) (see
//! [`Client::call_tool_for_app`](crate::Client::call_tool_for_app)).
//!
//! ```
//! use mcp_client::apps::host::{self, FromView};
//! use mcp_client::apps::view::{self, HostCapabilities, HostContext, InitializeResult};
//! use mcp_types::Implementation;
//! use serde_json::json;
//!
//! let first = json!({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {
//!     "appInfo": {"name": "My UI", "version": "1.0.0"}, "appCapabilities": {}, "protocolVersion": "2026-01-26"}});
//! let FromView::Initialize { id, .. } = host::parse(&first).unwrap() else { panic!() };
//! let answer = host::response::<view::Initialize>(&id, &InitializeResult {
//!     protocol_version: view::PROTOCOL_VERSION.into(),
//!     host_info: Implementation::new("my-host", "1.0"),
//!     host_capabilities: HostCapabilities::default(),
//!     host_context: HostContext { theme: Some("dark".into()), ..Default::default() },
//! });
//! assert_eq!(answer["result"]["hostContext"]["theme"], "dark");
//! // After the view's `ui/notifications/initialized`: its tool's input, then the result.
//! let input = host::notification::<view::ToolInput>(&view::ToolInputParams { arguments: None });
//! assert_eq!(input["method"], "ui/notifications/tool-input");
//! ```

use mcp_types::apps::view::{
    self, DisplayModeParams, InitializeParams, MessageParams, OpenLinkParams, SizeChangedParams,
    UpdateModelContextParams,
};
use mcp_types::{
    CallToolRequestParams, CustomNotification, CustomRequest, ErrorCode, ErrorObject, JsonObject,
    LoggingMessageNotificationParams, ReadResourceRequestParams, RequestId,
};
use serde_json::{Value, json};

/// A message a view sent, read. Requests carry the id to answer with.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FromView {
    /// `ui/initialize`: answer with a [`view::InitializeResult`].
    Initialize {
        /// The request's id.
        id: RequestId,
        /// Its params.
        params: InitializeParams,
    },
    /// `ui/notifications/initialized`: the host may now send the tool's input and result.
    Initialized,
    /// `tools/call`: the view calls a tool of its server, through the host.
    CallTool {
        /// The request's id.
        id: RequestId,
        /// Its params.
        params: CallToolRequestParams,
    },
    /// `resources/read`: the view reads a resource of its server, through the host.
    ReadResource {
        /// The request's id.
        id: RequestId,
        /// Its params.
        params: ReadResourceRequestParams,
    },
    /// `ui/open-link`.
    OpenLink {
        /// The request's id.
        id: RequestId,
        /// Its params.
        params: OpenLinkParams,
    },
    /// `ui/message`.
    Message {
        /// The request's id.
        id: RequestId,
        /// Its params.
        params: MessageParams,
    },
    /// `ui/update-model-context`.
    UpdateModelContext {
        /// The request's id.
        id: RequestId,
        /// Its params.
        params: UpdateModelContextParams,
    },
    /// `ui/request-display-mode`.
    RequestDisplayMode {
        /// The request's id.
        id: RequestId,
        /// Its params.
        params: DisplayModeParams,
    },
    /// `ping`: answer with `{}`.
    Ping {
        /// The request's id.
        id: RequestId,
    },
    /// `ui/notifications/size-changed`.
    SizeChanged(SizeChangedParams),
    /// `notifications/message`: a log message of the view.
    Log(LoggingMessageNotificationParams),
    /// `ui/notifications/request-teardown`.
    RequestTeardown,
    /// The view's answer to a request of the host's (`ui/resource-teardown`).
    Response {
        /// The id of the host's request.
        id: RequestId,
        /// Its result, or the view's error.
        outcome: Result<Value, ErrorObject>,
    },
    /// A method this module does not know: a request (with an id) the host should answer
    /// with -32601, or a notification it may ignore.
    Other {
        /// The request's id; `None` for a notification.
        id: Option<RequestId>,
        /// The method.
        method: String,
        /// Its params.
        params: Option<Value>,
    },
}

/// Why a view's message could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ViewError {
    /// Not a JSON-RPC 2.0 message.
    #[error("not a JSON-RPC 2.0 message: {0}")]
    NotJsonRpc(String),
    /// The params of a known method do not decode.
    #[error("invalid params of {method}: {reason}")]
    InvalidParams {
        /// The request's id; `None` for a notification.
        id: Option<RequestId>,
        /// The method.
        method: String,
        /// Why they do not decode.
        reason: String,
    },
}

impl ViewError {
    /// The error response to send the view (-32602 for a request's invalid params), if the
    /// message was a request; a notification is not answered.
    pub fn response(&self) -> Option<Value> {
        match self {
            ViewError::InvalidParams { id: Some(id), reason, .. } => {
                Some(error(id, &ErrorObject::new(ErrorCode::INVALID_PARAMS.code(), reason.clone())))
            }
            _ => None,
        }
    }
}

/// Reads a message a view sent.
pub fn parse(message: &Value) -> Result<FromView, ViewError> {
    let object = message.as_object().ok_or_else(|| ViewError::NotJsonRpc("not an object".into()))?;
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(ViewError::NotJsonRpc("no `\"jsonrpc\": \"2.0\"`".into()));
    }
    let id = match object.get("id") {
        None | Some(Value::Null) => None,
        Some(id) => Some(
            serde_json::from_value::<RequestId>(id.clone())
                .map_err(|_| ViewError::NotJsonRpc(format!("the id {id} is neither a string nor an integer")))?,
        ),
    };
    let Some(method) = object.get("method") else {
        let id = id.ok_or_else(|| ViewError::NotJsonRpc("neither a method nor an id".into()))?;
        let outcome = match (object.get("result"), object.get("error")) {
            (Some(result), None) => Ok(result.clone()),
            (None, Some(e)) => Err(serde_json::from_value(e.clone())
                .map_err(|e| ViewError::NotJsonRpc(format!("an error that is not a JSON-RPC error: {e}")))?),
            _ => return Err(ViewError::NotJsonRpc("a response needs a result or an error".into())),
        };
        return Ok(FromView::Response { id, outcome });
    };
    let method = method.as_str().ok_or_else(|| ViewError::NotJsonRpc("the method is not a string".into()))?;
    let params = object.get("params");
    let invalid = |reason: String| ViewError::InvalidParams { id: id.clone(), method: method.to_owned(), reason };
    // The params of `method`, absent ones read as `{}`.
    fn decode<T: serde::de::DeserializeOwned>(params: Option<&Value>) -> Result<T, String> {
        let params = params.cloned().unwrap_or_else(|| Value::Object(JsonObject::new()));
        serde_json::from_value(params).map_err(|e| e.to_string())
    }
    let request = |id: &Option<RequestId>| id.clone().ok_or_else(|| invalid("a request needs an id".into()));
    Ok(match method {
        m if m == view::Initialize::METHOD => {
            FromView::Initialize { id: request(&id)?, params: decode(params).map_err(invalid)? }
        }
        m if m == view::Initialized::METHOD => FromView::Initialized,
        "tools/call" => FromView::CallTool { id: request(&id)?, params: decode(params).map_err(invalid)? },
        "resources/read" => FromView::ReadResource { id: request(&id)?, params: decode(params).map_err(invalid)? },
        m if m == view::OpenLink::METHOD => {
            FromView::OpenLink { id: request(&id)?, params: decode(params).map_err(invalid)? }
        }
        m if m == view::Message::METHOD => {
            FromView::Message { id: request(&id)?, params: decode(params).map_err(invalid)? }
        }
        m if m == view::UpdateModelContext::METHOD => {
            FromView::UpdateModelContext { id: request(&id)?, params: decode(params).map_err(invalid)? }
        }
        m if m == view::RequestDisplayMode::METHOD => {
            FromView::RequestDisplayMode { id: request(&id)?, params: decode(params).map_err(invalid)? }
        }
        "ping" => FromView::Ping { id: request(&id)? },
        m if m == view::SizeChanged::METHOD => FromView::SizeChanged(decode(params).map_err(invalid)?),
        "notifications/message" => FromView::Log(decode(params).map_err(invalid)?),
        m if m == view::RequestTeardown::METHOD => FromView::RequestTeardown,
        _ => FromView::Other { id, method: method.to_owned(), params: params.cloned() },
    })
}

/// The notification `N` with `params`, to send the view (`ui/notifications/tool-input`,
/// `tool-result`, `host-context-changed`, ...).
pub fn notification<N: CustomNotification>(params: &N::Params) -> Value {
    json!({"jsonrpc": "2.0", "method": N::METHOD, "params": params})
}

/// The request `R` with `params` and `id`, to send the view (`ui/resource-teardown`); its
/// answer comes back as [`FromView::Response`].
pub fn request<R: CustomRequest>(id: &RequestId, params: &R::Params) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": R::METHOD, "params": params})
}

/// The answer to the view's request `R` of `id`.
pub fn response<R: CustomRequest>(id: &RequestId, result: &R::Result) -> Value {
    result_of(id, result)
}

/// The answer to a view's request of `id` with any result (the server's `tools/call` or
/// `resources/read` result passed on, `{}` for a `ping`).
pub fn result_of(id: &RequestId, result: &impl serde::Serialize) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// The error answer to the view's request of `id`.
pub fn error(id: &RequestId, error: &ErrorObject) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}
