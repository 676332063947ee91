//! The scopes of tools, prompts and resources (feature `auth`): asked by the HTTP endpoint of
//! every request before it is served
//! ([`SessionFactory::authorize`](mcp_transport_http::server::SessionFactory::authorize)), so
//! that a token without them gets 403 `insufficient_scope`, on which clients step up.

use mcp_jsonrpc::message::Request;
use mcp_jsonrpc::raw as json;
use mcp_transport_http::server::auth::{InsufficientScope, Principal};
use mcp_types::{CallToolRequest, GetPromptRequest, ReadResourceRequest, Request as _};

use crate::serve::shared::ServerShared;

/// Whether `principal` has the scopes of what `request` names (a tool, a prompt, a resource).
/// Only the name is read of the params, through the request's index.
pub(crate) fn authorize(
    shared: &ServerShared,
    request: &Request,
    principal: &Principal,
) -> Result<(), InsufficientScope> {
    let field = match request.method.as_str() {
        CallToolRequest::METHOD | GetPromptRequest::METHOD => "name",
        ReadResourceRequest::METHOD => "uri",
        _ => return Ok(()),
    };
    // The items out of the token's scopes are hidden instead (see `Call::sees`).
    if shared.hide_out_of_scope {
        return Ok(());
    }
    let Some(name) = request.param(field).and_then(json::str_text) else { return Ok(()) };
    let registry = shared.registry();
    let scopes = match request.method.as_str() {
        CallToolRequest::METHOD => registry.tool(&name).map(|t| t.scopes.as_slice()),
        GetPromptRequest::METHOD => registry.prompt(&name).map(|p| p.scopes.as_slice()),
        _ => match registry.resource(&name) {
            Some(resource) => Some(resource.scopes.as_slice()),
            // The template that serves the URI (the first that matches, as in dispatch),
            // matched only when some template asks for scopes.
            None if registry.templates.iter().any(|t| !t.scopes.is_empty()) => {
                registry.templates.iter().find(|t| t.pattern.matches(&name).is_some()).map(|t| t.scopes.as_slice())
            }
            None => None,
        },
    };
    match scopes {
        Some(scopes) if !principal.missing_scopes(scopes).is_empty() => {
            Err(InsufficientScope { scopes: scopes.to_vec() })
        }
        _ => Ok(()),
    }
}
