//! Why a client operation failed: [`ClientError`], and [`Violation`] for a server that breaks
//! the protocol.

use std::time::Duration;

use mcp_jsonrpc::{CallError, TransportError};
use mcp_transport_stdio::ChildError;
use mcp_types::{ErrorObject, ProtocolVersion};

/// Why a client operation failed. Each kind can be told apart and keeps the server's message;
/// a failure with a cause (the transport's error, a decoding error, the child process's)
/// returns it from [`source`](std::error::Error::source) rather than repeating it in its own
/// message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    #[error("server error: {0}")]
    Remote(ErrorObject),
    /// No answer in time (a cancellation was sent).
    #[error("request `{method}` timed out after {elapsed:?}")]
    Timeout {
        /// The method called.
        method: String,
        /// How long the call waited.
        elapsed: Duration,
    },
    /// The call was cancelled by the caller, or the 2026-07-28 task waited for was cancelled
    /// (`tasks/cancel`: the extension gives it neither result nor error).
    #[error("request cancelled")]
    Cancelled,
    /// The connection is closed. A child server's exit status and the tail of its stderr,
    /// when it died while connecting.
    #[error("connection closed{}", .0.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Closed(Option<String>),
    /// The server's answer does not decode as the expected result.
    #[error("cannot decode the answer to `{method}`")]
    Decode {
        /// The method called (or the server's input request being answered).
        method: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// The request's params cannot be encoded (as a JSON object).
    #[error("cannot encode the request's params")]
    Encode(#[source] serde_json::Error),
    /// The server answered in a way the protocol does not allow.
    #[error("the server broke the protocol in `{method}`: {violation}")]
    Protocol {
        /// The method called.
        method: String,
        /// What the server did.
        violation: Violation,
    },
    /// The server did not declare the capability the call needs.
    #[error("the server does not support {0}")]
    NotSupported(&'static str),
    /// The server answered `initialize` (or `server/discover`) with no revision this client
    /// speaks (the revisions it named).
    #[error("the server speaks protocol revision `{0}`, which this client does not support")]
    UnsupportedVersion(String),
    /// The arguments do not match the tool's input schema (checked before sending).
    #[error("invalid arguments for tool `{tool}`: {detail}")]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// The schema violations.
        detail: String,
    },
    /// The tool's `structuredContent` does not match its output schema.
    #[error("structured content of tool `{tool}` does not match its output schema: {detail}")]
    InvalidStructuredContent {
        /// The tool.
        tool: String,
        /// The schema violations.
        detail: String,
    },
    /// The server process could not be started.
    #[error(transparent)]
    Spawn(#[from] ChildError),
    /// The transport failed: it could not be set up (an invalid URL, an HTTP client that
    /// cannot be built), or it could not deliver a request or its answer (over HTTP: an error
    /// status, a broken connection, an expired session). Over HTTP the error is an
    /// `mcp_transport_http::client::HttpRequestError` (or `HttpClientError` at setup):
    /// [`ClientError::http_error`] reaches it.
    #[error(transparent)]
    Transport(TransportError),
    /// A handler of the [`ClientBuilder`](crate::ClientBuilder) for a custom method named as
    /// one of the protocol's (see [`is_reserved_method`](mcp_types::is_reserved_method)).
    #[error("`{0}` is a method of the protocol: a custom method needs a name of its own (`vendor/method`)")]
    ReservedMethod(String),
    /// The call does not exist in the connection's protocol revision (`ping`,
    /// `logging/setLevel`, `resources/subscribe`, `initialize` in 2026-07-28; `server/discover`
    /// and `subscriptions/listen` before it).
    #[error("`{what}` does not exist in protocol revision {version}")]
    NotInRevision {
        /// The method or feature.
        what: String,
        /// The connection's revision.
        version: ProtocolVersion,
    },
    /// The server kept asking for input (2026-07-28 `input_required` results) beyond
    /// [`ClientBuilder::max_input_rounds`](crate::ClientBuilder::max_input_rounds).
    #[error("`{method}` still needed input after {rounds} rounds")]
    TooManyRounds {
        /// The method called.
        method: String,
        /// The rounds of input answered.
        rounds: usize,
    },
    /// A server's input request (2026-07-28 `input_required`) could not be answered: no
    /// handler for it, or the handler refused.
    #[error("cannot answer the server's `{method}` request: {error}")]
    Input {
        /// The requested method (`elicitation/create`, `sampling/createMessage`,
        /// `roots/list`).
        method: String,
        /// Why.
        error: ErrorObject,
    },
    /// The tool was left out of `tools/list` because its definition is invalid (over
    /// Streamable HTTP in 2026-07-28: its `x-mcp-header` declarations break the rules).
    #[error("tool `{tool}` is not usable: {reason}")]
    RejectedTool {
        /// The tool.
        tool: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A failure of the JSON-RPC engine of a kind added to [`CallError`] after this client
    /// was written.
    #[error(transparent)]
    Engine(CallError),
}

/// What a server did that the protocol does not allow ([`ClientError::Protocol`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Violation {
    /// A `list_all_*` helper was handed a cursor it had followed before: the pages loop.
    #[error("the cursor `{0}` came twice: the pages loop")]
    RepeatedCursor(String),
    /// A `list_all_*` helper followed this many pages without reaching the end.
    #[error("the pages did not end after {0}")]
    EndlessPages(usize),
    /// A 2026-07-28 result of a type the client does not know for the method (`resultType`).
    #[error("unknown result type `{0}`")]
    UnknownResultType(String),
    /// An `input_required` result asked for more input requests than the client answers.
    #[error("{count} input requests in one result; at most {limit} are answered")]
    TooManyInputRequests {
        /// The requests asked for.
        count: usize,
        /// The most the client answers.
        limit: usize,
    },
    /// A member of an `input_required` result has the wrong JSON type (`inputRequests` not an
    /// object, `requestState` not a string).
    #[error("`{0}` has the wrong type")]
    MalformedInputRequired(&'static str),
    /// The server ended a `subscriptions/listen` request before acknowledging it.
    #[error("the subscription ended before it was acknowledged")]
    UnacknowledgedSubscription,
    /// A task of the 2026-07-28 tasks extension lacks a member or has it of the wrong type.
    #[error("the task's `{0}` is missing or malformed")]
    MalformedTask(&'static str),
}

impl ClientError {
    /// Whether the server ended the HTTP session (404 to a request with `Mcp-Session-Id`).
    /// Unless [`ClientBuilder::reinitialize_on_session_expiry`](crate::ClientBuilder::reinitialize_on_session_expiry)
    /// turned it off, the client has already tried a new session and the call once more.
    pub fn is_session_expired(&self) -> bool {
        matches!(self, ClientError::Transport(e) if session_expired(e))
    }

    /// The HTTP transport's account of a failed request, for [`ClientError::Transport`]: its
    /// [`kind`](crate::http::HttpRequestError::kind) and
    /// [`status`](crate::http::HttpRequestError::status).
    #[cfg(feature = "http")]
    pub fn http_error(&self) -> Option<&crate::http::HttpRequestError> {
        match self {
            ClientError::Transport(e) => e.downcast_ref(),
            _ => None,
        }
    }

    /// For the server's -32042 error (`URLElicitationRequiredError`, 2025-11-25): the URL-mode
    /// elicitations it requires before the request can succeed (each with its
    /// `elicitationId`), decoded. Present them to the user as a URL elicitation request would
    /// be, wait for [`ServerEvent::ElicitationComplete`](crate::ServerEvent::ElicitationComplete)
    /// (or the user), and retry. `None` for any other error.
    ///
    /// ```no_run
    /// # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::ClientError> {
    /// match client.call_tool("list_files", serde_json::json!({})).await {
    ///     Err(e) if e.url_elicitation_required().is_some() => {
    ///         for needed in e.url_elicitation_required().unwrap_or_default() {
    ///             println!("{}: open {}", needed.message, needed.url);
    ///         }
    ///     }
    ///     other => { other?; }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn url_elicitation_required(&self) -> Option<Vec<mcp_types::ElicitRequestURLParams>> {
        match self {
            ClientError::Remote(e) => e.url_elicitations(),
            _ => None,
        }
    }

    /// A [`ClientError::Protocol`] of `method`.
    pub(crate) fn protocol(method: &str, violation: Violation) -> Self {
        ClientError::Protocol { method: method.to_owned(), violation }
    }

    /// A [`ClientError::Decode`] of `method`.
    pub(crate) fn decode(method: &str, source: serde_json::Error) -> Self {
        ClientError::Decode { method: method.to_owned(), source }
    }
}

/// Whether the transport says the session the request was sent in is over.
#[cfg(feature = "http")]
pub(crate) fn session_expired(e: &TransportError) -> bool {
    e.downcast_ref::<crate::http::HttpRequestError>().is_some_and(|e| e.is_session_expired())
}

#[cfg(not(feature = "http"))]
pub(crate) fn session_expired(_: &TransportError) -> bool {
    false
}

impl From<CallError> for ClientError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Remote(e) => ClientError::Remote(e),
            CallError::Timeout { method, elapsed } => ClientError::Timeout { method, elapsed },
            CallError::Cancelled => ClientError::Cancelled,
            CallError::Closed => ClientError::Closed(None),
            CallError::Transport(e) => ClientError::Transport(e),
            CallError::Decode { method, source } => ClientError::Decode { method, source },
            CallError::Encode(source) => ClientError::Encode(source),
            CallError::NotInRevision { method, version } => {
                ClientError::NotInRevision { what: method.to_owned(), version }
            }
            other => ClientError::Engine(other),
        }
    }
}
