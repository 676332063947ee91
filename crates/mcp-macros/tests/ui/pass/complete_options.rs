//! Every option of `#[prompt]` and `#[resource]`, and prompt arguments from a struct.

use mcp_sdk::server::{CompletionRequest, Context, Server};
use mcp_sdk::{prompt, resource, tool};

/// The arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    /// The topic.
    topic: String,
    depth: Option<u8>,
}

fn topics(request: CompletionRequest) -> Vec<String> {
    vec![request.value]
}

/// Explains a topic.
#[prompt(
    name = "explain",
    title = "Explain",
    description = "Explains.",
    icon = "https://example.com/a.png",
    icon(src = "https://example.com/b.svg", mime_type = "image/svg+xml", sizes = ["any"], theme = "light"),
    meta("com.example/team" = "docs", r#type = "howto", level = 1 + 1, tags = ["a"], nested = {"x": null}),
    complete(topic = topics),
    scopes = ["docs:read"]
)]
async fn explain(args: Args, audience: Option<String>, ctx: Context) -> String {
    let _ = ctx.request_id();
    format!("Explain {} to depth {} for {}", args.topic, args.depth.unwrap_or(1), audience.unwrap_or_default())
}

/// A fixed resource.
#[resource(
    "docs://about",
    title = "About",
    mime_type = "text/plain",
    size = 5,
    icon = "https://example.com/about.png",
    annotations(audience = ["user"], priority = 1, last_modified = "2025-01-12"),
    meta(owner = "docs")
)]
fn about() -> Vec<u8> {
    b"about".to_vec()
}

/// A template.
#[resource(
    "docs://{section}",
    mime_type = "text/plain",
    icon(src = "https://example.com/s.png"),
    annotations(priority = 0.25, last_modified = "2025-01-12T15:00:58.5+01:00")
)]
fn section(section: String) -> String {
    section
}

/// A tool with `_meta`.
#[tool(meta(cost = 3))]
fn cheap() {}

fn main() {
    let _server = Server::builder("s", "1")
        .tool(cheap::tool())
        .prompt(explain::prompt())
        .resource(about::resource())
        .resource_template(section::template())
        .build()
        .unwrap();
}
