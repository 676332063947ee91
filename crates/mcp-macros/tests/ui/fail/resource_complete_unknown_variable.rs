fn ids(_: mcp_sdk::server::CompletionRequest) -> Vec<String> {
    Vec::new()
}

#[mcp_sdk::resource("notes://{id}", complete(key = ids))]
fn note(id: String) -> String {
    id
}

fn main() {}
