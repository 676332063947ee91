//! `echo`: the smallest useful MCP server, one tool `echo` ({"text": string} in, the same text
//! out). It is the server under test of the transport tests and the benchmarks.
//!
//! ```sh
//! cargo run --release --example echo -- --stdio [--max-line BYTES] [--max-concurrent N]
//! ```
//!
//! Besides `echo` it has `sleep` ({"ms": integer}), which answers after that long, for tests of
//! concurrency limits. Until the server runtime lands it is written on the JSON-RPC engine
//! directly.

use std::sync::Arc;
use std::time::Duration;

use mcp_sdk::jsonrpc::{ErrorObject, Peer, PeerConfig, Router};
use mcp_sdk::transport::stdio::StdioTransport;
use mcp_sdk::types::{
    CallToolRequest, CallToolResult, ContentBlock, Implementation, InitializeRequest,
    InitializeResult, ListToolsRequest, ListToolsResult, ProtocolVersion, ServerCapabilities,
    ServerCapabilitiesTools, Tool,
};

fn flag(args: &[String], name: &str) -> Option<usize> {
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1)?.parse().ok()
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--stdio") {
        anyhow::bail!("usage: echo --stdio [--max-line BYTES] [--max-concurrent N]");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut config = PeerConfig::default();
        if let Some(n) = flag(&args, "--max-concurrent") {
            config.max_concurrent_requests = n;
        }
        let transport = match flag(&args, "--max-line") {
            Some(n) => StdioTransport::with_max_line(n),
            None => StdioTransport::new(),
        };
        let peer = Peer::spawn(transport, Arc::new(router()), config);
        peer.closed().await;
    });
    Ok(())
}
