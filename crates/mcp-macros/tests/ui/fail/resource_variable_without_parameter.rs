#[mcp_sdk::resource("notes://{id}")]
fn note(key: String) -> String {
    key
}

fn main() {}
