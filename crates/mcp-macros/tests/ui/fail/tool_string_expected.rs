#[mcp_sdk::tool(title = 3)]
fn add() {}

fn main() {}
