#[mcp_sdk::tool(meta("io.modelcontextprotocol/owner" = "me"))]
fn hello() {}

fn main() {}
