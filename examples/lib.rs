//! Runnable examples of the MCP Rust SDK (`cargo run --release --example <name>`), and the
//! pieces they share.

pub mod echo {
    //! The `echo` server: one tool `echo` ({"text": string} in, the same text out) and a
    //! `sleep` tool ({"ms": integer}) for concurrency tests.

    use std::time::Duration;

    use mcp_sdk::jsonrpc::PeerConfig;
    use mcp_sdk::server::{DefinitionError, Server, ToolDef, ToolError};
    use mcp_sdk::types::{CallToolResult, ContentBlock};

    /// The server, with the given connection limits.
    pub fn server(config: PeerConfig) -> Result<Server, DefinitionError> {
        let echo = ToolDef::new(
            "echo",
            serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            |args, _ctx| async move {
                let text = args.get("text").and_then(|t| t.as_str()).unwrap_or_default();
                Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text)]))
            },
        )?
        .description("Returns the text it is given");
        let sleep = ToolDef::new(
            "sleep",
            serde_json::json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}, "required": ["ms"]}),
            |args, _ctx| async move {
                let ms = args.get("ms").and_then(|m| m.as_u64()).unwrap_or(0).min(60_000);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!("slept {ms} ms"))]))
            },
        )?
        .description("Answers after `ms` milliseconds");
        Server::builder("echo", env!("CARGO_PKG_VERSION")).peer_config(config).tool(echo).tool(sleep).build()
    }
}

pub mod showcase {
    //! The `stdio_server` example's server: tools (plain, structured output, progress and
    //! logging, sampling, elicitation, roots), a prompt with completions, a fixed resource and
    //! a template with completions, all defined with the macros.

    use std::collections::BTreeMap;

    use mcp_sdk::server::{CompletionRequest, Context, DefinitionError, Progress, Server};
    use mcp_sdk::types::{
        CreateMessageRequestParams, ElicitAction, ElicitRequestParams, LoggingLevel, Role, SamplingContent,
        SamplingMessage, TextContent,
    };
    use mcp_sdk::{prompt, resource, tool};

    /// Adds two numbers.
    ///
    /// # Arguments
    ///
    /// * `a` - the first number
    /// * `b` - the second number
    #[tool(read_only, idempotent)]
    pub fn add(a: f64, b: f64) -> f64 {
        a + b
    }

    /// A weather report.
    #[derive(serde::Serialize, schemars::JsonSchema)]
    pub struct Weather {
        /// The city.
        pub city: String,
        /// Degrees Celsius.
        pub temperature: f64,
        /// Sky conditions.
        pub conditions: String,
    }

    /// Reports the (invented) weather of a city, as structured data.
    ///
    /// # Arguments
    ///
    /// * `city` - the city
    #[tool(read_only, open_world)]
    pub fn weather(city: String) -> Weather {
        let temperature = 10.0 + (city.len() % 15) as f64;
        Weather { city, temperature, conditions: "partly cloudy".to_owned() }
    }

    /// Counts down, reporting progress and logging each step.
    ///
    /// # Arguments
    ///
    /// * `from` - where to start (at most 10)
    #[tool]
    pub async fn count_down(from: u32, progress: Progress, ctx: Context) -> String {
        let from = from.min(10);
        for (done, n) in (0..from).rev().enumerate() {
            progress.report(done as f64 + 1.0, Some(f64::from(from)), Some(format!("{n}"))).await;
            ctx.log(LoggingLevel::Info, Some("count_down"), serde_json::json!({ "remaining": n })).await;
        }
        format!("counted down from {from}")
    }

    /// Asks the client's model a question (sampling).
    ///
    /// # Arguments
    ///
    /// * `question` - what to ask
    #[tool]
    pub async fn ask_model(question: String, ctx: Context) -> Result<String, String> {
        let message = SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new(question)));
        let answer =
            ctx.create_message(CreateMessageRequestParams::new(200, vec![message])).await.map_err(|e| e.to_string())?;
        Ok(match answer.content {
            SamplingContent::Text(t) => format!("{} says: {}", answer.model, t.text),
            other => format!("{} answered with {} block(s)", answer.model, other.blocks().len()),
        })
    }

    /// Asks the user to confirm an order (elicitation).
    ///
    /// # Arguments
    ///
    /// * `item` - what to order
    #[tool(destructive)]
    pub async fn order(item: String, ctx: Context) -> Result<String, String> {
        let request: ElicitRequestParams = serde_json::from_value(serde_json::json!({
            "message": format!("Order {item}?"),
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "quantity": {"type": "integer", "minimum": 1, "default": 1},
                    "gift": {"type": "boolean", "default": false}
                },
                "required": ["quantity"]
            }
        }))
        .map_err(|e| e.to_string())?;
        let answer = ctx.elicit(request).await.map_err(|e| e.to_string())?;
        Ok(match answer.action {
            ElicitAction::Accept => {
                let content = serde_json::to_string(&answer.content.unwrap_or_default()).unwrap_or_default();
                format!("ordered {item}: {content}")
            }
            other => format!("order of {item}: {other}"),
        })
    }

    /// Lists the client's roots.
    #[tool(read_only)]
    pub async fn roots(ctx: Context) -> Result<String, String> {
        let roots = ctx.list_roots().await.map_err(|e| e.to_string())?;
        Ok(roots.roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(", "))
    }

    fn languages(request: CompletionRequest) -> Vec<String> {
        ["python", "rust", "typescript", "go"]
            .iter()
            .filter(|l| l.starts_with(&request.value))
            .map(|l| (*l).to_owned())
            .collect()
    }

    /// Asks for a code review.
    ///
    /// # Arguments
    ///
    /// * `code` - the code to review
    /// * `language` - the language it is written in
    #[prompt(title = "Code review", complete(language = languages))]
    pub fn review(code: String, language: Option<String>) -> String {
        format!("Please review this {} code:\n\n{code}", language.as_deref().unwrap_or("source"))
    }

    /// The server's readme.
    #[resource("showcase://readme", mime_type = "text/markdown", title = "Readme")]
    pub fn readme() -> &'static str {
        "# Showcase\n\nAn MCP server written with the Rust SDK's macros."
    }

    fn note_ids(request: CompletionRequest) -> Vec<String> {
        notes().keys().filter(|k| k.starts_with(&request.value)).cloned().collect()
    }

    fn notes() -> BTreeMap<String, &'static str> {
        [("groceries", "milk, eggs"), ("ideas", "a faster MCP SDK"), ("todo", "write the docs")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect()
    }

    /// A note, by id.
    #[resource("notes://{id}", mime_type = "text/plain", complete(id = note_ids))]
    pub fn note(id: String) -> Result<String, String> {
        notes().get(&id).map(|n| (*n).to_owned()).ok_or_else(|| format!("no note `{id}`"))
    }

    /// The server.
    pub fn server() -> Result<Server, DefinitionError> {
        Server::builder("showcase", env!("CARGO_PKG_VERSION"))
            .title("Showcase")
            .instructions("Tools: add, weather, count_down, ask_model, order, roots. Prompt: review.")
            .tool(add::tool())
            .tool(weather::tool())
            .tool(count_down::tool())
            .tool(ask_model::tool())
            .tool(order::tool())
            .tool(roots::tool())
            .prompt(review::prompt())
            .resource(readme::resource())
            .resource_template(note::template())
            .build()
    }
}
