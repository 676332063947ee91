//! Demo: a client talking to an example server over stdio.
//!
//! `cargo run --release --example demo` starts itself again as the `echo` server (a child
//! process on pipes), performs the `initialize` handshake, lists the tools, calls them, and
//! shuts the child down; then shows one result as each protocol revision would see it.

use std::sync::Arc;

use mcp_sdk::jsonrpc::{CallOptions, Peer, PeerConfig, Router};
use mcp_sdk::transport::stdio::{ChildCommand, ChildProcess};
use mcp_sdk::types::{
    CallToolRequest, CallToolRequestParams, CallToolResult, InitializeRequest, ListToolsRequest, ProtocolVersion,
    to_string_for,
};

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--serve") {
        // The child: serve until stdin closes.
        mcp_examples::echo::server(PeerConfig::default())?.serve_stdio().await;
        return Ok(());
    }

    let me = std::env::current_exe()?;
    println!("starting the echo server: {} --serve", me.display());
    let (transport, child) = ChildProcess::spawn(ChildCommand::new(me).arg("--serve"))?;
    let client = Peer::spawn(transport, Arc::new(Router::new()), PeerConfig::default());

    let init = serde_json::from_value(serde_json::json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "demo", "version": "1.0"}
    }))?;
    let info = client.request::<InitializeRequest>(init, CallOptions::default()).await?;
    println!(
        "connected to {} {} (protocol {})",
        info.server_info.name, info.server_info.version, info.protocol_version
    );
    client.set_protocol_version(info.protocol_version.parse()?);
    client.notify_raw("notifications/initialized", None).await?;

    let tools = client.request::<ListToolsRequest>(Default::default(), CallOptions::default()).await?;
    for tool in &tools.tools {
        println!("tool {}: {}", tool.name, tool.description.as_deref().unwrap_or(""));
    }

    let mut echo = CallToolRequestParams::new("echo");
    echo.arguments = serde_json::from_value(serde_json::json!({"text": "Hello from the demo client"}))?;
    let result = client.request::<CallToolRequest>(echo, CallOptions::default()).await?;
    println!("echo answered: {}", result.content[0].as_text().unwrap_or_default());

    let mut sleep = CallToolRequestParams::new("sleep");
    sleep.arguments = serde_json::from_value(serde_json::json!({"ms": 50}))?;
    let result = client.request::<CallToolRequest>(sleep, CallOptions::default()).await?;
    println!("sleep answered: {}", result.content[0].as_text().unwrap_or_default());

    client.close();
    let ended = child.shutdown().await?;
    println!("server stopped ({:?}, {})", ended.step, ended.status);

    println!("\none structured tool result, as each protocol revision sees it:");
    let structured = CallToolResult::structured(serde_json::json!({"sum": 3}));
    for version in ProtocolVersion::ALL {
        println!("  {version}: {}", to_string_for(&structured, version)?);
    }
    Ok(())
}
