#[mcp_sdk::tool(read_only = "yes")]
fn add() {}

fn main() {}
