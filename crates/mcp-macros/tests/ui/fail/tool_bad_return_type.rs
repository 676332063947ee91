struct Point {
    x: i64,
}

#[mcp_sdk::tool]
fn origin() -> Point {
    Point { x: 0 }
}

fn main() {}
