//! `rmcp-echo`: the benchmark peer. The same echo server as our `examples/echo.rs`, one tool
//! `echo` ({"text": string} in, one text content block with the same text out), built on the
//! official Rust MCP SDK, `rmcp` 3.9.0, so that the benchmarks can compare the two SDKs on
//! equal work. It is a standalone package that the workspace never builds:
//!
//! ```sh
//! cargo build --release --manifest-path bench/rmcp-echo/Cargo.toml --target-dir target/bench/rmcp
//! rmcp-echo --stdio                     # rmcp's default stdio transport
//! rmcp-echo --stdio-pipe                # rmcp's non-blocking pipe stdio transport
//! rmcp-echo --http ADDR                 # Streamable HTTP: sessions, SSE responses
//! rmcp-echo --http ADDR --stateless     # Streamable HTTP: no sessions, JSON responses
//! ```
//!
//! Over HTTP the endpoint is `http://ADDR/mcp` (axum, HTTP/1.1, `TCP_NODELAY` like ours); it
//! prints `listening on http://ADDR/mcp` to stderr once bound. The Host check is off and there
//! is no Origin check. Stdio runs on a current-thread runtime, HTTP on a multi-thread one.

use std::sync::Arc;

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};

/// The arguments of `echo`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to echo back.
    text: String,
}

/// The server: only its tool router, built once and shared by every session's clone (the
/// macros' default, `Self::tool_router()`, would rebuild it on each call).
#[derive(Clone)]
struct Echo {
    tool_router: Arc<ToolRouter<Self>>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Self { tool_router: Arc::new(Self::tool_router()) }
    }

    /// Returns `text` unchanged, as one text content block.
    #[tool(description = "Echo the text back")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |name: &str| args.iter().any(|a| a == name);
    let http = args.iter().position(|a| a == "--http").and_then(|i| args.get(i + 1));
    if let Some(addr) = http {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
        return runtime.block_on(serve_http(addr, has("--stateless")));
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    if has("--stdio") {
        // rmcp's default: `tokio::io::stdin`/`stdout`, each read and write handed to Tokio's
        // blocking thread pool.
        runtime.block_on(serve_stdio(rmcp::transport::stdio()))
    } else if has("--stdio-pipe") {
        // rmcp's fast path, `stdio_pipes`: when stdin and stdout are FIFOs (as when a client
        // spawns the server) it reopens them through /proc/self/fd with O_NONBLOCK and drives
        // them as `tokio::net::unix::pipe` Receiver/Sender on the IO reactor, no thread
        // hand-off per message; on anything else (a file, a tty) it falls back to `stdio()`.
        // It must be called inside the runtime.
        runtime.block_on(async { serve_stdio(rmcp::transport::stdio_pipes()).await })
    } else {
        eprintln!("usage: rmcp-echo --stdio | --stdio-pipe | --http ADDR [--stateless]");
        std::process::exit(2)
    }
}

/// Serves one session over a reader/writer pair until the client hangs up.
async fn serve_stdio<R, W>(io: (R, W)) -> anyhow::Result<()>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    Echo::new().serve(io).await?.waiting().await?;
    Ok(())
}

/// Serves Streamable HTTP at `/mcp` until killed.
async fn serve_http(addr: &str, stateless: bool) -> anyhow::Result<()> {
    use axum::serve::ListenerExt;

    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_legacy_session_mode(!stateless)
        .with_json_response(stateless);
    let echo = Echo::new();
    let service: StreamableHttpService<Echo, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(echo.clone()), Default::default(), config);
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router).await?;
    Ok(())
}
