struct Calculator;

#[mcp_sdk::handlers]
impl Calculator {
    #[tool]
    fn add(&mut self, a: i64) -> i64 {
        a
    }
}

fn main() {}
