#[mcp_sdk::resource("notes://{id}")]
fn note(id: String, limit: usize) -> String {
    format!("{id} {limit}")
}

fn main() {}
