#[mcp_sdk::prompt]
fn count(n: i32) -> String {
    n.to_string()
}

fn main() {}
