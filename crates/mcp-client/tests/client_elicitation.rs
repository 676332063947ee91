//! Typed and URL-mode elicitation between our client and our server: the client's defaults
//! (`apply_elicitation_defaults`) fill in the form the server derived from a type, URL mode
//! with its completion reaching the client as a [`ServerEvent`], and the -32042 error
//! decoded on the client's side.

use std::sync::{Arc, Mutex};

use mcp_client::{ClientBuilder, ServerEvent};
use mcp_jsonrpc::transport::memory;
use mcp_server::{Context, Elicitation, Server, ToolDef, ToolError, UrlElicitation};
use mcp_types::{CallToolResult, ContentBlock, ElicitAction, ElicitRequestParams, ElicitResult};
use serde_json::json;

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Topping {
    Cheese,
    Olives,
    Ham,
}

/// Every field is required: only the client's defaults can fill in what the user left out.
#[allow(dead_code)] // read through `Debug`
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Prefs {
    #[schemars(extend("default" = "blue"))]
    color: String,
    #[schemars(extend("default" = 3))]
    count: u32,
    #[schemars(extend("default" = true))]
    newsletter: bool,
    #[schemars(extend("default" = "ham"))]
    favourite: Topping,
    #[schemars(extend("default" = ["cheese", "olives"]))]
    toppings: Vec<Topping>,
}

type Pending = Arc<Mutex<Option<UrlElicitation>>>;

fn server(pending: Pending) -> Server {
    let prefs = ToolDef::new("prefs", json!({"type": "object"}), |_a, ctx: Context| async move {
        let outcome = ctx.elicit::<Prefs>("Your preferences").await?;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!("{outcome:?}"))]))
    })
    .unwrap()
    .elicits::<Prefs>()
    .unwrap();
    let connect = ToolDef::new("connect", json!({"type": "object"}), move |_a, ctx: Context| {
        let pending = pending.clone();
        async move {
            let elicitation = ctx.url_elicitation();
            *pending.lock().unwrap() = Some(elicitation.clone());
            let url = format!("https://example.com/connect?state={}", elicitation.id());
            let outcome = ctx.elicit_url(&elicitation, "Sign in", url).await?;
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!("{outcome:?}"))]))
        }
    })
    .unwrap();
    let files = ToolDef::new("files", json!({"type": "object"}), |_a, ctx: Context| async move {
        let elicitation = ctx.url_elicitation();
        Err::<CallToolResult, _>(elicitation.required("Sign in first", "https://example.com/connect"))
    })
    .unwrap();
    Server::builder("srv", "1").tool(prefs).tool(connect).tool(files).build().unwrap()
}

async fn connect(server: &Server, builder: ClientBuilder) -> mcp_client::Client {
    let (a, b) = memory(64);
    server.connect(a);
    builder.session_revisions_only().connect(b).await.unwrap()
}

#[tokio::test]
async fn the_clients_defaults_fill_in_the_derived_form() {
    let server = server(Pending::default());
    let accept_empty = |_params: ElicitRequestParams| async move { Ok(ElicitResult::new(ElicitAction::Accept)) };
    let client =
        connect(&server, ClientBuilder::new("cli", "1").on_elicitation(accept_empty).apply_elicitation_defaults())
            .await;
    let r = client.call_tool("prefs", json!({})).await.unwrap();
    assert_eq!(
        r.content[0].as_text().unwrap(),
        "Accepted(Prefs { color: \"blue\", count: 3, newsletter: true, favourite: Ham, toppings: [Cheese, Olives] })"
    );
    // Without the defaults the required fields are missing: an error result, not a panic.
    let client = connect(&server, ClientBuilder::new("cli", "1").on_elicitation(accept_empty)).await;
    let r = client.call_tool("prefs", json!({})).await.unwrap();
    assert!(r.is_error(), "{r:?}");
    assert!(r.content[0].as_text().unwrap().contains("\"color\" is a required property"), "{r:?}");
}

#[tokio::test]
async fn url_mode_completion_and_the_32042_error_reach_the_client() {
    let pending = Pending::default();
    let server = server(pending.clone());
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let builder = ClientBuilder::new("cli", "1")
        .on_elicitation(move |params: ElicitRequestParams| {
            seen.lock().unwrap().push(params);
            async move { Ok(ElicitResult::new(ElicitAction::Accept)) }
        })
        .elicitation_url_mode();
    let client = connect(&server, builder).await;
    let mut events = client.events();
    let r = client.call_tool("connect", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text().unwrap(), format!("{:?}", Elicitation::Accepted(())));
    let handle = pending.lock().unwrap().clone().unwrap();
    let first = asked.lock().unwrap()[0].clone();
    let ElicitRequestParams::ElicitRequestURL(url) = first else { panic!("not URL mode") };
    assert_eq!(url.elicitation_id.as_deref(), Some(handle.id()));
    assert_eq!(url.url, format!("https://example.com/connect?state={}", handle.id()));

    handle.complete().await.unwrap();
    assert_eq!(
        events.recv().await.unwrap(),
        ServerEvent::ElicitationComplete { elicitation_id: handle.id().to_owned() }
    );

    let e = client.call_tool("files", json!({})).await.unwrap_err();
    let needed = e.url_elicitation_required().expect("a -32042 error");
    assert_eq!(needed.len(), 1);
    assert_eq!(needed[0].message, "Sign in first");
    assert_eq!(needed[0].url, "https://example.com/connect");
    assert!(needed[0].elicitation_id.as_ref().is_some_and(|id| id.len() >= 16), "{needed:?}");
    let other = client.call_tool("nope", json!({})).await.unwrap_err();
    assert_eq!(other.url_elicitation_required(), None);
}

/// The fields of a derived form reach the client's handler in their declaration order (color,
/// count, newsletter, favourite, toppings: not alphabetical; the multi-select needs 2025-11-25),
/// in a session and in a 2026-07-28
/// input-required round trip, where the form travels inside the `input_required` result.
#[tokio::test]
async fn form_fields_arrive_in_declaration_order_in_every_revision() {
    use mcp_types::ProtocolVersion;
    let server = server(Pending::default());
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let record = seen.clone();
        let handler = move |params: ElicitRequestParams| {
            let record = record.clone();
            async move {
                if let ElicitRequestParams::ElicitRequestForm(form) = params {
                    *record.lock().unwrap() = form.requested_schema.properties.keys().cloned().collect();
                }
                Ok(ElicitResult::new(ElicitAction::Decline))
            }
        };
        let (a, b) = memory(64);
        server.connect(a);
        let client =
            ClientBuilder::new("cli", "1").protocol_version(version).on_elicitation(handler).connect(b).await.unwrap();
        assert_eq!(client.protocol_version(), version);
        let r = client.call_tool("prefs", json!({})).await.unwrap();
        assert_eq!(r.content[0].as_text().unwrap(), "Declined", "{version}");
        assert_eq!(*seen.lock().unwrap(), ["color", "count", "newsletter", "favourite", "toppings"], "{version}");
    }
}
