//! `everything`: the server the official MCP conformance suite's server scenarios expect
//! (`mcp_examples::everything`: those of 0.1.16 for the session revisions, and those
//! 0.2.0-alpha.12 requires for protocol revision 2026-07-28), over stdio or Streamable HTTP.
//!
//! ```sh
//! cargo run --example everything -- --stdio
//! cargo run --example everything -- --http 127.0.0.1:3000   # serves http://127.0.0.1:3000/mcp
//! ```
//!
//! Ctrl-C or SIGTERM stops it gracefully: over HTTP, new connections are refused, `/readyz`
//! turns 503 (`/healthz` and `/readyz` are served), and requests in flight get 10 seconds to
//! finish; over stdio, it stops reading and lets the requests in flight finish.
//!
//! Logs go to stderr (level from `RUST_LOG`: `error`, `warn` (the default), `info`, `debug`,
//! `trace` or `off`).

use mcp_sdk::server::shutdown_signal;
use mcp_sdk::transport::http::server::HttpServerConfig;
use tracing_subscriber::filter::LevelFilter;

const USAGE: &str = "usage: everything --stdio | --http ADDR (e.g. 127.0.0.1:3000; serves http://ADDR/mcp)";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let level = std::env::var("RUST_LOG").ok().and_then(|l| l.parse().ok()).unwrap_or(LevelFilter::WARN);
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(level).init();

    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = mcp_examples::everything::server()?;
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["--stdio"] => server.serve_stdio_until(shutdown_signal()).await,
        ["--http", addr] => {
            tracing::info!("serving Streamable HTTP at http://{addr}/mcp (health at /healthz, /readyz)");
            // Ctrl-C or SIGTERM drains: new connections are refused, /readyz turns 503, requests
            // in flight get 10 seconds to finish.
            let config = HttpServerConfig::default().health_routes(true);
            server.serve_http_until(*addr, config, shutdown_signal()).await?;
        }
        _ => anyhow::bail!(USAGE),
    }
    Ok(())
}
