#[mcp_sdk::resource("notes://{id}", size = 10)]
fn note(id: String) -> String {
    id
}

fn main() {}
