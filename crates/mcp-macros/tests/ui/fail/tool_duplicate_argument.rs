#[mcp_sdk::tool(name = "a", name = "b")]
fn add() {}

fn main() {}
