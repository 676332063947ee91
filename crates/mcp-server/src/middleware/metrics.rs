//! Per-tool metrics, through the `metrics` facade (a no-op until a recorder is installed:
//! `mcp-transport-http`'s feature `metrics` installs a Prometheus one and serves `/metrics`).
//!
//! - `mcp_tool_calls_total` (counter, `tool`, `outcome`): `tools/call` requests answered;
//!   `outcome` is `ok`, `tool_error` (a result with `isError`) or `error` (an error response).
//! - `mcp_tool_call_duration_seconds` (histogram, `tool`): from the layer to the reply.
//!
//! The `tool` label is the name of a tool the server has, or `other`: its values are bounded
//! by the server's definitions whatever clients send.

use std::time::Instant;

use futures_util::future::BoxFuture;
use mcp_jsonrpc::Reply;

use super::{McpRequest, MethodKind, Middleware, Next};

/// Tool calls answered, by tool and outcome (counter).
pub const TOOL_CALLS: &str = "mcp_tool_calls_total";
/// The duration of tool calls, by tool (histogram, seconds).
pub const TOOL_CALL_DURATION: &str = "mcp_tool_call_duration_seconds";

/// Records [`TOOL_CALLS`] and [`TOOL_CALL_DURATION`] for each `tools/call`; other requests pass
/// through (the server records every request's count, errors and duration by method already:
/// `mcp_requests_total`, `mcp_request_duration_seconds`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolMetrics {
    _private: (),
}

impl ToolMetrics {
    /// The layer.
    pub fn new() -> ToolMetrics {
        ToolMetrics { _private: () }
    }
}

impl Middleware for ToolMetrics {
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        if req.kind() != MethodKind::CallTool {
            return next.run(req);
        }
        let cx = req.cx();
        // A tool the server has, else `other`: bounded label values.
        let tool = match req.tool_name() {
            Some(name) if cx.has_tool(&name) => name.into_owned(),
            _ => "other".to_owned(),
        };
        Box::pin(async move {
            let start = Instant::now();
            let reply = next.run(req).await;
            let outcome = match &reply {
                Err(_) => "error",
                Ok(_) if is_error_result(&reply) => "tool_error",
                Ok(_) => "ok",
            };
            ::metrics::histogram!(TOOL_CALL_DURATION, "tool" => tool.clone()).record(start.elapsed().as_secs_f64());
            ::metrics::counter!(TOOL_CALLS, "tool" => tool, "outcome" => outcome).increment(1);
            reply
        })
    }
}

/// Whether a reply's result has `isError: true`.
fn is_error_result(reply: &Reply) -> bool {
    #[derive(serde::Deserialize)]
    struct Frame {
        #[serde(default)]
        result: Option<Flag>,
    }
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: bool,
    }
    reply
        .as_ref()
        .ok()
        .and_then(|frame| serde_json::from_slice::<Frame>(frame).ok())
        .and_then(|f| f.result)
        .is_some_and(|f| f.is_error)
}
