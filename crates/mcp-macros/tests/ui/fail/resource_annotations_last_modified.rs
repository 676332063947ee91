#[mcp_sdk::resource("notes://all", annotations(last_modified = "yesterday"))]
fn notes() -> String {
    String::new()
}

fn main() {}
