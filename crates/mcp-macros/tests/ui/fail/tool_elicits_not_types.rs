#[mcp_sdk::tool(elicits = "Booking")]
fn book() -> String {
    String::new()
}

fn main() {}
