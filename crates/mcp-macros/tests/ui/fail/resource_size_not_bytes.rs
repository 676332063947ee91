#[mcp_sdk::resource("notes://all", size = "big")]
fn notes() -> String {
    String::new()
}

fn main() {}
