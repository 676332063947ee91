#[mcp_sdk::tool(meta(owner =))]
fn hello() {}

fn main() {}
