#[mcp_sdk::tool(icon)]
fn add() {}

fn main() {}
