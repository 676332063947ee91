#[mcp_sdk::tool(nmae = "add")]
fn add() {}

fn main() {}
