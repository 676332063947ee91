#[mcp_sdk::resource("notes://all", annotations(audience = ["robot"]))]
fn notes() -> String {
    String::new()
}

fn main() {}
