#[mcp_sdk::tool(name = "add numbers")]
fn add() {}

fn main() {}
