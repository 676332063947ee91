#[mcp_sdk::tool]
unsafe fn add() {}

fn main() {}
