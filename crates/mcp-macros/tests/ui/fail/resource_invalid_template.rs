#[mcp_sdk::resource("notes://{id")]
fn note(id: String) -> String {
    id
}

fn main() {}
