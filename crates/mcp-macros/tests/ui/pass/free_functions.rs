//! Free functions, sync and async, registered through the structs named after them.

use mcp_sdk::server::{CompletionRequest, Server};
use mcp_sdk::{prompt, resource, tool};

/// Adds.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Waits, then echoes.
#[tool(name = "echo-text", read_only, icon = "https://example.com/i.png")]
pub async fn echo(text: String, #[serde(default)] times: Option<u8>) -> String {
    text.repeat(times.unwrap_or(1) as usize)
}

fn topics(request: CompletionRequest) -> Vec<String> {
    vec![request.value]
}

/// Explains a topic.
#[prompt(complete(topic = topics))]
async fn explain(topic: String) -> String {
    format!("Explain {topic}")
}

/// A fixed resource.
#[resource("docs://about")]
fn about() -> Vec<u8> {
    b"about".to_vec()
}

/// A template.
#[resource("docs://{section}", mime_type = "text/plain")]
fn section(section: String) -> Result<String, std::fmt::Error> {
    Ok(section)
}

fn main() {
    // The functions stay callable.
    assert_eq!(add(1, 2), 3);
    let _ = echo(String::new(), None);
    let _server = Server::builder("s", "1")
        .tools([add::tool(), echo::tool()])
        .prompt(explain::prompt())
        .resource(about::resource())
        .resource_template(section::template())
        .build()
        .unwrap();
}
