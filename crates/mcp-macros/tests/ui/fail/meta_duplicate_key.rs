#[mcp_sdk::resource("notes://all", meta(owner = "me", owner = "you"))]
fn notes() -> String {
    String::new()
}

fn main() {}
