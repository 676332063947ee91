#[mcp_sdk::tool(crate = "not a path")]
fn add() {}

fn main() {}
