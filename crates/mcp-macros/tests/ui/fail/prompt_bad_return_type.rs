#[mcp_sdk::prompt]
fn count() -> i32 {
    1
}

fn main() {}
