#[mcp_sdk::tool(deferred_task)]
async fn later(ctx: mcp_sdk::server::Context) -> Result<String, mcp_sdk::server::ToolError> {
    ctx.run_as_task().await?;
    Ok("done".into())
}

fn main() {}
