#[mcp_sdk::prompt(complete(name))]
fn greet(name: String) -> String {
    name
}

fn main() {}
