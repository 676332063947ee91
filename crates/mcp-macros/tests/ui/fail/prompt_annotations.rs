/// Has no annotations.
#[mcp_sdk::prompt(annotations(priority = 0.5), size = 3)]
fn greet(name: String) -> String {
    name
}

fn main() {}
