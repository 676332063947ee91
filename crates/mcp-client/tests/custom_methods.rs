//! Custom methods between our client and our server over the in-memory transport, in a session
//! revision and in 2026-07-28: typed and raw requests and their errors, notifications both
//! ways (handled, or reported as `ServerEvent::Notification`), the server's custom requests
//! answered by the client's handlers, and the server's `experimental` and `extensions` as the
//! client sees them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientBuilder, ClientError, ServerEvent};
use mcp_jsonrpc::transport::memory;
use mcp_server::{Context, Server};
use mcp_types::{CustomNotification, CustomRequest, ErrorObject};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// `acme/add`: adds two numbers.
enum Add {}

#[derive(Serialize, Deserialize)]
struct AddParams {
    a: i64,
    b: i64,
}

impl CustomRequest for Add {
    const METHOD: &'static str = "acme/add";
    type Params = AddParams;
    type Result = i64;
}

/// `acme/confirm`: the server asks the client.
enum Confirm {}

impl CustomRequest for Confirm {
    const METHOD: &'static str = "acme/confirm";
    type Params = String;
    type Result = bool;
}

/// `acme/ping`: a notification of the client's.
enum Ping {}

impl CustomNotification for Ping {
    const METHOD: &'static str = "acme/ping";
    type Params = u32;
}

/// `acme/progress`: a notification of the server's, handled by the client.
enum Progressed {}

impl CustomNotification for Progressed {
    const METHOD: &'static str = "acme/progress";
    type Params = Value;
}

fn settings(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().unwrap().clone()
}

/// The server; what its notification handler got goes to the channel.
fn server(pings: mpsc::UnboundedSender<u32>) -> Server {
    Server::builder("custom", "1.0.0")
        .request_handler::<Add, _, _>(|p, _ctx| async move { Ok(p.a + p.b) })
        .raw_request_handler("acme/echo", |params, _ctx| async move { Ok(params.unwrap_or_default()) })
        .raw_request_handler("acme/panic", |_params, _ctx| async move {
            if true {
                panic!("kaboom");
            }
            Ok(Value::Null)
        })
        .raw_request_handler("acme/ask", |_params, ctx: Context| async move {
            ctx.notify::<Progressed>(json!({"step": 1})).await.map_err(ErrorObject::internal_error)?;
            ctx.notify_raw("acme/unhandled", Some(json!({"step": 2}))).await.map_err(ErrorObject::internal_error)?;
            let confirmed = ctx.request::<Confirm>("sure?".to_owned()).await.map_err(ErrorObject::internal_error)?;
            let raw = ctx.request_raw("acme/raw-question", None).await.map_err(ErrorObject::internal_error)?;
            Ok(json!({"confirmed": confirmed, "raw": raw}))
        })
        .raw_request_handler("acme/ask-boom", |_params, ctx: Context| async move {
            // The client's handler panics: its error comes back, and the client goes on.
            match ctx.request_raw("acme/boom", None).await {
                Err(mcp_server::ClientRequestError::Call(mcp_jsonrpc::CallError::Remote(e))) => Ok(json!(e.code)),
                other => Err(ErrorObject::internal_error(format!("{other:?}"))),
            }
        })
        .notification_handler::<Ping, _>(move |n, _peer| {
            let _ = pings.send(n);
        })
        .experimental_capability("acme.search", settings(json!({"version": 1})))
        .extension("com.acme/search", settings(json!({"depth": 2})))
        .build()
        .unwrap()
}

/// What the client's notification handler got.
type Seen = Arc<Mutex<Vec<Value>>>;

fn client(seen: &Seen) -> ClientBuilder {
    let seen = seen.clone();
    ClientBuilder::new("c", "1")
        .request_handler::<Confirm, _, _>(|question, _ctx| async move { Ok(question.ends_with('?')) })
        .raw_request_handler("acme/raw-question", |params, _ctx| async move { Ok(json!({"params": params})) })
        .raw_request_handler("acme/boom", |_params, _ctx| async move {
            if true {
                panic!("client kaboom");
            }
            Ok(Value::Null)
        })
        .notification_handler::<Progressed, _>(move |params, _peer| seen.lock().unwrap().push(params))
}

async fn connect(builder: ClientBuilder) -> (Client, mpsc::UnboundedReceiver<u32>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (a, b) = memory(64);
    server(tx).connect(a);
    (builder.connect(b).await.unwrap(), rx)
}

/// The next thing the server's notification handler got (within 60 s: a test that fails does
/// not hang).
async fn next(pings: &mut mpsc::UnboundedReceiver<u32>) -> Option<u32> {
    tokio::time::timeout(Duration::from_secs(60), pings.recv()).await.expect("no notification within 60 s")
}

fn remote_code(e: ClientError) -> i64 {
    match e {
        ClientError::Remote(e) => e.code,
        other => panic!("not a remote error: {other}"),
    }
}

/// Calls, errors and the server's capabilities: the same in both eras.
async fn requests_and_errors(client: &Client) {
    assert_eq!(client.request::<Add>(AddParams { a: 1, b: 2 }).await.unwrap(), 3);
    let echoed = client.request_raw("acme/echo", Some(json!({"x": 1}))).await.unwrap();
    assert_eq!(echoed["x"], 1);
    let bad = client.request_raw("acme/add", Some(json!({"a": "one"}))).await.unwrap_err();
    assert_eq!(remote_code(bad), -32602);
    assert_eq!(remote_code(client.request_raw("acme/nope", None).await.unwrap_err()), -32601);
    assert_eq!(remote_code(client.request_raw("acme/panic", None).await.unwrap_err()), -32603);
    assert_eq!(client.request::<Add>(AddParams { a: 2, b: 2 }).await.unwrap(), 4);
    assert_eq!(client.server_experimental("acme.search"), Some(&settings(json!({"version": 1}))));
}

#[tokio::test]
async fn custom_methods_in_a_session() {
    let seen = Seen::default();
    let (client, mut pings) = connect(client(&seen).session_revisions_only()).await;
    requests_and_errors(&client).await;
    // The session revisions' schemas have no `extensions`: the server writes none.
    assert_eq!(client.server_extension("com.acme/search"), None);
    // The client's notifications reach the server's handler.
    client.notify::<Ping>(7).await.unwrap();
    client.notify_raw("acme/ping", Some(json!(8))).await.unwrap();
    assert_eq!(next(&mut pings).await, Some(7));
    assert_eq!(next(&mut pings).await, Some(8));
    // The server's custom requests, answered by the client's handlers; its notifications,
    // handled or reported as events.
    let mut events = client.events();
    let answer = client.request_raw("acme/ask", None).await.unwrap();
    assert_eq!(answer, json!({"confirmed": true, "raw": {"params": null}}));
    assert_eq!(*seen.lock().unwrap(), [json!({"step": 1})]);
    let event = tokio::time::timeout(Duration::from_secs(600), events.recv()).await.unwrap().unwrap();
    assert_eq!(event, ServerEvent::Notification { method: "acme/unhandled".into(), params: Some(json!({"step": 2})) });
    // A panicking handler of the client's: -32603 to the server, and the client goes on.
    assert_eq!(client.request_raw("acme/ask-boom", None).await.unwrap(), json!(-32603));
    assert_eq!(client.request::<Add>(AddParams { a: 1, b: 1 }).await.unwrap(), 2);
}

#[tokio::test]
async fn custom_methods_in_the_stateless_revision() {
    let seen = Seen::default();
    let (client, _pings) = connect(client(&seen)).await;
    assert!(client.protocol_version().is_stateless());
    requests_and_errors(&client).await;
    assert_eq!(client.server_extension("com.acme/search"), Some(&settings(json!({"depth": 2}))));
    // Params of a 2026-07-28 request carry its `_meta`: they are an object.
    let e = client.request_raw("acme/echo", Some(json!([1, 2]))).await.unwrap_err();
    assert!(matches!(e, ClientError::Encode(_)), "{e}");
    // The revision has no requests from server to client: the server's handler is refused
    // (after its notifications, which reach the client's handler).
    let refused = client.request_raw("acme/ask", None).await.unwrap_err();
    assert!(refused.to_string().contains("no requests from server to client"), "{refused}");
    assert_eq!(*seen.lock().unwrap(), [json!({"step": 1})]);
}

#[tokio::test]
async fn a_client_handler_cannot_shadow_the_protocol() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let (a, b) = memory(64);
    server(tx).connect(a);
    let builder =
        ClientBuilder::new("c", "1").raw_request_handler("sampling/createMessage", |_p, _c| async { Ok(Value::Null) });
    let e = builder.connect(b).await.unwrap_err();
    assert!(matches!(&e, ClientError::ReservedMethod(m) if m == "sampling/createMessage"), "{e}");
}

/// Our server on a local port; its URL, and what its notification handler got.
#[cfg(feature = "http")]
async fn serve_http() -> (String, mpsc::UnboundedReceiver<u32>) {
    use mcp_server::mcp_transport_http::server::{HttpServerConfig, serve_listener};
    let (tx, rx) = mpsc::unbounded_channel();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(serve_listener(Arc::new(server(tx)), HttpServerConfig::default(), listener));
    (url, rx)
}

/// Over a real socket, in a session (a notification on a POST of its own, the server's
/// custom request on the POST's stream) and in 2026-07-28 (each request and notification a
/// POST outside any session).
#[cfg(feature = "http")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_methods_over_http() {
    for session in [true, false] {
        let (url, mut pings) = serve_http().await;
        let seen = Seen::default();
        let builder = if session { client(&seen).session_revisions_only() } else { client(&seen) };
        let client = builder.connect_http(&url).await.unwrap();
        assert_eq!(client.protocol_version().is_stateless(), !session);
        requests_and_errors(&client).await;
        assert_eq!(client.server_extension("com.acme/search").is_some(), !session);
        client.notify::<Ping>(7).await.unwrap();
        assert_eq!(next(&mut pings).await, Some(7));
        if session {
            let answer = client.request_raw("acme/ask", None).await.unwrap();
            assert_eq!(answer, json!({"confirmed": true, "raw": {"params": null}}));
            assert_eq!(*seen.lock().unwrap(), [json!({"step": 1})]);
        }
        client.close().await.unwrap();
    }
}
