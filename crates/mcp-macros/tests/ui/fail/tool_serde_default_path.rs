#[mcp_sdk::tool]
fn add(#[serde(default = 3)] a: i64) -> i64 {
    a
}

fn main() {}
