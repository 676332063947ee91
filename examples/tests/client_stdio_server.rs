//! Our client against our own `stdio_server` example over a real pipe, and `http_server` over
//! Streamable HTTP (in 2026-07-28, and pinned to the session revision 2025-11-25) and legacy
//! HTTP+SSE: every feature they have.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_sdk::client::{CallOptions, ClientBuilder, ServerEvent};
use mcp_sdk::transport::stdio::ChildCommand;
use mcp_sdk::types::{
    AnyResourceContents, CallToolRequestParams, CompleteRequestParamsArgument, CreateMessageRequestParams,
    CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult, ElicitResultContentValue, LoggingLevel,
    PromptReference, ProtocolVersion, ResourceTemplateReference, Role, Root, SamplingContent, TextContent,
};
use serde_json::json;
use tokio::io::AsyncBufReadExt as _;

/// The `stdio_server` example, which `cargo test` builds next to this test.
fn server_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(|d| d.parent()).unwrap().join("examples").join("stdio_server");
    assert!(bin.exists(), "{} is missing: build the examples (cargo test builds them)", bin.display());
    bin
}

#[tokio::test]
async fn every_feature_of_stdio_server_over_a_pipe() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let client = builder(&events).spawn(ChildCommand::new(server_bin())).await.unwrap();
    every_feature(client, events).await;
}

/// The same server over Streamable HTTP (2026-07-28 by default, and 2025-11-25 with a session,
/// per-request SSE streams and the GET stream), and over HTTP+SSE (through the client's
/// fallback), as the `http_server` example in its own process.
#[tokio::test]
async fn every_feature_of_http_server_over_http_and_legacy_sse() {
    let bin = server_bin().with_file_name("http_server");
    let mut child = tokio::process::Command::new(&bin)
        .arg("127.0.0.1:0")
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next_line().await.unwrap().expect("http_server says where it listens");
        if let Some(url) = line.strip_prefix("listening on ") {
            break url.to_owned();
        }
    };
    // Keep reading its log so that it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let runs = [
        (url.clone(), None),
        (url.clone(), Some(ProtocolVersion::V2025_11_25)),
        (url.clone(), Some(ProtocolVersion::V2025_06_18)),
        (url.replace("/mcp", "/sse"), None),
    ];
    for (endpoint, pinned) in runs {
        let events = Arc::new(Mutex::new(Vec::new()));
        let client = match pinned {
            Some(version) => builder(&events).protocol_version(version).connect_http(&endpoint).await.unwrap(),
            None => builder(&events).connect_http(&endpoint).await.unwrap(),
        };
        if endpoint.ends_with("/mcp") {
            let expected = pinned.unwrap_or(ProtocolVersion::V2026_07_28);
            assert_eq!(client.protocol_version(), expected, "{endpoint}");
        }
        every_feature(client, events).await;
    }
}

fn builder(events: &Arc<Mutex<Vec<ServerEvent>>>) -> ClientBuilder {
    let sink = events.clone();
    ClientBuilder::new("test", "1")
        .on_sampling(|params: CreateMessageRequestParams| async move {
            assert_eq!(params.max_tokens, 200);
            Ok(CreateMessageResult::new(Role::Assistant, SamplingContent::Text(TextContent::new("42")), "test-model"))
        })
        .on_elicitation(|_params: ElicitRequestParams| async move {
            let mut result = ElicitResult::new(ElicitAction::Accept);
            result.content = Some(BTreeMap::from([("quantity".to_owned(), ElicitResultContentValue::Integer(3))]));
            Ok(result)
        })
        .apply_elicitation_defaults()
        .on_roots(|| async { Ok(vec![Root::new("file:///tmp/project")]) })
        .on_event(move |e| sink.lock().unwrap().push(e))
}

async fn every_feature(client: mcp_sdk::client::Client, events: Arc<Mutex<Vec<ServerEvent>>>) {
    assert_eq!(client.server_info().name, "showcase");
    assert!(client.instructions().unwrap().contains("count_down"));

    let tools: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(
        tools,
        ["add", "weather", "count_down", "build", "ask_model", "order", "connect_account", "account_files", "roots"]
    );
    let sum = client.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(sum.structured_content, Some(json!({"result": 5.0})));
    let weather = client.call_tool("weather", json!({"city": "Oslo"})).await.unwrap();
    assert_eq!(weather.structured_content.unwrap()["city"], "Oslo");
    let bad = client.call_tool("add", json!({"a": "two"})).await.unwrap();
    assert!(bad.is_error());

    client.set_logging_level(LoggingLevel::Info).await.unwrap();
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let mut count = CallToolRequestParams::new("count_down");
    count.arguments = serde_json::from_value(json!({"from": 3})).unwrap();
    let options = CallOptions::default()
        .timeout(Duration::from_secs(30))
        .on_progress(move |p| seen.lock().unwrap().push(p.progress));
    let done = client.call_tool_with(count, options).await.unwrap();
    assert_eq!(done.content[0].as_text(), Some("counted down from 3"));
    assert_eq!(*progress.lock().unwrap(), [1.0, 2.0, 3.0]);
    // The log notifications were written before the result, on the same pipe.
    let logs = events.lock().unwrap().iter().filter(|e| matches!(e, ServerEvent::Log(_))).count();
    assert_eq!(logs, 3);

    let asked = client.call_tool("ask_model", json!({"question": "?"})).await.unwrap();
    assert_eq!(asked.content[0].as_text(), Some("test-model says: 42"));
    let ordered = client.call_tool("order", json!({"item": "tea"})).await.unwrap();
    assert_eq!(ordered.content[0].as_text(), Some(r#"ordered tea: {"gift":false,"quantity":3}"#));
    let roots = client.call_tool("roots", json!({})).await.unwrap();
    assert_eq!(roots.content[0].as_text(), Some("file:///tmp/project"));

    // `review`'s arguments are the fields of a struct; the readme is annotated and sized.
    let prompts = client.list_all_prompts().await.unwrap();
    let review = prompts.iter().find(|p| p.name == "review").unwrap();
    assert_eq!(
        serde_json::to_value(&review.arguments).unwrap(),
        json!([
            {"name": "code", "description": "The code to review.", "required": true},
            {"name": "language", "description": "The language it is written in.", "required": false}
        ])
    );
    let prompt = client.get_prompt("review", BTreeMap::from([("code".into(), "x".into())])).await.unwrap();
    assert!(prompt.messages[0].content.as_text().unwrap().ends_with("\n\nx"));
    let resources = client.list_all_resources().await.unwrap();
    let listed = resources.iter().find(|r| r.uri == "showcase://readme").unwrap();
    assert_eq!(listed.annotations.as_ref().and_then(|a| a.priority), Some(0.9));
    let readme = client.read_resource("showcase://readme").await.unwrap();
    assert!(
        matches!(&readme.contents[0], AnyResourceContents::TextResourceContents(t) if t.text.starts_with("# Showcase") && Some(t.text.len() as i64) == listed.size)
    );
    let note = client.read_resource("notes://todo").await.unwrap();
    assert!(matches!(&note.contents[0], AnyResourceContents::TextResourceContents(t) if t.text == "write the docs"));
    assert!(client.read_resource("notes://missing").await.is_err());
    let languages = client
        .complete(PromptReference::new("review"), CompleteRequestParamsArgument::new("language", "t"))
        .await
        .unwrap();
    assert_eq!(languages.completion.values, ["typescript"]);
    let ids = client
        .complete(ResourceTemplateReference::new("notes://{id}"), CompleteRequestParamsArgument::new("id", "g"))
        .await
        .unwrap();
    assert_eq!(ids.completion.values, ["groceries"]);
    client.ping().await.unwrap();
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_server_that_dies_during_the_handshake_is_reported() {
    let command = ChildCommand::new("sh")
        .args(["-c", "echo 'cannot open database' >&2; exit 4"])
        .stderr(mcp_sdk::transport::stdio::StderrMode::Capture);
    match ClientBuilder::new("test", "1").spawn(command).await {
        Err(e @ mcp_sdk::client::ClientError::Closed(Some(_))) => {
            let report = e.to_string();
            assert!(report.contains("exit status: 4") && report.contains("cannot open database"), "{report}");
        }
        other => panic!("{other:?}"),
    }
}
