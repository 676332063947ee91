//! What passes between a mounted server and the gateway's client outside any call, over
//! Streamable HTTP both ways: the client's roots (`roots/list`, `roots/list_changed`) and the
//! mounted server's log messages, filtered by the level the client set.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientBuilder, ServerEvent};
use mcp_server::{Context, Server, ToolDef, ToolError};
use mcp_types::{CallToolResult, ContentBlock, LoggingLevel, ProtocolVersion, Root};
use serde_json::json;
use tokio::sync::mpsc;

/// Serves `server` over Streamable HTTP on a local port: the endpoint's URL, and a receiver
/// told each time a client's GET stream is open (what the server sends outside any request
/// goes there; before it opens, it is dropped).
async fn serve(server: Server) -> (String, mpsc::UnboundedReceiver<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let config = mcp_transport_http::server::HttpServerConfig::default();
    let (opened, gets) = mpsc::unbounded_channel();
    let router = mcp_transport_http::server::router(Arc::new(server), config.clone()).layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let opened = opened.clone();
            async move {
                let get = request.method() == axum::http::Method::GET;
                let response = next.run(request).await;
                // The stream is attached before its response is returned.
                if get && response.status().is_success() {
                    let _ = opened.send(());
                }
                response
            }
        },
    ));
    tokio::spawn(async move { mcp_transport_http::server::serve_router(listener, router, &config).await });
    (url, gets)
}

/// Waits until `count` more GET streams are open on an endpoint of [`serve`].
async fn opened(gets: &mut mpsc::UnboundedReceiver<()>, count: usize) {
    for _ in 0..count {
        within("a GET stream", gets.recv()).await.unwrap();
    }
}

/// What the mounted server keeps: its side of the gateway session's connection, outside the
/// call that made it, and the `roots/list_changed` notifications it heard.
struct Upstream {
    kept: Arc<Mutex<Option<Context>>>,
    roots_changed: mpsc::Receiver<()>,
    /// The GET streams open on the mounted server's endpoint.
    gets: mpsc::UnboundedReceiver<()>,
    /// The GET streams open on the gateway's endpoint.
    gateway_gets: mpsc::UnboundedReceiver<()>,
}

impl Upstream {
    /// The mounted server's session with the gateway, outside any call.
    fn session(&self) -> Context {
        self.kept.lock().unwrap().clone().expect("`keep` was called")
    }

    /// Waits until the gateway's connections to the mounted server (its catalog's and the
    /// session's) and the client's connection to the gateway have their GET streams open.
    async fn streams_open(&mut self) {
        opened(&mut self.gets, 2).await;
        opened(&mut self.gateway_gets, 1).await;
    }
}

/// A server over HTTP whose tool `keep` keeps its session (outside the call), mounted as `up`
/// (spoken to at 2025-11-25) in a gateway over HTTP; the gateway's URL.
async fn gateway() -> (Upstream, String) {
    let kept: Arc<Mutex<Option<Context>>> = Arc::default();
    let keep = kept.clone();
    let tool = ToolDef::new("keep", json!({"type": "object"}), move |_args, ctx: Context| {
        *keep.lock().unwrap() = ctx.detached();
        async { Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("kept")])) }
    })
    .unwrap();
    let (changed, roots_changed) = mpsc::channel(8);
    let server = Server::builder("up", "1.0")
        .tool(tool)
        .on_roots_changed(move |_peer| {
            let _ = changed.try_send(());
        })
        .build()
        .unwrap();
    let (upstream, gets) = serve(server).await;
    // A server of the session revisions (at 2026-07-28 a server sends nothing outside a call).
    let source =
        mcp_gateway::Source::http(&upstream).unwrap().configure(|b| b.protocol_version(ProtocolVersion::V2025_11_25));
    let gateway = mcp_gateway::Gateway::builder("gateway", "1.0").mount("up", source).build().await.unwrap();
    let (url, gateway_gets) = serve(gateway).await;
    (Upstream { kept, roots_changed, gets, gateway_gets }, url)
}

/// A client of the gateway over HTTP with roots `roots` (read at each `roots/list`), its
/// events sent to `events`.
async fn client(url: &str, roots: Arc<Mutex<Vec<Root>>>, events: mpsc::Sender<ServerEvent>) -> Client {
    ClientBuilder::new("test", "1")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .on_roots(move || {
            let roots = roots.lock().unwrap().clone();
            async move { Ok(roots) }
        })
        .on_event(move |event| {
            let _ = events.try_send(event);
        })
        .connect_http(url)
        .await
        .unwrap()
}

/// A bound on waiting for what should come at once: a failure, not a way to synchronize.
async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f).await.unwrap_or_else(|_| panic!("{what} never came"))
}

/// A mounted server's `roots/list` outside any call reaches the gateway's client (before, it
/// failed: no call in flight to carry it), and the client's `roots/list_changed` reaches the
/// mounted server (before, the gateway dropped it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_roots_pass_outside_any_call() {
    let (mut upstream, url) = gateway().await;
    let roots = Arc::new(Mutex::new(vec![Root::new("file:///a")]));
    let (events, _seen) = mpsc::channel(64);
    let client = client(&url, roots.clone(), events).await;
    client.call_tool("up_keep", json!({})).await.unwrap();
    upstream.streams_open().await;

    let listed = within("roots/list", upstream.session().list_roots()).await.unwrap();
    assert_eq!(listed.roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(), ["file:///a"]);

    *roots.lock().unwrap() = vec![Root::new("file:///b")];
    client.notify_roots_changed().await.unwrap();
    within("roots/list_changed", upstream.roots_changed.recv()).await.unwrap();
    let listed = within("roots/list", upstream.session().list_roots()).await.unwrap();
    assert_eq!(listed.roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(), ["file:///b"]);
    client.close().await.unwrap();
}

/// A mounted server's log message outside any call reaches the gateway's client (before, it
/// was dropped), filtered by the level the client set: below it, not sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_log_messages_outside_a_call_reach_the_client_at_its_level() {
    let (mut upstream, url) = gateway().await;
    let (events, mut seen) = mpsc::channel(64);
    let client = client(&url, Arc::default(), events).await;
    client.set_logging_level(LoggingLevel::Warning).await.unwrap();
    client.call_tool("up_keep", json!({})).await.unwrap();
    upstream.streams_open().await;

    let session = upstream.session();
    session.log(LoggingLevel::Info, json!("below the level")).await;
    session.logger("up").log(LoggingLevel::Error, json!("outside a call")).await;
    // In the order they were sent: the first log message the client hears is the error.
    let message = within("the log message", async {
        loop {
            if let Some(ServerEvent::Log(message)) = seen.recv().await {
                return message;
            }
        }
    })
    .await;
    assert_eq!(
        (message.level, message.data, message.logger.as_deref()),
        (LoggingLevel::Error, json!("outside a call"), Some("up"))
    );
    client.close().await.unwrap();
}
