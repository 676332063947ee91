//! The counter app of the `everything` example (MCP Apps, SEP-1865) over Streamable HTTP on a
//! local port, with our client as a host in both eras: the tools linked to the view, the view
//! read with its type and `_meta.ui`, the page speaking the view protocol, the view's button
//! (`counter_increment`, for the app only) called as a view calls it, and the text a client
//! that renders no apps gets instead.

use std::sync::Arc;

use mcp_sdk::client::apps::{AppError, UiTool as _, Visibility};
use mcp_sdk::client::{Client, ClientBuilder};
use mcp_sdk::transport::http::server::{HttpServerConfig, serve_listener};
use mcp_sdk::types::CallToolRequestParams;
use serde_json::{Value, json};

async fn serve() -> String {
    let server = mcp_examples::everything::server().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(serve_listener(Arc::new(server), HttpServerConfig::default(), listener));
    url
}

async fn counter(client: &Client, start: i64) -> Value {
    serde_json::to_value(client.call_tool("counter", json!({"start": start})).await.unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_counter_app_is_served_to_a_host() {
    let url = serve().await;
    for host in [
        ClientBuilder::new("host", "1").apps().connect_http(&url).await.unwrap(),
        ClientBuilder::new("host", "1").apps().session_revisions_only().connect_http(&url).await.unwrap(),
    ] {
        let era = host.protocol_version();
        let tools = host.list_all_tools().await.unwrap();
        let find = |name: &str| tools.iter().find(|t| t.name == name).unwrap();
        let meta = |name: &str| serde_json::to_value(&find(name).meta).unwrap();
        assert_eq!(meta("counter"), json!({"ui": {"resourceUri": "ui://everything/counter"}}), "{era}");
        assert_eq!(
            meta("counter_increment"),
            json!({"ui": {"resourceUri": "ui://everything/counter", "visibility": ["app"]}})
        );
        assert!(!find("counter_increment").visible_to_model() && find("counter").visible_to_model());

        let uri = find("counter").ui_resource_uri().unwrap();
        let view = host.read_ui_resource(&uri).await.unwrap();
        assert_eq!(view.meta.prefers_border, Some(true));
        // Its Content Security Policy: fetches to local services only.
        let csp = view.meta.csp.as_ref().unwrap();
        assert_eq!(csp.connect_domains, ["http://127.0.0.1:*"], "{era}");
        assert!(csp.resource_domains.is_empty() && csp.frame_domains.is_empty());
        // The page speaks the view protocol: initialize first, then initialized; the tool's
        // result shown; the button's call through the host.
        let order: Vec<usize> = ["\"ui/initialize\"", "\"ui/notifications/initialized\""]
            .iter()
            .map(|m| view.html.find(m).unwrap_or_else(|| panic!("{m} not in the page")))
            .collect();
        assert!(order[0] < order[1]);
        for needle in [
            "ui/notifications/tool-result",
            "\"tools/call\"",
            "counter_increment",
            "window.parent.postMessage",
            "\"ui/message\"",
            "\"ui/open-link\"",
            "\"ui/notifications/size-changed\"",
        ] {
            assert!(view.html.contains(needle), "{needle} not in the page");
        }
        let listed = host.list_all_resources().await.unwrap();
        let resource = listed.iter().find(|r| r.uri == uri).unwrap();
        assert_eq!(resource.mime_type.as_deref(), Some("text/html;profile=mcp-app"));

        // The tool's result, as the host hands it to the view.
        let shown = counter(&host, 41).await;
        assert_eq!(shown["structuredContent"], json!({"count": 41}), "{era}");
        assert_eq!(shown["content"][0]["text"], "count: 41");
        // The view's button.
        let params = CallToolRequestParams::new("counter_increment")
            .with_arguments(json!({"count": 41}).as_object().unwrap().clone());
        let clicked = host.call_tool_for_app(find("counter_increment"), params).await.unwrap();
        assert_eq!(clicked.structured_content, Some(json!({"count": 42})));
        // A view may not call a tool that is the model's only.
        let mut model_only = find("counter").clone();
        model_only.meta.as_mut().unwrap().extra["ui"]["visibility"] = json!([Visibility::Model]);
        let refused = host.call_tool_for_app(&model_only, CallToolRequestParams::new("counter")).await;
        assert!(matches!(refused, Err(AppError::NotForApp { .. })));
        host.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_renders_no_apps_gets_text() {
    let url = serve().await;
    for client in [
        ClientBuilder::new("cli", "1").connect_http(&url).await.unwrap(),
        ClientBuilder::new("cli", "1").session_revisions_only().connect_http(&url).await.unwrap(),
    ] {
        let shown = counter(&client, 7).await;
        assert_eq!(shown["content"][0]["text"], "count: 7 (as text: this client renders no MCP Apps)");
        assert!(shown.get("structuredContent").is_none(), "{shown}");
        client.close().await.unwrap();
    }
}
