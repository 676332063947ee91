//! `http_server`: `stdio_server`'s features (tools with progress, logging, sampling,
//! elicitation and roots; prompts with completions; resources and templates) served over
//! Streamable HTTP at `/mcp` (and HTTP+SSE at `/sse`), mounted in an axum app beside a
//! `/health` route. Logs go to stderr.
//!
//! `cargo run --example http_server -- [ADDR] [--redis URL]` (default `127.0.0.1:8080`; port
//! 0 picks one). It prints `listening on http://ADDR/mcp` to stderr once it accepts
//! connections. With `--redis URL` it is one instance of a fleet sharing its state through
//! Redis ([`mcp_examples::fleet::configure`]; `cargo xtask fleet` runs three).

use mcp_sdk::transport::http::server::{HttpServerConfig, serve_router};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(tracing::Level::INFO).init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (addr, redis) = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] => ("127.0.0.1:8080", None),
        [addr] => (*addr, None),
        [addr, "--redis", url] => (*addr, Some(*url)),
        _ => anyhow::bail!("usage: http_server [ADDR] [--redis URL]"),
    };
    let builder = mcp_examples::showcase::builder(None);
    let config = HttpServerConfig::default();
    let (builder, config) = match redis {
        Some(url) => mcp_examples::fleet::configure(url, builder, config).await?,
        None => (builder, config),
    };
    let server = builder.build()?;
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(server.http_router(config.clone()));
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    serve_router(listener, app, &config).await?;
    Ok(())
}
