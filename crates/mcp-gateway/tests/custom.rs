//! Custom methods passed through the gateway to a named mount ([`GatewayBuilder::forward`]),
//! both ways, over Streamable HTTP: the client's requests and notifications to the mounted
//! server, the mounted server's requests and notifications to the client.
//!
//! [`GatewayBuilder::forward`]: mcp_gateway::GatewayBuilder::forward

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{Client, ClientBuilder, ServerEvent};
use mcp_gateway::{Gateway, GatewayError, Source};
use mcp_server::{Context, Server};
use mcp_types::ProtocolVersion;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Serves `server` over Streamable HTTP on a local port; the endpoint's URL.
async fn serve(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let config = mcp_transport_http::server::HttpServerConfig::default();
    tokio::spawn(mcp_transport_http::server::serve_listener(Arc::new(server), config, listener));
    url
}

/// A bound on waiting for what should come at once: a failure, not a way to synchronize.
async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f).await.unwrap_or_else(|_| panic!("{what} never came"))
}

/// How many notifications `acme/burst` sends.
const BURST: u64 = 100;

/// A server whose custom request `acme/echo` sends the notification `acme/note`, asks the
/// client `acme/ask` (in a session) and answers with both; its `acme/ping` notifications go to
/// `pinged`; its `acme/burst` sends [`BURST`] numbered `acme/note` notifications.
fn acme(pinged: mpsc::Sender<Option<Value>>) -> Server {
    Server::builder("acme", "1.0")
        .raw_request_handler("acme/echo", |mut params, ctx: Context| async move {
            // Without the `_meta` of its own request (2026-07-28: the gateway's envelope).
            if let Some(Value::Object(params)) = &mut params {
                params.remove("_meta");
            }
            ctx.notify_raw("acme/note", Some(json!({"about": params.clone()}))).await.unwrap();
            ctx.progress(0.5).await;
            let asked = if ctx.protocol_version().is_stateless() {
                Value::Null
            } else {
                ctx.request_raw("acme/ask", params.clone()).await.map_err(mcp_types::ErrorObject::from)?
            };
            Ok(json!({"echo": params, "asked": asked}))
        })
        .raw_request_handler("acme/burst", |_params, ctx: Context| async move {
            for n in 0..BURST {
                ctx.notify_raw("acme/note", Some(json!({"n": n}))).await.unwrap();
            }
            Ok(json!({}))
        })
        .raw_notification_handler("acme/ping", move |params, _peer| {
            let _ = pinged.try_send(params);
        })
        .build()
        .unwrap()
}

/// A gateway over HTTP with `acme` (over HTTP, spoken to at `upstream`) mounted as `up`, its
/// custom methods passed on.
async fn gateway(pinged: mpsc::Sender<Option<Value>>, upstream: ProtocolVersion) -> String {
    let url = serve(acme(pinged)).await;
    let source = Source::http(&url).unwrap().configure(move |b| b.protocol_version(upstream));
    let gateway = Gateway::builder("gateway", "1.0")
        .mount("up", source)
        .forward("acme/echo", "up")
        .forward("acme/burst", "up")
        .forward("acme/ask", "up")
        .forward("acme/note", "up")
        .forward("acme/ping", "up")
        .build()
        .await
        .unwrap();
    serve(gateway).await
}

/// A client of the gateway at `version` that answers `acme/ask`; its events go to `events`.
async fn client(url: &str, version: ProtocolVersion, events: mpsc::Sender<ServerEvent>) -> Client {
    ClientBuilder::new("test", "1")
        .protocol_version(version)
        .raw_request_handler("acme/ask", |params, _rctx| async move { Ok(json!({"answered": params})) })
        .on_event(move |event| {
            let _ = events.try_send(event);
        })
        .connect_http(url)
        .await
        .unwrap()
}

/// The next custom notification among `events`.
async fn next_custom(events: &mut mpsc::Receiver<ServerEvent>) -> (String, Option<Value>) {
    within("a custom notification", async {
        loop {
            if let Some(ServerEvent::Notification { method, params }) = events.recv().await {
                return (method, params);
            }
        }
    })
    .await
}

/// In a session (the mounted server's too): the client's custom request reaches the mounted
/// server, whose request to the client, notification and progress come back through the
/// gateway, and its answer returns; the
/// client's custom notification reaches the mounted server (before, each was unknown to the
/// gateway: -32601, dropped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_methods_pass_both_ways_in_a_session() {
    let (pinged, mut pings) = mpsc::channel(8);
    let url = gateway(pinged, ProtocolVersion::V2025_11_25).await;
    let (events, mut seen) = mpsc::channel(64);
    let client = client(&url, ProtocolVersion::V2025_11_25, events).await;

    // A raw request carries the progress token it is given.
    let progressed = Arc::new(std::sync::Mutex::new(Vec::new()));
    let progress = progressed.clone();
    let token = mcp_types::ProgressToken::String("p".into());
    let _route = client.peer().route_progress(
        token,
        Arc::new(move |p: mcp_types::ProgressNotificationParams| progress.lock().unwrap().push(p.progress)),
    );
    let echo = client.request_raw("acme/echo", Some(json!({"x": 1, "_meta": {"progressToken": "p"}})));
    let answer = within("acme/echo", echo).await.unwrap();
    assert_eq!(answer, json!({"echo": {"x": 1}, "asked": {"answered": {"x": 1}}}));
    // The mounted server's progress came back as the request's, before its answer.
    assert_eq!(*progressed.lock().unwrap(), [0.5]);
    assert_eq!(next_custom(&mut seen).await, ("acme/note".to_owned(), Some(json!({"about": {"x": 1}}))));

    // The session's connection to `up` is open (the request opened it): the notification goes
    // on it.
    client.notify_raw("acme/ping", Some(json!({"n": 2}))).await.unwrap();
    assert_eq!(within("acme/ping", pings.recv()).await.unwrap(), Some(json!({"n": 2})));
    client.close().await.unwrap();
}

/// At 2026-07-28 (the gateway's client and its connection to the mounted server) the client's
/// custom request reaches the mounted server and its answer returns, as the gateway's own
/// (without the mounted server's `resultType` and `serverInfo`), with the notification the
/// mounted server sent on the way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_custom_request_passes() {
    let (pinged, _pings) = mpsc::channel(8);
    let url = gateway(pinged, ProtocolVersion::V2026_07_28).await;
    let (events, mut seen) = mpsc::channel(64);
    let client = client(&url, ProtocolVersion::V2026_07_28, events).await;
    let answer = within("acme/echo", client.request_raw("acme/echo", Some(json!({"y": 3})))).await.unwrap();
    assert_eq!((&answer["echo"], &answer["asked"]), (&json!({"y": 3}), &Value::Null));
    assert_eq!(answer["_meta"][mcp_types::meta::SERVER_INFO]["name"], "gateway");
    assert_eq!(answer["resultType"], "complete");
    assert_eq!(next_custom(&mut seen).await, ("acme/note".to_owned(), Some(json!({"about": {"y": 3}}))));
}

/// A method passed to a prefix nothing is mounted under, a method of the protocol, or one
/// passed twice, fails the build.
#[tokio::test]
async fn forwarding_is_checked_at_build() {
    let local = || Server::builder("local", "1.0").build().unwrap();
    let unknown = Gateway::builder("g", "1").mount("a", local()).forward("acme/x", "b").build().await;
    assert!(matches!(unknown, Err(GatewayError::UnknownMount(ref p)) if p == "b"), "{unknown:?}");
    let reserved = Gateway::builder("g", "1").mount("a", local()).forward("tools/list", "a").build().await;
    assert!(matches!(reserved, Err(GatewayError::Definition(_))), "{reserved:?}");
    let twice =
        Gateway::builder("g", "1").mount("a", local()).forward("acme/x", "a").forward("acme/x", "a").build().await;
    assert!(matches!(twice, Err(GatewayError::Definition(_))), "{twice:?}");
}

/// The mounted server's custom notifications reach the gateway's client in the order it sent
/// them, in a session and at 2026-07-28 (on the request's stream).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_notifications_arrive_in_order() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let (pinged, _pings) = mpsc::channel(8);
        let url = gateway(pinged, version).await;
        let (events, mut seen) = mpsc::channel(2 * BURST as usize);
        let client = client(&url, version, events).await;
        within("acme/burst", client.request_raw("acme/burst", None)).await.unwrap();
        for n in 0..BURST {
            assert_eq!(next_custom(&mut seen).await, ("acme/note".to_owned(), Some(json!({"n": n}))), "{version}");
        }
    }
}
