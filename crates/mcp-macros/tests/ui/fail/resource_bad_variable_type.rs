#[mcp_sdk::resource("notes://{id}")]
fn note(id: u32) -> String {
    id.to_string()
}

fn main() {}
