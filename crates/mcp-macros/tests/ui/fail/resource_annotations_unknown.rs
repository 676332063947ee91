#[mcp_sdk::resource("notes://all", annotations(importance = 1))]
fn notes() -> String {
    String::new()
}

fn main() {}
