struct Calculator;

#[mcp_sdk::handlers]
impl Calculator {
    #[tool = "add"]
    fn add(&self, a: i64) -> i64 {
        a
    }
}

fn main() {}
