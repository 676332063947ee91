#[derive(serde::Deserialize, schemars::JsonSchema)]
struct A {
    a: i64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct B {
    b: i64,
}

#[mcp_sdk::tool]
fn both(#[serde(flatten)] a: A, #[serde(flatten)] b: B) -> i64 {
    a.a + b.b
}

fn main() {}
