#[mcp_sdk::resource("notes://all", annotations = "user")]
fn notes() -> String {
    String::new()
}

fn main() {}
