#[mcp_sdk::prompt]
fn greet(#[serde(default)] name: String) -> String {
    name
}

fn main() {}
