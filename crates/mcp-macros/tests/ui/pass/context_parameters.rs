//! Context parameters are recognised by their traits: renamed imports, aliases and your own
//! `FromContext` types all work.

use mcp_sdk::jsonrpc::{CancellationToken as Cancel, Peer};
use mcp_sdk::server::Context as Ctx;
use mcp_sdk::server::{Context, FromContext, Progress, State};
use mcp_sdk::types::ErrorObject;

type Request = Context;

struct ClientName(String);

impl FromContext for ClientName {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(ClientName(ctx.client_info().map(|i| i.name).unwrap_or_default()))
    }
}

struct Config {
    greeting: String,
}

/// Uses everything.
#[mcp_sdk::tool]
async fn everything(
    a: Ctx,
    b: Request,
    progress: Progress,
    cancel: Cancel,
    peer: Peer,
    name: ClientName,
    config: State<Config>,
    text: String,
) -> String {
    let _ = (a, b, cancel, peer);
    progress.report(1.0).await;
    format!("{} {} {text}", config.greeting, name.0)
}

/// Prompts take context parameters too.
#[mcp_sdk::prompt]
fn greeting(ctx: Request, name: ClientName, who: String) -> String {
    let _ = ctx;
    format!("{} greets {who}", name.0)
}

fn main() {
    let tool = everything::tool();
    let schema = serde_json::Value::Object(tool.definition().input_schema.clone());
    assert_eq!(schema, serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}));
    let prompt = greeting::prompt();
    assert_eq!(prompt.definition().arguments.as_ref().unwrap().len(), 1);
    let _ = Config { greeting: String::new() }.greeting;
}
