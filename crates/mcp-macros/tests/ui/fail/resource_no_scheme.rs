#[mcp_sdk::resource("readme")]
fn readme() -> String {
    "# Hello".to_owned()
}

fn main() {}
