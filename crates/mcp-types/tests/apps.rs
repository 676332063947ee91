//! The MCP Apps types against the examples of the specification (SEP-1865, 2026-01-26): each
//! decodes and encodes back to the same JSON.

use mcp_types::apps::view::{self, HostContext, InitializeParams, InitializeResult, MessageParams};
use mcp_types::apps::{self, UiClientCapabilities, UiResourceMeta, UiToolMeta, Visibility};
use mcp_types::{ClientCapabilities, CustomNotification, CustomRequest, Tool};
use serde_json::{Value, json};

fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(v: Value) -> T {
    let t: T = serde_json::from_value(v.clone()).expect("decodes");
    assert_eq!(serde_json::to_value(&t).unwrap(), v, "encodes back the same");
    t
}

#[test]
fn resource_meta_of_the_specification_example() {
    let meta: UiResourceMeta = round_trip(json!({
        "csp": {
            "connectDomains": ["https://api.openweathermap.org"],
            "resourceDomains": ["https://cdn.jsdelivr.net"]
        },
        "prefersBorder": true
    }));
    assert_eq!(meta.prefers_border, Some(true));
    let full: UiResourceMeta = round_trip(json!({
        "csp": {"connectDomains": ["a"], "resourceDomains": ["b"], "frameDomains": ["c"], "baseUriDomains": ["d"]},
        "permissions": {"camera": {}, "microphone": {}, "geolocation": {}, "clipboardWrite": {}},
        "domain": "a904794854a047f6.claudemcpcontent.com",
        "prefersBorder": false
    }));
    assert!(full.permissions.unwrap().clipboard_write.is_some());
}

#[test]
fn tool_meta_and_visibility() {
    let tool = |meta: Value| -> Tool {
        serde_json::from_value(json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": meta})).unwrap()
    };
    let both =
        tool(json!({"ui": {"resourceUri": "ui://weather-server/dashboard-template", "visibility": ["model", "app"]}}));
    let ui = UiToolMeta::of(&both).unwrap();
    assert_eq!(ui.resource_uri.as_deref(), Some("ui://weather-server/dashboard-template"));
    assert!(apps::visible_to_model(&both) && apps::callable_by_app(&both));

    let app_only =
        tool(json!({"ui": {"resourceUri": "ui://weather-server/dashboard-template", "visibility": ["app"]}}));
    assert_eq!(UiToolMeta::of(&app_only).unwrap().visibility, Some(vec![Visibility::App]));
    assert!(!apps::visible_to_model(&app_only) && apps::callable_by_app(&app_only));

    let model_only = tool(json!({"ui": {"visibility": ["model"]}}));
    assert!(apps::visible_to_model(&model_only) && !apps::callable_by_app(&model_only));

    // The deprecated flat key still names the view; no visibility means both.
    let flat = tool(json!({"ui/resourceUri": "ui://old"}));
    assert_eq!(UiToolMeta::of(&flat).unwrap().resource_uri.as_deref(), Some("ui://old"));
    assert!(apps::visible_to_model(&flat) && apps::callable_by_app(&flat));

    let plain = tool(json!({}));
    assert!(UiToolMeta::of(&plain).is_none() && apps::visible_to_model(&plain));
}

#[test]
fn client_capability_of_the_official_example() {
    let example = include_str!("../schema/2026-07-28/examples/ClientCapabilities/extensions-ui-mime-types.json");
    let caps: ClientCapabilities = serde_json::from_str(example).unwrap();
    assert!(apps::supports_html(&caps));
    assert_eq!(UiClientCapabilities::of(&caps), Some(UiClientCapabilities::html()));
    let declared = serde_json::to_value(UiClientCapabilities::html().to_settings()).unwrap();
    let example: Value = serde_json::from_str(example).unwrap();
    assert_eq!(declared, example["extensions"][apps::EXTENSION]);

    let other: ClientCapabilities =
        serde_json::from_value(json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/uri-list"]}}}))
            .unwrap();
    assert!(!apps::supports_html(&other));
    assert!(!apps::supports_html(&ClientCapabilities::default()));
}

#[test]
fn initialize_messages_of_the_specification() {
    assert_eq!(view::Initialize::METHOD, "ui/initialize");
    let params: InitializeParams = round_trip(json!({
        "appCapabilities": {},
        "appInfo": {"name": "My UI", "version": "1.0.0"},
        "protocolVersion": "2026-01-26"
    }));
    assert_eq!(params.protocol_version, view::PROTOCOL_VERSION);
    let result: InitializeResult = round_trip(json!({
        "protocolVersion": "2026-01-26",
        "hostCapabilities": {"openLinks": {}, "serverTools": {"listChanged": true}},
        "hostInfo": {"name": "claude-desktop", "version": "1.0.0"},
        "hostContext": {
            "theme": "dark",
            "styles": {
                "variables": {"--color-background-primary": "light-dark(#ffffff, #171717)"},
                "css": {"fonts": "@font-face { font-family: \"Custom Font Name\"; }"}
            },
            "displayMode": "inline",
            "containerDimensions": {"width": 400, "maxHeight": 600}
        }
    }));
    assert_eq!(result.host_context.theme.as_deref(), Some("dark"));
    assert!(result.host_context.extra.contains_key("styles"));
}

#[test]
fn notifications_and_requests_of_the_specification() {
    assert_eq!(view::ToolInput::METHOD, "ui/notifications/tool-input");
    let input: view::ToolInputParams = round_trip(json!({"arguments": {"location": "San Francisco"}}));
    assert_eq!(input.arguments.unwrap()["location"], "San Francisco");
    assert_eq!(view::ToolResult::METHOD, "ui/notifications/tool-result");
    let result: <view::ToolResult as CustomNotification>::Params = serde_json::from_value(json!({
        "content": [{"type": "text", "text": "Current weather: Sunny, 72°F"}],
        "structuredContent": {"temperature": 72, "conditions": "sunny", "humidity": 45},
        "_meta": {"timestamp": "2025-11-10T15:30:00Z", "source": "weather-api"}
    }))
    .unwrap();
    assert_eq!(result.structured_content.unwrap()["temperature"], 72);
    let size: view::SizeChangedParams = round_trip(json!({"width": 400.0, "height": 300.5}));
    assert_eq!(size.height, Some(300.5));
    let _: view::ToolCancelledParams = round_trip(json!({"reason": "user action"}));
    let link: view::OpenLinkParams = round_trip(json!({"url": "https://example.com"}));
    assert_eq!(link.url, "https://example.com");
    // `ui/message`: an array of blocks, or the single block of the prose example.
    let message: MessageParams = round_trip(json!({"role": "user", "content": [{"type": "text", "text": "hi"}]}));
    assert_eq!(message.content.len(), 1);
    let single: MessageParams =
        serde_json::from_value(json!({"role": "user", "content": {"type": "text", "text": "hi"}})).unwrap();
    assert_eq!(single, message);
    let _: view::DisplayModeParams = round_trip(json!({"mode": "fullscreen"}));
    let _: view::UpdateModelContextParams =
        round_trip(json!({"content": [{"type": "text", "text": "x"}], "structuredContent": {"a": 1}}));
    let changed: HostContext = round_trip(json!({"theme": "light"}));
    assert_eq!(changed.theme.as_deref(), Some("light"));
}
