#[mcp_sdk::resource("notes://{id}")]
fn note(id: String) -> usize {
    id.len()
}

fn main() {}
