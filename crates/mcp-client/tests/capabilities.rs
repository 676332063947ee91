//! The client capabilities a user declares beyond the handlers: `sampling.tools` and
//! `sampling.context`, experimental capabilities and extensions, as our server sees them, and
//! what a server may then ask (sampling with tools only from a client that declared it).

use mcp_client::ClientBuilder;
use mcp_jsonrpc::transport::memory;
use mcp_server::{Context, Server, ToolDef, ToolError};
use mcp_types::{
    CallToolResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult, Role, SamplingContent,
    SamplingMessage, TextContent, Tool,
};
use serde_json::json;

fn server() -> Server {
    let with_tools = ToolDef::new("with_tools", json!({"type": "object"}), |_args, ctx: Context| async move {
        let message = SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new("2+2?")));
        let mut params = CreateMessageRequestParams::new(10, vec![message]);
        params.tools =
            Some(vec![Tool::new("calculator", serde_json::Map::from_iter([("type".to_owned(), json!("object"))]))]);
        let text = match ctx.create_message(params).await {
            Ok(answer) => format!("answered by {}", answer.model),
            Err(e) => format!("refused: {e}"),
        };
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text)]))
    })
    .unwrap();
    let caps = ToolDef::new("caps", json!({"type": "object"}), |_args, ctx: Context| async move {
        let caps = serde_json::to_value(ctx.client_capabilities()).unwrap();
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(caps.to_string())]))
    })
    .unwrap();
    Server::builder("caps", "1").tool(with_tools).tool(caps).build().unwrap()
}

fn sampling(builder: ClientBuilder) -> ClientBuilder {
    builder.on_sampling(|_p: CreateMessageRequestParams| async move {
        Ok(CreateMessageResult::new(Role::Assistant, SamplingContent::Text(TextContent::new("4")), "model-t"))
    })
}

async fn connect(builder: ClientBuilder) -> mcp_client::Client {
    let (a, b) = memory(64);
    server().connect(a);
    builder.session_revisions_only().connect(b).await.unwrap()
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(ContentBlock::as_text).collect()
}

#[tokio::test]
async fn sampling_with_tools_reaches_only_a_client_that_declared_it() {
    let plain = connect(sampling(ClientBuilder::new("plain", "1"))).await;
    let refused = text(&plain.call_tool("with_tools", json!({})).await.unwrap());
    assert!(refused.starts_with("refused") && refused.contains("sampling.tools"), "{refused}");

    let declared = connect(sampling(ClientBuilder::new("tools", "1")).sampling_tools()).await;
    assert_eq!(text(&declared.call_tool("with_tools", json!({})).await.unwrap()), "answered by model-t");
}

#[tokio::test]
async fn declared_capabilities_reach_the_server() {
    let settings = serde_json::Map::from_iter([("level".to_owned(), json!(2))]);
    let builder = sampling(ClientBuilder::new("all", "1"))
        .sampling_tools()
        .sampling_context()
        .experimental_capability("example.com/beta", settings);
    let client = connect(builder).await;
    let seen: serde_json::Value =
        serde_json::from_str(&text(&client.call_tool("caps", json!({})).await.unwrap())).unwrap();
    assert_eq!(seen["sampling"], json!({"tools": {}, "context": {}}), "{seen}");
    assert_eq!(seen["experimental"]["example.com/beta"], json!({"level": 2}), "{seen}");
    // Without them the sampling capability is bare.
    let bare = connect(sampling(ClientBuilder::new("bare", "1"))).await;
    let seen: serde_json::Value =
        serde_json::from_str(&text(&bare.call_tool("caps", json!({})).await.unwrap())).unwrap();
    assert_eq!(seen["sampling"], json!({}), "{seen}");
    assert!(seen.get("experimental").is_none(), "{seen}");
}

#[tokio::test]
async fn a_declared_extension_travels_with_each_2026_07_28_request() {
    let (a, b) = memory(64);
    server().connect(a);
    let client =
        ClientBuilder::new("ext", "1").extension("example.com/ext", serde_json::Map::new()).connect(b).await.unwrap();
    assert!(client.protocol_version().is_stateless());
    let seen: serde_json::Value =
        serde_json::from_str(&text(&client.call_tool("caps", json!({})).await.unwrap())).unwrap();
    assert_eq!(seen["extensions"]["example.com/ext"], json!({}), "{seen}");
}

#[tokio::test]
async fn a_notification_the_client_does_not_model_reaches_the_user() {
    let shout = ToolDef::new("shout", json!({"type": "object"}), |_args, ctx: Context| async move {
        ctx.peer().notify_raw("example.com/shout", Some(&json!({"loud": true}))).await.unwrap();
        Ok::<_, ToolError>(CallToolResult::success(vec![]))
    })
    .unwrap();
    let server = Server::builder("custom", "1").tool(shout).build().unwrap();
    let (a, b) = memory(64);
    server.connect(a);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let client = ClientBuilder::new("c", "1")
        .session_revisions_only()
        .on_event(move |event| drop(tx.send(event)))
        .connect(b)
        .await
        .unwrap();
    client.call_tool("shout", json!({})).await.unwrap();
    loop {
        match rx.recv().await.expect("events end") {
            mcp_client::ServerEvent::Notification { method, params } => {
                assert_eq!(method, "example.com/shout");
                assert_eq!(params, Some(json!({"loud": true})));
                break;
            }
            _ => continue,
        }
    }
}
