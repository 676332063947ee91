#[mcp_sdk::prompt]
fn tags(tags: Vec<String>) -> String {
    tags.join(",")
}

fn main() {}
