//! `mcp_sdk::testing`: a server defined with the macros, reached through the test client in
//! every revision that has the feature, one test per feature.

#![cfg(all(feature = "testing", feature = "macros"))]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_sdk::client::tasks::ToolTask;
use mcp_sdk::client::{CallOptions, Client, ServerEvent};
use mcp_sdk::server::{Context, Elicitation, Progress, Server, ToolError};
use mcp_sdk::types::{
    AnyResourceContents, CallToolRequestParams, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitResult, ElicitResultContentValue, ErrorObject, LoggingLevel, ProtocolVersion, Role, Root, SamplingContent,
    SamplingMessage, TextContent,
};
use mcp_sdk::{prompt, resource, testing, tool};
use serde_json::json;

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Greets someone.
#[prompt]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// The readme.
#[resource("notes://readme", mime_type = "text/plain")]
fn readme() -> String {
    "read me".to_owned()
}

/// One note.
#[resource("notes://{id}")]
fn note(id: String) -> String {
    format!("note {id}")
}

/// Counts to three, reporting each step.
#[tool]
async fn count(progress: Progress) -> &'static str {
    for step in 1..=3 {
        progress.report(f64::from(step)).total(3.0).message(format!("step {step}")).await;
    }
    "counted"
}

/// Logs a line at each level it is given.
#[tool]
async fn chatty(ctx: Context) -> &'static str {
    ctx.log(LoggingLevel::Debug, json!("a detail")).await;
    ctx.log(LoggingLevel::Warning, json!("careful")).await;
    "said it"
}

/// Asks the client's model.
#[tool]
async fn ask(question: String, ctx: Context) -> Result<String, ToolError> {
    let request = CreateMessageRequestParams::new(
        20,
        vec![SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new(question)))],
    );
    let answer = ctx.create_message(request).await?;
    match answer.content {
        SamplingContent::Text(text) => Ok(format!("{} said {}", answer.model, text.text)),
        other => Err(ToolError::new(format!("not text: {other:?}"))),
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    /// Your name
    name: String,
}

/// Asks the user's name.
#[tool]
async fn who(ctx: Context) -> Result<String, ToolError> {
    Ok(match ctx.elicit::<Name>("Your name?").await? {
        Elicitation::Accepted(n) => format!("hello {}", n.name),
        Elicitation::Declined => "declined".to_owned(),
        Elicitation::Cancelled => "cancelled".to_owned(),
    })
}

/// Lists the client's roots.
#[tool(name = "roots")]
async fn client_roots(ctx: Context) -> Result<String, ToolError> {
    let roots = ctx.list_roots().await?;
    Ok(roots.roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(","))
}

/// Builds a target, as a task if the client asks.
#[tool(task = "optional")]
async fn build(target: String, progress: Progress) -> String {
    progress.report(1.0).total(1.0).await;
    format!("built {target}")
}

fn server() -> Server {
    Server::builder("under-test", "1.0")
        .tools([
            add::tool(),
            count::tool(),
            chatty::tool(),
            ask::tool(),
            who::tool(),
            client_roots::tool(),
            build::tool(),
        ])
        .prompt(greet::prompt())
        .resource(readme::resource())
        .resource_template(note::template())
        .build()
        .unwrap()
}

/// The revisions that have `feature` (all, or from `since` on).
fn revisions(since: ProtocolVersion) -> impl Iterator<Item = ProtocolVersion> {
    ProtocolVersion::ALL.into_iter().filter(move |v| *v >= since)
}

/// The first event `pick` takes, within 10 s.
async fn event<T>(
    events: &mut tokio::sync::broadcast::Receiver<ServerEvent>,
    revision: ProtocolVersion,
    pick: impl Fn(ServerEvent) -> Option<T>,
) -> T {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(found) = pick(events.recv().await.expect("the event stream ended")) {
                return found;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{revision}: no such event within 10 s"))
}

fn text(result: &mcp_sdk::types::CallToolResult) -> String {
    assert!(!result.is_error(), "{result:?}");
    result.content[0].as_text().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn connects_in_one_line_in_the_newest_revision() {
    let server = server();
    let client = testing::connect(&server).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::LATEST);
    assert_eq!(client.server_info().name, "under-test");
}

#[tokio::test]
async fn speaks_each_revision_asked() {
    let server = server();
    for revision in ProtocolVersion::ALL {
        let client = testing::client().revision(revision).connect(&server).await.unwrap();
        assert_eq!(client.protocol_version(), revision);
        client.ping().await.unwrap();
    }
}

#[tokio::test]
async fn tools() {
    let server = server();
    for revision in ProtocolVersion::ALL {
        let client = testing::client().revision(revision).connect(&server).await.unwrap();
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "add"), "{revision}");
        let result = client.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap();
        assert_eq!(text(&result), "{\"result\":5}", "{revision}");
        let bad = client.call_tool("add", json!({"a": "two"})).await.unwrap();
        assert!(bad.is_error(), "{revision}: {bad:?}");
    }
}

#[tokio::test]
async fn prompts() {
    let server = server();
    for revision in ProtocolVersion::ALL {
        let client = testing::client().revision(revision).connect(&server).await.unwrap();
        assert_eq!(client.list_all_prompts().await.unwrap()[0].name, "greet", "{revision}");
        let prompt = client.get_prompt("greet", BTreeMap::from([("name".into(), "Ada".into())])).await.unwrap();
        assert_eq!(prompt.messages[0].content.as_text(), Some("Hello, Ada!"), "{revision}");
    }
}

#[tokio::test]
async fn resources() {
    let server = server();
    for revision in ProtocolVersion::ALL {
        let client = testing::client().revision(revision).connect(&server).await.unwrap();
        assert_eq!(client.list_all_resources().await.unwrap()[0].uri, "notes://readme", "{revision}");
        assert_eq!(client.list_all_resource_templates().await.unwrap()[0].uri_template, "notes://{id}");
        for (uri, expected) in [("notes://readme", "read me"), ("notes://7", "note 7")] {
            let read = client.read_resource(uri).await.unwrap();
            let Some(AnyResourceContents::TextResourceContents(contents)) = read.contents.first() else {
                panic!("{revision}: {read:?}")
            };
            assert_eq!(contents.text, expected, "{revision}");
        }
    }
}

#[tokio::test]
async fn subscriptions() {
    let server = server();
    for revision in ProtocolVersion::ALL {
        let client = testing::client().revision(revision).connect(&server).await.unwrap();
        let mut events = client.events();
        client.subscribe("notes://readme").await.unwrap();
        server.notify_resource_updated("notes://readme").await;
        let uri = event(&mut events, revision, |e| match e {
            ServerEvent::ResourceUpdated { uri } => Some(uri),
            _ => None,
        })
        .await;
        assert_eq!(uri, "notes://readme", "{revision}");
    }
}

#[tokio::test]
async fn progress() {
    let server = server();
    for revision in ProtocolVersion::ALL {
        let client = testing::client().revision(revision).connect(&server).await.unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let heard = seen.clone();
        let options = CallOptions::default().on_progress(move |p| heard.lock().unwrap().push((p.progress, p.message)));
        let result = client.call_tool_with(CallToolRequestParams::new("count"), options).await.unwrap();
        assert_eq!(text(&result), "counted", "{revision}");
        let seen = seen.lock().unwrap().clone();
        let progress: Vec<f64> = seen.iter().map(|(p, _)| *p).collect();
        assert_eq!(progress, [1.0, 2.0, 3.0], "{revision}");
        // Messages exist from 2025-03-26 on.
        let with_message = seen[0].1.as_deref() == Some("step 1");
        assert_eq!(with_message, revision >= ProtocolVersion::V2025_03_26, "{revision}: {seen:?}");
    }
}

#[tokio::test]
async fn logging() {
    let server = server();
    for revision in ProtocolVersion::ALL {
        let client = testing::client().revision(revision).connect(&server).await.unwrap();
        let mut events = client.events();
        client.set_logging_level(LoggingLevel::Info).await.unwrap();
        assert_eq!(text(&client.call_tool("chatty", json!({})).await.unwrap()), "said it");
        let log = event(&mut events, revision, |e| match e {
            ServerEvent::Log(log) => Some(log),
            _ => None,
        })
        .await;
        // The debug line is below the level asked: the warning is the first to come.
        assert_eq!((log.level, log.data), (LoggingLevel::Warning, json!("careful")), "{revision}");
    }
}

#[tokio::test]
async fn sampling() {
    let server = server();
    for revision in ProtocolVersion::ALL {
        let client = testing::client()
            .revision(revision)
            .on_sampling(|request| {
                let SamplingContent::Text(question) = &request.messages[0].content else { panic!("{request:?}") };
                let answer = if question.text == "2+2?" { "4" } else { "?" };
                Ok(CreateMessageResult::new(Role::Assistant, SamplingContent::Text(TextContent::new(answer)), "m"))
            })
            .connect(&server)
            .await
            .unwrap();
        let result = client.call_tool("ask", json!({"question": "2+2?"})).await.unwrap();
        assert_eq!(text(&result), "m said 4", "{revision}");
    }
    // Without a handler the client declares no sampling, and the call fails with the
    // capability it needs (-32021).
    let client = testing::connect(&server).await.unwrap();
    match client.call_tool("ask", json!({"question": "2+2?"})).await {
        Err(mcp_sdk::client::ClientError::Remote(e)) => assert_eq!(e.code, -32021, "{e:?}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn elicitation() {
    let server = server();
    for revision in revisions(ProtocolVersion::V2025_06_18) {
        let client = testing::client()
            .revision(revision)
            .on_elicitation(|request| {
                assert!(format!("{request:?}").contains("Your name?"), "{request:?}");
                let mut result = ElicitResult::new(ElicitAction::Accept);
                result.content =
                    Some(BTreeMap::from([("name".into(), ElicitResultContentValue::String("Ada".into()))]));
                Ok(result)
            })
            .connect(&server)
            .await
            .unwrap();
        assert_eq!(text(&client.call_tool("who", json!({})).await.unwrap()), "hello Ada", "{revision}");
    }
    let declines = testing::client().on_elicitation(|_| Ok(ElicitResult::new(ElicitAction::Decline)));
    let client = declines.connect(&server).await.unwrap();
    assert_eq!(text(&client.call_tool("who", json!({})).await.unwrap()), "declined");
}

#[tokio::test]
async fn roots() {
    let server = server();
    for revision in ProtocolVersion::ALL {
        let client = testing::client()
            .revision(revision)
            .roots(|| vec![Root::new("file:///a"), Root::new("file:///b")])
            .connect(&server)
            .await
            .unwrap();
        assert_eq!(text(&client.call_tool("roots", json!({})).await.unwrap()), "file:///a,file:///b", "{revision}");
    }
}

#[tokio::test]
async fn tasks() {
    let server = server();
    for revision in revisions(ProtocolVersion::V2025_11_25) {
        let client = testing::client().revision(revision).connect(&server).await.unwrap();
        assert!(client.supports_tool_tasks(), "{revision}");
        let result = match client.call_tool_as_task("build", json!({"target": "app"}), None).await.unwrap() {
            ToolTask::Running(task) => client.wait_for_task(&task.task_id).await.unwrap(),
            ToolTask::Done(result) => result,
            other => panic!("{other:?}"),
        };
        assert_eq!(text(&result), "built app", "{revision}");
    }
}

#[tokio::test]
async fn list_changed() {
    let server = server();
    for revision in ProtocolVersion::ALL {
        let client = testing::client().revision(revision).connect(&server).await.unwrap();
        let mut events = client.events();
        assert!(server.remove_tool("count").await, "{revision}");
        event(&mut events, revision, |e| matches!(e, ServerEvent::ToolListChanged).then_some(())).await;
        assert!(!client.list_all_tools().await.unwrap().iter().any(|t| t.name == "count"), "{revision}");
        server.add_tool(count::tool()).await.unwrap();
        event(&mut events, revision, |e| matches!(e, ServerEvent::ToolListChanged).then_some(())).await;
    }
}

#[tokio::test]
async fn errors_reach_the_test() {
    let server = server();
    let client: Client = testing::connect(&server).await.unwrap();
    let unknown = client.call_tool("nope", json!({})).await;
    match unknown {
        Err(mcp_sdk::client::ClientError::Remote(ErrorObject { code, .. })) => assert_eq!(code, -32602),
        other => panic!("{other:?}"),
    }
}
