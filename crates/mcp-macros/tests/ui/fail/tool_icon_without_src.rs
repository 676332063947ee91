#[mcp_sdk::tool(icon(mime_type = "image/png"))]
fn add() {}

fn main() {}
