fn names(_: mcp_sdk::server::CompletionRequest) -> Vec<String> {
    Vec::new()
}

#[mcp_sdk::prompt(complete(nmae = names))]
fn greet(name: String) -> String {
    name
}

fn main() {}
