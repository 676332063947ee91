#[derive(serde::Deserialize, schemars::JsonSchema)]
struct A {
    a: i64,
}

#[mcp_sdk::tool]
fn renamed(#[serde(flatten, rename = "x")] a: A) -> i64 {
    a.a
}

fn main() {}
