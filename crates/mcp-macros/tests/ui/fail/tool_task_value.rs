/// Runs as a task, maybe.
#[mcp_sdk::tool(task = "sometimes")]
fn build() -> String {
    String::new()
}

fn main() {}
