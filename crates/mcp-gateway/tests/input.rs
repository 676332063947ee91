//! The input a mounted server asks for in a 2026-07-28 `input_required` result reaches the
//! gateway's client as the mounted server asked it: under its keys, all in one round.

use std::sync::{Arc, Mutex};

use mcp_client::ClientBuilder;
use mcp_server::{Context, Server, ToolDef, ToolError};
use mcp_types::{
    CallToolResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ProtocolVersion, Role, SamplingContent,
    SamplingMessage, TextContent,
};
use serde_json::json;

/// A server whose tool `ask` asks for a name (`user_name`) and a summary (`summary`) at once.
fn asking() -> Server {
    let tool = ToolDef::new("ask", json!({"type": "object"}), |_args, ctx: Context| async move {
        let schema: Result<mcp_types::ElicitRequestFormParamsRequestedSchema, _> =
            serde_json::from_value(json!({"type": "object", "properties": {"name": {"type": "string"}}}));
        let form = ElicitRequestParams::ElicitRequestForm(ElicitRequestFormParams::new("Name?", schema.unwrap()));
        let message = SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new("sum up")));
        let (name, summary) = tokio::join!(
            ctx.elicit_raw_as("user_name", form),
            ctx.create_message_as("summary", CreateMessageRequestParams::new(10, vec![message]))
        );
        let (_, summary) = (name?, summary?);
        let SamplingContent::Text(text) = summary.content else { panic!("not text") };
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text.text)]))
    })
    .unwrap();
    Server::builder("asking", "1.0").tool(tool).build().unwrap()
}

/// At 2026-07-28, the gateway's client is asked the mounted server's inputs under the
/// mounted server's keys, both in the first round (before, it was asked one at a time under
/// the gateway's own keys, `elicitation-1` then `sampling-1`).
#[tokio::test]
async fn a_mounted_servers_inputs_reach_the_client_under_its_keys_at_once() {
    let gateway = mcp_gateway::Gateway::builder("gateway", "1.0").mount("", asking()).build().await.unwrap();
    let (ours, theirs) = mcp_jsonrpc::transport::memory(16);
    gateway.connect(theirs);
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let (elicited, sampled) = (asked.clone(), asked.clone());
    let client = ClientBuilder::new("test", "1")
        .protocol_version(ProtocolVersion::V2026_07_28)
        .on_elicitation(move |_params| {
            elicited.lock().unwrap().push(mcp_client::input_key().unwrap_or_default());
            async { Ok(ElicitResult::new(ElicitAction::Accept)) }
        })
        .on_sampling(move |_params| {
            sampled.lock().unwrap().push(mcp_client::input_key().unwrap_or_default());
            async {
                Ok(CreateMessageResult::new(Role::Assistant, SamplingContent::Text(TextContent::new("short")), "m"))
            }
        })
        .connect(ours)
        .await
        .unwrap();
    let result = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("short"));
    // In the order of the result's keys.
    assert_eq!(*asked.lock().unwrap(), ["summary", "user_name"]);
}

/// A server whose tool `name` asks the client for a name and answers it.
fn naming() -> Server {
    let tool = ToolDef::new("name", json!({"type": "object"}), |_args, ctx: Context| async move {
        let schema: Result<mcp_types::ElicitRequestFormParamsRequestedSchema, _> =
            serde_json::from_value(json!({"type": "object", "properties": {"name": {"type": "string"}}}));
        let form = ElicitRequestParams::ElicitRequestForm(ElicitRequestFormParams::new("Name?", schema.unwrap()));
        let answer = ctx.elicit_raw_as("name", form).await?;
        let name = answer.content.and_then(|c| Some(serde_json::to_value(c.get("name")?).ok()?.as_str()?.to_owned()));
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(name.unwrap_or_default())]))
    })
    .unwrap();
    Server::builder("naming", "1.0").tool(tool).build().unwrap()
}

/// At 2026-07-28, the gateway's call of a mounted tool that waits for the client's input ends
/// with the mounted server's input request unanswered (the gateway's client is asked, then
/// retries): the normal flow, logged at debug level, not as a warning that the mounted
/// server failed (before: a WARN at each such call).
#[tokio::test]
async fn waiting_for_the_clients_input_is_no_warning() {
    let (spans, _guard) = mcp_test_support::spans::Spans::install();
    let gateway = mcp_gateway::Gateway::builder("gateway", "1.0").mount("", naming()).build().await.unwrap();
    let (ours, theirs) = mcp_jsonrpc::transport::memory(16);
    gateway.connect(theirs);
    let client = ClientBuilder::new("test", "1")
        .protocol_version(ProtocolVersion::V2026_07_28)
        .on_elicitation(|_params| async {
            let mut result = ElicitResult::new(ElicitAction::Accept);
            result.content = Some(serde_json::from_value(json!({"name": "alice"})).unwrap());
            Ok(result)
        })
        .connect(ours)
        .await
        .unwrap();
    let result = client.call_tool("name", json!({})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("alice"));
    let waited = mcp_client::ClientError::Input {
        method: "elicitation/create".into(),
        error: mcp_server::ClientRequestError::InputRequired.into(),
    };
    let message = format!("internal error: mounted server `` failed: {waited}");
    let logged = spans.event_fields(&message);
    assert!(!logged.is_empty(), "the wait is logged");
    assert!(logged.iter().all(|f| f["level"] == "DEBUG"), "{logged:?}");
}

/// At 2026-07-28, input the gateway's client sends that is not valid (a number for the
/// mounted server's elicitation) fails the call with -32602, as the mounted server alone
/// answers it: the client's error, not an `isError` result blaming the mounted server.
#[tokio::test]
async fn invalid_input_from_the_client_is_invalid_params() {
    let gateway = mcp_gateway::Gateway::builder("gateway", "1.0").mount("", naming()).build().await.unwrap();
    let (ours, theirs) = mcp_jsonrpc::transport::memory(16);
    gateway.connect(theirs);
    let mut wire = mcp_test_support::memory::Wire::new(ours);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    });
    let call = |id: i64, params: serde_json::Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    wire.send(call(1, json!({"name": "name", "arguments": {}, "_meta": meta}))).await;
    let first = wire.recv().await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert_eq!(first["result"]["inputRequests"]["name"]["method"], "elicitation/create", "{first}");
    let mut params = json!({"name": "name", "arguments": {}, "_meta": meta, "inputResponses": {"name": 42}});
    if let Some(state) = first["result"].get("requestState") {
        params["requestState"] = state.clone();
    }
    wire.send(call(2, params)).await;
    let second = wire.recv().await;
    assert_eq!(second["error"]["code"], -32602, "{second}");
}

/// A server whose tool `deploy` (a deferred task) asks the client for a name before its task
/// begins, then runs as a task answering it.
fn deploying() -> Server {
    let tool = ToolDef::new("deploy", json!({"type": "object"}), |_args, ctx: Context| async move {
        let schema: Result<mcp_types::ElicitRequestFormParamsRequestedSchema, _> =
            serde_json::from_value(json!({"type": "object", "properties": {"name": {"type": "string"}}}));
        let form = ElicitRequestParams::ElicitRequestForm(ElicitRequestFormParams::new("Name?", schema.unwrap()));
        let answer = ctx.elicit_raw_as("name", form).await?;
        ctx.run_as_task().await?;
        let name = answer.content.and_then(|c| Some(serde_json::to_value(c.get("name")?).ok()?.as_str()?.to_owned()));
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(name.unwrap_or_default())]))
    })
    .unwrap()
    .task_support(mcp_server::TaskSupport::Optional)
    .deferred_task();
    Server::builder("deploying", "1.0").tool(tool).build().unwrap()
}

/// The same for a call made as a task (2026-07-28, the tasks extension declared) of a mounted
/// tool that asks for input before its task begins: invalid input fails the call with -32602
/// (before: an `isError` result blaming the mounted server).
#[tokio::test]
async fn invalid_input_from_the_client_is_invalid_params_in_a_task_call() {
    let gateway = mcp_gateway::Gateway::builder("gateway", "1.0").mount("", deploying()).build().await.unwrap();
    let (ours, theirs) = mcp_jsonrpc::transport::memory(16);
    gateway.connect(theirs);
    let mut wire = mcp_test_support::memory::Wire::new(ours);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {(mcp_server::tasks::EXTENSION): {}},
        },
    });
    let call = |id: i64, params: serde_json::Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    wire.send(call(1, json!({"name": "deploy", "arguments": {}, "_meta": meta}))).await;
    let first = wire.recv().await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert_eq!(first["result"]["inputRequests"]["name"]["method"], "elicitation/create", "{first}");
    let mut params = json!({"name": "deploy", "arguments": {}, "_meta": meta, "inputResponses": {"name": 42}});
    if let Some(state) = first["result"].get("requestState") {
        params["requestState"] = state.clone();
    }
    wire.send(call(2, params)).await;
    let second = wire.recv().await;
    assert_eq!(second["error"]["code"], -32602, "{second}");
}
