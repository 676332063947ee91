//! `client`: connects to any MCP server run as a command and prints what it offers.
//!
//! ```sh
//! cargo run --example client -- npx -y @modelcontextprotocol/server-everything
//! cargo run --example client -- target/debug/examples/echo --stdio
//! ```

use mcp_sdk::client::ClientBuilder;
use mcp_sdk::transport::stdio::ChildCommand;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(program) = args.next() else {
        anyhow::bail!("usage: client <server command> [args...]");
    };
    let client = ClientBuilder::new("mcp-rust-example-client", env!("CARGO_PKG_VERSION"))
        .spawn(ChildCommand::new(program).args(args))
        .await?;
    let info = client.server_info();
    println!("server: {} {} (protocol {})", info.name, info.version, client.protocol_version());
    if let Some(instructions) = client.instructions() {
        println!("instructions: {instructions}");
    }
    println!("capabilities: {}", serde_json::to_string(client.server_capabilities())?);
    let caps = client.server_capabilities();
    if caps.tools.is_some() {
        for tool in client.list_all_tools().await? {
            println!("tool {}: {}", tool.name, tool.description.unwrap_or_default().lines().next().unwrap_or(""));
        }
    }
    if caps.prompts.is_some() {
        for prompt in client.list_all_prompts().await? {
            println!("prompt {}: {}", prompt.name, prompt.description.unwrap_or_default());
        }
    }
    if caps.resources.is_some() {
        for resource in client.list_all_resources().await? {
            println!("resource {} ({})", resource.uri, resource.name);
        }
        for template in client.list_all_resource_templates().await? {
            println!("template {} ({})", template.uri_template, template.name);
        }
    }
    client.close().await?;
    Ok(())
}
