//! `interop_client`: our client (`mcp-client`) driving the official MCP servers over stdio and
//! HTTP.
//!
//! ```sh
//! cargo run --example interop_client -- --server-everything node .../server-everything/dist/index.js stdio
//! cargo run --example interop_client -- --server-everything-http node .../server-everything/dist/index.js streamableHttp
//! cargo run --example interop_client -- --server-everything-sse node .../server-everything/dist/index.js sse
//! cargo run --example interop_client -- --python .../venv/bin/python interop/python/server.py
//! ```
//!
//! With `--server-everything-http` and `--server-everything-sse` the server is started with
//! `PORT` set to a free port, and the client connects once the server says it listens there:
//! Streamable HTTP at `/mcp`, or HTTP+SSE at `/sse` (through the client's fallback from
//! Streamable HTTP, as the specification's backwards-compatibility procedure says).
//!
//! The first form drives `@modelcontextprotocol/server-everything` (the TypeScript SDK's
//! reference server): it lists and calls every tool the server offers, reads its resources
//! and templates, renders its prompts, asks for completions, sets the log level and receives
//! log messages, subscribes to a resource and receives its updates, answers the server's
//! sampling, elicitation (form and URL mode) and roots requests, follows progress, cancels
//! and times out calls, and runs a task-augmented tool call. The second form drives the
//! small server of `interop/python/server.py` (the Python SDK) through the same kinds of
//! checks. `cargo xtask interop` installs both servers and runs both (see `interop/README.md`).
//!
//! Prints `ok - <check>` or `not ok - <check>: <why>` per check, then `N passed, M failed`;
//! exits with 0 only if none failed. Every wait is
//! bounded: a check has [`CHECK_TIMEOUT`], a wait for a notification [`EVENT_WAIT`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};
use mcp_examples::checks::Report;
use mcp_sdk::client::{CallOptions, Client, ClientBuilder, ClientError, ServerEvent};
use mcp_sdk::jsonrpc::CancellationToken;
use mcp_sdk::transport::stdio::ChildCommand;
use mcp_sdk::types::{
    AnyResourceContents, CallToolRequestParams, CallToolResult, CompleteRequestParams, CompleteRequestParamsArgument,
    CompleteRequestParamsContext, CompletionReference, ContentBlock, CreateMessageRequestParams, CreateMessageResult,
    ElicitAction, ElicitRequestParams, ElicitResult, ElicitResultContentValue, ErrorObject, GetPromptResult,
    LoggingLevel, ProgressNotificationParams, PromptReference, ProtocolVersion, ResourceTemplateReference, Role, Root,
    SamplingContent, TaskStatus, TextContent,
};
use serde_json::{Value, json};

/// The longest one check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest a check waits for a notification it expects.
const EVENT_WAIT: Duration = Duration::from_secs(15);
/// What our sampling handler answers, and the model it claims to be.
const SAMPLING_ANSWER: &str = "42";
const SAMPLING_MODEL: &str = "rust-interop-model";
/// The root our roots handler reports.
const ROOT_URI: &str = "file:///tmp/mcp-interop-root";
const ROOT_NAME: &str = "interop root";

/// Which server we drive.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Everything,
    Python,
}

/// What the server sent us: notifications (in order), and the requests our handlers answered.
struct Recorder {
    events: Mutex<Vec<ServerEvent>>,
    /// Bumped on every event, so that waiters wake up.
    tick: tokio::sync::watch::Sender<u64>,
    sampling: Mutex<Vec<CreateMessageRequestParams>>,
    elicitations: Mutex<Vec<ElicitRequestParams>>,
    roots_requests: Mutex<u32>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Recorder {
    fn new() -> Self {
        Recorder {
            events: Mutex::new(Vec::new()),
            tick: tokio::sync::watch::Sender::new(0),
            sampling: Mutex::new(Vec::new()),
            elicitations: Mutex::new(Vec::new()),
            roots_requests: Mutex::new(0),
        }
    }

    fn push(&self, event: ServerEvent) {
        lock(&self.events).push(event);
        self.tick.send_modify(|n| *n += 1);
    }

    /// The position of the next event, to wait for events after it.
    fn mark(&self) -> usize {
        lock(&self.events).len()
    }

    fn since(&self, mark: usize) -> Vec<ServerEvent> {
        lock(&self.events)[mark..].to_vec()
    }

    /// Waits (at most [`EVENT_WAIT`]) for an event after `mark` that `pred` accepts.
    async fn wait_for(
        &self,
        mark: usize,
        what: &str,
        pred: impl Fn(&ServerEvent) -> bool,
    ) -> anyhow::Result<ServerEvent> {
        let mut ticks = self.tick.subscribe();
        let deadline = tokio::time::Instant::now() + EVENT_WAIT;
        loop {
            if let Some(event) = lock(&self.events)[mark..].iter().find(|e| pred(e)).cloned() {
                return Ok(event);
            }
            match tokio::time::timeout_at(deadline, ticks.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => bail!("the event stream ended while waiting for {what}"),
                Err(_) => bail!("no {what} within {EVENT_WAIT:?} (got {:?})", self.since(mark)),
            }
        }
    }
}

/// How we reach the server.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Connection {
    /// A child process, over its stdio.
    Stdio,
    /// A child process serving HTTP on a port we choose (`PORT`): Streamable HTTP at `/mcp`.
    StreamableHttp,
    /// The same, HTTP+SSE at `/sse`, reached through the client's fallback.
    Sse,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<std::process::ExitCode> {
    let mut args = std::env::args().skip(1);
    let (target, connection) = match args.next().as_deref() {
        Some("--server-everything") => (Target::Everything, Connection::Stdio),
        Some("--server-everything-http") => (Target::Everything, Connection::StreamableHttp),
        Some("--server-everything-sse") => (Target::Everything, Connection::Sse),
        Some("--python") => (Target::Python, Connection::Stdio),
        _ => bail!(
            "usage: interop_client (--server-everything | --server-everything-http | --server-everything-sse \
             | --python) <server command> [args...]"
        ),
    };
    let Some(program) = args.next() else { bail!("no server command given") };
    let args: Vec<String> = args.collect();
    let recorder = Arc::new(Recorder::new());
    let mut report = Report::new(CHECK_TIMEOUT);

    let mut http_server = None;
    let connect = async {
        match connection {
            Connection::Stdio => Ok(builder(&recorder).spawn(ChildCommand::new(&program).args(&args)).await?),
            Connection::StreamableHttp | Connection::Sse => {
                let (server, port) = HttpServer::start(&program, &args).await?;
                http_server = Some(server);
                let path = if connection == Connection::Sse { "sse" } else { "mcp" };
                Ok(builder(&recorder).connect_http(&format!("http://127.0.0.1:{port}/{path}")).await?)
            }
        }
    };
    let client = match tokio::time::timeout(CHECK_TIMEOUT, connect).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => {
            let e: anyhow::Error = e;
            report.fail("initialize handshake", format!("{e:#}"));
            return Ok(report.finish());
        }
        Err(_) => {
            report.fail("initialize handshake", format!("no answer within {CHECK_TIMEOUT:?}"));
            return Ok(report.finish());
        }
    };
    let ctx = Ctx { client, rec: recorder };
    match target {
        Target::Everything => everything(&ctx, &mut report).await,
        Target::Python => python(&ctx, &mut report).await,
    }
    let prefix = if target == Target::Everything { "everything" } else { "python" };
    let what = if connection == Connection::Stdio { "close stops the server" } else { "close ends the session" };
    report
        .check(&format!("{prefix}: {what}"), async {
            ctx.client.close().await?;
            ensure!(ctx.client.ping().await.is_err(), "ping still works after close");
            Ok(String::new())
        })
        .await;
    if let Some(server) = http_server {
        server.stop().await;
    }
    Ok(report.finish())
}

/// A server process serving HTTP, its output passed on to our stderr.
struct HttpServer {
    child: tokio::process::Child,
}

impl HttpServer {
    /// Starts `program args` with `PORT` set to a free port, and waits until it says it
    /// listens on it.
    async fn start(program: &str, args: &[String]) -> anyhow::Result<(HttpServer, u16)> {
        use tokio::io::AsyncBufReadExt as _;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .env("PORT", port.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {program}"))?;
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let mut ready_tx = Some(ready_tx);
        let needle = format!("port {port}");
        let stdout = tokio::io::BufReader::new(child.stdout.take().context("no stdout")?);
        let stderr = tokio::io::BufReader::new(child.stderr.take().context("no stderr")?);
        // Both streams go to our stderr; the first line naming the port says it is ready.
        tokio::spawn(async move {
            let mut stdout = stdout.lines();
            let mut stderr = stderr.lines();
            let (mut out_open, mut err_open) = (true, true);
            while out_open || err_open {
                let line = tokio::select! {
                    l = stdout.next_line(), if out_open => l.ok().flatten().or_else(|| { out_open = false; None }),
                    l = stderr.next_line(), if err_open => l.ok().flatten().or_else(|| { err_open = false; None }),
                };
                let Some(line) = line else { continue };
                eprintln!("[server] {line}");
                if line.contains(&needle)
                    && let Some(tx) = ready_tx.take()
                {
                    let _ = tx.send(());
                }
            }
        });
        match tokio::time::timeout(CHECK_TIMEOUT, ready_rx).await {
            Ok(Ok(())) => Ok((HttpServer { child }, port)),
            Ok(Err(_)) => bail!("{program} ended its output before listening on port {port}"),
            Err(_) => bail!("{program} did not say it listens on port {port} within {CHECK_TIMEOUT:?}"),
        }
    }

    async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// The client, with every handler the servers may need, recording what they are asked. These
/// checks are about the session revisions (`initialize`; server-initiated requests), so the
/// client speaks only those, even to a server that also speaks 2026-07-28 (the Python SDK 2.x
/// does): 2026-07-28 is checked by `interop_client_stateless`.
fn builder(recorder: &Arc<Recorder>) -> ClientBuilder {
    let on_event = Arc::clone(recorder);
    let on_sampling = Arc::clone(recorder);
    let on_elicitation = Arc::clone(recorder);
    let on_roots = Arc::clone(recorder);
    ClientBuilder::new("mcp-rust-sdk-interop", env!("CARGO_PKG_VERSION"))
        .session_revisions_only()
        .input_tasks()
        .on_event(move |event| on_event.push(event))
        .on_sampling(move |params: CreateMessageRequestParams| {
            let rec = Arc::clone(&on_sampling);
            async move {
                lock(&rec.sampling).push(params);
                let mut result =
                    CreateMessageResult::new(Role::Assistant, TextContent::new(SAMPLING_ANSWER), SAMPLING_MODEL);
                result.stop_reason = Some("endTurn".to_owned());
                Ok::<_, ErrorObject>(result)
            }
        })
        .on_elicitation(move |params: ElicitRequestParams| {
            let rec = Arc::clone(&on_elicitation);
            async move {
                let result = answer_elicitation(&params);
                lock(&rec.elicitations).push(params);
                Ok::<_, ErrorObject>(result)
            }
        })
        .elicitation_url_mode()
        .apply_elicitation_defaults()
        .on_roots(move || {
            let rec = Arc::clone(&on_roots);
            async move {
                *lock(&rec.roots_requests) += 1;
                let mut root = Root::new(ROOT_URI);
                root.name = Some(ROOT_NAME.to_owned());
                Ok::<_, ErrorObject>(vec![root])
            }
        })
        .validate_arguments()
        .validate_structured_content()
}

/// The user's answer to a form: the fields we know, the rest left to the schema's defaults.
/// URL mode: accepted.
fn answer_elicitation(params: &ElicitRequestParams) -> ElicitResult {
    let mut result = ElicitResult::new(ElicitAction::Accept);
    let ElicitRequestParams::ElicitRequestForm(form) = params else { return result };
    let schema = serde_json::to_value(&form.requested_schema).unwrap_or_default();
    let mut content = BTreeMap::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        use ElicitResultContentValue as V;
        let value = match name.as_str() {
            "name" => V::String("Ada Lovelace".to_owned()),
            "check" => V::Boolean(true),
            "email" => V::String("ada@example.com".to_owned()),
            "homepage" => V::String("https://example.com/ada".to_owned()),
            "birthdate" => V::String("1815-12-10".to_owned()),
            "age" => V::Integer(36),
            // A titled single-select: the first choice.
            _ => match property["oneOf"][0]["const"].as_str() {
                Some(choice) => V::String(choice.to_owned()),
                None => continue,
            },
        };
        content.insert(name.clone(), value);
    }
    result.content = Some(content);
    result
}

/// What every check has at hand.
struct Ctx {
    client: Client,
    rec: Arc<Recorder>,
}

impl Ctx {
    async fn call(&self, tool: &str, arguments: Value) -> anyhow::Result<CallToolResult> {
        let result = self.client.call_tool(tool, arguments).await.with_context(|| format!("tools/call {tool}"))?;
        ensure!(!result.is_error(), "{tool} answered with a tool error: {}", texts(&result).join(" | "));
        Ok(result)
    }

    async fn call_text(&self, tool: &str, arguments: Value) -> anyhow::Result<String> {
        Ok(texts(&self.call(tool, arguments).await?).join("\n"))
    }

    async fn complete(
        &self,
        reference: impl Into<CompletionReference>,
        argument: &str,
        value: &str,
        context: &[(&str, &str)],
    ) -> anyhow::Result<Vec<String>> {
        let context: BTreeMap<String, String> =
            context.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let mut params =
            CompleteRequestParams::new(CompleteRequestParamsArgument::new(argument, value), reference.into());
        if !context.is_empty() {
            params = params.with_context(CompleteRequestParamsContext::default().with_arguments(context));
        }
        Ok(self.client.complete_with(params, CallOptions::default()).await?.completion.values)
    }

    async fn prompt(&self, name: &str, arguments: &[(&str, &str)]) -> anyhow::Result<GetPromptResult> {
        let arguments = arguments.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Ok(self.client.get_prompt(name, arguments).await?)
    }

    /// Calls a tool with a progress callback; returns the result and the progress received.
    async fn call_with_progress(
        &self,
        tool: &str,
        arguments: Value,
    ) -> anyhow::Result<(CallToolResult, Vec<ProgressNotificationParams>)> {
        let progress = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&progress);
        let options = CallOptions::default().on_progress(move |p| lock(&sink).push(p));
        let result = self.client.call_tool_with(tool_params(tool, arguments), options).await?;
        ensure!(!result.is_error(), "{tool} answered with a tool error: {}", texts(&result).join(" | "));
        let progress = lock(&progress).clone();
        Ok((result, progress))
    }
}

fn tool_params(tool: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(tool);
    params.arguments = arguments.as_object().cloned();
    params
}

fn texts(result: &CallToolResult) -> Vec<&str> {
    result.content.iter().filter_map(ContentBlock::as_text).collect()
}

fn prompt_texts(result: &GetPromptResult) -> Vec<&str> {
    result.messages.iter().filter_map(|m| m.content.as_text()).collect()
}

fn resource_text(contents: &AnyResourceContents) -> anyhow::Result<(&str, &str)> {
    match contents {
        AnyResourceContents::TextResourceContents(t) => Ok((&t.uri, &t.text)),
        AnyResourceContents::BlobResourceContents(b) => bail!("{} came as a blob, expected text", b.uri),
    }
}

fn resource_blob(contents: &AnyResourceContents) -> anyhow::Result<(&str, Vec<u8>)> {
    match contents {
        AnyResourceContents::BlobResourceContents(b) => Ok((&b.uri, base64_decode(&b.blob)?)),
        AnyResourceContents::TextResourceContents(t) => bail!("{} came as text, expected a blob", t.uri),
    }
}

fn base64_decode(text: &str) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes().filter(|c| *c != b'=' && !c.is_ascii_whitespace()) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => bail!("invalid base64 character {:?}", c as char),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Ok(out)
}

fn remote_code(e: &ClientError) -> Option<i64> {
    match e {
        ClientError::Remote(obj) => Some(obj.code),
        _ => None,
    }
}

fn is_log(event: &ServerEvent, needle: &str) -> bool {
    matches!(event, ServerEvent::Log(p) if p.data.to_string().contains(needle))
}

/// Checks the tools the server lists against the ones we have checks for; the conditional
/// ones a server registers after `initialized` may come with a `list_changed`.
async fn check_tool_list(ctx: &Ctx, expected: &[&str]) -> anyhow::Result<String> {
    let names = |tools: &[mcp_sdk::types::Tool]| tools.iter().map(|t| t.name.clone()).collect::<BTreeSet<_>>();
    let expected: BTreeSet<String> = expected.iter().map(|s| (*s).to_owned()).collect();
    let mut mark = ctx.rec.mark();
    let mut tools = ctx.client.list_all_tools().await?;
    for _ in 0..expected.len() {
        if expected.is_subset(&names(&tools)) {
            break;
        }
        // Registered after the handshake: a list_changed follows; list again after it.
        let changed =
            ctx.rec.wait_for(mark, "notifications/tools/list_changed", |e| *e == ServerEvent::ToolListChanged);
        if changed.await.is_err() {
            break;
        }
        mark = ctx.rec.mark();
        tools = ctx.client.list_all_tools().await?;
    }
    let listed = names(&tools);
    let missing: Vec<_> = expected.difference(&listed).collect();
    let unchecked: Vec<_> = listed.difference(&expected).collect();
    ensure!(missing.is_empty(), "not offered: {missing:?}");
    ensure!(unchecked.is_empty(), "offered but no check calls them (a new server version? add checks): {unchecked:?}");
    for tool in &tools {
        ensure!(
            tool.input_schema.get("type") == Some(&json!("object")),
            "{}: inputSchema is not an object schema",
            tool.name
        );
    }
    Ok(format!("{} tools", tools.len()))
}

// ---------------------------------------------------------------------------------------------
// @modelcontextprotocol/server-everything
// ---------------------------------------------------------------------------------------------

/// Every tool this version offers to a client with sampling, elicitation (form and URL) and
/// roots; each has a check below.
const EVERYTHING_TOOLS: &[&str] = &[
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-roots-list",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "simulate-research-query",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-elicitation-request",
    "trigger-elicitation-request-async",
    "trigger-long-running-operation",
    "trigger-sampling-request",
    "trigger-sampling-request-async",
    "trigger-url-elicitation",
];

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

async fn everything(ctx: &Ctx, r: &mut Report) {
    let client = &ctx.client;
    r.check("everything: initialize", async {
        let info = client.server_info();
        ensure!(info.name == "mcp-servers/everything", "serverInfo.name is {:?}", info.name);
        ensure!(client.protocol_version() == ProtocolVersion::V2025_11_25, "negotiated {}", client.protocol_version());
        ensure!(client.instructions().is_some_and(|i| !i.is_empty()), "no instructions");
        let caps = client.server_capabilities();
        ensure!(caps.tools.is_some() && caps.prompts.is_some() && caps.logging.is_some(), "capabilities: {caps:?}");
        ensure!(caps.resources.as_ref().is_some_and(|r| r.subscribe == Some(true)), "no resources.subscribe");
        ensure!(caps.completions.is_some(), "no completions capability");
        ensure!(caps.tasks.is_some(), "no tasks capability");
        Ok(format!("{} {}, {}", info.name, info.version, client.protocol_version()))
    })
    .await;
    r.check("everything: ping", async { Ok(client.ping().await.map(|()| String::new())?) }).await;
    r.check("everything: tools/list offers every tool", check_tool_list(ctx, EVERYTHING_TOOLS)).await;
    r.check("everything: tool metadata (title, annotations, output schema, task support)", async {
        let tools = client.list_all_tools().await?;
        let tool = |name: &str| tools.iter().find(|t| t.name == name).with_context(|| format!("no tool {name}"));
        let echo = tool("echo")?;
        ensure!(echo.title.as_deref() == Some("Echo Tool"), "echo title {:?}", echo.title);
        ensure!(echo.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true), "echo readOnlyHint");
        let structured = tool("get-structured-content")?;
        let schema = structured.output_schema.as_ref().context("get-structured-content has no outputSchema")?;
        ensure!(schema.get("properties").is_some_and(|p| p.get("humidity").is_some()), "outputSchema {schema:?}");
        let research = tool("simulate-research-query")?;
        let execution = serde_json::to_value(&research.execution)?;
        ensure!(execution["taskSupport"] == "required", "simulate-research-query execution: {execution}");
        Ok(String::new())
    })
    .await;

    r.check("everything: echo", async {
        let text = ctx.call_text("echo", json!({"message": "hello from Rust ✓"})).await?;
        ensure!(text == "Echo: hello from Rust ✓", "got {text:?}");
        Ok(String::new())
    })
    .await;
    r.check("everything: get-sum", async {
        let text = ctx.call_text("get-sum", json!({"a": 2, "b": 40.5})).await?;
        ensure!(text == "The sum of 2 and 40.5 is 42.5.", "got {text:?}");
        Ok(String::new())
    })
    .await;
    r.check("everything: arguments are checked against the input schema before sending", async {
        match client.call_tool("get-sum", json!({"a": "two", "b": 1})).await {
            Err(ClientError::InvalidArguments { detail, .. }) => Ok(detail),
            other => bail!("expected InvalidArguments, got {other:?}"),
        }
    })
    .await;
    r.check("everything: get-env", async {
        let text = ctx.call_text("get-env", json!({})).await?;
        let env: Value = serde_json::from_str(&text).context("not JSON")?;
        ensure!(env.as_object().is_some_and(|e| e.contains_key("PATH")), "no PATH in {text:.200}");
        Ok(String::new())
    })
    .await;
    r.check("everything: get-tiny-image (image content)", async {
        let result = ctx.call("get-tiny-image", json!({})).await?;
        let image = result
            .content
            .iter()
            .find_map(|c| match c {
                ContentBlock::Image(i) => Some(i),
                _ => None,
            })
            .context("no image block")?;
        ensure!(image.mime_type == "image/png", "mimeType {}", image.mime_type);
        let bytes = base64_decode(&image.data)?;
        ensure!(bytes.starts_with(PNG_SIGNATURE), "not a PNG");
        ensure!(texts(&result).len() == 2, "expected a text before and after the image");
        Ok(format!("{} bytes of PNG", bytes.len()))
    })
    .await;
    r.check("everything: get-annotated-message (annotations)", async {
        let result = ctx.call("get-annotated-message", json!({"messageType": "error", "includeImage": true})).await?;
        let [ContentBlock::Text(text), ContentBlock::Image(image)] = result.content.as_slice() else {
            bail!("expected a text and an image, got {:?}", result.content);
        };
        ensure!(text.text == "Error: Operation failed", "text {:?}", text.text);
        let a = text.annotations.as_ref().context("text has no annotations")?;
        ensure!(a.priority == Some(1.0), "priority {:?}", a.priority);
        ensure!(a.audience.as_deref() == Some(&[Role::User, Role::Assistant][..]), "audience {:?}", a.audience);
        let a = image.annotations.as_ref().context("image has no annotations")?;
        ensure!(a.priority == Some(0.5) && a.audience.as_deref() == Some(&[Role::User][..]), "image annotations {a:?}");
        Ok(String::new())
    })
    .await;
    r.check("everything: get-resource-links (resource links, then read)", async {
        let result = ctx.call("get-resource-links", json!({"count": 4})).await?;
        let links: Vec<_> = result
            .content
            .iter()
            .filter_map(|c| match c {
                ContentBlock::ResourceLink(l) => Some(l),
                _ => None,
            })
            .collect();
        ensure!(links.len() == 4, "{} resource links, expected 4", links.len());
        for link in links {
            let read = client.read_resource(&link.uri).await.with_context(|| format!("reading {}", link.uri))?;
            let contents = read.contents.first().context("no contents")?;
            if link.uri.contains("/text/") {
                let (uri, text) = resource_text(contents)?;
                ensure!(uri == link.uri && text.starts_with("Resource "), "{uri}: {text:?}");
            } else {
                let (uri, bytes) = resource_blob(contents)?;
                ensure!(uri == link.uri && bytes.starts_with(b"Resource "), "{uri}: {bytes:?}");
            }
        }
        Ok(String::new())
    })
    .await;
    r.check("everything: get-resource-reference (embedded resource)", async {
        let result = ctx.call("get-resource-reference", json!({"resourceType": "Blob", "resourceId": 3})).await?;
        let embedded = result
            .content
            .iter()
            .find_map(|c| match c {
                ContentBlock::EmbeddedResource(e) => Some(e),
                _ => None,
            })
            .context("no embedded resource")?;
        let (uri, bytes) = resource_blob(&embedded.resource)?;
        ensure!(uri == "demo://resource/dynamic/blob/3", "uri {uri}");
        ensure!(bytes.starts_with(b"Resource 3: This is a base64 blob"), "blob {:?}", String::from_utf8_lossy(&bytes));
        Ok(String::new())
    })
    .await;
    r.check("everything: get-structured-content (validated against its output schema)", async {
        let result = ctx.call("get-structured-content", json!({"location": "Chicago"})).await?;
        let expected = json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82});
        ensure!(
            result.structured_content.as_ref() == Some(&expected),
            "structuredContent {:?}",
            result.structured_content
        );
        let text: Value = serde_json::from_str(texts(&result).first().context("no text block")?)?;
        ensure!(text == expected, "the text block differs: {text}");
        Ok(String::new())
    })
    .await;
    r.check("everything: get-structured-content refuses an argument outside its enum", async {
        match client.call_tool("get-structured-content", json!({"location": "Paris"})).await {
            Err(ClientError::InvalidArguments { .. }) => Ok(String::new()),
            other => bail!("expected InvalidArguments, got {other:?}"),
        }
    })
    .await;
    r.check("everything: gzip-file-as-resource (session resource, list_changed, read)", async {
        let mark = ctx.rec.mark();
        // A data: URL, so that nothing is fetched from the network.
        let args = json!({"name": "hello.txt.gz", "data": "data:text/plain;base64,SGVsbG8sIE1DUCE=", "outputType": "resourceLink"});
        let result = ctx.call("gzip-file-as-resource", args).await?;
        let Some(ContentBlock::ResourceLink(link)) = result.content.first() else {
            bail!("expected a resource link, got {:?}", result.content);
        };
        ensure!(link.uri == "demo://resource/session/hello.txt.gz", "uri {}", link.uri);
        ensure!(link.mime_type.as_deref() == Some("application/gzip"), "mimeType {:?}", link.mime_type);
        ctx.rec.wait_for(mark, "notifications/resources/list_changed", |e| *e == ServerEvent::ResourceListChanged).await?;
        let listed = client.list_all_resources().await?;
        ensure!(listed.iter().any(|r| r.uri == link.uri), "{} is not listed", link.uri);
        let read = client.read_resource(&link.uri).await?;
        let (_, bytes) = resource_blob(read.contents.first().context("no contents")?)?;
        ensure!(bytes.starts_with(&[0x1f, 0x8b]), "not gzip data");
        let args = json!({"name": "inline.gz", "data": "data:text/plain;base64,SGVsbG8sIE1DUCE=", "outputType": "resource"});
        let result = ctx.call("gzip-file-as-resource", args).await?;
        let Some(ContentBlock::EmbeddedResource(embedded)) = result.content.first() else {
            bail!("expected an embedded resource, got {:?}", result.content);
        };
        let (_, bytes) = resource_blob(&embedded.resource)?;
        ensure!(bytes.starts_with(&[0x1f, 0x8b]), "not gzip data");
        Ok(String::new())
    })
    .await;

    r.check("everything: trigger-long-running-operation (progress)", async {
        let (result, progress) =
            ctx.call_with_progress("trigger-long-running-operation", json!({"duration": 1, "steps": 4})).await?;
        let steps: Vec<f64> = progress.iter().map(|p| p.progress).collect();
        ensure!(steps == [1.0, 2.0, 3.0, 4.0], "progress {steps:?}");
        ensure!(progress.iter().all(|p| p.total == Some(4.0)), "totals {progress:?}");
        ensure!(texts(&result).concat().starts_with("Long running operation completed"), "{:?}", texts(&result));
        Ok(format!("{} progress notifications", progress.len()))
    })
    .await;
    r.check("everything: cancelling a call (notifications/cancelled), the server still answers", async {
        let token = CancellationToken::new();
        let trigger = token.clone();
        let options = CallOptions::default().on_progress(move |_| trigger.cancel()).cancel_on(token);
        let params = tool_params("trigger-long-running-operation", json!({"duration": 2, "steps": 4}));
        match client.call_tool_with(params, options).await {
            Err(ClientError::Cancelled) => {}
            other => bail!("expected Cancelled, got {other:?}"),
        }
        client.ping().await?;
        Ok(String::new())
    })
    .await;
    r.check("everything: a call that outlives its timeout fails with Timeout", async {
        let options = CallOptions::default().timeout(Duration::from_millis(300));
        let params = tool_params("trigger-long-running-operation", json!({"duration": 1, "steps": 1}));
        match client.call_tool_with(params, options).await {
            Err(ClientError::Timeout { .. }) => {}
            other => bail!("expected Timeout, got {other:?}"),
        }
        client.ping().await?;
        Ok(String::new())
    })
    .await;

    r.check("everything: trigger-sampling-request (our sampling handler answers)", async {
        let before = lock(&ctx.rec.sampling).len();
        let text =
            ctx.call_text("trigger-sampling-request", json!({"prompt": "What is 6 times 7?", "maxTokens": 20})).await?;
        let params = lock(&ctx.rec.sampling).get(before).cloned().context("our sampling handler was not called")?;
        ensure!(params.max_tokens == 20, "maxTokens {}", params.max_tokens);
        ensure!(
            params.system_prompt.as_deref() == Some("You are a helpful test server."),
            "{:?}",
            params.system_prompt
        );
        let asked = match &params.messages.first().context("no messages")?.content {
            SamplingContent::Text(t) => t.text.clone(),
            other => bail!("message content {other:?}"),
        };
        ensure!(asked.ends_with("What is 6 times 7?"), "asked {asked:?}");
        ensure!(text.contains(SAMPLING_MODEL) && text.contains(SAMPLING_ANSWER), "the tool returned {text:?}");
        Ok(String::new())
    })
    .await;
    let elicited = Arc::new(Mutex::new(Value::Null));
    r.check("everything: trigger-elicitation-request (form; schema defaults applied)", async {
        let before = lock(&ctx.rec.elicitations).len();
        let text = ctx.call_text("trigger-elicitation-request", json!({})).await?;
        ensure!(lock(&ctx.rec.elicitations).len() > before, "our elicitation handler was not called");
        ensure!(text.contains("User provided the requested information"), "{text}");
        let raw = text.split("Raw result: ").nth(1).context("no raw result")?;
        let raw: Value = serde_json::from_str(raw.trim())?;
        *lock(&elicited) = raw.clone();
        let content = &raw["content"];
        ensure!(raw["action"] == "accept", "action {}", raw["action"]);
        ensure!(content["name"] == "Ada Lovelace" && content["check"] == true, "content {content}");
        // Left out by the handler, filled in from the schema's defaults.
        let defaults = [
            ("firstLine", json!("It was a dark and stormy night.")),
            ("integer", json!(42)),
            ("untitledSingleSelectEnum", json!("Monica")),
            ("untitledMultipleSelectEnum", json!(["Guitar"])),
            ("titledSingleSelectEnum", json!("hero-1")),
            ("titledMultipleSelectEnum", json!(["fish-1"])),
            ("legacyTitledEnum", json!("pet-1")),
        ];
        for (field, value) in defaults {
            ensure!(content[field] == value, "{field} is {}, expected its default {value}", content[field]);
        }
        Ok(String::new())
    })
    .await;
    r.check("everything: elicitation fills in a decimal `number` default", async {
        let raw = lock(&elicited).clone();
        let schemas = lock(&ctx.rec.elicitations).clone();
        let default = schemas
            .iter()
            .filter_map(|p| match p {
                ElicitRequestParams::ElicitRequestForm(form) => serde_json::to_value(&form.requested_schema).ok(),
                _ => None,
            })
            .find_map(|schema| schema["properties"]["number"].get("default").cloned())
            .context("no form asked for `number` with a default")?;
        ensure!(raw["content"]["number"] == default, "`number` is {}, its default {default}", raw["content"]["number"]);
        Ok(String::new())
    })
    .await;
    r.check("everything: trigger-url-elicitation (URL mode)", async {
        let before = lock(&ctx.rec.elicitations).len();
        let args = json!({"url": "https://example.com/authorize", "elicitationId": "interop-1"});
        let text = ctx.call_text("trigger-url-elicitation", args).await?;
        let params = lock(&ctx.rec.elicitations).get(before).cloned().context("our handler was not called")?;
        let ElicitRequestParams::ElicitRequestURL(url) = params else { bail!("not a URL-mode request: {params:?}") };
        ensure!(url.url == "https://example.com/authorize", "url {}", url.url);
        ensure!(url.elicitation_id.as_deref() == Some("interop-1"), "elicitationId {:?}", url.elicitation_id);
        ensure!(text.contains("User completed the URL elicitation flow"), "{text}");
        Ok(String::new())
    })
    .await;
    r.check("everything: trigger-url-elicitation error path (-32042, then retry)", async {
        let args = json!({"url": "https://example.com/pay", "errorPath": true});
        let error = match client.call_tool("trigger-url-elicitation", args.clone()).await {
            Err(ClientError::Remote(e)) => e,
            other => bail!("expected a -32042 error, got {other:?}"),
        };
        ensure!(error.code == -32042, "code {} ({})", error.code, error.message);
        let data = error.data.context("no error data")?;
        let url = &data["elicitations"][0]["url"];
        ensure!(url == "https://modelcontextprotocol.io", "the prerequisite elicitation: {data}");
        // The user has been there; the same call again goes through.
        let text = ctx.call_text("trigger-url-elicitation", args).await?;
        ensure!(text.contains("User completed the URL elicitation flow"), "{text}");
        Ok(String::new())
    })
    .await;
    r.check("everything: get-roots-list (our roots handler; roots/list_changed)", async {
        let text = ctx.call_text("get-roots-list", json!({})).await?;
        ensure!(text.contains(ROOT_URI) && text.contains(ROOT_NAME), "{text}");
        let before = *lock(&ctx.rec.roots_requests);
        let mark = ctx.rec.mark();
        client.notify_roots_changed().await?;
        ctx.rec.wait_for(mark, "the server's `Roots updated` log", |e| is_log(e, "Roots updated")).await?;
        ensure!(*lock(&ctx.rec.roots_requests) > before, "roots/list was not asked again");
        Ok(format!("roots/list asked {} times", *lock(&ctx.rec.roots_requests)))
    })
    .await;

    r.check("everything: logging/setLevel and log notifications", async {
        client.set_logging_level(LoggingLevel::Debug).await?;
        let mark = ctx.rec.mark();
        let text = ctx.call_text("toggle-simulated-logging", json!({})).await?;
        ensure!(text.starts_with("Started"), "{text}");
        let event = ctx.rec.wait_for(mark, "a log message", |e| is_log(e, "-level message")).await;
        let stop = ctx.call_text("toggle-simulated-logging", json!({})).await?;
        ensure!(stop.starts_with("Stopped"), "{stop}");
        let ServerEvent::Log(log) = event? else { unreachable!() };
        Ok(format!("{}: {}", log.level, log.data))
    })
    .await;
    r.check("everything: the log level filters messages", async {
        // Subscribing logs at `info`, unsubscribing too. At `error` the first must not come; at
        // `info` the second must. Both go out before their answers, on the same pipe, so once
        // the second arrived the first would have too.
        let uri = "demo://resource/dynamic/text/9";
        client.set_logging_level(LoggingLevel::Error).await?;
        let mark = ctx.rec.mark();
        client.subscribe(uri).await?;
        client.set_logging_level(LoggingLevel::Info).await?;
        client.unsubscribe(uri).await?;
        ctx.rec.wait_for(mark, "the unsubscribe log", |e| is_log(e, "Received Unsubscribe")).await?;
        let filtered = ctx.rec.since(mark).iter().any(|e| is_log(e, "Received Subscribe"));
        client.set_logging_level(LoggingLevel::Debug).await?;
        ensure!(!filtered, "an `info` message came while the level was `error`");
        Ok(String::new())
    })
    .await;
    r.check("everything: resources/subscribe and notifications/resources/updated", async {
        let uri = "demo://resource/dynamic/text/1";
        client.subscribe(uri).await?;
        let mark = ctx.rec.mark();
        let text = ctx.call_text("toggle-subscriber-updates", json!({})).await?;
        ensure!(text.starts_with("Started"), "{text}");
        let updated = ctx
            .rec
            .wait_for(
                mark,
                "notifications/resources/updated",
                |e| matches!(e, ServerEvent::ResourceUpdated { uri: u } if u == uri),
            )
            .await;
        let stop = ctx.call_text("toggle-subscriber-updates", json!({})).await?;
        client.unsubscribe(uri).await?;
        updated?;
        ensure!(stop.starts_with("Stopped"), "{stop}");
        Ok(String::new())
    })
    .await;

    r.check("everything: resources/list and read every static resource", async {
        let resources = client.list_all_resources().await?;
        let docs: Vec<_> = resources.iter().filter(|r| r.uri.starts_with("demo://resource/static/document/")).collect();
        ensure!(!docs.is_empty(), "no static documents in {resources:?}");
        for doc in &docs {
            let read = client.read_resource(&doc.uri).await.with_context(|| format!("reading {}", doc.uri))?;
            let (uri, text) = resource_text(read.contents.first().context("no contents")?)?;
            ensure!(uri == doc.uri && !text.is_empty(), "{}: uri {uri}, {} bytes", doc.uri, text.len());
        }
        Ok(format!("{} resources", docs.len()))
    })
    .await;
    r.check("everything: resources/templates/list and read from each template", async {
        let templates = client.list_all_resource_templates().await?;
        let uris: BTreeSet<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
        let expected =
            BTreeSet::from(["demo://resource/dynamic/blob/{resourceId}", "demo://resource/dynamic/text/{resourceId}"]);
        ensure!(uris == expected, "templates {uris:?}");
        let read = client.read_resource("demo://resource/dynamic/text/7").await?;
        let (_, text) = resource_text(read.contents.first().context("no contents")?)?;
        ensure!(text.starts_with("Resource 7: This is a plaintext resource"), "{text}");
        let read = client.read_resource("demo://resource/dynamic/blob/8").await?;
        let (_, bytes) = resource_blob(read.contents.first().context("no contents")?)?;
        ensure!(bytes.starts_with(b"Resource 8: This is a base64 blob"), "{:?}", String::from_utf8_lossy(&bytes));
        Ok(String::new())
    })
    .await;
    r.check("everything: reading a resource that does not exist is an error", async {
        match client.read_resource("demo://resource/dynamic/text/0").await {
            Err(e @ ClientError::Remote(_)) => Ok(format!("code {}", remote_code(&e).unwrap_or_default())),
            other => bail!("expected a JSON-RPC error, got {other:?}"),
        }
    })
    .await;

    r.check("everything: prompts/list", async {
        let prompts = client.list_all_prompts().await?;
        let names: BTreeSet<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        let expected = BTreeSet::from(["args-prompt", "completable-prompt", "resource-prompt", "simple-prompt"]);
        ensure!(names == expected, "prompts {names:?}");
        let args =
            prompts.iter().find(|p| p.name == "args-prompt").and_then(|p| p.arguments.clone()).unwrap_or_default();
        let required: Vec<_> = args.iter().map(|a| (a.name.as_str(), a.required.unwrap_or(false))).collect();
        ensure!(required == [("city", true), ("state", false)], "args-prompt arguments {required:?}");
        Ok(String::new())
    })
    .await;
    r.check("everything: prompts/get simple-prompt", async {
        let result = ctx.prompt("simple-prompt", &[]).await?;
        ensure!(prompt_texts(&result) == ["This is a simple prompt without arguments."], "{:?}", result.messages);
        Ok(String::new())
    })
    .await;
    r.check("everything: prompts/get args-prompt (arguments)", async {
        let result = ctx.prompt("args-prompt", &[("city", "Paris"), ("state", "Texas")]).await?;
        ensure!(prompt_texts(&result) == ["What's weather in Paris, Texas?"], "{:?}", result.messages);
        let result = ctx.prompt("args-prompt", &[("city", "Oslo")]).await?;
        ensure!(prompt_texts(&result) == ["What's weather in Oslo?"], "{:?}", result.messages);
        Ok(String::new())
    })
    .await;
    r.check("everything: prompts/get completable-prompt", async {
        let result = ctx.prompt("completable-prompt", &[("department", "Engineering"), ("name", "Alice")]).await?;
        let expected = ["Please promote Alice to the head of the Engineering team."];
        ensure!(prompt_texts(&result) == expected, "{:?}", result.messages);
        Ok(String::new())
    })
    .await;
    r.check("everything: prompts/get resource-prompt (embedded resources)", async {
        let result = ctx.prompt("resource-prompt", &[("resourceType", "Text"), ("resourceId", "5")]).await?;
        let Some(ContentBlock::EmbeddedResource(e)) = result.messages.get(1).map(|m| &m.content) else {
            bail!("no embedded resource in {:?}", result.messages);
        };
        let (uri, text) = resource_text(&e.resource)?;
        ensure!(uri == "demo://resource/dynamic/text/5" && text.starts_with("Resource 5:"), "{uri}: {text}");
        let result = ctx.prompt("resource-prompt", &[("resourceType", "Blob"), ("resourceId", "6")]).await?;
        let Some(ContentBlock::EmbeddedResource(e)) = result.messages.get(1).map(|m| &m.content) else {
            bail!("no embedded resource in {:?}", result.messages);
        };
        let (uri, bytes) = resource_blob(&e.resource)?;
        ensure!(uri == "demo://resource/dynamic/blob/6" && bytes.starts_with(b"Resource 6:"), "{uri}");
        Ok(String::new())
    })
    .await;
    r.check("everything: prompts/get with an invalid argument is an error", async {
        match ctx.prompt("resource-prompt", &[("resourceType", "Video"), ("resourceId", "1")]).await {
            Err(e) => match e.downcast_ref::<ClientError>() {
                Some(ClientError::Remote(_)) => Ok(String::new()),
                _ => bail!("expected a JSON-RPC error, got {e:#}"),
            },
            Ok(result) => bail!("expected an error, got {result:?}"),
        }
    })
    .await;
    r.check("everything: completion/complete (prompt arguments, with context)", async {
        let prompt = || PromptReference::new("completable-prompt");
        let values = ctx.complete(prompt(), "department", "S", &[]).await?;
        ensure!(values == ["Sales", "Support"], "department S: {values:?}");
        let values = ctx.complete(prompt(), "name", "", &[("department", "Engineering")]).await?;
        ensure!(values == ["Alice", "Bob", "Charlie"], "name with department=Engineering: {values:?}");
        let values = ctx.complete(PromptReference::new("resource-prompt"), "resourceType", "B", &[]).await?;
        ensure!(values == ["Blob"], "resourceType B: {values:?}");
        Ok(String::new())
    })
    .await;
    r.check("everything: completion/complete (resource template variable)", async {
        let template = ResourceTemplateReference::new("demo://resource/dynamic/text/{resourceId}");
        let values = ctx.complete(template, "resourceId", "12", &[]).await?;
        ensure!(values == ["12"], "resourceId 12: {values:?}");
        Ok(String::new())
    })
    .await;

    r.check("everything: simulate-research-query without a task is refused", async {
        match client.call_tool("simulate-research-query", json!({"topic": "rust"})).await {
            Err(ClientError::Remote(e)) => Ok(format!("{}: {}", e.code, e.message)),
            Ok(result) if result.is_error() => Ok(texts(&result).join(" ")),
            other => bail!("expected an error, got {other:?}"),
        }
    })
    .await;
    // The plain task runs in the server while the next check runs one that asks for input.
    let plain_task = Mutex::new(None);
    r.check("everything: simulate-research-query as a task (tools/call with `task`, tasks/get, tasks/list)", async {
        *lock(&plain_task) = Some(start_research_task(ctx, json!({"topic": "rust"})).await?);
        Ok(String::new())
    })
    .await;
    r.check("everything: simulate-research-query task asks for input (elicitation)", async {
        let before = lock(&ctx.rec.elicitations).len();
        let id = start_research_task(ctx, json!({"topic": "python", "ambiguous": true})).await?;
        let result = finish_research_task(ctx, &id).await?;
        ensure!(lock(&ctx.rec.elicitations).len() > before, "our elicitation handler was not called");
        let text = texts(&result).concat();
        ensure!(text.contains("# Research Report: python (programming)"), "{text:.300}");
        Ok(String::new())
    })
    .await;
    r.check("everything: simulate-research-query task: tasks/result delivers the report", async {
        let id = lock(&plain_task).take().context("the task was not created")?;
        let result = finish_research_task(ctx, &id).await?;
        let text = texts(&result).concat();
        ensure!(text.contains("# Research Report: rust"), "{text:.200}");
        Ok(String::new())
    })
    .await;
    // The other direction: the server makes its requests to us tasks, and polls them.
    r.check("everything: trigger-sampling-request-async: our sampling runs as a task the server polls", async {
        let before = lock(&ctx.rec.sampling).len();
        let result =
            client.call_tool("trigger-sampling-request-async", json!({"prompt": "hi", "maxTokens": 20})).await?;
        let text = texts(&result).concat();
        ensure!(text.starts_with("[COMPLETED] Async sampling completed!"), "{text:.300}");
        ensure!(text.contains(SAMPLING_ANSWER), "our answer is not in {text:.300}");
        ensure!(lock(&ctx.rec.sampling).len() > before, "our sampling handler was not called");
        Ok(String::new())
    })
    .await;
    r.check("everything: trigger-elicitation-request-async: our elicitation runs as a task the server polls", async {
        let before = lock(&ctx.rec.elicitations).len();
        let result = client.call_tool("trigger-elicitation-request-async", json!({})).await?;
        let text = texts(&result).concat();
        ensure!(text.contains("[COMPLETED] User provided the requested information!"), "{text:.300}");
        ensure!(lock(&ctx.rec.elicitations).len() > before, "our elicitation handler was not called");
        Ok(String::new())
    })
    .await;
    r.check("everything: calling a tool that does not exist is an error", async {
        match client.call_tool("no-such-tool", json!({})).await {
            Err(ClientError::Remote(e)) => Ok(format!("{}: {}", e.code, e.message)),
            Ok(result) if result.is_error() => Ok(texts(&result).join(" ")),
            other => bail!("expected an error, got {other:?}"),
        }
    })
    .await;
}

/// Starts `simulate-research-query` as a task ([`Client::call_tool_as_task`]) and finds it with
/// `tasks/get` and `tasks/list`; returns its id.
async fn start_research_task(ctx: &Ctx, arguments: Value) -> anyhow::Result<String> {
    let client = &ctx.client;
    ensure!(client.supports_tool_tasks(), "the server declares no task support for tools");
    let answer = client.call_tool_as_task("simulate-research-query", arguments, Some(Duration::from_secs(60))).await?;
    let task = answer.task().cloned().context("a 2025-11-25 server answers with a task")?;
    let id = task.task_id;
    ensure!(
        matches!(task.status, TaskStatus::Working | TaskStatus::InputRequired),
        "new task status {:?}",
        task.status
    );
    let status = client.get_task(&id).await?;
    ensure!(status.task_id == id, "tasks/get answered for {}", status.task_id);
    let list = client.list_tasks(None).await?;
    ensure!(list.tasks.iter().any(|t| t.task_id == id), "tasks/list does not have {id}");
    Ok(id)
}

/// Waits for a task's result ([`Client::wait_for_task`]: polls, then `tasks/result`, which
/// answers once the task is done; a request for input comes meanwhile), then checks
/// `tasks/get` says it completed.
async fn finish_research_task(ctx: &Ctx, id: &str) -> anyhow::Result<CallToolResult> {
    let result = ctx.client.wait_for_task(id).await?;
    let status = ctx.client.get_task(id).await?;
    ensure!(status.status == TaskStatus::Completed, "status after tasks/result: {:?}", status.status);
    Ok(result)
}

// ---------------------------------------------------------------------------------------------
// interop/python/server.py
// ---------------------------------------------------------------------------------------------

const PYTHON_TOOLS: &[&str] =
    &["ask_model", "ask_user", "authorize", "client_roots", "countdown", "fail", "greet", "touch", "weather"];

async fn python(ctx: &Ctx, r: &mut Report) {
    let client = &ctx.client;
    r.check("python: initialize", async {
        let info = client.server_info();
        ensure!(info.name == "python-interop-server", "serverInfo.name is {:?}", info.name);
        ensure!(client.protocol_version() == ProtocolVersion::V2025_11_25, "negotiated {}", client.protocol_version());
        ensure!(client.instructions().is_some_and(|i| !i.is_empty()), "no instructions");
        let caps = client.server_capabilities();
        ensure!(caps.tools.is_some() && caps.prompts.is_some() && caps.logging.is_some(), "capabilities: {caps:?}");
        ensure!(caps.resources.as_ref().is_some_and(|r| r.subscribe == Some(true)), "no resources.subscribe");
        ensure!(caps.completions.is_some(), "no completions capability");
        Ok(format!("{} {}, {}", info.name, info.version, client.protocol_version()))
    })
    .await;
    r.check("python: ping", async { Ok(client.ping().await.map(|()| String::new())?) }).await;
    r.check("python: tools/list offers every tool", check_tool_list(ctx, PYTHON_TOOLS)).await;
    r.check("python: greet (arguments)", async {
        let text = ctx.call_text("greet", json!({"name": "Ada", "excited": true})).await?;
        ensure!(text == "Hello, Ada!", "got {text:?}");
        let text = ctx.call_text("greet", json!({"name": "Bob"})).await?;
        ensure!(text == "Hello, Bob.", "got {text:?}");
        Ok(String::new())
    })
    .await;
    r.check("python: arguments are checked against the input schema before sending", async {
        match client.call_tool("greet", json!({"excited": true})).await {
            Err(ClientError::InvalidArguments { detail, .. }) => Ok(detail),
            other => bail!("expected InvalidArguments, got {other:?}"),
        }
    })
    .await;
    r.check("python: weather (structured content, validated against its output schema)", async {
        let tools = client.list_all_tools().await?;
        let tool = tools.iter().find(|t| t.name == "weather").context("no weather tool")?;
        ensure!(tool.output_schema.is_some(), "weather has no outputSchema");
        let result = ctx.call("weather", json!({"city": "Oslo"})).await?;
        let expected = json!({"city": "Oslo", "temperature": 21.5, "conditions": "sunny"});
        ensure!(
            result.structured_content.as_ref() == Some(&expected),
            "structuredContent {:?}",
            result.structured_content
        );
        Ok(String::new())
    })
    .await;
    r.check("python: fail (a tool error is a result, not an error)", async {
        let result = client.call_tool("fail", json!({})).await?;
        ensure!(result.is_error(), "isError is not set: {result:?}");
        ensure!(texts(&result).concat().contains("this tool always fails"), "{:?}", texts(&result));
        Ok(String::new())
    })
    .await;
    r.check("python: countdown (progress and log notifications)", async {
        client.set_logging_level(LoggingLevel::Debug).await?;
        let mark = ctx.rec.mark();
        let (result, progress) = ctx.call_with_progress("countdown", json!({"steps": 3})).await?;
        ensure!(texts(&result).concat() == "counted down 3 steps", "{:?}", texts(&result));
        let steps: Vec<_> = progress.iter().map(|p| (p.progress, p.total, p.message.clone())).collect();
        let expected: Vec<_> = (1..=3).map(|i| (f64::from(i), Some(3.0), Some(format!("step {i}")))).collect();
        ensure!(steps == expected, "progress {steps:?}");
        ctx.rec.wait_for(mark, "the `countdown finished` log", |e| is_log(e, "countdown finished")).await?;
        let logs: Vec<_> = ctx
            .rec
            .since(mark)
            .into_iter()
            .filter_map(|e| match e {
                ServerEvent::Log(l) => Some((l.level, l.data, l.logger)),
                _ => None,
            })
            .collect();
        ensure!(logs.len() == 4, "log messages {logs:?}");
        ensure!(logs[0].0 == LoggingLevel::Info && logs[0].1 == "step 1 of 3", "first log {:?}", logs[0]);
        ensure!(logs[0].2.as_deref() == Some("python-interop-server"), "logger {:?}", logs[0].2);
        Ok(String::new())
    })
    .await;
    r.check("python: the log level filters messages", async {
        client.set_logging_level(LoggingLevel::Warning).await?;
        let mark = ctx.rec.mark();
        // Its log messages go out before its answer, on the same pipe.
        let result = ctx.call_with_progress("countdown", json!({"steps": 2})).await;
        client.set_logging_level(LoggingLevel::Debug).await?;
        result?;
        let logs: Vec<_> = ctx.rec.since(mark).into_iter().filter(|e| matches!(e, ServerEvent::Log(_))).collect();
        ensure!(logs.is_empty(), "got {logs:?} at level warning");
        Ok(String::new())
    })
    .await;
    r.check("python: ask_model (our sampling handler answers)", async {
        let before = lock(&ctx.rec.sampling).len();
        let text = ctx.call_text("ask_model", json!({"question": "What is 6 times 7?"})).await?;
        let params = lock(&ctx.rec.sampling).get(before).cloned().context("our sampling handler was not called")?;
        ensure!(params.max_tokens == 50, "maxTokens {}", params.max_tokens);
        ensure!(params.system_prompt.as_deref() == Some("Answer in one word."), "{:?}", params.system_prompt);
        ensure!(text == format!("{SAMPLING_MODEL} says: {SAMPLING_ANSWER}"), "the tool returned {text:?}");
        Ok(String::new())
    })
    .await;
    r.check("python: ask_user (our elicitation handler answers a form)", async {
        let before = lock(&ctx.rec.elicitations).len();
        let text = ctx.call_text("ask_user", json!({})).await?;
        let params =
            lock(&ctx.rec.elicitations).get(before).cloned().context("our elicitation handler was not called")?;
        ensure!(matches!(params, ElicitRequestParams::ElicitRequestForm(_)), "not a form: {params:?}");
        ensure!(text == "accepted: name=Ada Lovelace age=36 subscribe=True", "the tool returned {text:?}");
        Ok(String::new())
    })
    .await;
    let mark = ctx.rec.mark();
    r.check("python: authorize (URL-mode elicitation)", async {
        let before = lock(&ctx.rec.elicitations).len();
        let text = ctx.call_text("authorize", json!({})).await?;
        let params =
            lock(&ctx.rec.elicitations).get(before).cloned().context("our elicitation handler was not called")?;
        let ElicitRequestParams::ElicitRequestURL(url) = params else { bail!("not a URL-mode request: {params:?}") };
        ensure!(url.url == "https://example.com/login", "url {}", url.url);
        ensure!(url.elicitation_id.as_deref() == Some("py-auth-1"), "elicitationId {:?}", url.elicitation_id);
        ensure!(text == "accept", "the tool returned {text:?}");
        Ok(String::new())
    })
    .await;
    r.check("python: notifications/elicitation/complete reaches the application", async {
        // Sent before the tool's answer, on the same pipe: it has been handled by now.
        let events = ctx.rec.since(mark);
        ensure!(
            events.iter().any(
                |e| matches!(e, ServerEvent::ElicitationComplete { elicitation_id } if elicitation_id == "py-auth-1")
            ),
            "no event for it; events: {events:?}"
        );
        Ok(String::new())
    })
    .await;
    r.check("python: client_roots (our roots handler answers)", async {
        let text = ctx.call_text("client_roots", json!({})).await?;
        ensure!(text == format!("{ROOT_URI} {ROOT_NAME}"), "the tool returned {text:?}");
        Ok(String::new())
    })
    .await;
    r.check("python: resources/subscribe and notifications/resources/updated", async {
        let uri = "info://server/readme";
        client.subscribe(uri).await?;
        let mark = ctx.rec.mark();
        let text = ctx.call_text("touch", json!({"uri": uri})).await?;
        ensure!(text == format!("notified subscribers of {uri}"), "{text}");
        ctx.rec
            .wait_for(
                mark,
                "notifications/resources/updated",
                |e| matches!(e, ServerEvent::ResourceUpdated { uri: u } if u == uri),
            )
            .await?;
        client.unsubscribe(uri).await?;
        let text = ctx.call_text("touch", json!({"uri": uri})).await?;
        ensure!(text == format!("nobody is subscribed to {uri}"), "after unsubscribing: {text}");
        Ok(String::new())
    })
    .await;
    r.check("python: prompts/list and prompts/get (arguments)", async {
        let prompts = client.list_all_prompts().await?;
        let prompt = prompts.iter().find(|p| p.name == "summarize").context("no summarize prompt")?;
        let args: Vec<_> =
            prompt.arguments.iter().flatten().map(|a| (a.name.as_str(), a.required.unwrap_or(false))).collect();
        ensure!(args == [("topic", true), ("style", false)], "arguments {args:?}");
        let result = ctx.prompt("summarize", &[("topic", "MCP"), ("style", "detailed")]).await?;
        ensure!(prompt_texts(&result) == ["Please write a detailed summary about MCP."], "{:?}", result.messages);
        let result = ctx.prompt("summarize", &[("topic", "MCP")]).await?;
        ensure!(prompt_texts(&result) == ["Please write a brief summary about MCP."], "{:?}", result.messages);
        Ok(String::new())
    })
    .await;
    r.check("python: prompts/get without a required argument is an error", async {
        match ctx.prompt("summarize", &[]).await {
            Err(e) => match e.downcast_ref::<ClientError>() {
                Some(ClientError::Remote(_)) => Ok(String::new()),
                _ => bail!("expected a JSON-RPC error, got {e:#}"),
            },
            Ok(result) => bail!("expected an error, got {result:?}"),
        }
    })
    .await;
    r.check("python: resources/list and read (static resource)", async {
        let resources = client.list_all_resources().await?;
        let readme = resources.iter().find(|r| r.uri == "info://server/readme").context("no info://server/readme")?;
        ensure!(readme.mime_type.as_deref() == Some("text/plain"), "mimeType {:?}", readme.mime_type);
        let read = client.read_resource(&readme.uri).await?;
        let (_, text) = resource_text(read.contents.first().context("no contents")?)?;
        ensure!(text == "This server exists to test MCP clients.", "{text}");
        Ok(String::new())
    })
    .await;
    r.check("python: resources/templates/list and read (resource template)", async {
        let templates = client.list_all_resource_templates().await?;
        ensure!(templates.iter().any(|t| t.uri_template == "notes://{topic}"), "templates {templates:?}");
        let read = client.read_resource("notes://rust").await?;
        let (uri, text) = resource_text(read.contents.first().context("no contents")?)?;
        ensure!(uri == "notes://rust" && text.starts_with("# Notes on rust"), "{uri}: {text}");
        Ok(String::new())
    })
    .await;
    r.check("python: reading a resource that does not exist is an error", async {
        match client.read_resource("nothing://here").await {
            Err(e @ ClientError::Remote(_)) => Ok(format!("code {}", remote_code(&e).unwrap_or_default())),
            other => bail!("expected a JSON-RPC error, got {other:?}"),
        }
    })
    .await;
    r.check("python: completion/complete (prompt argument, template variable)", async {
        let values = ctx.complete(PromptReference::new("summarize"), "style", "b", &[]).await?;
        ensure!(values == ["brief", "bullet points"], "style b: {values:?}");
        let values = ctx.complete(ResourceTemplateReference::new("notes://{topic}"), "topic", "ty", &[]).await?;
        ensure!(values == ["typescript"], "topic ty: {values:?}");
        Ok(String::new())
    })
    .await;
}
