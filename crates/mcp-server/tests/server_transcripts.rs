//! The server runtime as transcripts over the in-memory transport: JSON-RPC in, JSON-RPC out.
//! Every successful result is also validated against the official schema of the revision the
//! session negotiated.

use std::sync::Arc;
use std::time::Duration;

use mcp_jsonrpc::transport::{MemoryTransport, memory};
use mcp_server::{
    Completion, CompletionRequest, Context, PromptArguments, PromptDef, ResourceDef, Server, TemplateDef, ToolDef,
    ToolError, UriVariables,
};
use mcp_test_support::{Session, Wire};
use mcp_types::{
    AnyResourceContents, CallToolResult, ContentBlock, CreateMessageRequestParams, ErrorObject, GetPromptResult,
    LoggingLevel, PromptArgument, PromptMessage, Role, SamplingContent, SamplingMessage, TextContent,
    TextResourceContents,
};
use serde_json::{Value, json};

/// The test's end of a session (answers wait up to 600 s).
type Client = Session;

/// The test's end of `end`.
fn wire(end: MemoryTransport) -> Wire {
    Wire::new(end).with_timeout(Duration::from_secs(600))
}

fn text_tool(
    name: &str,
    f: impl Fn(serde_json::Map<String, Value>) -> Result<CallToolResult, ToolError> + Send + Sync + 'static,
) -> ToolDef {
    let f = Arc::new(f);
    ToolDef::new(name, json!({"type": "object", "properties": {"text": {"type": "string"}}}), move |args, _ctx| {
        let f = f.clone();
        async move { f(args) }
    })
    .unwrap()
}

/// The tools of [`server`], in the order they are listed.
fn tools() -> Vec<ToolDef> {
    let echo = text_tool("echo", |args| {
        Ok(CallToolResult::success(vec![ContentBlock::text(
            args.get("text").and_then(Value::as_str).unwrap_or_default(),
        )]))
    });
    let strict = ToolDef::new(
        "strict",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        |_args, _ctx| async { Ok::<_, ToolError>(CallToolResult::success(vec![])) },
    )
    .unwrap();
    let fails = text_tool("fails", |_| Err(ToolError::new("the database is down")));
    let panics = text_tool("panics", |_| panic!("kaboom"));
    let sum = text_tool("sum", |_| Ok(CallToolResult::structured(json!({"sum": 3}))))
        .output_schema(json!({"type": "object", "properties": {"sum": {"type": "number"}}}))
        .unwrap();
    let link = text_tool("link", |_| Ok(CallToolResult::success(vec![ContentBlock::resource_link("test://a", "a")])));
    let progress = ToolDef::new("progress", json!({"type": "object"}), |_args, ctx: Context| async move {
        for i in 1..=3 {
            ctx.progress(i as f64).total(3.0).message(format!("step {i}")).await;
        }
        ctx.logger("tool").log(LoggingLevel::Info, json!("info line")).await;
        ctx.logger("tool").log(LoggingLevel::Error, json!("error line")).await;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("done")]))
    })
    .unwrap();
    let sample = ToolDef::new("sample", json!({"type": "object"}), |_args, ctx: Context| async move {
        let message = SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new("hi")));
        match ctx.create_message(CreateMessageRequestParams::new(100, vec![message])).await {
            Ok(r) => Ok(CallToolResult::success(vec![ContentBlock::text(format!("model said: {:?}", r.content))])),
            Err(e) => Err(ToolError::new(e)),
        }
    })
    .unwrap();
    vec![echo, strict, fails, panics, sum, link, progress, sample]
}

fn server() -> Server {
    let review = PromptDef::new("review", |args: PromptArguments, _ctx| async move {
        let code = args.get("code").cloned().unwrap_or_default();
        Ok::<_, ErrorObject>(GetPromptResult::new(vec![PromptMessage::new(
            Role::User,
            ContentBlock::text(format!("Review: {code}")),
        )]))
    })
    .description("Asks for a review")
    .argument(PromptArgument::new("code").with_description("the code").with_required(true))
    .argument(PromptArgument::new("language").with_required(false))
    .complete("language", |req: CompletionRequest, _ctx| async move {
        Ok::<_, ErrorObject>(Completion::matching(&req.value, ["python", "perl", "php", "rust"]))
    });
    let readme = ResourceDef::new("readme", "test://readme", |uri: String, _vars, _ctx| async move {
        Ok::<_, ErrorObject>(vec![AnyResourceContents::TextResourceContents(TextResourceContents::new(
            uri, "# Readme",
        ))])
    })
    .mime_type("text/markdown");
    let item = TemplateDef::new("item", "test://items/{id}", |uri: String, vars: UriVariables, _ctx| async move {
        Ok::<_, ErrorObject>(vec![AnyResourceContents::TextResourceContents(TextResourceContents::new(
            uri,
            format!("item {}", vars["id"]),
        ))])
    })
    .unwrap()
    .complete("id", |_req, _ctx| async move {
        Ok::<_, ErrorObject>(Completion { values: (0..150).map(|i| i.to_string()).collect() })
    });
    Server::builder("test-server", "1.2.3")
        .title("Test server")
        .instructions("Be nice.")
        .page_size(3)
        .tools(tools())
        .prompt(review)
        .resource(readme)
        .resource_template(item)
        .build()
        .unwrap()
}

async fn connect(server: &Server, rev: &str, capabilities: Value) -> Client {
    connect_over(server, rev, capabilities, 256).await
}

/// [`connect`] over an in-memory transport that holds `capacity` frames each way.
async fn connect_over(server: &Server, rev: &str, capabilities: Value, capacity: usize) -> Client {
    let (a, b) = memory(capacity);
    server.connect(a);
    let mut client = Session::new(wire(b), rev);
    let init = client
        .result(
            "initialize",
            json!({"protocolVersion": rev, "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    assert_eq!(init["protocolVersion"], rev);
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    client
}

#[tokio::test]
async fn lifecycle_and_version_negotiation() {
    let server = server();
    let (a, b) = memory(16);
    server.connect(a);
    let mut c = Session::new(wire(b), "2025-11-25");
    // Only ping before initialize.
    let e = c.error("tools/list", json!({})).await;
    assert_eq!(e["code"], -32600);
    assert!(e["message"].as_str().unwrap().contains("initialize"), "{e}");
    c.result("ping", json!({})).await;
    // An unknown revision gets our newest session revision.
    let init = c
        .result(
            "initialize",
            json!({"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(init["serverInfo"], json!({"name": "test-server", "version": "1.2.3", "title": "Test server"}));
    assert_eq!(init["instructions"], "Be nice.");
    let caps = &init["capabilities"];
    assert_eq!(caps["tools"], json!({"listChanged": true}));
    assert_eq!(caps["prompts"], json!({"listChanged": true}));
    assert_eq!(caps["resources"], json!({"listChanged": true, "subscribe": true}));
    assert!(caps["logging"].is_object() && caps["completions"].is_object());

    for rev in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut c = connect(&server, rev, json!({})).await;
        let tools = c.result("tools/list", json!({})).await;
        assert_eq!(tools["tools"].as_array().unwrap().len(), 3);
    }
}

#[tokio::test]
async fn tools_are_listed_in_pages_with_opaque_cursors() {
    let server = server();
    let mut c = connect(&server, "2025-06-18", json!({})).await;
    let mut names = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let params = if cursor.is_null() { json!({}) } else { json!({"cursor": cursor}) };
        let page = c.result("tools/list", params).await;
        names.extend(page["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(names, ["echo", "strict", "fails", "panics", "sum", "link", "progress", "sample"]);
    let e = c.error("tools/list", json!({"cursor": "garbage!"})).await;
    assert_eq!(e["code"], -32602);
}

#[tokio::test]
async fn tool_calls_and_their_failures() {
    let server = server();
    let mut c = connect(&server, "2025-06-18", json!({})).await;
    let r = c.result("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}})).await;
    assert_eq!(r, json!({"content": [{"type": "text", "text": "hi"}]}));
    // Unknown tool: a protocol error.
    let e = c.error("tools/call", json!({"name": "nope"})).await;
    assert_eq!(e["code"], -32602);
    // Arguments that break the schema: a tool error the model can read.
    let r = c.result("tools/call", json!({"name": "strict", "arguments": {"n": "three"}})).await;
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"].as_str().unwrap().contains("invalid arguments"), "{r}");
    let r = c.result("tools/call", json!({"name": "strict", "arguments": {}})).await;
    assert_eq!(r["isError"], true);
    // A failing tool and a panicking one: error results, and the server goes on.
    let r = c.result("tools/call", json!({"name": "fails"})).await;
    assert_eq!(r, json!({"content": [{"type": "text", "text": "the database is down"}], "isError": true}));
    let r = c.result("tools/call", json!({"name": "panics"})).await;
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"].as_str().unwrap().contains("kaboom"));
    let r = c.result("tools/call", json!({"name": "echo", "arguments": {"text": "alive"}})).await;
    assert_eq!(r["content"][0]["text"], "alive");
    // Params that do not decode: -32602.
    let e = c.error("tools/call", json!({"arguments": {}})).await;
    assert_eq!(e["code"], -32602);
}

#[tokio::test]
async fn results_take_each_revisions_form() {
    let server = server();
    let mut new = connect(&server, "2025-06-18", json!({})).await;
    let r = new.result("tools/call", json!({"name": "sum"})).await;
    assert_eq!(r["structuredContent"], json!({"sum": 3}));
    let tools = new.result("tools/list", json!({"cursor": null})).await;
    let _ = tools;
    let mut old = connect(&server, "2025-03-26", json!({})).await;
    let r = old.result("tools/call", json!({"name": "sum"})).await;
    assert!(r.get("structuredContent").is_none());
    assert_eq!(r["content"][0]["text"], r#"{"sum":3}"#);
    // A resource link has no form before 2025-06-18: it is rewritten as text.
    let r = old.result("tools/call", json!({"name": "link"})).await;
    assert_eq!(r["content"][0]["type"], "text");
    let r = new.result("tools/call", json!({"name": "link"})).await;
    assert_eq!(r["content"][0]["type"], "resource_link");
}

#[tokio::test]
async fn progress_and_logging_reach_the_client() {
    let server = server();
    let mut c = connect(&server, "2025-06-18", json!({})).await;
    // A level outside the eight of RFC 5424 is invalid params, and changes nothing.
    assert_eq!(c.error("logging/setLevel", json!({"level": "verbose"})).await["code"], -32602);
    c.result("logging/setLevel", json!({"level": "warning"})).await;
    c.send(json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "progress", "_meta": {"progressToken": "tok"}}}))
        .await;
    let mut progress = Vec::new();
    let mut logs = Vec::new();
    loop {
        let m = c.recv().await;
        match m["method"].as_str() {
            Some("notifications/progress") => {
                assert_eq!(m["params"]["progressToken"], "tok");
                progress.push(m["params"]["progress"].as_f64().unwrap());
            }
            Some("notifications/message") => logs.push(m["params"].clone()),
            _ => {
                assert_eq!(m["id"], 99);
                break;
            }
        }
    }
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    assert_eq!(logs, [json!({"level": "error", "logger": "tool", "data": "error line"})]);
}

#[tokio::test]
async fn prompts_are_listed_rendered_and_completed() {
    let server = server();
    let mut c = connect(&server, "2025-06-18", json!({})).await;
    let list = c.result("prompts/list", json!({})).await;
    assert_eq!(list["prompts"][0]["name"], "review");
    assert_eq!(
        list["prompts"][0]["arguments"][0],
        json!({"name": "code", "description": "the code", "required": true})
    );
    let got = c.result("prompts/get", json!({"name": "review", "arguments": {"code": "x = 1"}})).await;
    assert_eq!(got["messages"][0], json!({"role": "user", "content": {"type": "text", "text": "Review: x = 1"}}));
    let e = c.error("prompts/get", json!({"name": "review", "arguments": {}})).await;
    assert_eq!(e["code"], -32602);
    assert!(e["message"].as_str().unwrap().contains("code"));
    let e = c.error("prompts/get", json!({"name": "nope"})).await;
    assert_eq!(e["code"], -32602);
    let done = c
        .result(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "language", "value": "p"}}),
        )
        .await;
    assert_eq!(done["completion"], json!({"values": ["python", "perl", "php"], "total": 3, "hasMore": false}));
}

#[tokio::test]
async fn resources_templates_subscriptions_and_not_found() {
    let server = server();
    let mut c = connect(&server, "2025-06-18", json!({})).await;
    let list = c.result("resources/list", json!({})).await;
    assert_eq!(list["resources"][0], json!({"uri": "test://readme", "name": "readme", "mimeType": "text/markdown"}));
    let templates = c.result("resources/templates/list", json!({})).await;
    assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], "test://items/{id}");
    let read = c.result("resources/read", json!({"uri": "test://readme"})).await;
    assert_eq!(read["contents"][0]["text"], "# Readme");
    let read = c.result("resources/read", json!({"uri": "test://items/42"})).await;
    assert_eq!(read["contents"][0], json!({"uri": "test://items/42", "text": "item 42"}));
    let e = c.error("resources/read", json!({"uri": "test://missing"})).await;
    assert_eq!(e["code"], -32002);
    assert_eq!(e["data"]["uri"], "test://missing");
    // Completion of a template variable: at most 100 values, with the total.
    let done = c
        .result("completion/complete", json!({"ref": {"type": "ref/resource", "uri": "test://items/{id}"}, "argument": {"name": "id", "value": ""}}))
        .await;
    assert_eq!(done["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!((done["completion"]["total"].clone(), done["completion"]["hasMore"].clone()), (json!(150), json!(true)));
    // Subscriptions.
    c.result("resources/subscribe", json!({"uri": "test://readme"})).await;
    server.notify_resource_updated("test://readme").await;
    server.notify_resource_updated("test://other").await;
    let n = c.recv().await;
    assert_eq!(
        n,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://readme"}})
    );
    c.result("resources/unsubscribe", json!({"uri": "test://readme"})).await;
    server.notify_resource_updated("test://readme").await;
    c.result("ping", json!({})).await; // nothing came before the pong
    // What one session may subscribe to is bounded: 4096 URIs, and 1 MiB of them.
    for i in 0..4096 {
        // Plain frames: the schema check of `result` would dominate the test's time.
        let uri = format!("test://items/{i}");
        c.send(
            json!({"jsonrpc": "2.0", "id": format!("s{i}"), "method": "resources/subscribe", "params": {"uri": uri}}),
        )
        .await;
        assert_eq!(c.recv().await["result"], json!({}));
    }
    c.result("resources/subscribe", json!({"uri": "test://items/7"})).await; // already held
    let e = c.error("resources/subscribe", json!({"uri": "test://one-too-many"})).await;
    assert_eq!(e["code"], -32602, "{e}");
    c.result("resources/unsubscribe", json!({"uri": "test://items/0"})).await;
    let long = format!("test://{}", "x".repeat(1 << 20));
    assert_eq!(c.error("resources/subscribe", json!({"uri": long})).await["code"], -32602);
    c.result("resources/subscribe", json!({"uri": "test://one-more"})).await;
}

#[tokio::test]
async fn list_changes_reach_connected_clients() {
    let server = server();
    let mut c = connect(&server, "2025-06-18", json!({})).await;
    server.add_tool(text_tool("late", |_| Ok(CallToolResult::success(vec![])))).await.unwrap();
    assert_eq!(c.recv().await["method"], "notifications/tools/list_changed");
    let r = c.result("tools/call", json!({"name": "late"})).await;
    assert_eq!(r["content"], json!([]));
    assert!(server.remove_tool("late").await);
    assert_eq!(c.recv().await["method"], "notifications/tools/list_changed");
    assert_eq!(c.error("tools/call", json!({"name": "late"})).await["code"], -32602);
    assert!(!server.remove_tool("late").await);
}

#[tokio::test]
async fn resource_templates_added_and_removed_at_runtime_change_the_list() {
    let server = server();
    let mut c = connect(&server, "2025-11-25", json!({})).await;
    let listed = |list: &Value| -> Vec<String> {
        list["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["uriTemplate"].as_str().unwrap().into())
            .collect()
    };
    assert_eq!(listed(&c.result("resources/templates/list", json!({})).await), ["test://items/{id}"]);
    let note = TemplateDef::new("note", "test://notes/{n}", |uri: String, vars: UriVariables, _ctx| async move {
        Ok::<_, ErrorObject>(vec![TextResourceContents::new(uri, format!("note {}", vars["n"])).into()])
    })
    .unwrap()
    .title("Note");
    server.add_resource_template(note).await.unwrap();
    assert_eq!(c.recv().await["method"], "notifications/resources/list_changed");
    let list = c.result("resources/templates/list", json!({})).await;
    assert_eq!(listed(&list), ["test://items/{id}", "test://notes/{n}"]);
    assert_eq!(
        list["resourceTemplates"][1],
        json!({"name": "note", "title": "Note", "uriTemplate": "test://notes/{n}"})
    );
    let read = c.result("resources/read", json!({"uri": "test://notes/7"})).await;
    assert_eq!(read["contents"][0]["text"], "note 7");
    assert_eq!(server.resource_templates().len(), 2);

    assert!(server.remove_resource_template("test://notes/{n}").await);
    assert_eq!(c.recv().await["method"], "notifications/resources/list_changed");
    assert_eq!(listed(&c.result("resources/templates/list", json!({})).await), ["test://items/{id}"]);
    assert_eq!(c.error("resources/read", json!({"uri": "test://notes/7"})).await["code"], -32002);
    // Nothing to remove: no notification (the next message answers the ping).
    assert!(!server.remove_resource_template("test://notes/{n}").await);
    c.result("ping", json!({})).await;

    // A server without the resources capability takes none.
    let bare = Server::builder("bare", "1").build().unwrap();
    let item = TemplateDef::new("x", "test://{x}", |_uri: String, _vars, _ctx| async { Ok(vec![]) }).unwrap();
    let err = bare.add_resource_template(item).await.unwrap_err();
    assert_eq!(err, mcp_server::DefinitionError::NotDeclared { capability: "resources" });
}

#[tokio::test]
async fn prompts_with_unlistable_arguments_are_refused() {
    let handler = |_args: PromptArguments, _ctx: Context| async { Ok::<_, ErrorObject>(GetPromptResult::new(vec![])) };
    let twice = PromptDef::new("twice", handler).argument(PromptArgument::new("a")).argument(PromptArgument::new("a"));
    let err = Server::builder("s", "1").prompt(twice).build().unwrap_err();
    assert_eq!(err.to_string(), "invalid arguments of prompt `twice`: two arguments are named `a`");
    let completes_nothing = PromptDef::new("p", handler)
        .argument(PromptArgument::new("a"))
        .complete("b", |_req, _ctx| async { Ok::<_, ErrorObject>(Completion::default()) });
    let server = Server::builder("s", "1").enable_prompts().build().unwrap();
    let err = server.add_prompt(completes_nothing).await.unwrap_err();
    assert_eq!(err.to_string(), "invalid arguments of prompt `p`: a completer names `b`, which is not an argument");
}

#[tokio::test]
async fn sampling_with_tools_needs_the_clients_sampling_tools() {
    let with_tools = ToolDef::new("with_tools", json!({"type": "object"}), |_args, ctx: Context| async move {
        let message = SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new("hi")));
        let mut params = CreateMessageRequestParams::new(100, vec![message]);
        params.tools = Some(vec![]);
        ctx.create_message(params).await?;
        Ok::<_, ToolError>(CallToolResult::success(vec![]))
    })
    .unwrap();
    let server = Server::builder("s", "1").tool(with_tools).build().unwrap();
    // Sampling without `tools`: no request goes to the client, the call gets -32021.
    let mut c = connect(&server, "2025-11-25", json!({"sampling": {}})).await;
    let e = c.error("tools/call", json!({"name": "with_tools"})).await;
    assert_eq!(e["code"], -32021, "{e}");
    assert_eq!(e["data"]["requiredCapabilities"], json!({"sampling": {"tools": {}}}));
    // With it, the request goes out.
    let mut c = connect(&server, "2025-11-25", json!({"sampling": {"tools": {}}})).await;
    c.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "with_tools"}})).await;
    assert_eq!(c.recv().await["method"], "sampling/createMessage");
}

#[tokio::test]
async fn items_of_an_undeclared_kind_cannot_be_added_at_runtime() {
    // The client was told there are no tools: a tool added now could be neither listed nor
    // called.
    let bare = Server::builder("bare", "1").build().unwrap();
    let err = bare.add_tool(text_tool("t", |_| Ok(CallToolResult::success(vec![])))).await.unwrap_err();
    assert_eq!(err, mcp_server::DefinitionError::NotDeclared { capability: "tools" });
    let enabled = Server::builder("enabled", "1").enable_tools().build().unwrap();
    enabled.add_tool(text_tool("t", |_| Ok(CallToolResult::success(vec![])))).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_client_that_reads_nothing_does_not_hold_up_the_others() {
    let config = mcp_jsonrpc::PeerConfig { outgoing_capacity: 1, ..Default::default() };
    let server = Server::builder("s", "1").enable_tools().peer_config(config).build().unwrap();
    // It reads nothing after its handshake: its transport and its queue fill up.
    let _stuck = connect_over(&server, "2025-06-18", json!({}), 1).await;
    let mut reader = connect(&server, "2025-06-18", json!({})).await;
    for i in 0..4 {
        let tool = text_tool(&format!("t{i}"), |_| Ok(CallToolResult::success(vec![])));
        tokio::time::timeout(Duration::from_secs(60), server.add_tool(tool)).await.expect("add_tool returns").unwrap();
    }
    for _ in 0..4 {
        assert_eq!(reader.recv().await["method"], "notifications/tools/list_changed");
    }
}

#[tokio::test]
async fn sampling_needs_the_clients_capability() {
    let server = server();
    let mut without = connect(&server, "2025-06-18", json!({})).await;
    let r = without.result("tools/call", json!({"name": "sample"})).await;
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"].as_str().unwrap().contains("sampling"), "{r}");

    let mut with = connect(&server, "2025-06-18", json!({"sampling": {}})).await;
    with.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "sample"}})).await;
    let req = with.recv().await;
    assert_eq!(req["method"], "sampling/createMessage");
    assert_eq!(req["params"]["maxTokens"], 100);
    with.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}}))
        .await;
    let answer = with.recv().await;
    assert_eq!(answer["id"], 7);
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("hello"), "{answer}");
}

#[tokio::test]
async fn a_roots_change_reaches_the_callback_with_the_clients_connection() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let server = Server::builder("roots", "1")
        .on_roots_changed(move |peer| {
            let _ = tx.send(peer.is_closed());
        })
        .build()
        .unwrap();
    let mut c = connect(&server, "2025-06-18", json!({"roots": {"listChanged": true}})).await;
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})).await;
    assert_eq!(rx.recv().await, Some(false));
}

#[test]
fn duplicate_names_are_refused_at_build() {
    let one = || text_tool("same", |_| Ok(CallToolResult::success(vec![])));
    let err = Server::builder("dup", "1").tool(one()).tool(one()).build().unwrap_err();
    assert_eq!(err.to_string(), "duplicate tool `same`");
}

/// A method whose capability the server did not declare is not found, as if unknown; setting
/// the log level is always offered.
#[tokio::test]
async fn methods_of_undeclared_capabilities_are_not_found() {
    let tools_only = Server::builder("tools-only", "1")
        .tool(text_tool("echo", |_| Ok(CallToolResult::success(vec![]))))
        .build()
        .unwrap();
    let mut c = connect(&tools_only, "2025-11-25", json!({})).await;
    assert_eq!(c.result("tools/list", json!({})).await["tools"][0]["name"], "echo");
    c.result("logging/setLevel", json!({"level": "info"})).await;
    let undeclared = [
        ("prompts/list", json!({})),
        ("prompts/get", json!({"name": "p"})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "file:///x"})),
        ("resources/subscribe", json!({"uri": "file:///x"})),
        ("resources/unsubscribe", json!({"uri": "file:///x"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}),
        ),
    ];
    for (method, params) in undeclared {
        let e = c.error(method, params).await;
        assert_eq!(e["code"], -32601, "{method}: {e}");
    }

    let prompts_only = Server::builder("prompts-only", "1")
        .prompt(PromptDef::new("p", |_args, _ctx| async { Ok::<_, ErrorObject>(GetPromptResult::new(vec![])) }))
        .build()
        .unwrap();
    let mut c = connect(&prompts_only, "2025-11-25", json!({})).await;
    c.result("prompts/list", json!({})).await;
    for method in ["tools/list", "tools/call"] {
        let e = c.error(method, json!({"name": "echo"})).await;
        assert_eq!(e["code"], -32601, "{method}: {e}");
    }
}
