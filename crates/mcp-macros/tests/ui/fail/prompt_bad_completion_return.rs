fn names(_: mcp_sdk::server::CompletionRequest) -> String {
    String::new()
}

#[mcp_sdk::prompt(complete(name = names))]
fn greet(name: String) -> String {
    name
}

fn main() {}
