//! Our client against our server over the in-memory transport: every typed call, the handlers
//! for the server's requests, notifications, validation and the errors users act on.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{CallOptions, ClientBuilder, ClientError, ServerEvent};
use mcp_jsonrpc::transport::memory;
use mcp_jsonrpc::{Peer, PeerConfig, Router};
use mcp_server::{Completion, Context, PromptDef, ResourceDef, Server, TemplateDef, ToolDef, ToolError};
use mcp_types::{
    AnyResourceContents, CallToolRequestParams, CallToolResult, CompleteRequestParamsArgument, ContentBlock,
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult,
    ElicitResultContentValue, ErrorObject, GetPromptResult, Implementation, InitializeRequest, InitializeResult,
    LoggingLevel, PromptArgument, PromptMessage, PromptReference, ProtocolVersion, ResourceTemplateReference, Role,
    Root, SamplingContent, SamplingMessage, ServerCapabilities, TextContent, TextResourceContents,
};
use serde_json::json;

fn tool(
    name: &str,
    schema: serde_json::Value,
    f: fn(serde_json::Map<String, serde_json::Value>) -> CallToolResult,
) -> ToolDef {
    ToolDef::new(name, schema, move |args, _ctx| async move { Ok::<_, ToolError>(f(args)) }).unwrap()
}

/// `ask` asks the client for a sampling, an elicitation and its roots, and returns what it got.
fn ask_tool() -> ToolDef {
    ToolDef::new("ask", json!({"type": "object"}), |_a, ctx: Context| async move {
        let sampled = ctx
            .create_message(CreateMessageRequestParams::new(
                10,
                vec![SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new("2+2?")))],
            ))
            .await
            .map_err(ToolError::new)?;
        let form: ElicitRequestParams =
            serde_json::from_value(json!({"message": "Name?", "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string"}, "color": {"type": "string", "default": "blue"}}}}))
            .unwrap();
        let answer = ctx.elicit_raw(form).await.map_err(ToolError::new)?;
        let roots = ctx.list_roots().await.map_err(ToolError::new)?;
        Ok(CallToolResult::structured(json!({
            "sampled": serde_json::to_value(&sampled.content).unwrap(),
            "elicited": serde_json::to_value(&answer.content).unwrap(),
            "roots": roots.roots.iter().map(|r| r.uri.clone()).collect::<Vec<_>>(),
        })))
    })
    .unwrap()
}

fn server(page_size: usize) -> Server {
    // The client's checks are tested here: the server's own check of structured content (on in
    // debug builds) would answer a mismatch with an error before the client sees it.
    let mut builder =
        Server::builder("srv", "2.0").instructions("hello").page_size(page_size).check_structured_content(false);
    for i in 0..5 {
        builder = builder.tool(tool(&format!("t{i}"), json!({"type": "object"}), |_| CallToolResult::success(vec![])));
    }
    let echo = tool(
        "echo",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        |a| CallToolResult::success(vec![ContentBlock::text(a["text"].as_str().unwrap_or_default())]),
    );
    let sum = tool("sum", json!({"type": "object"}), |a| {
        CallToolResult::structured(json!({"sum": a.get("bad").map_or(json!(3), |_| json!("three"))}))
    })
    .output_schema(json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}))
    .unwrap();
    let fails = ToolDef::new("fails", json!({"type": "object"}), |_a, _c| async {
        Err::<CallToolResult, _>(ToolError::new("nope"))
    })
    .unwrap();
    let ask = ask_tool();
    let slow = ToolDef::new("slow", json!({"type": "object"}), |_a, ctx: Context| async move {
        for i in 1..=2 {
            ctx.progress(i as f64).total(2.0).await;
        }
        ctx.log(LoggingLevel::Warning, json!("careful")).await;
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok::<_, ToolError>(CallToolResult::success(vec![]))
    })
    .unwrap();
    let prompt = PromptDef::new("greet", |args, _ctx| async move {
        Ok::<_, ErrorObject>(GetPromptResult::new(vec![PromptMessage::new(
            Role::User,
            ContentBlock::text(format!("Hi {}", args["name"])),
        )]))
    })
    .argument(PromptArgument::new("name").with_required(true))
    .complete("name", |req, _ctx| async move {
        Ok::<_, ErrorObject>(Completion::matching(&req.value, ["ann", "bob"]))
    });
    let readme = ResourceDef::new("readme", "mem://readme", |uri, _v, _c| async move {
        Ok::<_, ErrorObject>(vec![AnyResourceContents::TextResourceContents(TextResourceContents::new(uri, "read me"))])
    });
    let item = TemplateDef::new("item", "mem://items/{id}", |uri, v, _c| async move {
        Ok::<_, ErrorObject>(vec![AnyResourceContents::TextResourceContents(TextResourceContents::new(
            uri,
            v["id"].clone(),
        ))])
    })
    .unwrap();
    builder
        .tool(echo)
        .tool(sum)
        .tool(fails)
        .tool(ask)
        .tool(slow)
        .prompt(prompt)
        .resource(readme)
        .resource_template(item)
        .build()
        .unwrap()
}

/// Connects in a session (`initialize`): these tests are about the revisions up to
/// 2025-11-25 (2026-07-28 is in `stateless_memory.rs` and `stateless_http.rs`).
async fn connect(server: &Server, builder: ClientBuilder) -> mcp_client::Client {
    let (a, b) = memory(256);
    server.connect(a);
    builder.session_revisions_only().connect(b).await.unwrap()
}

#[tokio::test]
async fn handshake_lists_and_calls() {
    let server = server(3);
    let client = connect(&server, ClientBuilder::new("cli", "1")).await;
    assert_eq!(client.server_info().name, "srv");
    assert_eq!(client.instructions(), Some("hello"));
    assert_eq!(client.protocol_version(), ProtocolVersion::LATEST_SESSION);
    client.ping().await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 10, "followed the cursors through every page");
    let r = client.call_tool("echo", json!({"text": "hi"})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("hi"));
    let r = client.call_tool("fails", json!(null)).await.unwrap();
    assert!(r.is_error());
    match client.call_tool("missing", json!({})).await {
        Err(ClientError::Remote(e)) => assert_eq!(e.code, -32602),
        other => panic!("{other:?}"),
    }
    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "greet");
    let got = client.get_prompt("greet", BTreeMap::from([("name".into(), "Ann".into())])).await.unwrap();
    assert_eq!(got.messages[0].content.as_text(), Some("Hi Ann"));
    assert_eq!(client.list_all_resources().await.unwrap()[0].uri, "mem://readme");
    assert_eq!(client.list_all_resource_templates().await.unwrap()[0].uri_template, "mem://items/{id}");
    let read = client.read_resource("mem://items/7").await.unwrap();
    assert!(matches!(&read.contents[0], AnyResourceContents::TextResourceContents(t) if t.text == "7"));
    match client.read_resource("mem://nothing").await {
        Err(ClientError::Remote(e)) => assert!(e.code == -32002 && e.message.contains("mem://nothing"), "{e}"),
        other => panic!("{other:?}"),
    }
    let done =
        client.complete(PromptReference::new("greet"), CompleteRequestParamsArgument::new("name", "a")).await.unwrap();
    assert_eq!(done.completion.values, ["ann"]);
    let done = client
        .complete(ResourceTemplateReference::new("mem://items/{id}"), CompleteRequestParamsArgument::new("id", ""))
        .await
        .unwrap();
    assert!(done.completion.values.is_empty());
    client.close().await.unwrap();
    assert!(matches!(client.ping().await, Err(ClientError::Closed(_))));
}

#[tokio::test]
async fn an_older_revision_is_negotiated_and_shapes_results() {
    let server = server(100);
    let client = connect(&server, ClientBuilder::new("cli", "1").protocol_version(ProtocolVersion::V2025_03_26)).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_03_26);
    let r = client.call_tool("sum", json!({})).await.unwrap();
    assert_eq!(r.structured_content, None, "2025-03-26 has no structured content");
    assert_eq!(r.content[0].as_text(), Some(r#"{"sum":3}"#));
}

/// A client that answers the server's requests: sampling ("4", checking the server asked for
/// 10 tokens), elicitation (accepting with the name "Ann"), roots (`file:///work`).
fn answering_client() -> ClientBuilder {
    ClientBuilder::new("cli", "1")
        .on_sampling(|params: CreateMessageRequestParams| async move {
            assert_eq!(params.max_tokens, 10);
            Ok(CreateMessageResult::new(Role::Assistant, SamplingContent::Text(TextContent::new("4")), "m"))
        })
        .on_elicitation(|_params: ElicitRequestParams| async move {
            let mut r = ElicitResult::new(ElicitAction::Accept);
            r.content = Some(BTreeMap::from([("name".to_owned(), ElicitResultContentValue::String("Ann".into()))]));
            Ok(r)
        })
        .apply_elicitation_defaults()
        .on_roots(|| async { Ok(vec![Root::new("file:///work")]) })
}

#[tokio::test]
async fn the_servers_requests_reach_the_handlers() {
    let server = server(100);
    let builder = answering_client();
    let client = connect(&server, builder).await;
    let r = client.call_tool("ask", json!({})).await.unwrap();
    assert!(!r.is_error(), "{r:?}");
    assert_eq!(
        r.structured_content.unwrap(),
        json!({"sampled": {"type": "text", "text": "4"}, "elicited": {"name": "Ann", "color": "blue"}, "roots": ["file:///work"]})
    );
    // Without handlers the capabilities are not declared and the server's calls fail cleanly.
    let plain = connect(&server, ClientBuilder::new("cli", "1")).await;
    let r = plain.call_tool("ask", json!({})).await.unwrap();
    assert!(r.is_error() && r.content[0].as_text().unwrap().contains("sampling"), "{r:?}");
}

#[tokio::test]
async fn notifications_reach_the_callback_and_the_stream() {
    let server = server(100);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let client = connect(&server, ClientBuilder::new("cli", "1").on_event(move |e| sink.lock().unwrap().push(e))).await;
    let mut events = client.events();
    client.set_logging_level(LoggingLevel::Warning).await.unwrap();
    client.subscribe("mem://readme").await.unwrap();
    server.notify_resource_updated("mem://readme").await;
    assert_eq!(events.recv().await.unwrap(), ServerEvent::ResourceUpdated { uri: "mem://readme".into() });
    server.add_tool(tool("new", json!({"type": "object"}), |_| CallToolResult::success(vec![]))).await.unwrap();
    assert_eq!(events.recv().await.unwrap(), ServerEvent::ToolListChanged);
    client.unsubscribe("mem://readme").await.unwrap();
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn progress_timeouts_and_logs() {
    let server = server(100);
    let client = connect(&server, ClientBuilder::new("cli", "1")).await;
    let mut events = client.events();
    let (err, progress) = slow_call_with_progress(&client).await;
    assert!(matches!(err, ClientError::Timeout { .. }), "{err}");
    assert_eq!(progress, [1.0, 2.0]);
    match events.recv().await.unwrap() {
        ServerEvent::Log(l) => assert_eq!((l.level, l.data), (LoggingLevel::Warning, json!("careful"))),
        other => panic!("{other:?}"),
    }
}

/// Calls the `slow` tool with a 5 s timeout: its error, and the progress reported meanwhile.
async fn slow_call_with_progress(client: &mcp_client::Client) -> (ClientError, Vec<f64>) {
    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = progress.clone();
    let options = CallOptions::default()
        .timeout(Duration::from_secs(5))
        .on_progress(move |p| sink.lock().unwrap().push(p.progress));
    let err = client.call_tool_with(CallToolRequestParams::new("slow"), options).await.unwrap_err();
    let progress = progress.lock().unwrap().clone();
    (err, progress)
}

/// A client pinned to an older revision gets progress too: the older schemas declare `_meta`
/// (with `progressToken`) on the base `Request.params` only, and the request once went out
/// without it, so the server had no token to report progress under.
#[tokio::test(start_paused = true)]
async fn progress_reaches_a_client_pinned_to_an_older_revision() {
    let server = server(100);
    for version in [ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18] {
        let client = connect(&server, ClientBuilder::new("cli", "1").protocol_version(version)).await;
        assert_eq!(client.protocol_version(), version);
        let (err, progress) = slow_call_with_progress(&client).await;
        assert!(matches!(err, ClientError::Timeout { .. }), "{version}: {err}");
        assert_eq!(progress, [1.0, 2.0], "{version}");
    }
}

#[tokio::test]
async fn optional_validation_of_arguments_and_structured_content() {
    let server = server(100);
    let client =
        connect(&server, ClientBuilder::new("cli", "1").validate_arguments().validate_structured_content()).await;
    client.list_all_tools().await.unwrap();
    match client.call_tool("echo", json!({"text": 5})).await {
        Err(ClientError::InvalidArguments { tool, .. }) => assert_eq!(tool, "echo"),
        other => panic!("{other:?}"),
    }
    client.call_tool("sum", json!({})).await.unwrap();
    match client.call_tool("sum", json!({"bad": true})).await {
        Err(ClientError::InvalidStructuredContent { tool, .. }) => assert_eq!(tool, "sum"),
        other => panic!("{other:?}"),
    }
    // A new listing forgets the schemas of tools the server dropped: the call goes out, and the
    // server says the tool is unknown.
    assert!(server.remove_tool("echo").await);
    client.list_all_tools().await.unwrap();
    match client.call_tool("echo", json!({"text": 5})).await {
        Err(ClientError::Remote(e)) => assert_eq!(e.code, -32602),
        other => panic!("{other:?}"),
    }
    // A tool with an output schema that returns no structured content breaks it too.
    let plain = tool("plain", json!({"type": "object"}), |_| CallToolResult::success(vec![ContentBlock::text("3")]))
        .output_schema(json!({"type": "object"}))
        .unwrap();
    let server = Server::builder("plain", "1").check_structured_content(false).tool(plain).build().unwrap();
    let client = connect(&server, ClientBuilder::new("cli", "1").validate_structured_content()).await;
    client.list_all_tools().await.unwrap();
    match client.call_tool("plain", json!({})).await {
        Err(ClientError::InvalidStructuredContent { detail, .. }) => assert!(detail.contains("no structuredContent")),
        other => panic!("{other:?}"),
    }
}

/// An output schema that is not an object schema (2026-07-28): a client of that revision gets
/// the array as it is, a client of 2025-11-25 gets it wrapped as `result`, with the listed
/// schema wrapped alike; each passes the client's check against the schema it was listed.
#[tokio::test]
async fn structured_content_that_is_not_an_object() {
    let users = tool("users", json!({"type": "object"}), |_| {
        CallToolResult::success(vec![ContentBlock::text("[\"alice\"]")]).with_structured_content(json!(["alice"]))
    })
    .output_schema(json!({"type": "array", "items": {"type": "string"}}))
    .unwrap();
    let server = Server::builder("users", "1").tool(users).build().unwrap();
    let (a, b) = memory(256);
    server.connect(a);
    let stateless = ClientBuilder::new("cli", "1").validate_structured_content().connect(b).await.unwrap();
    assert!(stateless.protocol_version().is_stateless());
    let tools = stateless.list_all_tools().await.unwrap();
    assert_eq!(tools[0].output_schema.as_ref().unwrap()["type"], "array");
    let r = stateless.call_tool("users", json!({})).await.unwrap();
    assert_eq!(r.structured_content, Some(json!(["alice"])));

    let session = connect(&server, ClientBuilder::new("cli", "1").validate_structured_content()).await;
    assert_eq!(session.protocol_version(), ProtocolVersion::V2025_11_25);
    let tools = session.list_all_tools().await.unwrap();
    assert_eq!(tools[0].output_schema.as_ref().unwrap()["properties"]["result"]["type"], "array");
    let r = session.call_tool("users", json!({})).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": ["alice"]})));
}

#[tokio::test]
async fn capabilities_the_server_lacks_fail_without_a_round_trip() {
    let server = Server::builder("tools-only", "1")
        .tool(tool("x", json!({"type": "object"}), |_| CallToolResult::success(vec![])))
        .build()
        .unwrap();
    let client = connect(&server, ClientBuilder::new("cli", "1")).await;
    assert!(matches!(client.list_prompts(None).await, Err(ClientError::NotSupported("prompts"))));
    assert!(matches!(client.read_resource("x://y").await, Err(ClientError::NotSupported("resources"))));
    assert!(matches!(client.subscribe("x://y").await, Err(ClientError::NotSupported(_))));
}

#[tokio::test]
async fn a_server_speaking_an_unknown_revision_is_refused() {
    let (a, b) = memory(16);
    let odd = Router::new().request::<InitializeRequest, _, _>(|_p, _c| async {
        Ok(InitializeResult::new(ServerCapabilities::default(), "1999-01-01", Implementation::new("odd", "0")))
    });
    let _server = Peer::spawn(a, Arc::new(odd), PeerConfig::default());
    match ClientBuilder::new("cli", "1").connect(b).await {
        Err(ClientError::UnsupportedVersion(v)) => assert_eq!(v, "1999-01-01"),
        other => panic!("{other:?}"),
    }
}

/// The same server, which also speaks 2026-07-28, reached without pinning an era: the same
/// calls work statelessly (the server's requests become input requests the client answers and
/// retries; subscriptions become a `subscriptions/listen` stream).
#[tokio::test]
async fn the_same_calls_in_2026_07_28() {
    let server = server(3);
    let (a, b) = memory(256);
    server.connect(a);
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let builder = answering_client().on_event(move |e| drop(events_tx.send(e)));
    let client = builder.connect(b).await.unwrap();
    assert!(client.protocol_version().is_stateless(), "{}", client.protocol_version());
    assert_eq!(client.server_info().name, "srv");
    assert_eq!(client.instructions(), Some("hello"));
    client.ping().await.unwrap();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 10);
    let r = client.call_tool("echo", json!({"text": "hi"})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("hi"));
    let r = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(
        r.structured_content.unwrap(),
        json!({"sampled": {"type": "text", "text": "4"}, "elicited": {"name": "Ann", "color": "blue"}, "roots": ["file:///work"]})
    );
    let got = client.get_prompt("greet", BTreeMap::from([("name".into(), "Ann".into())])).await.unwrap();
    assert_eq!(got.messages[0].content.as_text(), Some("Hi Ann"));
    let read = client.read_resource("mem://items/7").await.unwrap();
    assert!(matches!(&read.contents[0], AnyResourceContents::TextResourceContents(t) if t.text == "7"));
    client.subscribe("mem://readme").await.unwrap();
    server.notify_resource_updated("mem://readme").await;
    assert_eq!(events.recv().await.unwrap(), ServerEvent::ResourceUpdated { uri: "mem://readme".into() });
    assert!(matches!(client.reinitialize().await, Err(ClientError::NotInRevision { .. })));
    client.close().await.unwrap();
}

/// Reading a resource the server does not have: -32602 (invalid params) with the URI in
/// 2026-07-28, -32002 (resource not found) in a session, through our client both ways.
#[tokio::test]
async fn an_unknown_resource_is_an_error_of_its_revision() {
    let server = server(3);
    let (a, b) = memory(256);
    server.connect(a);
    let stateless = ClientBuilder::new("cli", "1").connect(b).await.unwrap();
    assert!(stateless.protocol_version().is_stateless());
    match stateless.read_resource("mem://nowhere").await {
        Err(ClientError::Remote(e)) => {
            assert_eq!(e.code, -32602, "{e:?}");
            assert_eq!(e.data, Some(json!({"uri": "mem://nowhere"})));
        }
        other => panic!("{other:?}"),
    }
    let session = connect(&server, ClientBuilder::new("cli", "1")).await;
    match session.read_resource("mem://nowhere").await {
        Err(ClientError::Remote(e)) => assert_eq!(e.code, -32002, "{e:?}"),
        other => panic!("{other:?}"),
    }
}
