//! MCP Apps (SEP-1865) between our client and our server over HTTP on a real socket: the
//! client's capability declared in both eras (a tool answers it with its view, a client without
//! it in text), the tools with a view found, the view read and checked, a view's `tools/call`
//! passed on only for tools it may call; and the host side of the view protocol reading and
//! writing the specification's own messages.

#![cfg(feature = "http")]

use std::sync::Arc;

use mcp_client::apps::host::{self, FromView, ViewError};
use mcp_client::apps::view::{self, InitializeResult};
use mcp_client::apps::{AppError, UiCsp, UiTool as _, Visibility};
use mcp_client::{Client, ClientBuilder};
use mcp_server::apps::UiResource;
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_server::{ResourceDef, Server, ToolDef, ToolError};
use mcp_types::{CallToolRequestParams, CallToolResult, ContentBlock, ErrorObject, RequestId, TextResourceContents};
use serde_json::{Value, json};

const HTML: &str = "<!DOCTYPE html><html><body>weather</body></html>";

async fn serve(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server::serve_listener(Arc::new(server), HttpServerConfig::default(), listener));
    format!("http://{addr}/mcp")
}

fn tool(name: &str, text: &'static str) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), move |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text)]))
    })
    .unwrap()
}

/// `weather` (its view to a client that renders apps, text to others), `refresh` (the app's
/// only), `model_only`, and `ui://wrong`, a `ui://` resource that is not a view.
fn app_server() -> Server {
    let weather = ToolDef::new("weather", json!({"type": "object"}), |_args, ctx| async move {
        let text = if ctx.client_supports_apps() { "see the view" } else { "Sunny, 22 °C" };
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text)]))
    })
    .unwrap()
    .ui("ui://weather/view");
    let view = UiResource::new("ui://weather/view", "weather", HTML)
        .csp(UiCsp { connect_domains: vec!["https://api.example.com".into()], ..Default::default() })
        .prefers_border(false);
    let wrong = ResourceDef::new("wrong", "ui://wrong", |uri: String, _, _| async move {
        Ok::<_, ErrorObject>(vec![TextResourceContents::new(uri, "<html></html>").into()])
    })
    .mime_type("text/html");
    Server::builder("apps", "1")
        .app(view)
        .resource(wrong)
        .tool(weather)
        .tool(tool("refresh", "refreshed").ui("ui://weather/view").ui_visibility([Visibility::App]))
        .tool(tool("model_only", "model").ui_visibility([Visibility::Model]))
        .build()
        .unwrap()
}

async fn weather_text(client: &Client) -> String {
    let result = client.call_tool("weather", json!({})).await.unwrap();
    serde_json::to_value(&result.content[0]).unwrap()["text"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_capability_is_declared_in_both_eras() {
    let url = serve(app_server()).await;
    let stateless = ClientBuilder::new("host", "1").apps().connect_http(&url).await.unwrap();
    assert!(stateless.protocol_version().is_stateless());
    assert_eq!(weather_text(&stateless).await, "see the view");
    let session = ClientBuilder::new("host", "1").apps().session_revisions_only().connect_http(&url).await.unwrap();
    assert!(!session.protocol_version().is_stateless());
    assert_eq!(weather_text(&session).await, "see the view");
    for text_only in [
        ClientBuilder::new("cli", "1").connect_http(&url).await.unwrap(),
        ClientBuilder::new("cli", "1").session_revisions_only().connect_http(&url).await.unwrap(),
    ] {
        assert_eq!(weather_text(&text_only).await, "Sunny, 22 °C");
    }
}

#[tokio::test]
async fn views_are_found_read_and_checked() {
    let client = ClientBuilder::new("host", "1").apps().connect_http(&serve(app_server()).await).await.unwrap();
    let declared = client.server_capabilities().extensions.clone().unwrap_or_default();
    assert!(declared.contains_key(mcp_client::apps::EXTENSION), "{declared:?}");
    let tools = client.list_all_tools().await.unwrap();
    let with_ui: Vec<_> = tools.iter().filter_map(|t| Some((t.name.as_str(), t.ui_resource_uri()?))).collect();
    assert_eq!(with_ui, [("weather", "ui://weather/view".to_owned()), ("refresh", "ui://weather/view".to_owned())]);
    let for_model: Vec<_> = tools.iter().filter(|t| t.visible_to_model()).map(|t| t.name.as_str()).collect();
    assert_eq!(for_model, ["weather", "model_only"]);

    let view = client.read_ui_resource("ui://weather/view").await.unwrap();
    assert_eq!(view.html, HTML);
    assert_eq!(view.meta.csp.unwrap().connect_domains, ["https://api.example.com"]);
    assert_eq!(view.meta.prefers_border, Some(false));
    match client.read_ui_resource("ui://wrong").await {
        Err(AppError::NotAView { reason, .. }) => assert!(reason.contains("text/html"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(client.read_ui_resource("https://example.com").await, Err(AppError::NotUi { .. })));

    let find = |name: &str| tools.iter().find(|t| t.name == name).unwrap();
    let refreshed = client.call_tool_for_app(find("refresh"), CallToolRequestParams::new("refresh")).await.unwrap();
    assert_eq!(serde_json::to_value(&refreshed.content[0]).unwrap()["text"], "refreshed");
    let refused = client.call_tool_for_app(find("model_only"), CallToolRequestParams::new("model_only")).await;
    assert!(matches!(refused, Err(AppError::NotForApp { tool }) if tool == "model_only"));
    let renamed = client.call_tool_for_app(find("refresh"), CallToolRequestParams::new("model_only")).await;
    assert!(matches!(renamed, Err(AppError::NotForApp { .. })));
}

/// A view's session as the host reads and answers it, with the specification's messages.
#[test]
fn the_host_reads_and_writes_the_view_protocol() {
    let msg = |v: Value| host::parse(&v).unwrap();
    let id = RequestId::Integer(1);
    let init = msg(json!({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {
        "appCapabilities": {}, "appInfo": {"name": "My UI", "version": "1.0.0"}, "protocolVersion": "2026-01-26"}}));
    let FromView::Initialize { id: got, params } = init else { panic!("{init:?}") };
    assert_eq!((got, params.app_info.name.as_str()), (id.clone(), "My UI"));
    let result: InitializeResult = serde_json::from_value(json!({
        "protocolVersion": "2026-01-26",
        "hostCapabilities": {"serverTools": {}},
        "hostInfo": {"name": "claude-desktop", "version": "1.0.0"},
        "hostContext": {"theme": "dark", "displayMode": "inline", "containerDimensions": {"width": 400, "maxHeight": 600}}
    }))
    .unwrap();
    assert_eq!(
        host::response::<view::Initialize>(&id, &result),
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "protocolVersion": "2026-01-26",
            "hostCapabilities": {"serverTools": {}},
            "hostInfo": {"name": "claude-desktop", "version": "1.0.0"},
            "hostContext": {"theme": "dark", "displayMode": "inline", "containerDimensions": {"width": 400, "maxHeight": 600}}
        }})
    );
    assert_eq!(msg(json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized"})), FromView::Initialized);
    assert_eq!(
        host::notification::<view::ToolInput>(&view::ToolInputParams {
            arguments: Some(json!({"location": "San Francisco"}).as_object().unwrap().clone())
        }),
        json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": {"location": "San Francisco"}}})
    );
    let tool_result = CallToolResult::success(vec![ContentBlock::text("Current weather: Sunny, 72°F")]);
    let sent = host::notification::<view::ToolResult>(&tool_result);
    assert_eq!(sent["method"], "ui/notifications/tool-result");
    assert_eq!(sent["params"]["content"], json!([{"type": "text", "text": "Current weather: Sunny, 72°F"}]));

    let call = msg(json!({"jsonrpc": "2.0", "id": "c1", "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"location": "New York"}}}));
    let FromView::CallTool { id: call_id, params } = call else { panic!("{call:?}") };
    assert_eq!((call_id.clone(), params.name.as_str()), (RequestId::String("c1".into()), "get_weather"));
    assert_eq!(host::result_of(&call_id, &json!({"content": []}))["id"], "c1");
    let size = msg(
        json!({"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"width": 400, "height": 300}}),
    );
    assert_eq!(size, FromView::SizeChanged(view::SizeChangedParams { width: Some(400.0), height: Some(300.0) }));
    let link =
        msg(json!({"jsonrpc": "2.0", "id": 1, "method": "ui/open-link", "params": {"url": "https://example.com"}}));
    assert!(matches!(link, FromView::OpenLink { params, .. } if params.url == "https://example.com"));
    let message = msg(json!({"jsonrpc": "2.0", "id": 2, "method": "ui/message",
        "params": {"role": "user", "content": {"type": "text", "text": "hello"}}}));
    assert!(matches!(message, FromView::Message { params, .. } if params.content.len() == 1));
    let mode =
        msg(json!({"jsonrpc": "2.0", "id": 3, "method": "ui/request-display-mode", "params": {"mode": "fullscreen"}}));
    assert!(matches!(mode, FromView::RequestDisplayMode { params, .. } if params.mode == "fullscreen"));
    let log =
        msg(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}));
    assert!(matches!(log, FromView::Log(_)));
    assert_eq!(msg(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"})), FromView::Ping { id: RequestId::Integer(4) });

    // The host's teardown request and the view's answer.
    let teardown = host::request::<view::ResourceTeardown>(&RequestId::Integer(9), &Default::default());
    assert_eq!(teardown, json!({"jsonrpc": "2.0", "id": 9, "method": "ui/resource-teardown", "params": {}}));
    let answer = msg(json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
    assert_eq!(answer, FromView::Response { id: RequestId::Integer(9), outcome: Ok(json!({})) });

    // What the host does not know, or cannot read.
    let other = msg(json!({"jsonrpc": "2.0", "id": 5, "method": "acme/thing"}));
    assert!(matches!(other, FromView::Other { id: Some(_), .. }));
    let bad = host::parse(&json!({"jsonrpc": "2.0", "id": 6, "method": "ui/open-link", "params": {}})).unwrap_err();
    let response = bad.response().unwrap();
    assert_eq!((response["id"].clone(), response["error"]["code"].clone()), (json!(6), json!(-32602)));
    assert!(matches!(host::parse(&json!({"id": 1, "method": "ping"})), Err(ViewError::NotJsonRpc(_))));
    assert!(matches!(host::parse(&json!([1])), Err(ViewError::NotJsonRpc(_))));
}
