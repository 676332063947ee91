//! Requests of the stateless revision (2026-07-28) through the gateway share one connection to
//! a mounted server (over Streamable HTTP: of the session revisions, or of 2026-07-28), while
//! what is each request's own stays its own: the input the mounted server asks for reaches the
//! client that made the request, sequentially and concurrently.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientBuilder};
use mcp_gateway::{Gateway, Source};
use mcp_server::{Context, Server, ToolDef, ToolError};
use mcp_types::{
    CallToolResult, ContentBlock, ElicitAction, ElicitRequestFormParams, ElicitRequestParams, ElicitResult,
    ProtocolVersion,
};
use serde_json::json;

/// Serves `server` over Streamable HTTP on a local port: the endpoint's URL, and the count of
/// `server/discover` requests it got (one per connection of a 2026-07-28 client).
async fn serve(server: Server) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let config = mcp_transport_http::server::HttpServerConfig::default();
    let discovers = Arc::new(AtomicUsize::new(0));
    let counted = discovers.clone();
    let router = mcp_transport_http::server::router(Arc::new(server), config.clone()).layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let method = request.headers().get("mcp-method").and_then(|v| v.to_str().ok());
            if method == Some("server/discover") {
                counted.fetch_add(1, Ordering::Relaxed);
            }
            next.run(request)
        },
    ));
    tokio::spawn(async move { mcp_transport_http::server::serve_router(listener, router, &config).await });
    (url, discovers)
}

/// A server whose tool `who` asks the client for a name (an elicitation: a request in a
/// session, an `input_required` result at 2026-07-28) and answers it; the sessions it was
/// called in go to `sessions`. With `together`, each call waits for another to be in flight.
fn who(sessions: Arc<Mutex<HashSet<u64>>>, together: Option<Arc<tokio::sync::Barrier>>) -> Server {
    let tool = ToolDef::new("who", json!({"type": "object"}), move |_args, ctx: Context| {
        sessions.lock().unwrap().insert(ctx.session_id());
        let together = together.clone();
        async move {
            if let Some(together) = together {
                together.wait().await;
            }
            let schema: Result<mcp_types::ElicitRequestFormParamsRequestedSchema, _> =
                serde_json::from_value(json!({"type": "object", "properties": {"name": {"type": "string"}}}));
            let form = ElicitRequestParams::ElicitRequestForm(ElicitRequestFormParams::new("Name?", schema.unwrap()));
            let answer = ctx.elicit_raw_as("name", form).await.map_err(|e| ToolError::Tool(e.to_string()))?;
            let name = answer.content.and_then(|c| serde_json::to_value(c.get("name")?).ok());
            let name = name.as_ref().and_then(|v| v.as_str()).unwrap_or_default().to_owned();
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(name)]))
        }
    })
    .unwrap();
    Server::builder("who", "1.0").tool(tool).build().unwrap()
}

/// A 2026-07-28 client of the gateway at `url` that answers `name` when asked its name.
async fn client(url: &str, name: &'static str) -> Client {
    ClientBuilder::new("test", "1")
        .protocol_version(ProtocolVersion::V2026_07_28)
        .on_elicitation(move |_params| async move {
            let mut result = ElicitResult::new(ElicitAction::Accept);
            result.content = Some(serde_json::from_value(json!({"name": name})).unwrap());
            Ok(result)
        })
        .connect_http(url)
        .await
        .unwrap()
}

/// The name a call of `who` answered.
async fn ask(client: &Client) -> String {
    let call = client.call_tool("who", json!({}));
    let result = tokio::time::timeout(Duration::from_secs(10), call).await.expect("the call never ended").unwrap();
    result.content[0].as_text().unwrap().to_owned()
}

/// A gateway over HTTP with `server` (over HTTP, spoken to at `upstream`) mounted unprefixed:
/// the gateway's URL, and the `server/discover` requests the mounted server got.
async fn gateway(server: Server, upstream: ProtocolVersion) -> (String, Arc<AtomicUsize>) {
    let (url, discovers) = serve(server).await;
    let source = Source::http(&url).unwrap().configure(move |b| b.protocol_version(upstream));
    let gateway = Gateway::builder("gateway", "1.0").mount("", source).build().await.unwrap();
    (serve(gateway).await.0, discovers)
}

/// Of the session revisions: three stateless requests one after the other are served in one
/// session of the mounted server (before: a session each), and each client is asked for its
/// own name; two at once each get their own session meanwhile, and their own answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_requests_share_a_session_of_the_mounted_server() {
    let sessions = Arc::new(Mutex::new(HashSet::new()));
    let (url, _) = gateway(who(sessions.clone(), None), ProtocolVersion::V2025_11_25).await;
    let (alice, bob) = (client(&url, "alice").await, client(&url, "bob").await);
    assert_eq!(ask(&alice).await, "alice");
    assert_eq!(ask(&bob).await, "bob");
    assert_eq!(ask(&alice).await, "alice");
    assert_eq!(sessions.lock().unwrap().len(), 1, "one session for the three requests");

    let sessions = Arc::new(Mutex::new(HashSet::new()));
    let together = Arc::new(tokio::sync::Barrier::new(2));
    let (url, _) = gateway(who(sessions.clone(), Some(together)), ProtocolVersion::V2025_11_25).await;
    let (alice, bob) = (client(&url, "alice").await, client(&url, "bob").await);
    let (a, b) = tokio::join!(ask(&alice), ask(&bob));
    assert_eq!((a.as_str(), b.as_str()), ("alice", "bob"));
    assert_eq!(sessions.lock().unwrap().len(), 2, "a session each while both were in flight");
}

/// Of 2026-07-28: three stateless requests one after the other go over one connection of the
/// gateway to the mounted server (one `server/discover` beside the catalog's; before, one per
/// request), and each client is asked for its own name (an `input_required` round).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_requests_share_a_connection_to_a_stateless_mounted_server() {
    let (url, discovers) = gateway(who(Arc::default(), None), ProtocolVersion::V2026_07_28).await;
    let catalog = discovers.load(Ordering::Relaxed);
    let (alice, bob) = (client(&url, "alice").await, client(&url, "bob").await);
    assert_eq!(ask(&alice).await, "alice");
    assert_eq!(ask(&bob).await, "bob");
    assert_eq!(ask(&alice).await, "alice");
    assert_eq!(discovers.load(Ordering::Relaxed) - catalog, 1, "one connection for the three requests");
}
