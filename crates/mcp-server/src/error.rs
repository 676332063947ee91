//! The crate's errors: a tool's failure ([`ToolError`]), a definition refused
//! ([`DefinitionError`]), and a request to the client that failed ([`ClientRequestError`]),
//! with the conversions between them that handlers rely on (`?` on a request to the client in
//! a tool, a prompt or a resource handler).
//!
//! The lowest layer, with `schema`, `bus` and `trace`: it uses only `schema` (the form errors).

use mcp_jsonrpc::CallError;
use mcp_types::{ErrorObject, ProtocolVersion};

use crate::schema::form::{ContentError, ElicitSchemaError};

/// Why a tool call failed.
///
/// `Tool` errors become a result with `isError: true`, which the model sees and can act on;
/// `Protocol` errors become a JSON-RPC error response.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool failed: reported to the model as an `isError` result.
    #[error("{0}")]
    Tool(String),
    /// A protocol-level failure: reported as a JSON-RPC error.
    #[error("{0}")]
    Protocol(ErrorObject),
    /// The call became a task that another server runs (a gateway passing a mounted tool's
    /// task on): the raw result that created it, sent as the call's result as it is (in
    /// 2025-11-25 a `CreateTaskResult`, `{"task": {...}}`; in 2026-07-28 the extension's flat
    /// task with `resultType: "task"`). The server answers its task methods through
    /// [`ServerBuilder::forward_tasks`](crate::ServerBuilder::forward_tasks). Inside a task of
    /// this server it is an internal error.
    #[error("the call became a task run elsewhere")]
    Task(Box<serde_json::Value>),
}

impl ToolError {
    /// A tool failure with a message for the model.
    pub fn new(message: impl std::fmt::Display) -> Self {
        ToolError::Tool(message.to_string())
    }

    /// The -32042 "URL elicitation required" error (`URLElicitationRequiredError`,
    /// 2025-11-25): the call cannot go on until the user has completed these URL-mode
    /// elicitations (each with its `elicitationId`, as
    /// [`UrlElicitation::params`](crate::UrlElicitation::params) builds them); the client
    /// presents them and retries. [`UrlElicitation::required`](crate::UrlElicitation::required)
    /// is the shorthand for one.
    pub fn url_elicitation_required(
        message: impl Into<String>,
        elicitations: Vec<mcp_types::ElicitRequestURLParams>,
    ) -> Self {
        ToolError::Protocol(ErrorObject::url_elicitation_required(message, elicitations))
    }
}

impl From<String> for ToolError {
    fn from(s: String) -> Self {
        ToolError::Tool(s)
    }
}

impl From<&str> for ToolError {
    fn from(s: &str) -> Self {
        ToolError::Tool(s.to_owned())
    }
}

impl From<ErrorObject> for ToolError {
    fn from(e: ErrorObject) -> Self {
        ToolError::Protocol(e)
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(e: serde_json::Error) -> Self {
        ToolError::Tool(e.to_string())
    }
}
/// Why a tool definition was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    /// The name breaks the 2025-11-25 naming rule.
    #[error("invalid tool name `{name}`: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The input or output schema is not an object schema, or does not compile.
    #[error("invalid {which} of tool `{name}`: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// `inputSchema` or `outputSchema`.
        which: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A resource's URI starts with no scheme such as `file:` (often: its name and URI were
    /// given the wrong way round).
    #[error(
        "invalid URI `{uri}` of resource `{name}`: it starts with no scheme such as `file:` (are the name and URI swapped?)"
    )]
    InvalidUri {
        /// The resource's name.
        name: String,
        /// The URI.
        uri: String,
    },
    /// An item added at runtime to a server that did not declare its kind's capability.
    #[error(
        "the server does not declare the `{capability}` capability: enable it on its builder to add {capability} at runtime"
    )]
    NotDeclared {
        /// `tools`, `prompts` or `resources`.
        capability: &'static str,
    },
    /// A type the tool elicits ([`ToolDef::elicits`](crate::ToolDef::elicits)) is no elicitation form.
    #[error("tool `{name}` elicits a type that is not a form: {error}")]
    InvalidElicitation {
        /// The tool.
        name: String,
        /// Why the type is not a form.
        #[source]
        error: ElicitSchemaError,
    },
    /// A prompt's arguments cannot be listed: its argument struct is not a struct of named
    /// fields or has a field that is a list or an object, two arguments share a name, or a
    /// completer names no argument.
    #[error("invalid arguments of prompt `{name}`: {reason}")]
    InvalidPromptArguments {
        /// The prompt.
        name: String,
        /// What is wrong with them.
        reason: String,
    },
    /// Two items with the same name (or URI).
    #[error("duplicate {kind} `{name}`")]
    Duplicate {
        /// `tool`, `prompt`, `resource`, `resource template`, `custom request` or
        /// `custom notification`.
        kind: &'static str,
        /// The name, URI or method.
        name: String,
    },
    /// A custom method named as one of the protocol's (see
    /// [`is_reserved_method`](mcp_types::is_reserved_method)): it would shadow it.
    #[error("`{method}` is a method of the protocol: a custom method needs a name of its own (`vendor/method`)")]
    ReservedMethod {
        /// The method.
        method: String,
    },
    /// An extension whose identifier has no prefix (`vendor/name`), which the 2026-07-28
    /// specification requires of extension identifiers.
    #[error("invalid extension identifier `{name}`: it needs a prefix, as in `com.example/{name}`")]
    InvalidExtension {
        /// The identifier.
        name: String,
    },
    /// The skills of [`ServerBuilder::skills_dir`](crate::ServerBuilder::skills_dir) could not
    /// be read, or one breaks the Agent Skills format or the Skills extension's rules.
    #[error("invalid skills: {reason}")]
    InvalidSkills {
        /// What went wrong.
        reason: String,
    },
    /// An MCP App that breaks the extension's rules: a UI resource whose URI is not `ui://`,
    /// or a tool whose `_meta.ui.resourceUri` names no UI resource of the server.
    #[error("invalid MCP App `{name}`: {reason}")]
    InvalidApp {
        /// The UI resource's URI, or the tool's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

/// Why a request to the client failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientRequestError {
    /// The client did not declare the capability the request needs.
    #[error("the client did not declare the `{0}` capability")]
    NotSupported(&'static str),
    /// 2026-07-28: the client's answer is not there yet. The request ends with an
    /// input-required result whatever the handler returns, and the client retries it with the
    /// answer; the handler then runs again and gets it. Propagate this error with `?`.
    #[error("waiting for the client's input (the request is retried with it)")]
    InputRequired,
    /// 2026-07-28: the client's answer does not decode as the expected result.
    #[error("invalid input response: {0}")]
    InvalidInput(String),
    /// 2026-07-28: the request being served cannot ask the client for input (`sampling`,
    /// `elicitation`, `roots`). The revision has no requests from server to client, and only
    /// `tools/call`, `prompts/get` and `resources/read` may answer with an input-required
    /// result; a completion handler, say, cannot ask.
    #[error(
        "cannot ask the client for `{0}` while serving this request: in protocol revision 2026-07-28 only \
         tools/call, prompts/get and resources/read can ask the client for input"
    )]
    NotInThisRequest(&'static str),
    /// 2026-07-28 has no requests from server to client (a server asks for input within its
    /// results): a custom request cannot be sent to a client of that revision.
    #[error("protocol revision {version} has no requests from server to client: `{method}` cannot be sent")]
    NoRequestsInRevision {
        /// The request's method.
        method: String,
        /// The request's revision.
        version: ProtocolVersion,
    },
    /// The call failed (the client's error, a timeout, the connection closed, ...).
    #[error(transparent)]
    Call(#[from] CallError),
    /// The session's protocol revision does not have this (elicitation before 2025-06-18,
    /// URL-mode elicitation before 2025-11-25).
    #[error("{what} does not exist in protocol revision {version}")]
    NotInRevision {
        /// What was asked for.
        what: &'static str,
        /// The revision in use.
        version: ProtocolVersion,
    },
    /// The type given to [`Context::elicit`](crate::Context::elicit) is not a form the revision can express.
    #[error(transparent)]
    Form(#[from] ElicitSchemaError),
    /// The content of an accepted elicitation does not match the requested schema, or does
    /// not decode into the type asked for.
    #[error("invalid elicitation content: {0}")]
    InvalidContent(ContentError),
}

impl From<ClientRequestError> for ToolError {
    /// A missing capability or an invalid input answer is a protocol error (-32021, -32602);
    /// anything else fails the tool.
    fn from(e: ClientRequestError) -> Self {
        match e {
            ClientRequestError::NotSupported(capability) => {
                ToolError::Protocol(ErrorObject::missing_required_client_capability(capability))
            }
            ClientRequestError::InvalidInput(message) => ToolError::Protocol(ErrorObject::invalid_params(message)),
            other => ToolError::Tool(other.to_string()),
        }
    }
}

impl From<ClientRequestError> for ErrorObject {
    /// For prompt, resource and completion handlers, which answer JSON-RPC errors: a missing
    /// capability is -32021, an invalid input answer -32602, the rest an internal error.
    fn from(e: ClientRequestError) -> Self {
        match ToolError::from(e) {
            ToolError::Protocol(error) => error,
            other => ErrorObject::internal_error(other),
        }
    }
}
