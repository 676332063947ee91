//! Header names and media types of the Streamable HTTP transport.

/// The session id the server issues at initialize; the client sends it on every request.
pub const MCP_SESSION_ID: &str = "mcp-session-id";
/// The negotiated protocol revision, sent by the client on every request after initialize.
pub const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// The id of the last SSE event a client saw, sent when it resumes a stream.
pub const LAST_EVENT_ID: &str = "last-event-id";
/// JSON bodies.
pub const APPLICATION_JSON: &str = "application/json";
/// Server-sent events.
pub const TEXT_EVENT_STREAM: &str = "text/event-stream";
