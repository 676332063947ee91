//! Methods as types: every request and notification is a type carrying its method name,
//! its params and result types, its direction and the revisions that have it.
//!
//! ```
//! use mcp_types::{CallToolRequest, Direction, ProtocolVersion, Request};
//!
//! assert_eq!(CallToolRequest::METHOD, "tools/call");
//! assert_eq!(CallToolRequest::DIRECTION, Direction::ClientToServer);
//! assert!(CallToolRequest::REVISIONS.contains(ProtocolVersion::V2024_11_05));
//! // `<CallToolRequest as Request>::Params` is `CallToolRequestParams`,
//! // `<CallToolRequest as Request>::Result` is `CallToolResult`.
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::generated::types::ProgressToken;
use crate::version::Revisions;
use crate::wire::WireSerialize;

/// Who sends a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Sent by the client to the server.
    ClientToServer,
    /// Sent by the server to the client.
    ServerToClient,
    /// Sent either way (cancellation, progress, pings, tasks).
    Both,
}

impl Direction {
    /// Whether a client may send this message.
    pub const fn from_client(self) -> bool {
        matches!(self, Direction::ClientToServer | Direction::Both)
    }
    /// Whether a server may send this message.
    pub const fn from_server(self) -> bool {
        matches!(self, Direction::ServerToClient | Direction::Both)
    }
}

/// A JSON-RPC request of MCP. Implemented by the request types (`CallToolRequest`, ...), which
/// are also the typed envelopes of their messages.
pub trait Request {
    /// The method name, e.g. `"tools/call"`.
    const METHOD: &'static str;
    /// Who sends it.
    const DIRECTION: Direction;
    /// The revisions that have it.
    const REVISIONS: Revisions;
    /// The `params` member.
    type Params: ParamsMeta + Serialize + WireSerialize + DeserializeOwned + Send + 'static;
    /// The `result` member of a successful response.
    type Result: Serialize + WireSerialize + DeserializeOwned + Send + 'static;
}

/// The params of a request: where its progress token lives (`_meta.progressToken`).
pub trait ParamsMeta {
    /// The progress token the sender asked progress notifications for.
    fn progress_token(&self) -> Option<&ProgressToken>;
    /// Asks for progress notifications under `token`.
    fn set_progress_token(&mut self, token: ProgressToken);
}

impl ParamsMeta for crate::JsonObject {
    fn progress_token(&self) -> Option<&ProgressToken> {
        None
    }
    fn set_progress_token(&mut self, token: ProgressToken) {
        let meta = self.entry("_meta").or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let serde_json::Value::Object(m) = meta {
            let value = match token {
                ProgressToken::String(s) => serde_json::Value::String(s),
                ProgressToken::Integer(n) => serde_json::Value::from(n),
            };
            m.insert(crate::meta::PROGRESS_TOKEN.to_owned(), value);
        }
    }
}

/// A JSON-RPC notification of MCP.
pub trait Notification {
    /// The method name, e.g. `"notifications/progress"`.
    const METHOD: &'static str;
    /// Who sends it.
    const DIRECTION: Direction;
    /// The revisions that have it.
    const REVISIONS: Revisions;
    /// The `params` member.
    type Params: Serialize + WireSerialize + DeserializeOwned + Send + 'static;
}

/// Whether a method is a request or a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MethodKind {
    /// Expects a response.
    Request,
    /// Expects none.
    Notification,
}

/// A row of [`METHODS`](crate::METHODS): one method of the protocol.
#[derive(Debug, Clone, Copy)]
pub struct MethodInfo {
    /// The method name.
    pub method: &'static str,
    /// The Rust type implementing [`Request`] or [`Notification`] for it.
    pub type_name: &'static str,
    /// Request or notification.
    pub kind: MethodKind,
    /// Who sends it.
    pub direction: Direction,
    /// The revisions that have it.
    pub revisions: Revisions,
}

/// A request outside the protocol: a custom method of your own, or an extension's. Implement
/// it on a marker type to send and serve the request typed (`Client::request::<R>`,
/// `ServerBuilder::request_handler::<R>`), as the protocol's requests are with [`Request`].
///
/// Its params and result are plain serde types: the SDK writes them as they serialize, the
/// same for every revision. Name the method with a prefix of your own (`acme/search`), as the
/// specification asks of extensions: a protocol method cannot be a custom one
/// ([`is_reserved_method`](crate::is_reserved_method)).
///
/// ```
/// use mcp_types::CustomRequest;
/// use serde::{Deserialize, Serialize};
///
/// /// `acme/search`: finds documents.
/// pub enum Search {}
///
/// #[derive(Serialize, Deserialize)]
/// pub struct SearchParams { pub query: String }
///
/// #[derive(Serialize, Deserialize)]
/// pub struct SearchResult { pub hits: Vec<String> }
///
/// impl CustomRequest for Search {
///     const METHOD: &'static str = "acme/search";
///     type Params = SearchParams;
///     type Result = SearchResult;
/// }
/// assert!(!mcp_types::is_reserved_method(Search::METHOD));
/// ```
pub trait CustomRequest: 'static {
    /// The method name, e.g. `"acme/search"`.
    const METHOD: &'static str;
    /// The `params` member (`()` or an `Option` for a request that may have none).
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The `result` member of a successful response.
    type Result: Serialize + DeserializeOwned + Send + 'static;
}

/// A notification outside the protocol: a custom method of your own, or an extension's (see
/// [`CustomRequest`]).
///
/// ```
/// use mcp_types::CustomNotification;
///
/// /// `acme/indexed`: the index was rebuilt.
/// pub enum Indexed {}
///
/// impl CustomNotification for Indexed {
///     const METHOD: &'static str = "acme/indexed";
///     type Params = serde_json::Value;
/// }
/// ```
pub trait CustomNotification: 'static {
    /// The method name, e.g. `"acme/indexed"`.
    const METHOD: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned + Send + 'static;
}
