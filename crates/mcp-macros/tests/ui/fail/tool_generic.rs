#[mcp_sdk::tool]
fn add<T>(_x: Option<T>) {}

fn main() {}
