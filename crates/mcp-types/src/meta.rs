//! The `_meta` keys the specification reserves, as constants: write these, not the strings.
//!
//! The descriptions are the specification's own (2026-07-28, "General fields: `_meta`",
//! unless noted). The typed `_meta` objects ([`RequestMetaObject`](crate::RequestMetaObject),
//! ...) name the same keys in their serde attributes, which must be literals.
//!
//! ```
//! use mcp_types::meta;
//!
//! let request_meta = serde_json::json!({
//!     meta::PROTOCOL_VERSION: "2026-07-28",
//!     meta::CLIENT_CAPABILITIES: {},
//!     meta::PROGRESS_TOKEN: 7,
//! });
//! assert_eq!(request_meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
//! assert_eq!(request_meta["progressToken"], 7);
//! ```

/// `progressToken`: opts the request into progress notifications (every revision). Its value
/// is a string or an integer, unique among the sender's active requests.
pub const PROGRESS_TOKEN: &str = "progressToken";

/// `io.modelcontextprotocol/protocolVersion`: the protocol version for this request
/// (e.g. `"2026-07-28"`). Required on every request of the stateless revision.
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// `io.modelcontextprotocol/clientInfo`: the client's name and version (an `Implementation`).
/// Clients SHOULD include it on every request of the stateless revision.
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// `io.modelcontextprotocol/clientCapabilities`: the client capabilities relevant to this
/// request (`ClientCapabilities`). Required on every request of the stateless revision.
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// `io.modelcontextprotocol/logLevel`: the minimum log level the server should emit for this
/// request (a `LoggingLevel`; stateless revision).
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// `io.modelcontextprotocol/serverInfo`: the server's name and version (an `Implementation`),
/// which servers SHOULD include in every result's `_meta` (stateless revision).
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// `io.modelcontextprotocol/subscriptionId`: correlates a notification with its originating
/// subscription (the `subscriptions/listen` request; stateless revision).
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// `io.modelcontextprotocol/related-task`: associates a message with a task (a
/// `RelatedTaskMetadata`, `{"taskId": ...}`; the tasks of 2025-11-25).
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// `traceparent`: OpenTelemetry trace context propagation, in the W3C Trace Context format.
pub const TRACEPARENT: &str = "traceparent";

/// `tracestate`: OpenTelemetry trace context propagation, in the W3C Trace Context format.
pub const TRACESTATE: &str = "tracestate";

/// `baggage`: OpenTelemetry context propagation, in the W3C Baggage format.
pub const BAGGAGE: &str = "baggage";

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed `_meta` objects (whose serde attributes spell the keys out) agree with the
    /// constants.
    #[test]
    fn typed_meta_objects_use_the_same_keys() {
        let meta = crate::RequestMetaObject {
            progress_token: Some(crate::ProgressToken::Integer(1)),
            protocol_version: Some("2026-07-28".to_owned()),
            client_info: Some(crate::Implementation::new("c", "1")),
            client_capabilities: Some(crate::ClientCapabilities::default()),
            log_level: Some(crate::LoggingLevel::Debug),
            ..Default::default()
        };
        let value = serde_json::to_value(&meta).unwrap_or_default();
        for key in [PROGRESS_TOKEN, PROTOCOL_VERSION, CLIENT_INFO, CLIENT_CAPABILITIES, LOG_LEVEL] {
            assert!(value.get(key).is_some(), "{key} missing from {value}");
        }
        let notification =
            crate::NotificationMetaObject { subscription_id: Some(crate::RequestId::Integer(4)), ..Default::default() };
        assert_eq!(serde_json::to_value(&notification).unwrap_or_default()[SUBSCRIPTION_ID], 4);
        let result =
            crate::ResultMetaObject { server_info: Some(crate::Implementation::new("s", "1")), ..Default::default() };
        assert_eq!(serde_json::to_value(&result).unwrap_or_default()[SERVER_INFO]["name"], "s");
    }
}
