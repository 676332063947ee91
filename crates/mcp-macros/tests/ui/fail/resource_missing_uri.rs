#[mcp_sdk::resource(mime_type = "text/plain")]
fn readme() -> String {
    String::new()
}

fn main() {}
