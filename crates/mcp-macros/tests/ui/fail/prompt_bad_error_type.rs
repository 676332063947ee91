struct Oops;

#[mcp_sdk::prompt]
fn fails() -> Result<String, Oops> {
    Err(Oops)
}

fn main() {}
