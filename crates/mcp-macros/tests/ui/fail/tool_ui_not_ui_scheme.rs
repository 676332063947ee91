#[mcp_sdk::tool(ui = "https://example.com/view", visibility = ["agent"])]
fn show() {}

fn main() {}
