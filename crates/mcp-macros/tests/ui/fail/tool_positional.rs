#[mcp_sdk::tool("add")]
fn add() {}

fn main() {}
