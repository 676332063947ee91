#[mcp_sdk::tool(icon(src = "https://example.com/a.png", sizes = "48x48"))]
fn add() {}

fn main() {}
