#[mcp_sdk::prompt(icon(mime_type = "image/png"))]
fn hello() -> String {
    String::new()
}

fn main() {}
