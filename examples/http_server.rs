//! `http_server`: `stdio_server`'s features (tools with progress, logging, sampling,
//! elicitation and roots; prompts with completions; resources and templates) served over
//! Streamable HTTP at `/mcp` (and HTTP+SSE at `/sse`), mounted in an axum app beside a
//! `/health` route. Logs go to stderr.
//!
//! `cargo run --example http_server -- [ADDR]` (default `127.0.0.1:8080`; port 0 picks one).
//! It prints `listening on http://ADDR/mcp` to stderr once it accepts connections.

use mcp_sdk::transport::http::server::{HttpServerConfig, serve_router};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(tracing::Level::INFO).init();
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let server = mcp_examples::showcase::server()?;
    let config = HttpServerConfig::default();
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(server.http_router(config.clone()));
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    serve_router(listener, app, &config).await?;
    Ok(())
}
