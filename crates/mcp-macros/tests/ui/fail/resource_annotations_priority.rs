#[mcp_sdk::resource("notes://all", annotations(priority = 2))]
fn notes() -> String {
    String::new()
}

fn main() {}
