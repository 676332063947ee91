//! `echo`: the smallest useful MCP server, one tool `echo` ({"text": string} in, the same text
//! out). It is the server under test of the transport tests and the benchmarks.
//!
//! ```sh
//! cargo run --release --example echo -- --stdio [--max-line BYTES] [--max-concurrent N] [--middleware]
//! cargo run --release --example echo -- --http ADDR              # sessions, SSE responses
//! cargo run --release --example echo -- --http ADDR --stateless  # no sessions, JSON responses
//! cargo run --release --example echo -- --http ADDR --redis URL  # state shared in Redis (a fleet)
//! ```
//!
//! Over HTTP the endpoint is `http://ADDR/mcp`; it also answers 2026-07-28 requests (which have
//! no sessions) in both modes. It prints `listening on http://ADDR/mcp` to stderr once bound.
//!
//! `--middleware` adds the request logging and tool metrics layers, with a Prometheus recorder
//! installed and no `tracing` subscriber (the bench row `ours stdio +mw`).
//!
//! Besides `echo` it has `sleep` ({"ms": integer}), which answers after that long, for tests of
//! concurrency limits.

use mcp_sdk::jsonrpc::PeerConfig;
use mcp_sdk::transport::http::server::{HttpServerConfig, serve_listener};
use mcp_sdk::transport::stdio::StdioTransport;

fn flag(args: &[String], name: &str) -> Option<usize> {
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1)?.parse().ok()
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let http = args.iter().position(|a| a == "--http").and_then(|i| args.get(i + 1)).cloned();
    if !args.iter().any(|a| a == "--stdio") && http.is_none() {
        anyhow::bail!(
            "usage: echo --stdio [--max-line BYTES] [--max-concurrent N] [--middleware] | echo --http ADDR [--stateless] [--redis URL]"
        );
    }
    let mut config = PeerConfig::default();
    if let Some(n) = flag(&args, "--max-concurrent") {
        config.max_concurrent_requests = n;
    }
    let mut builder = mcp_examples::echo::builder(config)?;
    if args.iter().any(|a| a == "--middleware") {
        use mcp_sdk::server::middleware::{log::RequestLog, metrics::ToolMetrics};
        mcp_sdk::transport::http::server::metrics::install_prometheus(None)?;
        builder = builder.middleware(RequestLog::new()).middleware(ToolMetrics::new());
    }
    if let Some(addr) = http {
        let config = if args.iter().any(|a| a == "--stateless") {
            HttpServerConfig::default().stateless(true).json_response(true)
        } else {
            // `cargo xtask bench` opens its 10,000 sessions from one address.
            HttpServerConfig::default().max_sessions_per_client(usize::MAX)
        };
        let redis = args.iter().position(|a| a == "--redis").and_then(|i| args.get(i + 1)).cloned();
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_io().enable_time().build()?;
        return runtime.block_on(async {
            // In a fleet: sessions, events and changes shared through Redis.
            let (builder, config) = match redis {
                Some(url) => mcp_examples::fleet::configure(&url, builder, config).await?,
                None => (builder, config),
            };
            let server = builder.build()?;
            let listener = tokio::net::TcpListener::bind(&addr).await?;
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            serve_listener(std::sync::Arc::new(server), config, listener).await?;
            Ok(())
        });
    }
    let server = builder.build()?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
    runtime.block_on(async {
        let transport = match flag(&args, "--max-line") {
            Some(n) => StdioTransport::with_max_line(n),
            None => StdioTransport::new(),
        };
        server.serve(transport).await;
    });
    Ok(())
}
