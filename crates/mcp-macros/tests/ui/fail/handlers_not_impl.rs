#[mcp_sdk::handlers]
fn add() {}

fn main() {}
