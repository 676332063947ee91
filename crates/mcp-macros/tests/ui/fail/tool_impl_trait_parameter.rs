#[mcp_sdk::tool]
fn show(_x: impl std::fmt::Display) {}

fn main() {}
