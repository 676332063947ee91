#[mcp_sdk::tool]
fn add(#[serde(skip)] a: i64) -> i64 {
    a
}

fn main() {}
