//! MCP Apps (SEP-1865) through the gateway, over Streamable HTTP both ways: a mounted server's
//! views keep the `ui://` scheme under the mount's prefix (`ui://ev+weather/view`), its tools
//! link to those URIs (`_meta.ui.resourceUri` and the deprecated `_meta["ui/resourceUri"]`),
//! reading one returns the view with its type and `_meta.ui`, an app-only tool is called; the
//! mounted server hears whether the gateway's client renders apps, in a session and per
//! request at 2026-07-28; an unprefixed mount changes nothing.

use std::sync::Arc;

use mcp_client::apps::{MIME_TYPE, UiCsp, UiPermissions, UiTool as _, Visibility};
use mcp_client::{Client, ClientBuilder};
use mcp_gateway::{Gateway, Source};
use mcp_server::apps::UiResource;
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_server::{Server, TemplateDef, ToolDef, ToolError};
use mcp_types::{
    CallToolRequestParams, CallToolResult, ContentBlock, ErrorObject, ProtocolVersion, TextResourceContents,
};
use serde_json::json;

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

fn permissions() -> UiPermissions {
    UiPermissions { clipboard_write: Some(Default::default()), ..Default::default() }
}

fn csp() -> UiCsp {
    UiCsp { connect_domains: vec!["https://api.example.com".into()], ..Default::default() }
}

/// `weather` (linked to its view, answering "see the view" to a client that renders apps and
/// text to others), `refresh` (the app's only), `legacy` (linked by the deprecated flat key),
/// `elsewhere` (a link that is no `ui://` URI), the view `ui://weather/view` and the template
/// of views `ui://weather/{city}`.
async fn app_server() -> Server {
    let weather = ToolDef::new("weather", json!({"type": "object"}), |_args, ctx| async move {
        let text = if ctx.client_supports_apps() { "see the view" } else { "Sunny, 22 °C" };
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text)]))
    })
    .unwrap()
    .ui("ui://weather/view");
    let view = UiResource::new("ui://weather/view", "weather", HTML)
        .csp(csp())
        .permissions(permissions())
        .domain("weather.example")
        .prefers_border(false);
    let legacy =
        tool("legacy", "old").meta(json!({"ui/resourceUri": "ui://weather/view"}).as_object().unwrap().clone());
    let city = TemplateDef::new("city", "ui://weather/{city}", |uri: String, _vars, _ctx| async move {
        let mut contents = TextResourceContents::new(uri, HTML);
        contents.mime_type = Some(MIME_TYPE.to_owned());
        Ok::<_, ErrorObject>(vec![contents.into()])
    })
    .unwrap()
    .mime_type(MIME_TYPE);
    let server = Server::builder("apps", "1")
        .app(view)
        .resource_template(city)
        .tool(weather)
        .tool(tool("refresh", "refreshed").ui("ui://weather/view").ui_visibility([Visibility::App]))
        .tool(legacy)
        .build()
        .unwrap();
    // Added after the build, which refuses a link to no view of the server's.
    let elsewhere = json!({"ui": {"resourceUri": "https://example.com/view"}});
    server.add_tool(tool("elsewhere", "far").meta(elsewhere.as_object().unwrap().clone())).await.unwrap();
    server
}

/// A gateway over HTTP with the app server (over HTTP, spoken to at `upstream`) mounted under
/// `prefix`.
async fn gateway(prefix: &str, upstream: ProtocolVersion) -> String {
    let mounted = Source::http(&serve(app_server().await).await).unwrap();
    let mounted = mounted.configure(move |b| b.protocol_version(upstream));
    serve(Gateway::builder("gateway", "1.0").mount(prefix, mounted).build().await.unwrap()).await
}

async fn client(url: &str, version: ProtocolVersion, apps: bool) -> Client {
    let builder = ClientBuilder::new("host", "1").protocol_version(version);
    let builder = if apps { builder.apps() } else { builder };
    builder.connect_http(url).await.unwrap()
}

async fn text(client: &Client, tool: &str) -> String {
    let result = client.call_tool(tool, json!({})).await.unwrap();
    result.content[0].as_text().unwrap().to_owned()
}

/// What a host sees of the app through the gateway at `url` whose mount is named so that the
/// tool `weather` is `weather` and the view is `view` (the city view `city`).
async fn check_app(url: &str, weather: &str, view: &str, city: &str, names: impl Fn(&str) -> String) {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let host = client(url, version, true).await;
        let tools = host.list_all_tools().await.unwrap();
        let find = |name: &str| tools.iter().find(|t| t.name == names(name)).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(find("weather").ui_resource_uri().as_deref(), Some(view), "{version}");
        let legacy = &find("legacy").meta.as_ref().unwrap().extra;
        assert_eq!(legacy["ui/resourceUri"], json!(view), "{version}");
        let elsewhere = find("elsewhere").ui_resource_uri();
        assert_eq!(elsewhere.as_deref(), Some("https://example.com/view"), "{version}");

        // The view is listed, and read, where the tool points.
        let resources = host.list_all_resources().await.unwrap();
        let listed = resources.iter().find(|r| r.uri == view).unwrap_or_else(|| panic!("{view} not listed"));
        assert_eq!(listed.mime_type.as_deref(), Some(MIME_TYPE));
        let read = host.read_ui_resource(view).await.unwrap();
        assert_eq!((read.uri.as_str(), read.html.as_str()), (view, HTML));
        assert_eq!(read.meta.csp, Some(csp()));
        assert_eq!(read.meta.domain.as_deref(), Some("weather.example"));
        assert_eq!(read.meta.permissions, Some(permissions()));
        assert_eq!(read.meta.prefers_border, Some(false));
        let templates = host.list_all_resource_templates().await.unwrap();
        let template = city.replace("paris", "{city}");
        assert!(templates.iter().any(|t| t.uri_template == template), "{template} not listed: {templates:?}");
        assert_eq!(host.read_ui_resource(city).await.unwrap().html, HTML);

        // The app-only tool, called for the view; the mounted server knows the host renders apps.
        let refresh = find("refresh");
        assert!(!refresh.visible_to_model());
        let params = CallToolRequestParams::new(refresh.name.clone());
        let called = host.call_tool_for_app(refresh, params).await.unwrap();
        assert_eq!(called.content[0].as_text(), Some("refreshed"));
        assert_eq!(text(&host, weather).await, "see the view", "{version}");
        if version.is_stateless() {
            let ui = host.server_capabilities().extensions.as_ref().and_then(|e| e.get(mcp_client::apps::EXTENSION));
            assert_eq!(ui.unwrap().extra["mimeTypes"], json!([MIME_TYPE]));
        }

        // A client that renders none is answered in text.
        let plain = client(url, version, false).await;
        assert_eq!(text(&plain, weather).await, "Sunny, 22 °C", "{version}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefixed_mounts_views_stay_ui_uris_the_gateway_serves() {
    let url = gateway("ev", ProtocolVersion::V2026_07_28).await;
    check_app(&url, "ev_weather", "ui://ev+weather/view", "ui://ev+weather/paris", |name| format!("ev_{name}")).await;
    // The URIs of the mount's views under the other form are none of the gateway's.
    let host = client(&url, ProtocolVersion::V2025_11_25, true).await;
    assert!(host.read_resource("ev+ui://weather/view").await.is_err());
    assert!(host.read_resource("ui://weather/view").await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unprefixed_mounts_views_are_unchanged() {
    // Spoken to in a session, whose schema has no `extensions`: the gateway finds the mounted
    // server's views by its `ui://` resources, and declares the extension all the same.
    let url = gateway("", ProtocolVersion::V2025_11_25).await;
    check_app(&url, "weather", "ui://weather/view", "ui://weather/paris", str::to_owned).await;
}

/// The catalog connection, the one the gateway lists a mounted server's tools over at build
/// (before any client of its), declares that it renders apps: a mounted server that links its
/// tools to views only for such clients lists the links. Told by the capabilities the mounted
/// server gets (read off its HTTP endpoint), in a session and at 2026-07-28.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalog_declares_the_apps_extension() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        catalog_declares_apps(version).await;
    }
}

async fn catalog_declares_apps(version: ProtocolVersion) {
    let initializes = Arc::new(std::sync::Mutex::new(Vec::<serde_json::Value>::new()));
    let seen = initializes.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let config = HttpServerConfig::default();
    let router = server::router(Arc::new(app_server().await), config.clone()).layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let seen = seen.clone();
            async move {
                let (parts, body) = request.into_parts();
                let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
                let message: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
                // Declared at `initialize` in a session, in each request's `_meta` at 2026-07-28.
                let params = &message["params"];
                let caps = match &params["capabilities"] {
                    serde_json::Value::Null => &params["_meta"]["io.modelcontextprotocol/clientCapabilities"],
                    caps => caps,
                };
                if !caps.is_null() {
                    seen.lock().unwrap().push(caps.clone());
                }
                next.run(axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes))).await
            }
        },
    ));
    tokio::spawn(async move { server::serve_router(listener, router, &config).await });
    let source = Source::http(&url).unwrap().configure(move |b| b.protocol_version(version));
    let gateway = Gateway::builder("gateway", "1.0").mount("ev", source).build().await.unwrap();
    assert_eq!(gateway.tools().len(), 4);
    let declared = initializes.lock().unwrap().clone();
    assert!(!declared.is_empty());
    for caps in declared {
        assert_eq!(caps["extensions"][mcp_client::apps::EXTENSION]["mimeTypes"], json!([MIME_TYPE]), "{caps}");
    }
}
