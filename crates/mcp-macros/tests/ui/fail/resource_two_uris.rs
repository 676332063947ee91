#[mcp_sdk::resource("docs://a", "docs://b")]
fn readme() -> String {
    String::new()
}

fn main() {}
