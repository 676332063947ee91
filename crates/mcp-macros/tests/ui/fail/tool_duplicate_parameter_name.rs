#[mcp_sdk::tool]
fn add(a: i64, #[serde(rename = "a")] b: i64) -> i64 {
    a + b
}

fn main() {}
