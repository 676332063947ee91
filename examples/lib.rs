//! Runnable examples of the MCP Rust SDK (`cargo run --release --example <name>`), and the
//! pieces they share.

pub mod echo {
    //! The `echo` server: one tool `echo` ({"text": string} in, the same text out) and a
    //! `sleep` tool ({"ms": integer}) for concurrency tests.

    use std::time::Duration;

    use mcp_sdk::jsonrpc::PeerConfig;
    use mcp_sdk::server::{DefinitionError, Server, ServerBuilder, ToolDef, ToolError};
    use mcp_sdk::types::{CallToolResult, ContentBlock};

    /// The server, with the given connection limits.
    pub fn server(config: PeerConfig) -> Result<Server, DefinitionError> {
        builder(config)?.build()
    }

    /// The server's builder, with the given connection limits (to share its state in a fleet
    /// first: [`crate::fleet::configure`]).
    pub fn builder(config: PeerConfig) -> Result<ServerBuilder, DefinitionError> {
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
        Ok(Server::builder("echo", env!("CARGO_PKG_VERSION")).peer_config(config).tool(echo).tool(sleep))
    }
}

pub mod showcase {
    //! The `stdio_server` example's server: tools (plain, structured output, progress and
    //! logging, sampling, elicitation, roots), a prompt with completions, a fixed resource and
    //! a template with completions, all defined with the macros; and the custom method of
    //! [`crate::reverse`].

    use std::collections::BTreeMap;

    use mcp_sdk::server::{
        CompletionRequest, Context, DefinitionError, Elicitation, Progress, Server, ServerBuilder, ToolDef, ToolError,
    };
    use mcp_sdk::types::{
        CreateMessageRequestParams, ElicitAction, ElicitRequestParams, ErrorObject, LoggingLevel, Role,
        SamplingContent, SamplingMessage, TextContent,
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
            progress.report(done as f64 + 1.0).total(f64::from(from)).message(format!("{n}")).await;
            ctx.logger("count_down").log(LoggingLevel::Info, serde_json::json!({ "remaining": n })).await;
        }
        format!("counted down from {from}")
    }

    /// Builds a target: a long job, which a client may run as a task (protocol revision
    /// 2025-11-25: `tools/call` with `task`), reporting its progress step by step.
    ///
    /// # Arguments
    ///
    /// * `target` - what to build
    /// * `steps` - how many steps (at most 10; default 3)
    #[tool(task = "optional")]
    pub async fn build(target: String, steps: Option<u32>, progress: Progress) -> String {
        let steps = steps.unwrap_or(3).min(10);
        for step in 1..=steps {
            // The work of one step.
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            progress.report(f64::from(step)).total(f64::from(steps)).message(format!("step {step}")).await;
        }
        format!("built {target} in {steps} steps")
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
        let answer = ctx.elicit_raw(request).await.map_err(|e| e.to_string())?;
        Ok(match answer.action {
            ElicitAction::Accept => {
                let content = serde_json::to_string(&answer.content.unwrap_or_default()).unwrap_or_default();
                format!("ordered {item}: {content}")
            }
            other => format!("order of {item}: {other}"),
        })
    }

    /// Connects an Example Co account: asks the client to have its user open the sign-in page
    /// (URL-mode elicitation, 2025-11-25), then announces the sign-in's completion
    /// (`notifications/elicitation/complete`). A real server announces it from the page's
    /// callback, with the `UrlElicitation` it kept; this one does it at once.
    #[tool]
    pub async fn connect_account(ctx: Context) -> Result<String, ToolError> {
        let pending = ctx.url_elicitation();
        let url = format!("https://example.com/connect?state={}", pending.id());
        match ctx.elicit_url(&pending, "Sign in to Example Co", url).await? {
            Elicitation::Accepted(()) => {
                let id = pending.id().to_owned();
                tokio::spawn(async move {
                    if let Err(e) = pending.complete().await {
                        tracing::debug!(error = %e, "the completion was not sent");
                    }
                });
                Ok(format!("connecting (elicitation {id})"))
            }
            other => Ok(format!("not connected: {other:?}")),
        }
    }

    /// Lists the files of the Example Co account, which needs a sign-in first: the call fails
    /// with -32042 ("URL elicitation required") naming the page to visit.
    #[tool(read_only)]
    pub async fn account_files(ctx: Context) -> Result<String, ToolError> {
        let pending = ctx.url_elicitation();
        let url = format!("https://example.com/connect?state={}", pending.id());
        Err(pending.required("Sign in to Example Co to list your files", url))
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

    /// The arguments of the `review` prompt: each field is one, described by its doc comment.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct ReviewArgs {
        /// The code to review.
        pub code: String,
        /// The language it is written in.
        pub language: Option<String>,
    }

    /// Asks for a code review.
    #[prompt(title = "Code review", complete(language = languages))]
    pub fn review(args: ReviewArgs) -> String {
        format!("Please review this {} code:\n\n{}", args.language.as_deref().unwrap_or("source"), args.code)
    }

    /// The server's readme.
    #[resource(
        "showcase://readme",
        mime_type = "text/markdown",
        title = "Readme",
        size = 61,
        annotations(audience = ["user", "assistant"], priority = 0.9, last_modified = "2026-11-25T00:00:00Z"),
        meta("dev.showcase/section" = "about")
    )]
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

    /// A note, by id (an unknown id is "resource not found", in the code of the request's
    /// revision).
    #[resource("notes://{id}", mime_type = "text/plain", complete(id = note_ids))]
    pub fn note(id: String) -> Result<String, ErrorObject> {
        notes()
            .get(&id)
            .map(|n| (*n).to_owned())
            .ok_or_else(|| ErrorObject::resource_not_found(&format!("notes://{id}")))
    }

    /// The server.
    pub fn server() -> Result<Server, DefinitionError> {
        server_with_write_scope(None)
    }

    /// The server, its tools that are not read-only (`count_down`, `build`, `ask_model`, `order`)
    /// needing the OAuth scope `write_scope` when it is served with authorization (the
    /// `auth_server` example).
    pub fn server_with_write_scope(write_scope: Option<&str>) -> Result<Server, DefinitionError> {
        builder(write_scope).build()
    }

    /// The builder of [`server_with_write_scope`], every item registered.
    pub fn builder(write_scope: Option<&str>) -> ServerBuilder {
        let write = |tool: ToolDef| match write_scope {
            Some(scope) => tool.scopes([scope]),
            None => tool,
        };
        crate::reverse::serve(Server::builder("showcase", env!("CARGO_PKG_VERSION")))
            .title("Showcase")
            .instructions(
                "Tools: add, weather, count_down, build, ask_model, order, connect_account, account_files, roots. \
                 Prompt: review.",
            )
            .tool(add::tool())
            .tool(weather::tool())
            .tool(write(count_down::tool()))
            .tool(write(build::tool()))
            .tool(write(ask_model::tool()))
            .tool(write(order::tool()))
            .tool(connect_account::tool())
            .tool(account_files::tool())
            .tool(roots::tool())
            .prompt(review::prompt())
            .resource(readme::resource())
            .resource_template(note::template())
    }
}

pub mod reverse {
    //! A custom method (outside the protocol), served by `showcase` and `everything`:
    //! `example/reverse` reverses a text, and tells of it first with the custom notification
    //! `example/reversing`. The server declares it as the extension `com.example/reverse`
    //! (2026-07-28) and the experimental capability `reverse` (every revision).

    use mcp_sdk::server::{Context, ServerBuilder};
    use mcp_sdk::types::{CustomNotification, CustomRequest, ErrorObject};

    /// `example/reverse`.
    pub enum Reverse {}

    /// The params and result of [`Reverse`], and the params of [`Reversing`].
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    pub struct Text {
        /// The text.
        pub text: String,
    }

    impl CustomRequest for Reverse {
        const METHOD: &'static str = "example/reverse";
        type Params = Text;
        type Result = Text;
    }

    /// `example/reversing`: sent before `example/reverse` answers.
    pub enum Reversing {}

    impl CustomNotification for Reversing {
        const METHOD: &'static str = "example/reversing";
        type Params = Text;
    }

    /// The extension identifier (2026-07-28) that declares [`Reverse`].
    pub const EXTENSION: &str = "com.example/reverse";

    /// The experimental capability that declares [`Reverse`].
    pub const EXPERIMENTAL: &str = "reverse";

    /// Serves [`Reverse`] on `builder`, and declares it.
    pub fn serve(builder: ServerBuilder) -> ServerBuilder {
        builder
            .request_handler::<Reverse, _, _>(reverse)
            .extension(EXTENSION, Default::default())
            .experimental_capability(EXPERIMENTAL, Default::default())
    }

    async fn reverse(params: Text, ctx: Context) -> Result<Text, ErrorObject> {
        ctx.notify::<Reversing>(Text { text: params.text.clone() }).await.map_err(ErrorObject::internal_error)?;
        Ok(Text { text: params.text.chars().rev().collect() })
    }
}

pub mod fleet {
    //! One instance of a fleet: a server whose state is shared with the other instances
    //! through Redis, so that any instance serves any client behind a load balancer without
    //! stickiness (`everything --http ADDR --redis URL`, `http_server ADDR --redis URL`;
    //! `cargo xtask fleet` runs three of each behind HAProxy).

    use mcp_sdk::server::ServerBuilder;
    use mcp_sdk::transport::http::server::HttpServerConfig;

    /// `builder` and `config` with the server's state shared through the Redis at `url`
    /// (`redis://127.0.0.1:6379`, or `rediss://` for TLS, trusting the CA certificates in PEM
    /// of the environment variable `MCP_REDIS_CA_PEM` if set, the system's otherwise):
    /// sessions, resumable streams, change notifications, tasks and the `requestState` keys
    /// (see docs/deploy.md). The keys are read at start-up, so Redis must answer then;
    /// afterwards an instance whose Redis goes away keeps serving what needs no Redis, and the
    /// rest works again when Redis is back.
    pub async fn configure(
        url: &str,
        builder: ServerBuilder,
        config: HttpServerConfig,
    ) -> Result<(ServerBuilder, HttpServerConfig), mcp_redis::Error> {
        let mut redis = mcp_redis::RedisConfig::new(url);
        if let Some(pem) = std::env::var_os("MCP_REDIS_CA_PEM") {
            redis = redis.tls_ca_pem(pem.into_encoded_bytes());
        }
        let redis = mcp_redis::Redis::connect_with(redis)?;
        let builder = builder
            // list_changed and resource updates heard on every instance, cancels of tasks too
            .subscription_bus(std::sync::Arc::new(redis.subscription_bus()))
            // a requestState sealed by one instance opens on the others (a key a day)
            .request_state_keys(redis.request_state_keys(std::time::Duration::from_secs(86_400)).await?)
            .task_store(redis.task_store());
        let config = config
            // sessions of the session revisions served by any instance
            .shared_sessions(std::sync::Arc::new(redis.sessions()))
            // streams resumed (Last-Event-ID) on any instance
            .event_store(Some(std::sync::Arc::new(redis.event_store())))
            // every client comes through the balancer's address: bound clients there
            .max_sessions_per_client(usize::MAX);
        Ok((builder, config))
    }
}

pub mod everything {
    //! The `everything` server: every tool, resource, prompt and completion that the server
    //! scenarios of the official conformance suite (`@modelcontextprotocol/conformance`) call,
    //! with the names, arguments and contents its checks expect. Each item's documentation
    //! names the scenario that calls it.
    //!
    //! It serves both suites we run: 0.1.16 (the session revisions, up to 2025-11-25) and
    //! 0.2.0-alpha.12 (`--requirements 2026-07-28`). The 2026-07-28 fixtures are at the end of
    //! the tools: the diagnostic tools of `server-stateless` (`test_missing_capability`,
    //! `test_streaming_elicitation`, `test_logging_tool`, `test_trigger_tool_change`,
    //! `test_trigger_prompt_change`), the multi round-trip (SEP-2322) tools
    //! `test_input_required_result_*` and prompt `test_input_required_result_prompt`, and
    //! `test_region_header` (an `x-mcp-header` argument, SEP-2243), and the fixtures of the
    //! tasks extension (SEP-2663, the `tasks-*` scenarios): `greet`, `slow_compute`,
    //! `failing_job`, `protocol_error_job`, `confirm_delete`, `multi_input` and
    //! `test_tool_with_task` (whose task begins after a synchronous round trip). They ask the client for
    //! input the way any handler does (`ctx.elicit_raw_as(..)`, `ctx.create_message_as(..)`,
    //! `ctx.list_roots_as(..)`, propagating [`ClientRequestError::InputRequired`] with `?`):
    //! in a 2025 session that is a request to the client, for a 2026-07-28 request an
    //! input-required result whose sealed `requestState` carries the answers of earlier rounds.
    //!
    //! Beside the fixtures, it serves the custom method of [`crate::reverse`].
    //!
    //! The order of `tools/list` is fixed: `test_simple_text` (callable with `{}`) comes first,
    //! and the trigger tools, which re-register items at run time, re-register the last tool and
    //! the last prompt, so the lists keep their order.
    //!
    //! Most items are written with the macros; `json_schema_2020_12_tool` and
    //! `test_region_header` are registered with [`ToolDef`], because their input schemas must be
    //! exactly the hand-written documents the checks look for (JSON Schema 2020-12 keywords,
    //! `x-mcp-header`).

    use std::sync::{Arc, OnceLock};
    use std::time::Duration;

    use mcp_sdk::server::apps::{UiCsp, UiResource};
    use mcp_sdk::server::{
        ClientRequestError, Completion, CompletionRequest, Context, DefinitionError, Progress, Server, ServerBuilder,
        State, ToolDef, ToolError,
    };
    use mcp_sdk::transport::http::server::HttpServerConfig;
    use mcp_sdk::types::{
        CallToolResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
        ElicitRequestFormParams, ElicitRequestFormParamsRequestedSchema, ElicitRequestParams, ElicitResult,
        ErrorObject, LoggingLevel, PromptMessage, Role, SamplingContent, SamplingMessage, TextContent,
    };
    use mcp_sdk::{prompt, resource, tool};
    use serde_json::{Value, json};

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
        ctx.log(LoggingLevel::Info, json!("Tool execution started")).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        ctx.log(LoggingLevel::Info, json!("Tool processing data")).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        ctx.log(LoggingLevel::Info, json!("Tool execution completed")).await;
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
            progress.report(done).total(100.0).message(format!("Completed step {done} of 100")).await;
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
        let answer =
            ctx.create_message(sampling_request(&prompt, 100)).await.map_err(|e| format!("sampling failed: {e}"))?;
        Ok(format!("LLM response: {}", sampled_text(&answer)))
    }

    /// A `sampling/createMessage` request: one user message, `text`.
    fn sampling_request(text: &str, max_tokens: i64) -> CreateMessageRequestParams {
        let message = SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new(text)));
        CreateMessageRequestParams::new(max_tokens, vec![message])
    }

    /// The text of the model's answer.
    fn sampled_text(answer: &CreateMessageResult) -> String {
        match &answer.content {
            SamplingContent::Text(t) => t.text.clone(),
            other => format!("({} non-text block(s))", other.blocks().len()),
        }
    }

    /// Asks the user for a username and an email address (`elicitation/create`) and returns
    /// the answer (`tools-call-elicitation`).
    ///
    /// # Arguments
    ///
    /// * `message` - The message to show the user
    #[tool]
    pub async fn test_elicitation(message: String, ctx: Context) -> Result<String, String> {
        let form = ordered_form(
            &message,
            &[
                ("username", json!({"type": "string", "description": "User's response"}), true),
                ("email", json!({"type": "string", "description": "User's email address"}), true),
            ],
        )?;
        let answer = elicit(&ctx, form).await?;
        Ok(format!("User response: {answer}"))
    }

    /// Asks the user to fill in a form whose every field has a default: a string, an integer,
    /// a number, an enum and a boolean (`elicitation-sep1034-defaults`, SEP-1034).
    #[tool]
    pub async fn test_elicitation_sep1034_defaults(ctx: Context) -> Result<String, String> {
        let form = ordered_form(
            "Please review and update the form fields with defaults",
            &[
                ("name", json!({"type": "string", "description": "User name", "default": "John Doe"}), false),
                ("age", json!({"type": "integer", "description": "User age", "default": 30}), false),
                ("score", json!({"type": "number", "description": "User score", "default": 95.5}), false),
                (
                    "status",
                    json!({
                        "type": "string",
                        "description": "User status",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active"
                    }),
                    false,
                ),
                ("verified", json!({"type": "boolean", "description": "Verification status", "default": true}), false),
            ],
        )?;
        let answer = elicit(&ctx, form).await?;
        Ok(format!("Elicitation completed: {answer}"))
    }

    /// Asks the user to choose in the five kinds of enum fields: untitled and titled single
    /// select, the legacy `enumNames` form, untitled and titled multiple select
    /// (`elicitation-sep1330-enums`, SEP-1330).
    #[tool]
    pub async fn test_elicitation_sep1330_enums(ctx: Context) -> Result<String, String> {
        let form = ordered_form(
            "Please select options from the enum fields",
            &[
                (
                    "untitledSingle",
                    json!({"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]}),
                    false,
                ),
                (
                    "titledSingle",
                    json!({
                        "type": "string",
                        "description": "Select one option with titles",
                        "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"}
                        ]
                    }),
                    false,
                ),
                (
                    "legacyEnum",
                    json!({
                        "type": "string",
                        "description": "Select one option (legacy)",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"]
                    }),
                    false,
                ),
                (
                    "untitledMulti",
                    json!({
                        "type": "array",
                        "description": "Select multiple options",
                        "minItems": 1,
                        "maxItems": 3,
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
                    }),
                    false,
                ),
                (
                    "titledMulti",
                    json!({
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
                    }),
                    false,
                ),
            ],
        )?;
        let answer = elicit(&ctx, form).await?;
        Ok(format!("Elicitation completed: {answer}"))
    }

    /// An elicitation form (`mode: "form"`) asking `fields`, each `(name, schema, required)`,
    /// in this order: the form's properties keep the order they are inserted in (a `json!`
    /// object would sort them).
    fn ordered_form(message: &str, fields: &[(&str, Value, bool)]) -> Result<ElicitRequestParams, String> {
        let mut properties = mcp_sdk::types::indexmap::IndexMap::new();
        for (name, schema, _) in fields {
            let definition = serde_json::from_value(schema.clone()).map_err(|e| format!("field {name}: {e}"))?;
            properties.insert((*name).to_owned(), definition);
        }
        let required: Vec<String> = fields.iter().filter(|f| f.2).map(|f| f.0.to_owned()).collect();
        let schema = ElicitRequestFormParamsRequestedSchema::new(properties).with_required(required);
        let mut params = ElicitRequestFormParams::new(message, schema);
        params.mode = Some("form".to_owned());
        Ok(ElicitRequestParams::ElicitRequestForm(params))
    }

    /// Sends the elicitation request `params` and describes the answer as
    /// `action=<action>, content=<JSON>`.
    async fn elicit(ctx: &Context, params: ElicitRequestParams) -> Result<String, String> {
        let answer = ctx.elicit_raw(params).await.map_err(|e| format!("elicitation failed: {e}"))?;
        Ok(describe(&answer))
    }

    /// `json_schema_2020_12_tool` (`json-schema-2020-12`, SEP-1613 and SEP-2106): its input
    /// schema is a JSON Schema 2020-12 document with `$schema`, `$defs` (with an `$anchor`,
    /// referenced by `$ref`), composition (`allOf`/`anyOf`: a phone or an email), conditionals
    /// (`if`/`then`/`else`: the contact method's field is required) and
    /// `additionalProperties`, listed exactly as written; calls are checked against it.
    pub fn json_schema_2020_12_tool() -> Result<ToolDef, DefinitionError> {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {
                        "street": {"type": "string"},
                        "city": {"type": "string"}
                    }
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        });
        let tool = ToolDef::new("json_schema_2020_12_tool", schema, |args, _ctx| async move {
            let args = serde_json::Value::Object(args);
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!(
                "JSON Schema 2020-12 tool called with: {args}"
            ))]))
        })?;
        Ok(tool.description("Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)"))
    }

    // ===== 2026-07-28: the diagnostic tools of `server-stateless` =====

    /// Needs the client's `sampling` capability: asks the model to say hi. A 2026-07-28 client
    /// that declared no sampling gets -32021 with `requiredCapabilities: {"sampling": {}}`
    /// (`server-stateless`, SEP-2575).
    #[tool]
    pub async fn test_missing_capability(ctx: Context) -> Result<String, ClientRequestError> {
        let answer = ctx.create_message_as("sample", sampling_request("Say hi", 10)).await?;
        Ok(format!("sampled: {}", sampled_text(&answer)))
    }

    /// Asks the user a question (key `q`): for a 2026-07-28 request an input-required result on
    /// the request's own stream, never a request of the server's (`server-stateless`).
    #[tool]
    pub async fn test_streaming_elicitation(ctx: Context) -> Result<String, ToolError> {
        let schema = object_schema(&[("a", "string")]);
        let answer = ctx.elicit_raw_as("q", form("q?", schema)?).await?;
        Ok(format!("elicited: {}", describe(&answer)))
    }

    /// Logs one info message: sent to a 2026-07-28 client only if its request's `_meta` asks
    /// for a log level (`server-stateless`), to a 2025 session by its `logging/setLevel`.
    #[tool(read_only)]
    pub async fn test_logging_tool(ctx: Context) -> &'static str {
        ctx.logger("test_logging_tool").log(LoggingLevel::Info, json!("hello from test_logging_tool")).await;
        "logged"
    }

    /// The running server, for the tools that change its lists at run time; [`server`] sets
    /// it once built. (The server holds this handle in its state and the handle holds the
    /// server: neither is ever freed, which is what a server living as long as its process
    /// wants.)
    #[derive(Clone, Default)]
    pub struct ServerHandle(Arc<OnceLock<Server>>);

    impl ServerHandle {
        fn get(&self) -> Result<&Server, ToolError> {
            self.0.get().ok_or_else(|| ToolError::new("the server is not running yet"))
        }
    }

    /// Re-registers itself (the last tool, so the list keeps its order), which tells every
    /// client that listens for tool list changes (`server-stateless`: `subscriptions/listen`).
    #[tool]
    pub async fn test_trigger_tool_change(server: State<ServerHandle>) -> Result<&'static str, ToolError> {
        server.get()?.add_tool(test_trigger_tool_change::tool()).await.map_err(ToolError::new)?;
        Ok("tools changed")
    }

    /// Re-registers `test_input_required_result_prompt` (the last prompt), which tells every
    /// client that listens for prompt list changes (`server-stateless`).
    #[tool]
    pub async fn test_trigger_prompt_change(server: State<ServerHandle>) -> Result<&'static str, ToolError> {
        server.get()?.add_prompt(test_input_required_result_prompt::prompt()).await.map_err(ToolError::new)?;
        Ok("prompts changed")
    }

    // ===== 2026-07-28: multi round-trip requests (SEP-2322, `input-required-result-*`) =====

    /// Asks the user's name (input `user_name`) and greets them
    /// (`input-required-result-basic-elicitation`, and the scenarios that send it missing,
    /// extra or invalid answers). The answer may come with or without the `requestState` of
    /// the first round.
    #[tool]
    pub async fn test_input_required_result_elicitation(ctx: Context) -> Result<String, ToolError> {
        let answer = ctx.elicit_raw_as("user_name", form("What is your name?", name_schema())?).await?;
        Ok(match accepted(&answer, "name") {
            Some(name) => format!("Hello, {name}!"),
            None => format!("No name given ({})", answer.action),
        })
    }

    /// Asks the client's model for the capital of France (input `capital_question`)
    /// (`input-required-result-basic-sampling`).
    #[tool]
    pub async fn test_input_required_result_sampling(ctx: Context) -> Result<String, ToolError> {
        let request = sampling_request("What is the capital of France?", 100);
        let answer = ctx.create_message_as("capital_question", request).await?;
        Ok(format!("model said: {}", sampled_text(&answer)))
    }

    /// Asks for the client's roots (input `client_roots`) and lists them
    /// (`input-required-result-basic-list-roots`).
    #[tool]
    pub async fn test_input_required_result_list_roots(ctx: Context) -> Result<String, ToolError> {
        let roots = ctx.list_roots_as("client_roots").await?;
        Ok(format!("roots: {}", roots.roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(",")))
    }

    /// Asks for a confirmation (input `confirm`); the retry must echo the `requestState` of the
    /// first round, which the server verifies (HMAC) before the handler runs again
    /// (`input-required-result-request-state`).
    #[tool]
    pub async fn test_input_required_result_request_state(ctx: Context) -> Result<String, ToolError> {
        let answer = ctx.elicit_raw_as("confirm", form("Please confirm", object_schema(&[("ok", "boolean")]))?).await?;
        Ok(format!("state-ok: {}", describe(&answer)))
    }

    /// Asks for three inputs in one round: the user's name (`user_name`), a greeting from the
    /// model (`greeting`) and the client's roots (`client_roots`). The three asks run
    /// together, so that all three are pending when the round ends
    /// (`input-required-result-multiple-input-requests`).
    #[tool]
    pub async fn test_input_required_result_multiple_inputs(ctx: Context) -> Result<String, ToolError> {
        let name = form("What is your name?", name_schema())?;
        let (name, greeting, roots) = tokio::join!(
            ctx.elicit_raw_as("user_name", name),
            ctx.create_message_as("greeting", sampling_request("Generate a greeting", 50)),
            ctx.list_roots_as("client_roots"),
        );
        let (name, greeting, roots) = (name?, greeting?, roots?);
        Ok(format!(
            "all inputs received: name={}, greeting={}, roots={}",
            accepted(&name, "name").unwrap_or_default(),
            sampled_text(&greeting),
            roots.roots.len()
        ))
    }

    /// Three rounds: the user's name (`step1`), then their favorite color (`step2`), then the
    /// result; each round's `requestState` carries the answers so far
    /// (`input-required-result-multi-round`).
    #[tool]
    pub async fn test_input_required_result_multi_round(ctx: Context) -> Result<String, ToolError> {
        let name = ctx.elicit_raw_as("step1", form("Step 1: What is your name?", name_schema())?).await?;
        let color_schema = object_schema(&[("color", "string")]);
        let color = ctx.elicit_raw_as("step2", form("Step 2: What is your favorite color?", color_schema)?).await?;
        Ok(format!(
            "done: {} likes {}",
            accepted(&name, "name").unwrap_or_default(),
            accepted(&color, "color").unwrap_or_default()
        ))
    }

    /// Asks for a confirmation (input `confirm`); a retry whose `requestState` was tampered
    /// with fails verification: -32602 (`input-required-result-tampered-state`).
    #[tool]
    pub async fn test_input_required_result_tampered_state(ctx: Context) -> Result<String, ToolError> {
        let answer = ctx.elicit_raw_as("confirm", form("Confirm", object_schema(&[("ok", "boolean")]))?).await?;
        Ok(format!("state verified: {}", describe(&answer)))
    }

    /// Asks for input only through the capabilities the client declared: sampling (`s`),
    /// elicitation (`e`), roots (`r`), together (`input-required-result-capability-check`).
    #[tool]
    pub async fn test_input_required_result_capabilities(ctx: Context) -> Result<String, ToolError> {
        let caps = ctx.client_capabilities();
        let sampling = async {
            match caps.sampling {
                Some(_) => Some(ctx.create_message_as("s", sampling_request("x", 5)).await),
                None => None,
            }
        };
        let form = form("x", object_schema(&[("a", "string")]))?;
        let elicitation = async {
            match caps.elicitation {
                Some(_) => Some(ctx.elicit_raw_as("e", form).await),
                None => None,
            }
        };
        let roots = async {
            match caps.roots {
                Some(_) => Some(ctx.list_roots_as("r").await),
                None => None,
            }
        };
        let (sampling, elicitation, roots) = tokio::join!(sampling, elicitation, roots);
        let (sampling, elicitation, roots) = (sampling.transpose()?, elicitation.transpose()?, roots.transpose()?);
        let used: Vec<&str> =
            [("sampling", sampling.is_some()), ("elicitation", elicitation.is_some()), ("roots", roots.is_some())]
                .into_iter()
                .filter_map(|(name, used)| used.then_some(name))
                .collect();
        Ok(if used.is_empty() { "no capabilities declared".to_owned() } else { format!("done: {}", used.join(", ")) })
    }

    /// `test_region_header` (`http-custom-header-server-validation`, SEP-2243): its `region`
    /// argument is mirrored into the `Mcp-Param-Region` header (`x-mcp-header`), which the
    /// HTTP transport checks against the body (Base64 sentinel form decoded).
    pub fn test_region_header_tool() -> Result<ToolDef, DefinitionError> {
        let schema = json!({
            "type": "object",
            "properties": {"region": {"type": "string", "description": "The region", "x-mcp-header": "Region"}},
            "required": ["region"]
        });
        let tool = ToolDef::new("test_region_header", schema, |args, _ctx| async move {
            let region = args.get("region").and_then(Value::as_str).unwrap_or_default();
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!("region={region}"))]))
        })?;
        Ok(tool.description("Returns the region it is given, which also travels in the Mcp-Param-Region header"))
    }

    /// An elicitation form: `message`, and `schema` as the requested schema.
    fn form(message: &str, schema: Value) -> Result<ElicitRequestParams, ToolError> {
        serde_json::from_value(json!({"message": message, "requestedSchema": schema}))
            .map_err(|e| ToolError::Protocol(ErrorObject::internal_error(e)))
    }

    /// `{"type": "object"}` with the given required properties, each of the given type.
    fn object_schema(fields: &[(&str, &str)]) -> Value {
        let properties: serde_json::Map<String, Value> =
            fields.iter().map(|(name, kind)| ((*name).to_owned(), json!({"type": kind}))).collect();
        let required: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
        json!({"type": "object", "properties": properties, "required": required})
    }

    fn name_schema() -> Value {
        object_schema(&[("name", "string")])
    }

    /// The field `name` of an accepted form, as text.
    fn accepted(answer: &ElicitResult, name: &str) -> Option<String> {
        if answer.action != ElicitAction::Accept {
            return None;
        }
        let value = serde_json::to_value(answer.content.as_ref()?.get(name)?).ok()?;
        Some(match value {
            Value::String(s) => s,
            other => other.to_string(),
        })
    }

    /// `action=<action>, content=<JSON>`.
    fn describe(answer: &ElicitResult) -> String {
        let content = serde_json::to_string(&answer.content.clone().unwrap_or_default()).unwrap_or_default();
        format!("action={}, content={content}", answer.action)
    }

    // ===== 2026-07-28: the tasks extension (SEP-2663, `tasks-*` scenarios) =====
    //
    // Each handler is the same code for a plain call, a 2025-11-25 task and a 2026-07-28 task:
    // the definition says whether the tool supports tasks (`task = ".."`), the server decides.

    /// Greets `name` (`Hello, {name}!`); never a task, even for a client that declares the
    /// tasks extension or sends a legacy `task` param (`tasks-lifecycle`,
    /// `tasks-request-headers`, `tasks-dispatch-and-envelope`).
    #[tool]
    pub fn greet(name: String) -> String {
        format!("Hello, {name}!")
    }

    /// Sleeps `seconds` (at most 10 minutes), then reports `label`: a task for a client that
    /// declares the extension, a plain call otherwise (most `tasks-*` scenarios).
    #[tool(task = "optional")]
    pub async fn slow_compute(seconds: f64, label: String, ctx: Context) -> Result<String, ToolError> {
        let pause = Duration::try_from_secs_f64(seconds.clamp(0.0, 600.0)).unwrap_or_default();
        tokio::select! {
            () = tokio::time::sleep(pause) => Ok(format!("computed `{label}` in {seconds} s")),
            () = ctx.cancellation().cancelled() => Err(ToolError::Tool(format!("`{label}` was cancelled"))),
        }
    }

    /// A task whose tool fails after a second: the task completes with `isError: true`.
    /// Task required: a client without the extension gets -32021 (`tasks-lifecycle`,
    /// `tasks-dispatch-and-envelope`, `tasks-required-task-error`).
    #[tool(task = "required")]
    pub async fn failing_job() -> Result<String, ToolError> {
        tokio::time::sleep(Duration::from_secs(1)).await;
        Err(ToolError::Tool("the job failed".to_owned()))
    }

    /// A task that ends with a protocol error (-32603): the task is `failed` with `error`
    /// (`tasks-lifecycle`).
    #[tool(task = "optional")]
    pub async fn protocol_error_job() -> Result<String, ToolError> {
        Err(ToolError::Protocol(ErrorObject::internal_error("the job hit an internal error")))
    }

    /// Asks for a confirmation (input `confirm`) before "deleting" `filename`: as a task it
    /// waits in `input_required` until `tasks/update` answers (`tasks-mrtr-input`,
    /// `tasks-dispatch-and-envelope`).
    #[tool(task = "optional")]
    pub async fn confirm_delete(filename: String, ctx: Context) -> Result<String, ToolError> {
        let schema = object_schema(&[("confirm", "boolean")]);
        let answer = ctx.elicit_raw_as("confirm", form(&format!("Delete {filename}?"), schema)?).await?;
        Ok(match accepted(&answer, "confirm").as_deref() {
            Some("true") => format!("deleted {filename}"),
            _ => format!("kept {filename} ({})", answer.action),
        })
    }

    /// Asks for two inputs at once (`first`, `second`): as a task both are outstanding
    /// together, and may be answered one `tasks/update` at a time (`tasks-mrtr-input`).
    #[tool(task = "optional")]
    pub async fn multi_input(ctx: Context) -> Result<String, ToolError> {
        let schema = || object_schema(&[("name", "string"), ("confirm", "boolean")]);
        let (first, second) = tokio::join!(
            async { ctx.elicit_raw_as("first", form("First input", schema())?).await.map_err(ToolError::from) },
            async { ctx.elicit_raw_as("second", form("Second input", schema())?).await.map_err(ToolError::from) },
        );
        let (first, second) = (first?, second?);
        Ok(format!(
            "inputs: {}, {}",
            accepted(&first, "name").unwrap_or_default(),
            accepted(&second, "name").unwrap_or_default()
        ))
    }

    /// Asks the user's name (input `user_name`) synchronously, in input-required round
    /// trips, and only then becomes a task ([`Context::run_as_task`]; defined with
    /// [`ToolDef::deferred_task`] in [`server`]) that greets them (`tasks-mrtr-composition`).
    #[tool(task = "required")]
    pub async fn test_tool_with_task(ctx: Context) -> Result<String, ToolError> {
        let answer = ctx.elicit_raw_as("user_name", form("What is your name?", name_schema())?).await?;
        let name = accepted(&answer, "name").unwrap_or_else(|| "stranger".to_owned());
        ctx.run_as_task().await?;
        Ok(format!("Hello, {name}! (from a task)"))
    }

    /// The name of this instance of the server, for the logs and the messages of
    /// [`count_down()`] (`everything` by default; `everything --name NAME` sets it). In a fleet
    /// it tells which instance served a call.
    #[derive(Clone, Debug)]
    pub struct Instance(pub String);

    /// Counts down from `from` (at most 600), one step every `interval_ms` milliseconds
    /// (default 200, at most 10 000), reporting each step as progress `1..=from` of `from`
    /// whose message names the instance (`3 left (on a)`). Not a conformance fixture:
    /// `cargo xtask fleet` kills the instance serving it mid-call, and checks that the client
    /// resumes the stream on another instance and hears every progress exactly once.
    ///
    /// # Arguments
    ///
    /// * `from` - where to start (at most 600)
    /// * `interval_ms` - the pause between steps, in milliseconds (default 200, at most 10000)
    #[tool(read_only)]
    pub async fn count_down(
        from: u32,
        interval_ms: Option<u64>,
        instance: State<Instance>,
        progress: Progress,
        ctx: Context,
    ) -> Result<String, ToolError> {
        let from = from.min(600);
        let interval = Duration::from_millis(interval_ms.unwrap_or(200).min(10_000));
        for step in 1..=from {
            tokio::select! {
                () = tokio::time::sleep(interval) => {}
                () = ctx.cancellation().cancelled() => return Err(ToolError::Tool("count_down was cancelled".to_owned())),
            }
            let message = format!("{} left (on {})", from - step, instance.0);
            progress.report(f64::from(step)).total(f64::from(from)).message(message).await;
        }
        Ok(format!("counted down from {from} (on {})", instance.0))
    }

    // ===== MCP Apps =====

    /// The URI of the counter app's view (MCP Apps, SEP-1865).
    pub const COUNTER_VIEW: &str = "ui://everything/counter";

    /// The origins the counter app's view may fetch from (`_meta.ui.csp.connectDomains`): local
    /// services on any port of 127.0.0.1, and nothing else (`cargo xtask apps` checks that its
    /// host lets a fetch to 127.0.0.1 through and blocks one to `localhost`).
    pub const COUNTER_CONNECT_DOMAINS: &[&str] = &["http://127.0.0.1:*"];

    /// The counter app's view: an HTML page (`examples/apps/counter.html`) that speaks the view
    /// protocol by hand: it shows the result of `counter`, its button calls `counter_increment`
    /// back through the host, others send the count to the conversation and ask the host to
    /// open a link.
    pub fn counter_view() -> UiResource {
        let connect_domains = COUNTER_CONNECT_DOMAINS.iter().map(|d| (*d).to_owned()).collect();
        UiResource::new(COUNTER_VIEW, "counter", include_str!("apps/counter.html"))
            .title("Counter")
            .description("Shows a count; its button adds one (the counter_increment tool).")
            .csp(UiCsp { connect_domains, ..UiCsp::default() })
            .prefers_border(true)
    }

    /// A count to show: in the counter app's view to a host that renders MCP Apps, as text
    /// alone to any other client.
    ///
    /// # Arguments
    ///
    /// * `start` - the count to start from (default 0)
    #[tool(ui = "ui://everything/counter", read_only)]
    pub fn counter(start: Option<i64>, ctx: Context) -> CallToolResult {
        count_result(start.unwrap_or(0), ctx.client_supports_apps())
    }

    /// Adds one to the count: the button of the counter app's view (a tool for the app only,
    /// which hosts keep from the model).
    ///
    /// # Arguments
    ///
    /// * `count` - the count shown
    #[tool(ui = "ui://everything/counter", visibility = ["app"])]
    pub fn counter_increment(count: i64) -> CallToolResult {
        count_result(count.saturating_add(1), true)
    }

    /// The count as text, and, for a view, as `structuredContent` too.
    fn count_result(count: i64, for_view: bool) -> CallToolResult {
        if for_view {
            CallToolResult::success(vec![ContentBlock::text(format!("count: {count}"))])
                .with_structured_content(json!({"count": count}))
        } else {
            CallToolResult::success(vec![ContentBlock::text(format!(
                "count: {count} (as text: this client renders no MCP Apps)"
            ))])
        }
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

    /// Asks the user what context the prompt should use (input `user_context`), then returns
    /// a prompt with it: a multi round-trip `prompts/get`
    /// (`input-required-result-non-tool-request`).
    #[prompt(title = "Prompt With Input")]
    pub async fn test_input_required_result_prompt(ctx: Context) -> Result<String, ErrorObject> {
        let schema = object_schema(&[("context", "string")]);
        let request = form("What context should the prompt use?", schema).map_err(request_error)?;
        let answer = ctx.elicit_raw_as("user_context", request).await.map_err(|e| request_error(e.into()))?;
        Ok(format!("context: {}", accepted(&answer, "context").unwrap_or_default()))
    }

    /// A tool's error as the error of another request (a prompt's): protocol errors as they
    /// are, failures as internal errors. (Whatever a handler returns while its inputs are
    /// pending, the request answers an input-required result.)
    fn request_error(e: ToolError) -> ErrorObject {
        match e {
            ToolError::Protocol(e) => e,
            other => ErrorObject::internal_error(other),
        }
    }

    /// The skills of `examples/skills` (the Skills extension), compiled into the binary.
    pub fn skills() -> Result<mcp_sdk::server::skills::Skills, DefinitionError> {
        static SKILLS: include_dir::Dir<'static> = include_dir::include_dir!("$CARGO_MANIFEST_DIR/skills");
        mcp_sdk::server::skills::Skills::from_include_dir(&SKILLS)
            .map_err(|e| DefinitionError::InvalidSkills { reason: e.to_string() })
    }

    /// The server.
    pub fn server() -> Result<Server, DefinitionError> {
        let handle = ServerHandle::default();
        build(builder(&handle)?, &handle)
    }

    /// The server's builder, every item registered; [`build`] builds it. `handle` is how the
    /// tools that change the lists at run time reach the server once built.
    pub fn builder(handle: &ServerHandle) -> Result<ServerBuilder, DefinitionError> {
        let builder = crate::reverse::serve(Server::builder("mcp-rust-everything", env!("CARGO_PKG_VERSION")))
            .title("Everything (conformance)")
            .state(handle.clone())
            .state(Instance("everything".to_owned()))
            .instructions("The tools, resources and prompts the MCP conformance suite's server scenarios call.")
            .skills(skills()?)
            .app(counter_view())
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
                test_missing_capability::tool(),
                test_streaming_elicitation::tool(),
                test_logging_tool::tool(),
                test_input_required_result_elicitation::tool(),
                test_input_required_result_sampling::tool(),
                test_input_required_result_list_roots::tool(),
                test_input_required_result_request_state::tool(),
                test_input_required_result_multiple_inputs::tool(),
                test_input_required_result_multi_round::tool(),
                test_input_required_result_tampered_state::tool(),
                test_input_required_result_capabilities::tool(),
                test_region_header_tool()?,
                greet::tool(),
                slow_compute::tool(),
                failing_job::tool(),
                protocol_error_job::tool(),
                confirm_delete::tool(),
                multi_input::tool(),
                test_tool_with_task::tool().deferred_task(),
                count_down::tool(),
                // MCP Apps (SEP-1865): the counter app.
                counter::tool(),
                counter_increment::tool(),
                test_trigger_prompt_change::tool(),
                // Last: it re-registers itself.
                test_trigger_tool_change::tool(),
            ])
            .resources([static_text::resource(), static_binary::resource(), watched_resource::resource()])
            .resource_template(template::template())
            .prompts([
                test_simple_prompt::prompt(),
                test_prompt_with_arguments::prompt(),
                test_prompt_with_embedded_resource::prompt(),
                test_prompt_with_image::prompt(),
                // Last: `test_trigger_prompt_change` re-registers it.
                test_input_required_result_prompt::prompt(),
            ]);
        Ok(builder)
    }

    /// Builds the server of [`builder`] and gives it to `handle`.
    pub fn build(builder: ServerBuilder, handle: &ServerHandle) -> Result<Server, DefinitionError> {
        let server = builder.build()?;
        // Set once, just built: cannot fail.
        let _ = handle.0.set(server.clone());
        Ok(server)
    }

    /// One instance of a fleet: the server's state shared with the other instances through
    /// the Redis at `url` (see [`crate::fleet::configure`], where the wiring is).
    pub async fn fleet(
        url: &str,
        builder: ServerBuilder,
        config: HttpServerConfig,
    ) -> Result<(ServerBuilder, HttpServerConfig), mcp_redis::Error> {
        crate::fleet::configure(url, builder, config).await
    }
}

pub mod checks {
    //! The report of the check-running clients (`interop_client`, `interop_client_stateless`,
    //! `oauth_e2e`): `ok - <check>` or `not ok - <check>: <why>` per check, then
    //! `N passed, M failed`, the line `cargo xtask interop` and `cargo xtask auth-e2e` read.

    use std::future::Future;
    use std::process::ExitCode;
    use std::time::Duration;

    /// Counts and prints check outcomes; every check is bounded by the report's time limit.
    pub struct Report {
        limit: Duration,
        passed: u32,
        failed: u32,
    }

    impl Report {
        /// A report whose checks may each take `limit`.
        pub fn new(limit: Duration) -> Self {
            Report { limit, passed: 0, failed: 0 }
        }

        /// Runs one check: its `Ok` is a note printed after its name.
        pub async fn check(&mut self, name: &str, check: impl Future<Output = anyhow::Result<String>>) {
            let outcome = match tokio::time::timeout(self.limit, check).await {
                Ok(outcome) => outcome,
                Err(_) => Err(anyhow::anyhow!("no outcome within {:?}", self.limit)),
            };
            match outcome {
                Ok(note) => {
                    let note = if note.is_empty() { String::new() } else { format!(" ({note})") };
                    println!("ok - {name}{note}");
                    self.passed += 1;
                }
                Err(e) => {
                    println!("not ok - {name}: {}", format!("{e:#}").replace('\n', " | "));
                    self.failed += 1;
                }
            }
        }

        /// Counts a check that failed outside [`Report::check`] (a connection that did not
        /// open, say).
        pub fn fail(&mut self, name: &str, why: impl std::fmt::Display) {
            println!("not ok - {name}: {}", why.to_string().replace('\n', " | "));
            self.failed += 1;
        }

        /// Prints the summary line; success only if some check ran and none failed.
        pub fn finish(&self) -> ExitCode {
            println!("{} passed, {} failed", self.passed, self.failed);
            if self.failed == 0 && self.passed > 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
    }
}

pub mod gateway {
    //! The `gateway` example's front door, on the gateway's own server: each scoped mount's
    //! items shown to the tokens that carry its prefix as a scope, and a rate limit on tool
    //! calls.

    use std::num::NonZeroU32;

    use mcp_sdk::server::middleware::rate::{Quota, RateKey, RateLimit};
    use mcp_sdk::server::{Item, ServerBuilder, Viewer};

    /// The mount an item of the gateway comes from: the prefix of its name (`ours_echo`) or
    /// of its URI's scheme (`ours+demo://...`), among `prefixes`.
    fn mount_of<'p>(item: &Item<'_>, prefixes: &'p [String]) -> Option<&'p str> {
        let key = item.key();
        prefixes
            .iter()
            .map(String::as_str)
            .filter(|p| !p.is_empty())
            .find(|p| key.strip_prefix(p).is_some_and(|rest| rest.starts_with('_') || rest.starts_with('+')))
    }

    /// Whether `who` sees `item`: an item of a mount whose prefix is in `scoped` is seen by
    /// a token with that prefix as a scope alone; every other item by everyone. A request
    /// without a token (no authorization in front) sees everything.
    pub fn sees(item: &Item<'_>, who: &Viewer<'_>, scoped: &[String]) -> bool {
        let Some(principal) = who.principal() else { return true };
        mount_of(item, scoped).is_none_or(|prefix| principal.has_scope(prefix))
    }

    /// The gateway's server with its front door: per-scope visibility for the mounts named
    /// in `scoped` (a hidden item is unknown, not forbidden) and, with `calls_per_minute`, a
    /// limit on tool calls per principal (`authorized`: tokens are checked in front) or per
    /// client address, answered with -32000 and a `retryAfterMs` hint.
    pub fn front(
        mut builder: ServerBuilder,
        scoped: Vec<String>,
        calls_per_minute: Option<NonZeroU32>,
        authorized: bool,
    ) -> ServerBuilder {
        if !scoped.is_empty() {
            builder = builder.visibility(move |item, who| sees(&item, who, &scoped));
        }
        if let Some(rate) = calls_per_minute {
            let key = if authorized { RateKey::Principal } else { RateKey::ClientAddress };
            builder = builder.middleware(RateLimit::with_quota(key, Quota::per_minute(rate)).tool_calls_only());
        }
        builder
    }
}
