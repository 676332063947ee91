#[mcp_sdk::tool]
struct Add;

fn main() {}
