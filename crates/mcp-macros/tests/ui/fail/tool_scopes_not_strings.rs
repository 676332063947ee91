#[mcp_sdk::tool(scopes = "files:read")]
fn add() {}

fn main() {}
