//! Demo: a client talking to an example server over stdio.
//!
//! `cargo run --release --example demo` starts itself again as the `stdio_server` example's
//! server (a child process on pipes), performs the handshake, lists everything it offers,
//! calls its tools (one reporting progress and logging, one asking the client's "model" a
//! question, one asking the "user" to confirm an order), renders a prompt, reads resources,
//! asks for completions, runs a long tool call as a task (the 2026-07-28 tasks extension), and
//! shuts the child down. A second connection, in protocol revision 2025-11-25, runs the same
//! call as a task of that revision: answered at once, its progress reported as it runs, its
//! result awaited.

use std::collections::BTreeMap;

use anyhow::Context as _;

use mcp_sdk::client::tasks::ToolTask;
use mcp_sdk::client::{CallOptions, ClientBuilder, ServerEvent};
use mcp_sdk::transport::stdio::ChildCommand;
use mcp_sdk::types::{
    AnyResourceContents, CallToolRequestParams, CallToolResult, CompleteRequestParamsArgument,
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult,
    ElicitResultContentValue, LoggingLevel, PromptReference, ProtocolVersion, Role, Root, SamplingContent, TextContent,
};

fn show(result: &CallToolResult) -> String {
    match &result.structured_content {
        Some(s) => s.to_string(),
        None => result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join(" "),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--serve") {
        // The child: serve until stdin closes.
        mcp_examples::showcase::server()?.serve_stdio().await;
        return Ok(());
    }

    let me = std::env::current_exe()?;
    println!("starting the example server: {} --serve", me.display());
    let client = ClientBuilder::new("demo", "1.0")
        .on_sampling(|params: CreateMessageRequestParams| async move {
            println!("  [the server asks our model {} message(s); we answer 42]", params.messages.len());
            Ok(CreateMessageResult::new(Role::Assistant, SamplingContent::Text(TextContent::new("42")), "demo-model"))
        })
        .on_elicitation(|params: ElicitRequestParams| async move {
            if let ElicitRequestParams::ElicitRequestForm(form) = &params {
                println!("  [the server asks our user: {:?}; we accept 2]", form.message);
            }
            let answer = [("quantity".to_owned(), ElicitResultContentValue::Integer(2))];
            Ok(ElicitResult::new(ElicitAction::Accept).with_content(answer))
        })
        .apply_elicitation_defaults()
        .on_roots(|| async { Ok(vec![Root::new("file:///home/demo/project")]) })
        .on_event(|event| {
            if let ServerEvent::Log(log) = event {
                println!("  [log {}] {}", log.level, log.data);
            }
        })
        .spawn(ChildCommand::new(&me).arg("--serve"))
        .await?;
    let info = client.server_info();
    println!("connected to {} {} (protocol {})", info.name, info.version, client.protocol_version());

    for tool in client.list_all_tools().await? {
        println!("tool {}: {}", tool.name, tool.description.unwrap_or_default().lines().next().unwrap_or(""));
    }
    for prompt in client.list_all_prompts().await? {
        println!("prompt {}", prompt.name);
    }
    for resource in client.list_all_resources().await? {
        println!("resource {}", resource.uri);
    }
    for template in client.list_all_resource_templates().await? {
        println!("template {}", template.uri_template);
    }

    println!("add(2, 3) = {}", show(&client.call_tool("add", serde_json::json!({"a": 2, "b": 3})).await?));
    println!("weather(Lisbon) = {}", show(&client.call_tool("weather", serde_json::json!({"city": "Lisbon"})).await?));

    client.set_logging_level(LoggingLevel::Info).await?;
    let mut count_down = CallToolRequestParams::new("count_down");
    count_down.arguments = serde_json::from_value(serde_json::json!({"from": 3}))?;
    let options =
        CallOptions::default().on_progress(|p| println!("  [progress {}/{}]", p.progress, p.total.unwrap_or(0.0)));
    println!("count_down(3) = {}", show(&client.call_tool_with(count_down, options).await?));

    println!(
        "ask_model = {}",
        show(&client.call_tool("ask_model", serde_json::json!({"question": "the answer?"})).await?)
    );
    println!("order = {}", show(&client.call_tool("order", serde_json::json!({"item": "coffee"})).await?));
    println!("roots = {}", show(&client.call_tool("roots", serde_json::json!({})).await?));

    let review = client.get_prompt("review", BTreeMap::from([("code".into(), "fn main() {}".into())])).await?;
    println!("prompt review: {:?}", review.messages[0].content.as_text().unwrap_or_default());
    for uri in ["showcase://readme", "notes://ideas"] {
        let read = client.read_resource(uri).await?;
        if let Some(AnyResourceContents::TextResourceContents(t)) = read.contents.first() {
            println!("read {uri}: {:?}", t.text);
        }
    }
    let argument = CompleteRequestParamsArgument::new("language", "r");
    let done = client.complete(PromptReference::new("review"), argument).await?;
    println!("complete review.language 'r' = {:?}", done.completion.values);

    // Tasks in 2026-07-28: the call declares the tasks extension, and the server makes it a
    // task (or answers at once); the client polls it to its result.
    match client.call_tool_as_task("build", serde_json::json!({"target": "debug", "steps": 2}), None).await? {
        ToolTask::Running(task) => {
            println!("build(debug) as a task: {} is {:?}", task.task_id, task.status);
            println!("build(debug) = {}", show(&client.wait_for_task(&task.task_id).await?));
        }
        ToolTask::Done(result) => println!("build(debug) = {} (answered at once)", show(&result)),
        other => println!("build(debug): {other:?}"),
    }

    client.close().await?;
    println!("server stopped");

    // Tasks (2025-11-25): the call is answered at once with a task; the tool runs on.
    let sessions = ClientBuilder::new("demo", "1.0")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .spawn(ChildCommand::new(&me).arg("--serve"))
        .await?;
    let mut build = CallToolRequestParams::new("build");
    build.arguments = serde_json::from_value(serde_json::json!({"target": "release", "steps": 3}))?;
    let options = CallOptions::default().on_progress(|p| {
        println!("  [task progress {}/{}: {}]", p.progress, p.total.unwrap_or(0.0), p.message.unwrap_or_default());
    });
    let task = sessions.call_tool_as_task_with(build, options).await?.task().cloned().context("no task")?;
    println!("build(release) as a task: {} is {:?}", task.task_id, task.status);
    println!("build(release) = {}", show(&sessions.wait_for_task(&task.task_id).await?));
    sessions.close().await?;
    println!("second server stopped");
    Ok(())
}
