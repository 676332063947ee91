//! The 2026-07-28 HTTP headers that mirror what a request means (feature `http`): `Mcp-Name`
//! (the tool, prompt or resource a request names) and `Mcp-Param-*` (the tool arguments whose
//! input schema property has `x-mcp-header`). The endpoint checks the headers it can read
//! without knowing tools (`MCP-Protocol-Version`, `Mcp-Method`); it asks the server about
//! these ([`SessionFactory::check_request`](mcp_transport_http::server::SessionFactory::check_request)).
//!
//! Only what the headers are checked against is read of the params, through the request's
//! index (built once, and read again by the server and the handler); a tool without such
//! arguments costs a registry lookup and nothing more.

use axum::http::HeaderMap;
use mcp_jsonrpc::message::Request;
use mcp_jsonrpc::raw::{self as json, Index};
use mcp_transport_http::headers::{MCP_NAME, mirrored_value};
use mcp_transport_http::server::Rejection;
use mcp_types::{CallToolRequest, GetPromptRequest, ReadResourceRequest, Request as _};

use crate::serve::shared::ServerShared;

const TOOLS_CALL: &str = CallToolRequest::METHOD;
const PROMPTS_GET: &str = GetPromptRequest::METHOD;
const RESOURCES_READ: &str = ReadResourceRequest::METHOD;

/// Checks the `Mcp-Name` and `Mcp-Param-*` headers of a 2026-07-28 request against its body.
pub(crate) fn check(shared: &ServerShared, request: &Request, headers: &HeaderMap) -> Result<(), Rejection> {
    let (field, tool) = match request.method.as_str() {
        TOOLS_CALL => ("name", true),
        PROMPTS_GET => ("name", false),
        RESOURCES_READ => ("uri", false),
        // The tasks extension (SEP-2663): the task the request names.
        crate::tasks::GET | crate::tasks::UPDATE | crate::tasks::CANCEL => ("taskId", false),
        _ => return Ok(()),
    };
    let value = request.param(field).and_then(json::str_text);
    let expected = value.as_deref().unwrap_or_default();
    match mirrored_value(headers, MCP_NAME) {
        Some(Ok(name)) if name == expected => {}
        Some(Ok(name)) => {
            let detail = format_args!("Mcp-Name {name:?} but the body's {field} is {expected:?}");
            return Err(Rejection::header_mismatch(detail));
        }
        Some(Err(_)) => return Err(Rejection::header_mismatch("the Mcp-Name header is malformed")),
        None => return Err(Rejection::header_mismatch("the Mcp-Name header is missing")),
    }
    match value {
        Some(name) if tool => check_arguments(shared, &name, request, headers),
        _ => Ok(()),
    }
}

/// The `Mcp-Param-*` headers of a call of `tool` against its arguments.
fn check_arguments(shared: &ServerShared, tool: &str, request: &Request, headers: &HeaderMap) -> Result<(), Rejection> {
    let registry = shared.registry();
    let params = match registry.tool(tool) {
        Some(def) if !def.header_params.is_empty() => &def.header_params,
        _ => return Ok(()),
    };
    // The arguments are indexed only for a tool that mirrors some into headers.
    let arguments = request.param("arguments").and_then(|text| Some((Index::of_valid(text)?, text)));
    let object = arguments.as_ref().map(|(index, text)| index.object(text));
    params.iter().try_for_each(|param| param.check(object, headers))
}
