//! `interop_sampling_tools`: our client answering sampling with tools (SEP-1577, protocol
//! revision 2025-11-25) from a server written with the official TypeScript SDK.
//!
//! ```sh
//! cargo run --example interop_sampling_tools -- node target/interop/ts/sampling_tools_server.mjs
//! ```
//!
//! The client declares `sampling.tools` ([`ClientBuilder::sampling_tools`]) and calls the
//! server's `ask_weather`, which asks our model with the tool `get_weather` offered. Our
//! sampling handler plays the model: to the first request it answers with a `tool_use` of
//! `get_weather` (stop reason `toolUse`); to the follow-up, whose last message carries the
//! `tool_result`, with a final text built from that result (stop reason `endTurn`). The checks:
//! the tools and the tool choice reached our handler, the follow-up carried our `tool_use` and
//! the server's `tool_result` for its id, and the tool's final result is our final text.
//! `cargo xtask interop` runs it (see `interop/README.md`).
//!
//! Prints `ok - <check>` or `not ok - <check>: <why>` per check, then `N passed, M failed`;
//! exits with 0 only if none failed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, ensure};
use mcp_examples::checks::Report;
use mcp_sdk::client::ClientBuilder;
use mcp_sdk::transport::stdio::ChildCommand;
use mcp_sdk::types::{
    CreateMessageRequestParams, CreateMessageResult, ErrorObject, ProtocolVersion, Role, SamplingContent,
    SamplingMessageContentBlock, TextContent, ToolChoiceMode, ToolUseContent,
};
use serde_json::json;

/// The longest one check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);
/// The model our handler claims to be.
const MODEL: &str = "rust-tool-model";
/// The id of the tool use our model asks for.
const TOOL_USE_ID: &str = "call-1";

#[tokio::main]
async fn main() -> anyhow::Result<std::process::ExitCode> {
    let mut args = std::env::args().skip(1);
    let Some(program) = args.next() else {
        bail!("usage: interop_sampling_tools <server command> [args...]");
    };
    let args: Vec<String> = args.collect();
    let requests: Arc<Mutex<Vec<CreateMessageRequestParams>>> = Arc::default();
    let seen = Arc::clone(&requests);
    let builder = ClientBuilder::new("mcp-rust-sdk-interop", env!("CARGO_PKG_VERSION"))
        .session_revisions_only()
        .on_sampling(move |params: CreateMessageRequestParams| {
            let answer = model(&params);
            seen.lock().unwrap_or_else(|e| e.into_inner()).push(params);
            std::future::ready(answer)
        })
        .sampling_tools()
        .validate_structured_content();
    let mut report = Report::new(CHECK_TIMEOUT);
    let client = match tokio::time::timeout(CHECK_TIMEOUT, builder.spawn(ChildCommand::new(&program).args(&args))).await
    {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => {
            report.fail("initialize handshake", e);
            return Ok(report.finish());
        }
        Err(_) => {
            report.fail("initialize handshake", format!("no answer within {CHECK_TIMEOUT:?}"));
            return Ok(report.finish());
        }
    };
    report
        .check("sampling tools: the session speaks 2025-11-25", async {
            ensure!(client.protocol_version() == ProtocolVersion::V2025_11_25, "{}", client.protocol_version());
            Ok(String::new())
        })
        .await;
    let mut answer = None;
    report
        .check("sampling tools: ask_weather answers with our model's final text", async {
            let result = client.call_tool("ask_weather", json!({"question": "What is the weather in Paris?"})).await?;
            let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
            ensure!(!result.is_error(), "tool error: {}", text.join(" | "));
            ensure!(text == ["In Paris it is sunny, 21 °C."], "{text:?}");
            answer = result.structured_content.clone();
            Ok(text.join(""))
        })
        .await;
    report
        .check("sampling tools: the structured result names the tool loop", async {
            let expected =
                json!({"toolUses": 1, "city": "Paris", "answer": "In Paris it is sunny, 21 °C.", "model": MODEL});
            ensure!(answer.as_ref() == Some(&expected), "{answer:?}");
            Ok(String::new())
        })
        .await;
    let requests = std::mem::take(&mut *requests.lock().unwrap_or_else(|e| e.into_inner()));
    report.check("sampling tools: the tools reached our handler", async { first_request(&requests) }).await;
    report.check("sampling tools: the follow-up carried the tool result", async { follow_up(&requests) }).await;
    report
        .check("sampling tools: close stops the server", async {
            client.close().await?;
            ensure!(client.ping().await.is_err(), "ping still works after close");
            Ok(String::new())
        })
        .await;
    Ok(report.finish())
}

/// Our model: a `tool_use` of `get_weather` while the last message is the question, a final
/// text once it is the tool's result.
fn model(params: &CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> {
    let last = params.messages.last().map(|m| m.content.blocks()).unwrap_or_default();
    let result = match last.as_slice() {
        [SamplingMessageContentBlock::ToolResult(result)] => {
            let weather: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
            let text = TextContent::new(format!("In Paris it is {}.", weather.join("")));
            let mut answer = CreateMessageResult::new(Role::Assistant, text, MODEL);
            answer.stop_reason = Some("endTurn".to_owned());
            answer
        }
        _ => {
            let input = json!({"city": "Paris"}).as_object().cloned().unwrap_or_default();
            let call = ToolUseContent::new("get_weather", TOOL_USE_ID, input);
            let content = SamplingContent::Array(vec![SamplingMessageContentBlock::ToolUse(call)]);
            let mut answer = CreateMessageResult::new(Role::Assistant, content, MODEL);
            answer.stop_reason = Some("toolUse".to_owned());
            answer
        }
    };
    Ok(result)
}

/// The first request offered `get_weather`, with its input schema, and demanded a tool use.
fn first_request(requests: &[CreateMessageRequestParams]) -> anyhow::Result<String> {
    ensure!(requests.len() == 2, "{} sampling requests, expected 2", requests.len());
    let first = &requests[0];
    let tools = first.tools.as_deref().unwrap_or_default();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    ensure!(names == ["get_weather"], "tools {names:?}");
    ensure!(tools[0].input_schema.get("required") == Some(&json!(["city"])), "{:?}", tools[0].input_schema);
    let mode = first.tool_choice.as_ref().and_then(|c| c.mode.as_ref());
    ensure!(mode == Some(&ToolChoiceMode::Required), "toolChoice {:?}", first.tool_choice);
    ensure!(first.messages.len() == 1, "{} messages", first.messages.len());
    Ok(format!("tools {names:?}, toolChoice required"))
}

/// The follow-up carried the question, our `tool_use` and the server's `tool_result` for it.
fn follow_up(requests: &[CreateMessageRequestParams]) -> anyhow::Result<String> {
    let Some(second) = requests.get(1) else { bail!("no follow-up request") };
    let mode = second.tool_choice.as_ref().and_then(|c| c.mode.as_ref());
    ensure!(mode == Some(&ToolChoiceMode::None), "toolChoice {:?}", second.tool_choice);
    let [question, assistant, user] = second.messages.as_slice() else {
        bail!("{} messages, expected 3", second.messages.len());
    };
    ensure!(question.role == Role::User && assistant.role == Role::Assistant && user.role == Role::User);
    match assistant.content.blocks().as_slice() {
        [SamplingMessageContentBlock::ToolUse(call)] if call.id == TOOL_USE_ID && call.name == "get_weather" => {}
        other => bail!("the assistant's message is not our tool use: {other:?}"),
    }
    match user.content.blocks().as_slice() {
        [SamplingMessageContentBlock::ToolResult(result)] if result.tool_use_id == TOOL_USE_ID => {
            let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
            ensure!(text == ["sunny, 21 °C"], "{text:?}");
            Ok(format!("tool_result for {TOOL_USE_ID}: {}", text.join("")))
        }
        other => bail!("the last message is not the tool result: {other:?}"),
    }
}
