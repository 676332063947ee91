//! [`Logging`]: an event through `tracing` for each request, with its duration and outcome.

use std::time::Instant;

use tracing::Level;

use super::{BoxFuture, ClientMiddleware, ClientRequest, ClientResponse, Next, outcome_kind};

/// Logs each request once it is over, through `tracing` (target `mcp_client::middleware`,
/// message `client request done` or `client request failed`, in the request's
/// `mcp.client.request` span): `method`, `tool` (for `tools/call`), `duration_ms`, `outcome` (`ok`, `error` for a
/// JSON-RPC error answer, `timeout`, `cancelled`, `closed`, `transport`, `protocol`, `other`)
/// and, for a failure, `error` (its message). A success at the level set (default INFO), a
/// failure at WARN. A request whose future is dropped is not logged.
#[derive(Debug, Clone)]
pub struct Logging {
    level: Level,
}

impl Default for Logging {
    fn default() -> Self {
        Logging::new()
    }
}

impl Logging {
    /// Successes at INFO, failures at WARN.
    pub fn new() -> Self {
        Logging { level: Level::INFO }
    }

    /// The level of a success's event (a failure's is WARN, or this level if it is higher).
    pub fn level(mut self, level: Level) -> Self {
        self.level = level;
        self
    }
}

/// An event at `level` (a macro's level must be a constant).
macro_rules! event_at {
    ($level:expr, $($rest:tt)+) => {
        match $level {
            Level::ERROR => tracing::event!(target: "mcp_client::middleware", Level::ERROR, $($rest)+),
            Level::WARN => tracing::event!(target: "mcp_client::middleware", Level::WARN, $($rest)+),
            Level::INFO => tracing::event!(target: "mcp_client::middleware", Level::INFO, $($rest)+),
            Level::DEBUG => tracing::event!(target: "mcp_client::middleware", Level::DEBUG, $($rest)+),
            _ => tracing::event!(target: "mcp_client::middleware", Level::TRACE, $($rest)+),
        }
    };
}

impl ClientMiddleware for Logging {
    fn call<'a>(&'a self, request: ClientRequest<'a>, next: Next<'a>) -> BoxFuture<'a, ClientResponse> {
        Box::pin(async move {
            let method = request.method();
            let tool = request.tool_name().map(str::to_owned);
            let started = Instant::now();
            let outcome = next.run(request).await;
            let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            let kind = outcome_kind(&outcome);
            let tool = tool.as_deref();
            match &outcome {
                Ok(_) => event_at!(self.level, method, tool, duration_ms, outcome = kind, "client request done"),
                Err(error) => {
                    // A failure at WARN at least (`Level` orders the more verbose as greater).
                    let level = if self.level < Level::WARN { self.level } else { Level::WARN };
                    event_at!(level, method, tool, duration_ms, outcome = kind, error = %error, "client request failed");
                }
            }
            outcome
        })
    }
}
