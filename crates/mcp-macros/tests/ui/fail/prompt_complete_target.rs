fn names(_: mcp_sdk::server::CompletionRequest) -> Vec<String> {
    Vec::new()
}

#[mcp_sdk::prompt(complete(a::b = names))]
fn greet(name: String) -> String {
    name
}

fn main() {}
