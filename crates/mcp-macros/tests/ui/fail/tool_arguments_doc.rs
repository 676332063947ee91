/// Adds.
///
/// # Arguments
///
/// * `a` - the first number
/// * `c` - the second number
#[mcp_sdk::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
