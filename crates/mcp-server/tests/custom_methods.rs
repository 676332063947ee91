//! Custom methods and declared extensions as transcripts over the in-memory transport: typed
//! and raw custom requests, their errors (-32602, -32601, a handler's error, a panic), custom
//! notifications both ways, a custom request to the client, the `experimental` and
//! `extensions` capabilities as each revision writes them, in the session revisions and in
//! 2026-07-28.

use std::time::Duration;

use mcp_jsonrpc::transport::memory;
use mcp_server::{Context, DefinitionError, Server, TaskConfig};
use mcp_test_support::{Wire, validate};
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

#[derive(Serialize, Deserialize)]
struct Sum {
    sum: i64,
}

impl CustomRequest for Add {
    const METHOD: &'static str = "acme/add";
    type Params = AddParams;
    type Result = Sum;
}

/// `acme/confirm`: the server asks the client a yes/no question.
enum Confirm {}

impl CustomRequest for Confirm {
    const METHOD: &'static str = "acme/confirm";
    type Params = Value;
    type Result = Value;
}

/// `acme/ping`: a notification the client sends.
enum Ping {}

impl CustomNotification for Ping {
    const METHOD: &'static str = "acme/ping";
    type Params = Value;
}

/// `acme/note`: a notification the server sends.
enum Note {}

impl CustomNotification for Note {
    const METHOD: &'static str = "acme/note";
    type Params = Value;
}

fn settings(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().unwrap().clone()
}

/// The server, and what its notification handlers received.
fn server() -> (Server, mpsc::UnboundedReceiver<(String, Value)>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let raw_tx = tx.clone();
    let server = Server::builder("custom", "1.0.0")
        .request_handler::<Add, _, _>(|p, _ctx| async move { Ok(Sum { sum: p.a + p.b }) })
        .raw_request_handler("acme/echo", |params, ctx: Context| async move {
            Ok(json!({"params": params, "revision": ctx.protocol_version().as_str()}))
        })
        .raw_request_handler("acme/progress", |_params, ctx: Context| async move {
            ctx.progress(1.0).total(2.0).await;
            Ok(json!({"done": true}))
        })
        .raw_request_handler("acme/fail", |_params, _ctx| async move {
            Err(ErrorObject::new(-32000, "the index is rebuilding"))
        })
        .raw_request_handler("acme/panic", |_params, _ctx| async move {
            if true {
                panic!("kaboom");
            }
            Ok(Value::Null)
        })
        .raw_request_handler("acme/ask", |params, ctx: Context| async move {
            ctx.notify::<Note>(json!({"asking": true})).await.map_err(ErrorObject::internal_error)?;
            let answer =
                ctx.request::<Confirm>(params.unwrap_or_default()).await.map_err(ErrorObject::internal_error)?;
            let raw = ctx.request_raw("acme/confirm", Some(json!({"raw": true}))).await;
            let raw = raw.map_err(ErrorObject::internal_error)?;
            Ok(json!({"typed": answer, "raw": raw}))
        })
        .notification_handler::<Ping, _>(move |params, _peer| {
            let _ = tx.send(("typed".to_owned(), params));
        })
        .raw_notification_handler("acme/raw-ping", move |params, _peer| {
            let _ = raw_tx.send(("raw".to_owned(), params.unwrap_or_default()));
        })
        .experimental_capability("acme.search", settings(json!({"version": 1})))
        .extension("com.acme/search", settings(json!({"depth": 2})))
        .tasks(TaskConfig::default())
        .build()
        .unwrap();
    (server, rx)
}

fn wire(end: mcp_jsonrpc::transport::MemoryTransport) -> Wire {
    Wire::new(end).with_timeout(Duration::from_secs(600))
}

/// A session of revision `rev`, initialized; the server's capabilities.
async fn session(server: &Server, rev: &str) -> (Wire, Value) {
    let (a, b) = memory(64);
    server.connect(a);
    let mut w = wire(b);
    w.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": rev, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .await;
    let init = w.recv().await;
    validate(rev, "InitializeResult", &init["result"]);
    w.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    (w, init["result"]["capabilities"].clone())
}

/// The next notification a handler got (within 60 s: a test that fails does not hang).
async fn next(rx: &mut mpsc::UnboundedReceiver<(String, Value)>) -> (String, Value) {
    let next = tokio::time::timeout(Duration::from_secs(60), rx.recv()).await;
    next.expect("no notification within 60 s").unwrap()
}

async fn call(w: &mut Wire, id: i64, method: &str, params: Option<Value>) -> Value {
    let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(params) = params {
        request["params"] = params;
    }
    w.send(request).await;
    w.recv().await
}

#[tokio::test]
async fn custom_requests_in_every_session_revision() {
    let (server, _rx) = server();
    for rev in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let (mut w, caps) = session(&server, rev).await;
        // Experimental capabilities in every revision; `extensions` is 2026-07-28's only.
        assert_eq!(caps["experimental"], json!({"acme.search": {"version": 1}}), "{rev}");
        assert!(caps.get("extensions").is_none(), "{rev}: {caps}");
        let typed = call(&mut w, 1, "acme/add", Some(json!({"a": 1, "b": 2}))).await;
        assert_eq!(typed, json!({"jsonrpc": "2.0", "id": 1, "result": {"sum": 3}}));
        let raw = call(&mut w, 2, "acme/echo", Some(json!({"x": [1, 2]}))).await;
        assert_eq!(raw, json!({"jsonrpc": "2.0", "id": 2, "result": {"params": {"x": [1, 2]}, "revision": rev}}));
        let none = call(&mut w, 3, "acme/echo", None).await;
        assert_eq!(none["result"], json!({"params": null, "revision": rev}));
    }
}

#[tokio::test]
async fn custom_request_errors_leave_the_server_serving() {
    let (server, _rx) = server();
    let (mut w, _) = session(&server, "2025-11-25").await;
    // Params that do not decode: -32602, and the handler does not run.
    let bad = call(&mut w, 1, "acme/add", Some(json!({"a": "one", "b": 2}))).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let missing = call(&mut w, 2, "acme/add", None).await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    // A method nobody serves: -32601.
    let unknown = call(&mut w, 3, "acme/nope", Some(json!({}))).await;
    assert_eq!(
        unknown,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "method not found: acme/nope"}})
    );
    // The handler's error is the request's.
    let failed = call(&mut w, 4, "acme/fail", None).await;
    assert_eq!(
        failed,
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32000, "message": "the index is rebuilding"}})
    );
    // A panic is an internal error, and the connection lives on.
    let panicked = call(&mut w, 5, "acme/panic", None).await;
    assert_eq!(panicked["error"]["code"], -32603, "{panicked}");
    assert!(panicked["error"]["message"].as_str().unwrap().contains("kaboom"), "{panicked}");
    let alive = call(&mut w, 6, "acme/add", Some(json!({"a": 2, "b": 2}))).await;
    assert_eq!(alive["result"], json!({"sum": 4}));
}

#[tokio::test]
async fn custom_notifications_reach_their_handlers() {
    let (server, mut rx) = server();
    let (mut w, _) = session(&server, "2025-06-18").await;
    w.send(json!({"jsonrpc": "2.0", "method": "acme/ping", "params": {"n": 1}})).await;
    w.send(json!({"jsonrpc": "2.0", "method": "acme/unknown", "params": {"n": 2}})).await;
    w.send(json!({"jsonrpc": "2.0", "method": "acme/raw-ping", "params": {"n": 3}})).await;
    // Handled in order, on the connection's reader; the unknown one is dropped.
    assert_eq!(next(&mut rx).await, ("typed".to_owned(), json!({"n": 1})));
    assert_eq!(next(&mut rx).await, ("raw".to_owned(), json!({"n": 3})));
    w.expect_silence(7).await;
}

#[tokio::test]
async fn a_custom_request_reports_progress_under_its_token() {
    let (server, _rx) = server();
    let (mut w, _) = session(&server, "2025-06-18").await;
    w.send(json!({"jsonrpc": "2.0", "id": 1, "method": "acme/progress", "params": {"_meta": {"progressToken": "p"}}}))
        .await;
    assert_eq!(
        w.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "p", "progress": 1, "total": 2}})
    );
    assert_eq!(w.recv().await, json!({"jsonrpc": "2.0", "id": 1, "result": {"done": true}}));
    // Without a token, no progress.
    assert_eq!(call(&mut w, 2, "acme/progress", None).await["result"], json!({"done": true}));
}

#[tokio::test]
async fn a_handler_sends_custom_messages_to_the_client() {
    let (server, _rx) = server();
    let (mut w, _) = session(&server, "2025-11-25").await;
    w.send(json!({"jsonrpc": "2.0", "id": 1, "method": "acme/ask", "params": {"question": "sure?"}})).await;
    assert_eq!(w.recv().await, json!({"jsonrpc": "2.0", "method": "acme/note", "params": {"asking": true}}));
    let typed = w.recv().await;
    assert_eq!(typed["method"], "acme/confirm");
    assert_eq!(typed["params"], json!({"question": "sure?"}));
    w.send(json!({"jsonrpc": "2.0", "id": typed["id"], "result": {"yes": true}})).await;
    let raw = w.recv().await;
    assert_eq!(raw["method"], "acme/confirm");
    assert_eq!(raw["params"], json!({"raw": true}));
    w.send(json!({"jsonrpc": "2.0", "id": raw["id"], "result": "fine"})).await;
    assert_eq!(w.recv().await, json!({"jsonrpc": "2.0", "id": 1, "result": {"typed": {"yes": true}, "raw": "fine"}}));
}

fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

#[tokio::test]
async fn custom_methods_and_extensions_in_the_stateless_revision() {
    let (server, mut rx) = server();
    let (a, b) = memory(64);
    server.connect(a);
    let mut w = wire(b);
    let discover = call(&mut w, 1, "server/discover", Some(json!({"_meta": envelope()}))).await;
    let result = &discover["result"];
    validate("2026-07-28", "DiscoverResult", result);
    // The user's extension beside the tasks extension the server declares itself.
    assert_eq!(
        result["capabilities"]["extensions"],
        json!({"com.acme/search": {"depth": 2}, "io.modelcontextprotocol/tasks": {}})
    );
    assert_eq!(result["capabilities"]["experimental"], json!({"acme.search": {"version": 1}}));
    // A custom request carries the envelope; its result is decorated as every result of the
    // revision is (`resultType`, the server's identity).
    let sum = call(&mut w, 2, "acme/add", Some(json!({"a": 40, "b": 2, "_meta": envelope()}))).await;
    assert_eq!(
        sum,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"sum": 42, "resultType": "complete", "_meta": {
            "io.modelcontextprotocol/serverInfo": {"name": "custom", "version": "1.0.0"}}}})
    );
    let echo = call(&mut w, 3, "acme/echo", Some(json!({"_meta": envelope()}))).await;
    assert_eq!(echo["result"]["revision"], "2026-07-28");
    let bad = call(&mut w, 4, "acme/add", Some(json!({"a": 1, "_meta": envelope()}))).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let unknown = call(&mut w, 5, "acme/nope", Some(json!({"_meta": envelope()}))).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let panicked = call(&mut w, 6, "acme/panic", Some(json!({"_meta": envelope()}))).await;
    assert_eq!(panicked["error"]["code"], -32603, "{panicked}");
    // The revision has no requests from server to client: the handler is told so (its
    // notification, related to the request, still goes out first).
    w.send(json!({"jsonrpc": "2.0", "id": 7, "method": "acme/ask", "params": {"_meta": envelope()}})).await;
    assert_eq!(w.recv().await["method"], "acme/note");
    let refused = w.recv().await;
    assert_eq!(refused["id"], 7);
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("no requests from server to client"), "{refused}");
    // A notification over this connection reaches its handler.
    w.send(json!({"jsonrpc": "2.0", "method": "acme/ping", "params": {"n": 9}})).await;
    assert_eq!(next(&mut rx).await, ("typed".to_owned(), json!({"n": 9})));
}

#[test]
fn custom_methods_do_not_shadow_the_protocol() {
    let shadow =
        Server::builder("s", "1").raw_request_handler("tools/call", |_p, _c| async { Ok(Value::Null) }).build();
    assert_eq!(shadow.unwrap_err(), DefinitionError::ReservedMethod { method: "tools/call".to_owned() });
    let shadow =
        Server::builder("s", "1").raw_notification_handler("notifications/initialized", |_p, _peer| {}).build();
    assert!(matches!(shadow.unwrap_err(), DefinitionError::ReservedMethod { .. }));
    let rpc = Server::builder("s", "1").raw_request_handler("rpc.discover", |_p, _c| async { Ok(Value::Null) }).build();
    assert!(matches!(rpc.unwrap_err(), DefinitionError::ReservedMethod { .. }));
    let twice = Server::builder("s", "1")
        .request_handler::<Add, _, _>(|p, _c| async move { Ok(Sum { sum: p.a }) })
        .raw_request_handler("acme/add", |_p, _c| async { Ok(Value::Null) })
        .build();
    assert_eq!(twice.unwrap_err(), DefinitionError::Duplicate { kind: "custom request", name: "acme/add".into() });
    let twice = Server::builder("s", "1")
        .raw_notification_handler("acme/ping", |_p, _peer| {})
        .raw_notification_handler("acme/ping", |_p, _peer| {})
        .build();
    assert_eq!(
        twice.unwrap_err(),
        DefinitionError::Duplicate { kind: "custom notification", name: "acme/ping".into() }
    );
    // The methods of the tasks extension are the protocol's too.
    let ext = Server::builder("s", "1").raw_request_handler("tasks/update", |_p, _c| async { Ok(Value::Null) }).build();
    assert_eq!(ext.unwrap_err(), DefinitionError::ReservedMethod { method: "tasks/update".to_owned() });
    for bad in ["search", "/search", "com.acme/", "1com/search", "com.acme/-x"] {
        let refused = Server::builder("s", "1").extension(bad, Default::default()).build();
        assert_eq!(refused.unwrap_err(), DefinitionError::InvalidExtension { name: bad.to_owned() }, "{bad}");
    }
    let fine = Server::builder("s", "1").extension("io.modelcontextprotocol/ui", Default::default()).build();
    assert!(fine.is_ok());
}
