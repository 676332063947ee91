//! The facade under another name, with `crate = "..."`.

extern crate mcp_sdk as sdk;

#[sdk::tool(crate = "sdk")]
fn ping() -> &'static str {
    "pong"
}

#[sdk::handlers(crate = "sdk")]
impl Service {
    #[tool]
    fn status(&self) -> bool {
        true
    }
}

struct Service;

fn main() {
    let _ = ping::tool();
    let _ = std::sync::Arc::new(Service).tools();
}
