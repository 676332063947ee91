#[mcp_sdk::prompt(meta("-owner" = "me"))]
fn hello() -> String {
    String::new()
}

fn main() {}
