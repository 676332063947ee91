//! Hand-written additions to the generated table of methods: whether a method name belongs to
//! the protocol.

use crate::generated::methods::METHODS;

/// The methods of the official extensions the SDK serves itself (the 2026-07-28 tasks
/// extension's), beside the protocol's [`METHODS`].
const EXTENSION_METHODS: [&str; 2] = ["tasks/update", "notifications/tasks"];

/// Whether `method` belongs to the protocol (a method of any revision, or of an official
/// extension the SDK serves) or to JSON-RPC itself (`rpc.*`): a custom method cannot take
/// such a name.
///
/// ```
/// assert!(mcp_types::is_reserved_method("tools/call"));
/// assert!(mcp_types::is_reserved_method("rpc.discover"));
/// assert!(!mcp_types::is_reserved_method("acme/search"));
/// ```
pub fn is_reserved_method(method: &str) -> bool {
    method.starts_with("rpc.") || EXTENSION_METHODS.contains(&method) || METHODS.iter().any(|m| m.method == method)
}
