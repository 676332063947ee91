#[mcp_sdk::tool]
fn add(#[serde("a")] a: i64) -> i64 {
    a
}

fn main() {}
