#[derive(serde::Deserialize)]
struct Point {
    x: i64,
}

#[mcp_sdk::tool]
fn norm(point: Point) -> i64 {
    point.x
}

fn main() {}
