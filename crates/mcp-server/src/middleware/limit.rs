//! Concurrency and timeout limits per tool.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use hashbrown::HashMap;
use mcp_jsonrpc::Reply;
use mcp_jsonrpc::sync::MutexExt as _;
use mcp_types::CallToolResult;
use tokio::sync::Semaphore;

use super::{McpRequest, Middleware, Next};

/// The limits of one tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolLimit {
    /// The most calls of the tool served at once (`None`: no bound); more wait their turn.
    pub max_concurrent: Option<usize>,
    /// How long a call may take, its wait for a turn included (`None`: no bound). A call that
    /// takes longer is answered with a result with `isError`, and its handler's future is
    /// dropped.
    pub timeout: Option<Duration>,
}

/// Concurrency and timeout limits on `tools/call`, per tool: a default for every tool and
/// limits of their own for some. Other methods pass through.
///
/// Each tool has its own semaphore (the calls of one tool do not wait for another's), made on
/// its first call, for tools the server has only (a call of an unknown tool takes no turn):
/// the map is bounded by the tools the server has had.
#[derive(Debug, Default)]
pub struct ToolLimits {
    default: ToolLimit,
    tools: HashMap<String, ToolLimit>,
    turns: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl ToolLimits {
    /// No limits yet.
    pub fn new() -> ToolLimits {
        ToolLimits::default()
    }

    /// The limits of every tool without limits of its own.
    pub fn default_limit(mut self, limit: ToolLimit) -> ToolLimits {
        self.default = limit;
        self
    }

    /// The limits of the tool `name`.
    pub fn tool(mut self, name: impl Into<String>, limit: ToolLimit) -> ToolLimits {
        self.tools.insert(name.into(), limit);
        self
    }

    /// The limits of `name`.
    fn limit(&self, name: &str) -> ToolLimit {
        self.tools.get(name).copied().unwrap_or(self.default)
    }

    /// The semaphore of `name`, made on first use.
    fn turns(&self, name: &str, max: usize) -> Arc<Semaphore> {
        let mut turns = self.turns.lock_unpoisoned();
        if let Some(s) = turns.get(name) {
            return s.clone();
        }
        let s = Arc::new(Semaphore::new(max));
        turns.insert(name.to_owned(), s.clone());
        s
    }
}

impl Middleware for ToolLimits {
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        let cx = req.cx();
        let name = match req.tool_call() {
            Some(Ok(call)) if cx.has_tool(&call.name) => call.name,
            // Not a call of a tool the server has: the server answers it.
            _ => return next.run(req),
        };
        let limit = self.limit(&name);
        if limit == ToolLimit::default() {
            return next.run(req);
        }
        let turns = limit.max_concurrent.map(|max| self.turns(&name, max));
        Box::pin(async move {
            let call = async move {
                // Held until the reply is ready (or the call is dropped).
                let _turn = match &turns {
                    Some(turns) => Some(turns.acquire().await.expect("the semaphore is never closed")),
                    None => None,
                };
                next.run(req).await
            };
            match limit.timeout {
                None => call.await,
                Some(timeout) => match tokio::time::timeout(timeout, call).await {
                    Ok(reply) => reply,
                    Err(_) => {
                        tracing::warn!(tool = %name, ?timeout, "tool call timed out");
                        cx.respond(&CallToolResult::error(format!(
                            "tool `{name}` timed out after {} ms",
                            timeout.as_millis()
                        )))
                    }
                },
            }
        })
    }
}
