struct Calculator;

#[mcp_sdk::handlers("calc")]
impl Calculator {
    #[tool]
    fn add(&self, a: i64) -> i64 {
        a
    }
}

fn main() {}
