#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    code: String,
}

#[mcp_sdk::prompt]
fn review(#[serde(flatten)] args: Args) -> String {
    args.code
}

fn main() {}
