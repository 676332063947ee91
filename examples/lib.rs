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

pub mod everything {
    //! The `everything` server: every tool, resource, prompt and completion that the server
    //! scenarios of the official conformance suite (`@modelcontextprotocol/conformance`) call,
    //! with the names, arguments and contents its checks expect. Each item's documentation
    //! names the scenario that calls it.
    //!
    //! Most items are written with the macros; `json_schema_2020_12_tool` is registered with
    //! [`ToolDef`], because its input schema must be exactly the hand-written JSON Schema
    //! 2020-12 document the check looks for (`$schema`, `$defs`, `additionalProperties`).

    use std::time::Duration;

    use mcp_sdk::server::{
        Completion, CompletionRequest, Context, DefinitionError, Progress, Server, ToolDef, ToolError,
    };
    use mcp_sdk::types::{
        CallToolResult, ContentBlock, CreateMessageRequestParams, ElicitRequestParams, LoggingLevel, PromptMessage,
        Role, SamplingContent, SamplingMessage, TextContent,
    };
    use mcp_sdk::{prompt, resource, tool};
    use serde_json::json;

    /// A 1×1 red pixel, as PNG.
    pub const RED_PIXEL_PNG: &[u8] = b"\x89PNG\r\n\x1a\n\
        \x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\
        \x00\x00\x00\x0dIDAT\x78\xda\x63\xfc\xcf\xc0\xf0\x1f\x00\x05\x05\x02\x00\x5f\xc8\xf1\xd2\
        \x00\x00\x00\x00IEND\xae\x42\x60\x82";

    /// One sample of silence, as a WAV file (PCM, mono, 16 bits, 8 kHz).
    pub fn silent_wav() -> Vec<u8> {
        let samples = [0u8; 2];
        let mut wav = Vec::with_capacity(44 + samples.len());
        wav.extend_from_slice(b"RIFF");
        wav.extend_from_slice(&(36 + samples.len() as u32).to_le_bytes());
        wav.extend_from_slice(b"WAVEfmt ");
        wav.extend_from_slice(&16u32.to_le_bytes()); // size of the format chunk
        wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
        wav.extend_from_slice(&1u16.to_le_bytes()); // mono
        wav.extend_from_slice(&8000u32.to_le_bytes()); // samples per second
        wav.extend_from_slice(&16000u32.to_le_bytes()); // bytes per second
        wav.extend_from_slice(&2u16.to_le_bytes()); // bytes per frame
        wav.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
        wav.extend_from_slice(b"data");
        wav.extend_from_slice(&(samples.len() as u32).to_le_bytes());
        wav.extend_from_slice(&samples);
        wav
    }

    // ===== Tools =====

    /// Returns simple text content (`tools-call-simple-text`).
    #[tool(read_only)]
    pub fn test_simple_text() -> &'static str {
        "This is a simple text response for testing."
    }

    /// Returns image content: a 1×1 red PNG (`tools-call-image`).
    #[tool(read_only)]
    pub fn test_image_content() -> ContentBlock {
        ContentBlock::image(RED_PIXEL_PNG, "image/png")
    }

    /// Returns audio content: a tiny WAV file (`tools-call-audio`).
    #[tool(read_only)]
    pub fn test_audio_content() -> ContentBlock {
        ContentBlock::audio(silent_wav(), "audio/wav")
    }

    /// Returns an embedded text resource (`tools-call-embedded-resource`).
    #[tool(read_only)]
    pub fn test_embedded_resource() -> ContentBlock {
        ContentBlock::embedded_text("test://embedded-resource", "text/plain", "This is an embedded resource content.")
    }

    /// Returns text, image and embedded resource content together (`tools-call-mixed-content`).
    #[tool(read_only)]
    pub fn test_multiple_content_types() -> Vec<ContentBlock> {
        vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(RED_PIXEL_PNG, "image/png"),
            ContentBlock::embedded_text(
                "test://mixed-content-resource",
                "application/json",
                json!({"test": "data", "value": 123}).to_string(),
            ),
        ]
    }

    /// Sends three info-level log messages, 50 ms apart, while it runs
    /// (`tools-call-with-logging`).
    #[tool(read_only)]
    pub async fn test_tool_with_logging(ctx: Context) -> &'static str {
        ctx.log(LoggingLevel::Info, None, json!("Tool execution started")).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        ctx.log(LoggingLevel::Info, None, json!("Tool processing data")).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        ctx.log(LoggingLevel::Info, None, json!("Tool execution completed")).await;
        "Tool with logging executed successfully"
    }

    /// Reports progress 0, 50 and 100 out of 100, 50 ms apart, if the client asked for progress
    /// (`tools-call-with-progress`).
    #[tool(read_only)]
    pub async fn test_tool_with_progress(progress: Progress) -> String {
        for (step, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if step > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            progress.report(done, Some(100.0), Some(format!("Completed step {done} of 100"))).await;
        }
        format!("Progress reported: {}", if progress.is_requested() { "0, 50, 100 of 100" } else { "not requested" })
    }

    /// Always fails, with an `isError` result (`tools-call-error`).
    #[tool(read_only)]
    pub fn test_error_handling() -> Result<String, String> {
        Err("This tool intentionally returns an error for testing".to_owned())
    }

    /// Closes the SSE stream of this call (when served over Streamable HTTP) and answers after
    /// 100 ms, so that the client must reconnect to get the result (`server-sse-polling`,
    /// SEP-1699).
    #[tool(read_only)]
    pub async fn test_reconnection(ctx: Context) -> &'static str {
        ctx.close_sse_stream().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        "Reconnection test completed successfully. If you received this, the client properly reconnected after \
         stream closure."
    }

    /// Asks the client's model to answer a prompt (`sampling/createMessage`) and returns its
    /// answer (`tools-call-sampling`).
    ///
    /// # Arguments
    ///
    /// * `prompt` - The prompt to send to the LLM
    #[tool]
    pub async fn test_sampling(prompt: String, ctx: Context) -> Result<String, String> {
        let message = SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new(prompt)));
        let answer = ctx
            .create_message(CreateMessageRequestParams::new(100, vec![message]))
            .await
            .map_err(|e| format!("sampling failed: {e}"))?;
        let text = match &answer.content {
            SamplingContent::Text(t) => t.text.clone(),
            other => format!("({} non-text block(s))", other.blocks().len()),
        };
        Ok(format!("LLM response: {text}"))
    }

    /// Asks the user for a username and an email address (`elicitation/create`) and returns
    /// the answer (`tools-call-elicitation`).
    ///
    /// # Arguments
    ///
    /// * `message` - The message to show the user
    #[tool]
    pub async fn test_elicitation(message: String, ctx: Context) -> Result<String, String> {
        let answer = elicit(
            &ctx,
            json!({
                "mode": "form",
                "message": message,
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"}
                    },
                    "required": ["username", "email"]
                }
            }),
        )
        .await?;
        Ok(format!("User response: {answer}"))
    }

    /// Asks the user to fill in a form whose every field has a default: a string, an integer,
    /// a number, an enum and a boolean (`elicitation-sep1034-defaults`, SEP-1034).
    #[tool]
    pub async fn test_elicitation_sep1034_defaults(ctx: Context) -> Result<String, String> {
        let answer = elicit(
            &ctx,
            json!({
                "mode": "form",
                "message": "Please review and update the form fields with defaults",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "User name", "default": "John Doe"},
                        "age": {"type": "integer", "description": "User age", "default": 30},
                        "score": {"type": "number", "description": "User score", "default": 95.5},
                        "status": {
                            "type": "string",
                            "description": "User status",
                            "enum": ["active", "inactive", "pending"],
                            "default": "active"
                        },
                        "verified": {"type": "boolean", "description": "Verification status", "default": true}
                    },
                    "required": []
                }
            }),
        )
        .await?;
        Ok(format!("Elicitation completed: {answer}"))
    }

    /// Asks the user to choose in the five kinds of enum fields: untitled and titled single
    /// select, the legacy `enumNames` form, untitled and titled multiple select
    /// (`elicitation-sep1330-enums`, SEP-1330).
    #[tool]
    pub async fn test_elicitation_sep1330_enums(ctx: Context) -> Result<String, String> {
        let answer = elicit(
            &ctx,
            json!({
                "mode": "form",
                "message": "Please select options from the enum fields",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "untitledSingle": {
                            "type": "string",
                            "description": "Select one option",
                            "enum": ["option1", "option2", "option3"]
                        },
                        "titledSingle": {
                            "type": "string",
                            "description": "Select one option with titles",
                            "oneOf": [
                                {"const": "value1", "title": "First Option"},
                                {"const": "value2", "title": "Second Option"},
                                {"const": "value3", "title": "Third Option"}
                            ]
                        },
                        "legacyEnum": {
                            "type": "string",
                            "description": "Select one option (legacy)",
                            "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"]
                        },
                        "untitledMulti": {
                            "type": "array",
                            "description": "Select multiple options",
                            "minItems": 1,
                            "maxItems": 3,
                            "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
                        },
                        "titledMulti": {
                            "type": "array",
                            "description": "Select multiple options with titles",
                            "minItems": 1,
                            "maxItems": 3,
                            "items": {
                                "anyOf": [
                                    {"const": "value1", "title": "First Choice"},
                                    {"const": "value2", "title": "Second Choice"},
                                    {"const": "value3", "title": "Third Choice"}
                                ]
                            }
                        }
                    },
                    "required": []
                }
            }),
        )
        .await?;
        Ok(format!("Elicitation completed: {answer}"))
    }

    /// Sends the elicitation request `params` and describes the answer as
    /// `action=<action>, content=<JSON>`.
    async fn elicit(ctx: &Context, params: serde_json::Value) -> Result<String, String> {
        let params: ElicitRequestParams = serde_json::from_value(params).map_err(|e| e.to_string())?;
        let answer = ctx.elicit(params).await.map_err(|e| format!("elicitation failed: {e}"))?;
        let content = serde_json::to_string(&answer.content.unwrap_or_default()).map_err(|e| e.to_string())?;
        Ok(format!("action={}, content={content}", answer.action))
    }

    /// `json_schema_2020_12_tool` (`json-schema-2020-12`, SEP-1613): its input schema is a JSON
    /// Schema 2020-12 document with `$schema`, `$defs` (referenced by `$ref`) and
    /// `additionalProperties`, listed exactly as written; calls are checked against it.
    pub fn json_schema_2020_12_tool() -> Result<ToolDef, DefinitionError> {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {
                        "street": {"type": "string"},
                        "city": {"type": "string"}
                    }
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"}
            },
            "additionalProperties": false
        });
        let tool = ToolDef::new("json_schema_2020_12_tool", schema, |args, _ctx| async move {
            let args = serde_json::Value::Object(args);
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!(
                "JSON Schema 2020-12 tool called with: {args}"
            ))]))
        })?;
        Ok(tool.description("Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)"))
    }

    // ===== Resources =====

    /// A static text resource for testing (`resources-read-text`).
    #[resource("test://static-text", name = "static-text", title = "Static Text Resource", mime_type = "text/plain")]
    pub fn static_text() -> &'static str {
        "This is the content of the static text resource."
    }

    /// A static binary resource (an image) for testing (`resources-read-binary`).
    #[resource(
        "test://static-binary",
        name = "static-binary",
        title = "Static Binary Resource",
        mime_type = "image/png"
    )]
    pub fn static_binary() -> Vec<u8> {
        RED_PIXEL_PNG.to_vec()
    }

    /// A resource template with parameter substitution (`resources-templates-read`).
    #[resource(
        "test://template/{id}/data",
        name = "template",
        title = "Resource Template",
        mime_type = "application/json",
        complete(id = template_ids)
    )]
    pub fn template(id: String) -> String {
        json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
    }

    fn template_ids(request: CompletionRequest) -> Completion {
        Completion::matching(&request.value, ["1", "2", "3", "123"])
    }

    /// A resource clients subscribe to (`resources-subscribe`, `resources-unsubscribe`).
    #[resource(
        "test://watched-resource",
        name = "watched-resource",
        title = "Watched Resource",
        mime_type = "text/plain"
    )]
    pub fn watched_resource() -> &'static str {
        "Watched resource content"
    }

    // ===== Prompts =====

    /// A simple prompt without arguments (`prompts-get-simple`).
    #[prompt(title = "Simple Test Prompt")]
    pub fn test_simple_prompt() -> &'static str {
        "This is a simple prompt for testing."
    }

    /// A prompt with required arguments (`prompts-get-with-args`); both complete
    /// (`completion-complete`).
    ///
    /// # Arguments
    ///
    /// * `arg1` - First test argument
    /// * `arg2` - Second test argument
    #[prompt(title = "Prompt With Arguments", complete(arg1 = argument_values, arg2 = argument_values))]
    pub fn test_prompt_with_arguments(arg1: String, arg2: String) -> String {
        format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
    }

    fn argument_values(request: CompletionRequest) -> Completion {
        Completion::matching(&request.value, ["paris", "park", "party"])
    }

    /// A prompt that includes an embedded resource (`prompts-get-embedded-resource`).
    ///
    /// # Arguments
    ///
    /// * `resource_uri` - URI of the resource to embed
    #[prompt(title = "Prompt With Embedded Resource")]
    pub fn test_prompt_with_embedded_resource(
        #[serde(rename = "resourceUri")] resource_uri: String,
    ) -> Vec<PromptMessage> {
        vec![
            PromptMessage::new(
                Role::User,
                ContentBlock::embedded_text(resource_uri, "text/plain", "Embedded resource content for testing."),
            ),
            PromptMessage::new(Role::User, ContentBlock::text("Please process the embedded resource above.")),
        ]
    }

    /// A prompt that includes image content (`prompts-get-with-image`).
    #[prompt(title = "Prompt With Image")]
    pub fn test_prompt_with_image() -> Vec<PromptMessage> {
        vec![
            PromptMessage::new(Role::User, ContentBlock::image(RED_PIXEL_PNG, "image/png")),
            PromptMessage::new(Role::User, ContentBlock::text("Please analyze the image above.")),
        ]
    }

    /// The server.
    pub fn server() -> Result<Server, DefinitionError> {
        Server::builder("mcp-rust-everything", env!("CARGO_PKG_VERSION"))
            .title("Everything (conformance)")
            .instructions("The tools, resources and prompts the MCP conformance suite's server scenarios call.")
            .tools([
                test_simple_text::tool(),
                test_image_content::tool(),
                test_audio_content::tool(),
                test_embedded_resource::tool(),
                test_multiple_content_types::tool(),
                test_tool_with_logging::tool(),
                test_tool_with_progress::tool(),
                test_error_handling::tool(),
                test_reconnection::tool(),
                test_sampling::tool(),
                test_elicitation::tool(),
                test_elicitation_sep1034_defaults::tool(),
                test_elicitation_sep1330_enums::tool(),
                json_schema_2020_12_tool()?,
            ])
            .resources([static_text::resource(), static_binary::resource(), watched_resource::resource()])
            .resource_template(template::template())
            .prompts([
                test_simple_prompt::prompt(),
                test_prompt_with_arguments::prompt(),
                test_prompt_with_embedded_resource::prompt(),
                test_prompt_with_image::prompt(),
            ])
            .build()
    }
}
