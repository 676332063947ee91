//! Methods sharing their value through `#[handlers]`.

use std::sync::{Arc, Mutex};

use mcp_sdk::server::{Context, Server};

#[derive(Default)]
struct Todo {
    items: Mutex<Vec<String>>,
}

#[mcp_sdk::handlers]
impl Todo {
    /// Adds an item.
    #[tool]
    fn add(&self, item: String) -> usize {
        let mut items = self.items.lock().unwrap();
        items.push(item);
        items.len()
    }

    /// Lists the items.
    #[mcp_sdk::tool(read_only)]
    async fn list(self: Arc<Self>, _ctx: Context) -> Vec<String> {
        self.items.lock().unwrap().clone()
    }

    /// No state needed.
    #[tool]
    fn version() -> &'static str {
        "1"
    }

    /// Plans the day.
    #[prompt]
    fn plan(&self) -> String {
        "Plan".to_owned()
    }

    /// One item.
    #[resource("todo://{index}")]
    fn item(&self, index: String) -> Result<String, String> {
        let i: usize = index.parse().map_err(|_| format!("not an index: {index}"))?;
        self.items.lock().unwrap().get(i).cloned().ok_or_else(|| format!("no item {i}"))
    }

    /// Not an MCP item.
    fn helper(&self) {}
}

fn main() {
    let todo = Arc::new(Todo::default());
    todo.helper();
    assert_eq!(todo.tools().len(), 3);
    assert_eq!(todo.prompts().len(), 1);
    assert_eq!(todo.resource_templates().len(), 1);
    let _server = Server::builder("todo", "1").handlers(todo).build().unwrap();
}
