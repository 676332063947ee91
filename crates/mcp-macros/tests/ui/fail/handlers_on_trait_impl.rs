struct Calculator;

#[mcp_sdk::handlers]
impl Clone for Calculator {
    #[tool]
    fn clone(&self) -> Self {
        Calculator
    }
}

fn main() {}
