//! `interop_client_stateless`: our client (`mcp-client`) speaking protocol revision 2026-07-28
//! (stateless MCP) to official servers, and falling back to `initialize` for servers of earlier
//! revisions.
//!
//! ```sh
//! # The TypeScript SDK 2.x server of interop/ts2 (server.mjs), over stdio and over HTTP:
//! interop_client_stateless --ts2-stdio node target/interop/ts2/server.mjs --stdio
//! interop_client_stateless --ts2-http node target/interop/ts2/server.mjs
//! interop_client_stateless --ts2-url http://localhost:3100/mcp          # a server already running
//! # The Python SDK 2.x server of interop/python, which also speaks 2026-07-28:
//! interop_client_stateless --python target/interop/venv/bin/python interop/python/server.py
//! # A server of an earlier revision over HTTP: the probe fails, `initialize` follows
//! # (`streamableHttp`), and for a 2024-11-05 server HTTP+SSE (`sse`):
//! interop_client_stateless --fallback-http node .../server-everything/dist/index.js streamableHttp
//! interop_client_stateless --fallback-sse node .../server-everything/dist/index.js sse
//! ```
//!
//! With `--ts2-http`, `--fallback-http` and `--fallback-sse` the server is started with `PORT`
//! set to a free port, and the client connects once the server prints a line naming it.
//!
//! Against the TypeScript server it checks: the negotiation through `server/discover`, the
//! lists and their cache hints, every content type, tool errors, progress, per-request log
//! levels, every multi round-trip tool (elicitation, sampling, roots, request state, several
//! inputs, several rounds, a prompt), resources and templates, completions, an `x-mcp-header`
//! tool (whose `Mcp-Param-Region` the server checks over HTTP), `subscriptions/listen` with
//! list-changed notifications, `subscribe`, and `ping` (mapped to `server/discover`).
//!
//! Prints `ok - <check>` or `not ok - <check>: <why>` per check, then `N passed, M failed`;
//! exits with 0 only if none failed. Every check has [`CHECK_TIMEOUT`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};
use mcp_examples::checks::Report;
use mcp_sdk::client::{CallOptions, Client, ClientBuilder, ServerEvent};
use mcp_sdk::transport::stdio::ChildCommand;
use mcp_sdk::types::{
    AnyResourceContents, CallToolRequestParams, CallToolResult, CompleteRequestParamsArgument, CompletionReference,
    ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult,
    ElicitResultContentValue, ErrorObject, LoggingLevel, PromptReference, ProtocolVersion, Role, Root, SamplingContent,
    SubscriptionFilter, TextContent,
};
use serde_json::{Value, json};

/// The longest one check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);
/// The root our roots handler reports.
const ROOT_URI: &str = "file:///tmp/mcp-interop-root";

/// What to drive, and how.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Ts2Stdio,
    Ts2Http,
    Ts2Url,
    Python,
    FallbackHttp,
    FallbackSse,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<std::process::ExitCode> {
    let mut args = std::env::args().skip(1);
    let mode = match args.next().as_deref() {
        Some("--ts2-stdio") => Mode::Ts2Stdio,
        Some("--ts2-http") => Mode::Ts2Http,
        Some("--ts2-url") => Mode::Ts2Url,
        Some("--python") => Mode::Python,
        Some("--fallback-http") => Mode::FallbackHttp,
        Some("--fallback-sse") => Mode::FallbackSse,
        _ => bail!(
            "usage: interop_client_stateless (--ts2-stdio | --ts2-http | --python | --fallback-http | --fallback-sse) \
             <server command> [args...] | --ts2-url <url>"
        ),
    };
    let Some(program) = args.next() else { bail!("no server command or URL given") };
    let args: Vec<String> = args.collect();
    let events: Arc<Mutex<Vec<ServerEvent>>> = Arc::default();
    let mut report = Report::new(CHECK_TIMEOUT);

    let mut http_server = None;
    let connect = async {
        let b = builder(&events);
        match mode {
            Mode::Ts2Stdio | Mode::Python => {
                Ok::<_, anyhow::Error>(b.spawn(ChildCommand::new(&program).args(&args)).await?)
            }
            Mode::Ts2Url => Ok(b.connect_http(&program).await?),
            Mode::Ts2Http | Mode::FallbackHttp | Mode::FallbackSse => {
                let (server, port) = HttpServer::start(&program, &args).await?;
                http_server = Some(server);
                let path = if mode == Mode::FallbackSse { "sse" } else { "mcp" };
                // The TypeScript 2.x server checks that the Host is `localhost`.
                let host = if mode == Mode::Ts2Http { "localhost" } else { "127.0.0.1" };
                Ok(b.connect_http(&format!("http://{host}:{port}/{path}")).await?)
            }
        }
    };
    let client = match tokio::time::timeout(CHECK_TIMEOUT, connect).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => {
            report.fail("connect", format!("{e:#}"));
            return Ok(report.finish());
        }
        Err(_) => {
            report.fail("connect", format!("no answer within {CHECK_TIMEOUT:?}"));
            return Ok(report.finish());
        }
    };
    match mode {
        Mode::Ts2Stdio | Mode::Ts2Http | Mode::Ts2Url => {
            ts2(&client, &events, &mut report, mode != Mode::Ts2Stdio).await
        }
        Mode::Python => python(&client, &mut report).await,
        Mode::FallbackHttp | Mode::FallbackSse => fallback(&client, &mut report).await,
    }
    report
        .check("close", async {
            client.close().await?;
            ensure!(client.ping().await.is_err(), "ping still works after close");
            Ok(String::new())
        })
        .await;
    if let Some(server) = http_server {
        server.stop().await;
    }
    Ok(report.finish())
}

/// The client with every handler: elicitations are answered by field (`name`: Alice,
/// `color`: blue, `context`: testing, booleans: true, anything else: x), sampling with "Paris",
/// roots with [`ROOT_URI`].
fn builder(events: &Arc<Mutex<Vec<ServerEvent>>>) -> ClientBuilder {
    let events = events.clone();
    ClientBuilder::new("mcp-rust-sdk-interop-stateless", env!("CARGO_PKG_VERSION"))
        .on_event(move |e| events.lock().unwrap_or_else(|e| e.into_inner()).push(e))
        .on_elicitation(|params: ElicitRequestParams| async move {
            let ElicitRequestParams::ElicitRequestForm(form) = params else {
                return Ok::<_, ErrorObject>(ElicitResult::new(ElicitAction::Decline));
            };
            let schema = serde_json::to_value(&form.requested_schema).unwrap_or_default();
            let fields = schema["properties"].as_object().cloned().unwrap_or_default();
            let content = fields
                .iter()
                .map(|(name, p)| {
                    let value = match (name.as_str(), p["type"].as_str()) {
                        (_, Some("boolean")) => ElicitResultContentValue::Boolean(true),
                        ("name", _) => ElicitResultContentValue::String("Alice".into()),
                        ("color", _) => ElicitResultContentValue::String("blue".into()),
                        ("context", _) => ElicitResultContentValue::String("testing".into()),
                        _ => ElicitResultContentValue::String("x".into()),
                    };
                    (name.clone(), value)
                })
                .collect();
            let mut result = ElicitResult::new(ElicitAction::Accept);
            result.content = Some(content);
            Ok(result)
        })
        .on_sampling(|_params: CreateMessageRequestParams| async move {
            let answer = SamplingContent::Text(TextContent::new("Paris"));
            Ok::<_, ErrorObject>(CreateMessageResult::new(Role::Assistant, answer, "rust-interop-model"))
        })
        .on_roots(|| async { Ok::<_, ErrorObject>(vec![Root::new(ROOT_URI)]) })
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(ContentBlock::as_text).collect::<Vec<_>>().join(" ")
}

async fn call_text(client: &Client, tool: &str, args: Value) -> anyhow::Result<String> {
    let result = client.call_tool(tool, args).await.with_context(|| format!("tools/call {tool}"))?;
    ensure!(!result.is_error(), "{tool} failed: {}", text(&result));
    Ok(text(&result))
}

/// The TypeScript SDK 2.x server.
async fn ts2(client: &Client, events: &Arc<Mutex<Vec<ServerEvent>>>, r: &mut Report, http: bool) {
    let p = if http { "ts2 http" } else { "ts2 stdio" };
    r.check(&format!("{p}: server/discover negotiates 2026-07-28"), async {
        ensure!(client.protocol_version() == ProtocolVersion::V2026_07_28, "negotiated {}", client.protocol_version());
        let d = client.discover_result().context("no discover result")?;
        ensure!(d.supported_versions.iter().any(|v| v == "2026-07-28"), "{:?}", d.supported_versions);
        ensure!(client.server_info().name == "ts2-everything-server", "{:?}", client.server_info());
        Ok(format!(
            "{} {}, ttlMs {}, {}",
            client.server_info().name,
            client.server_info().version,
            d.ttl_ms,
            d.cache_scope
        ))
    })
    .await;
    r.check(&format!("{p}: skills (SEP-2640): listed, loaded and a file read, each verified"), async {
        let skills = client.list_skills().await?;
        let skill = skills.iter().find(|s| s.uri == "skill://ts-greeting/SKILL.md").context("no ts-greeting skill")?;
        let loaded = client.load_skill(skill).await?;
        ensure!(loaded.instructions.contains("# TS greeting"), "{}", loaded.instructions);
        let note = client.read_skill_file(skill, "skill://ts-greeting/references/NOTE.md").await?;
        ensure!(note == b"A note from the TypeScript SDK.\n", "{}", String::from_utf8_lossy(&note));
        ensure!(client.get_skill(&skill.uri).await? == *skill, "skills/get differs from the listing");
        Ok(format!("{} skills", skills.len()))
    })
    .await;
    r.check(&format!("{p}: lists with cache hints"), async {
        let tools = client.list_tools(None).await?;
        ensure!(tools.ttl_ms.is_some() && tools.cache_scope.is_some(), "no cache hints on tools/list");
        ensure!(tools.tools.iter().any(|t| t.name == "test_region_header"), "no test_region_header");
        let all = client.list_all_tools().await?;
        let prompts = client.list_all_prompts().await?;
        let resources = client.list_all_resources().await?;
        let templates = client.list_all_resource_templates().await?;
        ensure!(!prompts.is_empty() && !resources.is_empty() && !templates.is_empty(), "an empty list");
        Ok(format!(
            "{} tools, {} prompts, {} resources, {} templates",
            all.len(),
            prompts.len(),
            resources.len(),
            templates.len()
        ))
    })
    .await;
    r.check(&format!("{p}: text, image, audio, embedded resource, mixed content"), async {
        ensure!(call_text(client, "test_simple_text", json!({})).await?.contains("simple text response"));
        for (tool, kind) in [
            ("test_image_content", "image"),
            ("test_audio_content", "audio"),
            ("test_embedded_resource", "resource"),
            ("test_multiple_content_types", "text"),
        ] {
            let result = client.call_tool(tool, json!({})).await?;
            let kinds: Vec<String> = result
                .content
                .iter()
                .map(|c| {
                    serde_json::to_value(c).ok().and_then(|v| v["type"].as_str().map(str::to_owned)).unwrap_or_default()
                })
                .collect();
            ensure!(kinds.iter().any(|k| k == kind), "{tool}: {kinds:?}");
        }
        Ok(String::new())
    })
    .await;
    r.check(&format!("{p}: a failing tool is a tool error"), async {
        let result = client.call_tool("test_error_handling", json!({})).await?;
        ensure!(result.is_error(), "not an error: {}", text(&result));
        Ok(text(&result))
    })
    .await;
    r.check(&format!("{p}: an unknown tool is a protocol error"), async {
        match client.call_tool("no_such_tool", json!({})).await {
            Err(e) => Ok(e.to_string()),
            Ok(result) if result.is_error() => Ok(format!("tool error: {}", text(&result))),
            Ok(result) => bail!("answered {}", text(&result)),
        }
    })
    .await;
    r.check(&format!("{p}: progress notifications"), async {
        let seen: Arc<Mutex<Vec<f64>>> = Arc::default();
        let sink = seen.clone();
        let options = CallOptions::default()
            .on_progress(move |p| sink.lock().unwrap_or_else(|e| e.into_inner()).push(p.progress));
        let result = client.call_tool_with(CallToolRequestParams::new("test_tool_with_progress"), options).await?;
        ensure!(!result.is_error(), "{}", text(&result));
        let seen = seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
        ensure!(seen == [0.0, 50.0, 100.0], "progress {seen:?}");
        Ok(format!("{seen:?}"))
    })
    .await;
    r.check(&format!("{p}: the log level goes with each request"), async {
        let before = events.lock().unwrap_or_else(|e| e.into_inner()).len();
        client.set_logging_level(LoggingLevel::Info).await?;
        call_text(client, "test_logging_tool", json!({})).await?;
        let logs: Vec<Value> = events.lock().unwrap_or_else(|e| e.into_inner())[before..]
            .iter()
            .filter_map(|e| if let ServerEvent::Log(l) = e { Some(l.data.clone()) } else { None })
            .collect();
        ensure!(logs.iter().any(|d| d.to_string().contains("hello from test_logging_tool")), "logs: {logs:?}");
        Ok(format!("{logs:?}"))
    })
    .await;
    for (tool, expected) in [
        ("test_input_required_result_elicitation", "Hello, Alice!"),
        ("test_input_required_result_sampling", "model said: Paris"),
        ("test_input_required_result_list_roots", "roots: file:///tmp/mcp-interop-root"),
        ("test_input_required_result_request_state", "state-ok"),
        ("test_input_required_result_multiple_inputs", "all inputs received"),
        ("test_input_required_result_multi_round", "done: Alice likes blue"),
        ("test_input_required_result_tampered_state", "state verified"),
        ("test_input_required_result_capabilities", "done"),
        ("test_missing_capability", "sampled"),
        ("test_streaming_elicitation", "ok"),
    ] {
        r.check(&format!("{p}: multi round-trip {tool}"), async {
            let got = call_text(client, tool, json!({})).await?;
            ensure!(got == expected, "answered {got:?}, expected {expected:?}");
            Ok(got)
        })
        .await;
    }
    r.check(&format!("{p}: multi round-trip prompt"), async {
        let prompt = client.get_prompt("test_input_required_result_prompt", BTreeMap::new()).await?;
        let text = prompt.messages[0].content.as_text().unwrap_or_default().to_owned();
        ensure!(text == "context: testing", "{text:?}");
        Ok(text)
    })
    .await;
    r.check(&format!("{p}: prompts with arguments"), async {
        let args = BTreeMap::from([("arg1".to_owned(), "a".to_owned()), ("arg2".to_owned(), "b".to_owned())]);
        let prompt = client.get_prompt("test_prompt_with_arguments", args).await?;
        let text = prompt.messages[0].content.as_text().unwrap_or_default().to_owned();
        ensure!(text.contains("arg1='a'") && text.contains("arg2='b'"), "{text:?}");
        Ok(text)
    })
    .await;
    r.check(&format!("{p}: resources and templates"), async {
        let read = client.read_resource("test://static-text").await?;
        ensure!(read.ttl_ms.is_some(), "no cache hints on resources/read");
        let AnyResourceContents::TextResourceContents(t) = &read.contents[0] else { bail!("not text") };
        ensure!(t.text.contains("static text resource"), "{}", t.text);
        let binary = client.read_resource("test://static-binary").await?;
        ensure!(matches!(&binary.contents[0], AnyResourceContents::BlobResourceContents(_)), "not a blob");
        let item = client.read_resource("test://template/42/data").await?;
        let AnyResourceContents::TextResourceContents(t) = &item.contents[0] else { bail!("not text") };
        ensure!(t.text.contains("Data for ID: 42"), "{}", t.text);
        Ok(String::new())
    })
    .await;
    r.check(&format!("{p}: completions"), async {
        let reference = CompletionReference::PromptReference(PromptReference::new("test_prompt_with_arguments"));
        let done = client.complete(reference, CompleteRequestParamsArgument::new("arg1", "pa")).await?;
        ensure!(done.completion.values == ["paris", "park", "party"], "{:?}", done.completion.values);
        Ok(format!("{:?}", done.completion.values))
    })
    .await;
    r.check(&format!("{p}: an x-mcp-header tool"), async {
        let got = call_text(client, "test_region_header", json!({"region": "eu west 1"})).await?;
        ensure!(got == "region=eu west 1", "{got:?}");
        let got = call_text(client, "test_region_header", json!({"region": "Zürich "})).await?;
        ensure!(got == "region=Zürich ", "{got:?}");
        Ok(String::new())
    })
    .await;
    r.check(&format!("{p}: subscriptions/listen delivers list changes"), async {
        let filter = SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            ..Default::default()
        };
        let mut subscription = client.listen(filter).await?;
        ensure!(subscription.acknowledged().tools_list_changed == Some(true), "{:?}", subscription.acknowledged());
        call_text(client, "test_trigger_tool_change", json!({})).await?;
        let event =
            tokio::time::timeout(Duration::from_secs(10), subscription.next()).await.context("no notification")?;
        ensure!(event == Some(ServerEvent::ToolListChanged), "{event:?}");
        call_text(client, "test_trigger_prompt_change", json!({})).await?;
        let event =
            tokio::time::timeout(Duration::from_secs(10), subscription.next()).await.context("no notification")?;
        ensure!(event == Some(ServerEvent::PromptListChanged), "{event:?}");
        Ok(format!("subscription {}", subscription.id()))
    })
    .await;
    r.check(&format!("{p}: subscribe opens an acknowledged subscription"), async {
        client.subscribe("test://static-text").await?;
        client.unsubscribe("test://static-text").await?;
        Ok(String::new())
    })
    .await;
    r.check(&format!("{p}: ping"), async { Ok(client.ping().await.map(|()| String::new())?) }).await;
}

/// The Python SDK 2.x server of `interop/python/server.py`, in 2026-07-28.
async fn python(client: &Client, r: &mut Report) {
    r.check("python: server/discover negotiates 2026-07-28", async {
        ensure!(client.protocol_version() == ProtocolVersion::V2026_07_28, "negotiated {}", client.protocol_version());
        Ok(format!("{} {}", client.server_info().name, client.server_info().version))
    })
    .await;
    r.check("python: lists", async {
        let tools = client.list_all_tools().await?;
        let prompts = client.list_all_prompts().await?;
        let resources = client.list_all_resources().await?;
        ensure!(tools.iter().any(|t| t.name == "greet"), "no greet");
        Ok(format!("{} tools, {} prompts, {} resources", tools.len(), prompts.len(), resources.len()))
    })
    .await;
    r.check("python: tools", async {
        let got = call_text(client, "greet", json!({"name": "Ada", "excited": true})).await?;
        ensure!(got.contains("Ada"), "{got:?}");
        let weather = client.call_tool("weather", json!({"city": "Oslo"})).await?;
        ensure!(weather.structured_content.is_some(), "no structured content");
        let failed = client.call_tool("fail", json!({})).await?;
        ensure!(failed.is_error(), "fail did not fail");
        Ok(got)
    })
    .await;
    r.check("python: prompts and resources", async {
        let prompt = client.get_prompt("summarize", BTreeMap::from([("topic".to_owned(), "MCP".to_owned())])).await?;
        ensure!(!prompt.messages.is_empty(), "no messages");
        let read = client.read_resource("info://server/readme").await?;
        ensure!(!read.contents.is_empty(), "no contents");
        Ok(String::new())
    })
    .await;
    r.check("python: ping", async { Ok(client.ping().await.map(|()| String::new())?) }).await;
}

/// A server of an earlier revision, reached through the fallback.
async fn fallback(client: &Client, r: &mut Report) {
    r.check("fallback: initialize after the probe", async {
        ensure!(!client.protocol_version().is_stateless(), "negotiated {}", client.protocol_version());
        ensure!(client.initialize_result().is_some(), "no initialize result");
        Ok(format!("{} {}", client.server_info().name, client.protocol_version()))
    })
    .await;
    r.check("fallback: tools", async {
        let tools = client.list_all_tools().await?;
        let echo = tools.iter().find(|t| t.name == "echo").context("no echo tool")?;
        let got = call_text(client, &echo.name, json!({"message": "hi"})).await?;
        Ok(format!("{} tools; echo: {got}", tools.len()))
    })
    .await;
}

/// A server process serving HTTP, its output passed on to our stderr.
struct HttpServer {
    child: tokio::process::Child,
}

impl HttpServer {
    /// Starts `program args` with `PORT` set to a free port, and waits until it prints a line
    /// naming the port.
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
        let needles = [format!("port {port}"), format!(":{port}")];
        let stdout = tokio::io::BufReader::new(child.stdout.take().context("no stdout")?);
        let stderr = tokio::io::BufReader::new(child.stderr.take().context("no stderr")?);
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
                if needles.iter().any(|n| line.contains(n.as_str()))
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
