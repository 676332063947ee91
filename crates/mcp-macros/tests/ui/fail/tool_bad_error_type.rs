struct Oops;

#[mcp_sdk::tool]
fn fails() -> Result<String, Oops> {
    Err(Oops)
}

fn main() {}
