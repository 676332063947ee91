#[mcp_sdk::tool]
fn show() -> impl std::fmt::Display {
    1
}

fn main() {}
