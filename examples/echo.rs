//! `echo`: the smallest useful MCP server, one tool `echo` ({"text": string} in, the same text
//! out). It is the server under test of the transport tests and the benchmarks.
//!
//! ```sh
//! cargo run --release --example echo -- --stdio [--max-line BYTES] [--max-concurrent N]
//! ```
//!
//! Besides `echo` it has `sleep` ({"ms": integer}), which answers after that long, for tests of
//! concurrency limits.

use mcp_sdk::jsonrpc::PeerConfig;
use mcp_sdk::transport::stdio::StdioTransport;

fn flag(args: &[String], name: &str) -> Option<usize> {
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1)?.parse().ok()
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--stdio") {
        anyhow::bail!("usage: echo --stdio [--max-line BYTES] [--max-concurrent N]");
    }
    let mut config = PeerConfig::default();
    if let Some(n) = flag(&args, "--max-concurrent") {
        config.max_concurrent_requests = n;
    }
    let server = mcp_examples::echo::server(config)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let transport = match flag(&args, "--max-line") {
            Some(n) => StdioTransport::with_max_line(n),
            None => StdioTransport::new(),
        };
        server.serve(transport).await;
    });
    Ok(())
}
