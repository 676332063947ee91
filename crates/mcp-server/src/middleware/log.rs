//! Request logging: one `tracing` event per request, with its method, tool (for `tools/call`),
//! duration and outcome.

use std::time::Instant;

use futures_util::future::BoxFuture;
use mcp_jsonrpc::Reply;

use super::{McpRequest, Middleware, Next};

/// Logs each request when its reply is ready, at `INFO` (target `mcp_server::middleware::log`):
/// `method`, `tool` (for `tools/call`), `duration_ms`, and `error_code` for an error response.
/// A request whose future is dropped first (cancelled, its connection gone) is not logged.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestLog {
    _private: (),
}

impl RequestLog {
    /// The layer.
    pub fn new() -> RequestLog {
        RequestLog { _private: () }
    }
}

impl Middleware for RequestLog {
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        Box::pin(async move {
            let start = Instant::now();
            let method = req.method().to_owned();
            // Bounded: the name is the client's to choose.
            let tool = req.tool_name().map(|name| bounded(name.into_owned()));
            // Bounded too: a string id is the client's to choose.
            let id = bounded(req.cx().id().to_string());
            let reply = next.run(req).await;
            let duration_ms = start.elapsed().as_secs_f64() * 1000.0;
            let tool = tool.as_deref().unwrap_or("");
            match &reply {
                Ok(_) => tracing::info!(%method, tool, %id, duration_ms, "request served"),
                Err(e) => tracing::info!(%method, tool, %id, duration_ms, error_code = e.code, "request failed"),
            }
            reply
        })
    }
}

/// `name` (a tool name, a request id), cut to 128 bytes (the longest tool name the spec allows)
/// at a character boundary.
fn bounded(mut name: String) -> String {
    let mut end = name.len().min(128);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name.truncate(end);
    name
}
