struct Calculator;

impl Calculator {
    #[mcp_sdk::tool]
    fn add(&self, a: i64) -> i64 {
        a
    }
}

fn main() {}
