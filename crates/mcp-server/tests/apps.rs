//! MCP Apps (SEP-1865) as the server serves them, in transcripts over the in-memory transport:
//! the view listed and read with its type and `_meta.ui`, tools linked to it (an app-only one
//! listed too: the host filters, as the specification says), the extension declared, and a
//! tool that answers in text a client that does not render apps, in a session and per
//! request (2026-07-28). Our client and the `everything` example over HTTP:
//! `mcp-client/tests/apps.rs`, `examples/tests/apps.rs`.

use std::time::Duration;

use mcp_jsonrpc::transport::memory;
use mcp_server::apps::{UiCsp, UiPermissions, UiResource, Visibility};
use mcp_server::{DefinitionError, Server, ToolDef, ToolError};
use mcp_test_support::{Session, Wire};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

const HTML: &str = "<!DOCTYPE html><html><body><p id=out></p></body></html>";

fn ui_caps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
}

/// `weather` (linked to the view, answers "view" to a client that renders apps and a text
/// forecast to others), `refresh` (the app's only) and `plain`.
fn server() -> Server {
    let view = UiResource::new("ui://weather/dashboard", "weather_dashboard", HTML)
        .title("Weather")
        .description("Interactive weather dashboard view")
        .csp(UiCsp {
            connect_domains: vec!["https://api.openweathermap.org".into()],
            resource_domains: vec!["https://cdn.jsdelivr.net".into()],
            ..Default::default()
        })
        .permissions(UiPermissions { clipboard_write: Some(Default::default()), ..Default::default() })
        .domain("weather.example.com")
        .prefers_border(true);
    let weather = ToolDef::new("weather", json!({"type": "object"}), |_args, ctx| async move {
        let text = if ctx.client_supports_apps() { "view" } else { "Sunny, 22 °C" };
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text)]))
    })
    .unwrap()
    .ui("ui://weather/dashboard");
    let refresh = ToolDef::new("refresh", json!({"type": "object"}), |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("refreshed")]))
    })
    .unwrap()
    .ui("ui://weather/dashboard")
    .ui_visibility([Visibility::App]);
    let plain = ToolDef::new("plain", json!({"type": "object"}), |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![]))
    })
    .unwrap();
    Server::builder("apps", "1").app(view).tool(weather).tool(refresh).tool(plain).build().unwrap()
}

async fn connect(server: &Server, rev: &str, capabilities: Value) -> Session {
    let (a, b) = memory(64);
    server.connect(a);
    let mut c = Session::new(Wire::new(b).with_timeout(Duration::from_secs(600)), rev);
    let params =
        json!({"protocolVersion": rev, "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}});
    c.result("initialize", params).await;
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    c
}

fn tool<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name}: {list}"))
}

#[tokio::test]
async fn the_view_and_its_tools_are_listed_and_read() {
    let server = server();
    let mut c = connect(&server, "2025-11-25", ui_caps()).await;
    let tools = c.result("tools/list", json!({})).await;
    assert_eq!(tool(&tools, "weather")["_meta"], json!({"ui": {"resourceUri": "ui://weather/dashboard"}}));
    // The app-only tool is listed (the host leaves it out of the model's list).
    assert_eq!(
        tool(&tools, "refresh")["_meta"],
        json!({"ui": {"resourceUri": "ui://weather/dashboard", "visibility": ["app"]}})
    );
    assert!(tool(&tools, "plain").get("_meta").is_none());

    let ui_meta = json!({"ui": {
        "csp": {"connectDomains": ["https://api.openweathermap.org"], "resourceDomains": ["https://cdn.jsdelivr.net"]},
        "permissions": {"clipboardWrite": {}},
        "domain": "weather.example.com",
        "prefersBorder": true
    }});
    let resources = c.result("resources/list", json!({})).await;
    assert_eq!(
        resources["resources"],
        json!([{"uri": "ui://weather/dashboard", "name": "weather_dashboard", "title": "Weather",
            "description": "Interactive weather dashboard view", "mimeType": "text/html;profile=mcp-app",
            "_meta": ui_meta}])
    );
    let read = c.result("resources/read", json!({"uri": "ui://weather/dashboard"})).await;
    assert_eq!(
        read["contents"],
        json!([{"uri": "ui://weather/dashboard", "mimeType": "text/html;profile=mcp-app", "text": HTML, "_meta": ui_meta}])
    );
    // The app-only tool is served to whoever calls it: the host decides who may.
    let refreshed = c.result("tools/call", json!({"name": "refresh", "arguments": {}})).await;
    assert_eq!(refreshed["content"][0]["text"], "refreshed");
}

#[tokio::test]
async fn a_tool_answers_in_text_a_client_that_renders_no_apps() {
    let server = server();
    let call = json!({"name": "weather", "arguments": {}});
    for rev in ["2025-06-18", "2025-11-25"] {
        let mut apps = connect(&server, rev, ui_caps()).await;
        assert_eq!(apps.result("tools/call", call.clone()).await["content"][0]["text"], "view", "{rev}");
        let mut text = connect(&server, rev, json!({})).await;
        assert_eq!(text.result("tools/call", call.clone()).await["content"][0]["text"], "Sunny, 22 °C", "{rev}");
        let other = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/uri-list"]}}});
        let mut other = connect(&server, rev, other).await;
        assert_eq!(other.result("tools/call", call.clone()).await["content"][0]["text"], "Sunny, 22 °C", "{rev}");
    }
}

/// A 2026-07-28 request: the client's capabilities are its own `_meta`'s, per request.
#[tokio::test]
async fn a_stateless_request_is_answered_by_its_own_capabilities() {
    let server = server();
    let (a, b) = memory(64);
    server.connect(a);
    let mut wire = Wire::new(b).with_timeout(Duration::from_secs(600));
    let meta = |caps: Value| {
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": caps,
        })
    };
    let mut ask = async |id: i64, method: &str, mut params: Value, caps: Value| {
        params["_meta"] = meta(caps);
        wire.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let answer = wire.recv().await;
        assert_eq!(answer["id"], id, "{answer}");
        answer["result"].clone()
    };
    let discover = ask(1, "server/discover", json!({}), json!({})).await;
    assert_eq!(
        discover["capabilities"]["extensions"]["io.modelcontextprotocol/ui"],
        json!({"mimeTypes": ["text/html;profile=mcp-app"]}),
        "{discover}"
    );
    let call = json!({"name": "weather", "arguments": {}});
    assert_eq!(ask(2, "tools/call", call.clone(), ui_caps()).await["content"][0]["text"], "view");
    assert_eq!(ask(3, "tools/call", call, json!({})).await["content"][0]["text"], "Sunny, 22 °C");
}

#[test]
fn apps_that_break_the_rules_are_refused() {
    let refused = |builder: mcp_server::ServerBuilder| match builder.build() {
        Err(DefinitionError::InvalidApp { name, reason }) => format!("{name}: {reason}"),
        other => panic!("not refused: {other:?}"),
    };
    let not_ui = Server::builder("s", "1").app(UiResource::new("https://example.com/view", "v", HTML));
    assert!(refused(not_ui).contains("ui://"));
    let linked = |uri: &str| {
        ToolDef::new("t", json!({"type": "object"}), |_args, _ctx| async move {
            Ok::<_, ToolError>(CallToolResult::success(vec![]))
        })
        .unwrap()
        .ui(uri)
    };
    let dangling = Server::builder("s", "1").app(UiResource::new("ui://a", "a", HTML)).tool(linked("ui://b"));
    assert!(refused(dangling).starts_with("t: "));
    let fine = Server::builder("s", "1").app(UiResource::new("ui://a", "a", HTML)).tool(linked("ui://a"));
    assert!(fine.build().is_ok());
}
