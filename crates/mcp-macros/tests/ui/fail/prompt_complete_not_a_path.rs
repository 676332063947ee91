#[mcp_sdk::prompt(complete(name = 3))]
fn greet(name: String) -> String {
    name
}

fn main() {}
