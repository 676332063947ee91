//! RFC 9728 protected resource metadata: what the server side serves (`server::auth`, feature
//! `auth`) and the client side reads (`client::oauth`, feature `oauth`), one type for both.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// OAuth 2.0 Protected Resource Metadata (RFC 9728): what a client reads to find the
/// authorization servers of an MCP server. On the server side `AuthConfig` builds it and the
/// endpoint serves it; on the client side `OAuthClient` reads it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProtectedResourceMetadata {
    /// The resource identifier: the canonical URI of the MCP server.
    pub resource: String,
    /// The issuers of the authorization servers that grant tokens for this resource.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization_servers: Vec<String>,
    /// Where the resource's own signing keys are, if it has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// The scopes a token for this resource may carry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes_supported: Vec<String>,
    /// How tokens may be sent: `["header"]` (never the query string or the body).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bearer_methods_supported: Vec<String>,
    /// A human-readable name of the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// A page of documentation for developers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_documentation: Option<String>,
    /// A page about how the data the resource gives may be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_policy_uri: Option<String>,
    /// A page of the resource's terms of service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_tos_uri: Option<String>,
    /// Other members (RFC 9728 and its extensions define more).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}
