//! `everything`: the server the official MCP conformance suite's server scenarios expect
//! (`mcp_examples::everything`: those of 0.1.16 for the session revisions, and those
//! 0.2.0-alpha.12 requires for protocol revision 2026-07-28), over stdio or Streamable HTTP.
//!
//! ```sh
//! cargo run --example everything -- --stdio
//! cargo run --example everything -- --http 127.0.0.1:3000   # serves http://127.0.0.1:3000/mcp
//! ```
//!
//! Logs go to stderr (level from `RUST_LOG`: `error`, `warn` (the default), `info`, `debug`,
//! `trace` or `off`).

use tracing_subscriber::filter::LevelFilter;

const USAGE: &str = "usage: everything --stdio | --http ADDR (e.g. 127.0.0.1:3000; serves http://ADDR/mcp)";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let level = std::env::var("RUST_LOG").ok().and_then(|l| l.parse().ok()).unwrap_or(LevelFilter::WARN);
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(level).init();

    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = mcp_examples::everything::server()?;
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["--stdio"] => server.serve_stdio().await,
        ["--http", addr] => {
            tracing::info!("serving Streamable HTTP at http://{addr}/mcp");
            server.serve_http(*addr).await?;
        }
        _ => anyhow::bail!(USAGE),
    }
    Ok(())
}
