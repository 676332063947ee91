//! Middleware around what the server sends (issue 32), over Streamable HTTP on a local port,
//! with our client: in the session revision (2025-11-25) an elicitation is a request to the
//! client; in 2026-07-28 it is an input of the call's input-required round trip. A layer sees
//! the elicitation, changes its message and sees the client's answer; another drops progress
//! notifications and sees log messages.

use std::sync::{Arc, Mutex};

use mcp_sdk::client::{CallOptions, ClientBuilder, ServerEvent};
use mcp_sdk::server::middleware::{
    BoxFuture, Middleware, OutgoingNext, OutgoingNotification, OutgoingReply, OutgoingRequest, OutgoingRoute,
};
use mcp_sdk::server::{Context, Server, ToolDef};
use mcp_sdk::transport::http::server::{HttpServerConfig, serve_listener};
use mcp_sdk::types::{
    CallToolRequestParams, CallToolResult, ContentBlock, ElicitRequestParams, ElicitResult, ErrorObject, LoggingLevel,
    ProtocolVersion,
};
use serde_json::{Value, json};

/// An outgoing request as the layer saw it: method, route, key, and the client's answer (or
/// error).
type Sent = (String, OutgoingRoute, Option<String>, Result<Value, String>);

/// What the layers saw.
#[derive(Default)]
struct Seen {
    /// Each outgoing request: its method, route, key and the client's answer (or error).
    requests: Vec<Sent>,
    /// The methods of the notifications the server sent, as the layer saw them.
    notifications: Vec<String>,
}

/// Prefixes the message of each elicitation with `[mw] ` and records the client's answer.
struct ElicitationWatch(Arc<Mutex<Seen>>);

impl Middleware for ElicitationWatch {
    fn outgoing_request<'a>(
        &'a self,
        mut req: OutgoingRequest<'a>,
        next: OutgoingNext<'a>,
    ) -> BoxFuture<'a, OutgoingReply> {
        Box::pin(async move {
            let (method, route, key) = (req.method(), req.route(), req.input_key().map(str::to_owned));
            if method == "elicitation/create" {
                let mut params: Value = req.params().unwrap();
                let message = params["message"].as_str().unwrap().to_owned();
                params["message"] = json!(format!("[mw] {message}"));
                req.set_params(Some(&params)).unwrap();
            }
            let answer = next.run(req).await;
            let seen = match &answer {
                Ok(raw) => Ok(serde_json::from_str(raw.get()).unwrap()),
                Err(e) => Err(e.to_string()),
            };
            self.0.lock().unwrap().requests.push((method.to_owned(), route, key, seen));
            answer
        })
    }
}

/// Drops progress notifications; records every notification it sees.
struct DropProgress(Arc<Mutex<Seen>>);

impl Middleware for DropProgress {
    fn outgoing_notification(&self, n: &mut OutgoingNotification<'_>) -> bool {
        self.0.lock().unwrap().notifications.push(n.method().to_owned());
        n.method() != "notifications/progress"
    }
}

/// `ask`: reports progress, logs, asks the user's name and answers it.
fn ask() -> ToolDef {
    ToolDef::new("ask", json!({"type": "object"}), |_args, ctx: Context| async move {
        ctx.progress(1.0).total(2.0).await;
        ctx.log(LoggingLevel::Info, json!("asking")).await;
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "message": "your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        }))
        .unwrap();
        let answer = ctx.elicit_raw(params).await?;
        let name = serde_json::to_value(answer.content).unwrap()["name"].to_string();
        Ok(CallToolResult::success(vec![ContentBlock::text(name)]))
    })
    .unwrap()
}

/// Serves `ask` with both layers on a local port; the URL and what the layers saw.
async fn serve() -> (String, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let server = Server::builder("outgoing", "1.0")
        .tool(ask())
        .middleware(ElicitationWatch(seen.clone()))
        .middleware(DropProgress(seen.clone()))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(serve_listener(Arc::new(server), HttpServerConfig::default(), listener));
    (url, seen)
}

/// A client that answers an elicitation with the message it was shown, and records events.
fn client(events: &Arc<Mutex<Vec<ServerEvent>>>, version: ProtocolVersion) -> ClientBuilder {
    let events = events.clone();
    ClientBuilder::new("outgoing-test", "1")
        .protocol_version(version)
        .on_elicitation(|params: ElicitRequestParams| {
            let ElicitRequestParams::ElicitRequestForm(form) = params else { panic!("a form") };
            let content = json!({"name": form.message});
            async move {
                let mut result = ElicitResult::new("accept");
                result.content = serde_json::from_value(content).unwrap();
                Ok::<_, ErrorObject>(result)
            }
        })
        .on_event(move |e| events.lock().unwrap().push(e))
}

/// The text of a result's first block.
fn text(result: &CallToolResult) -> &str {
    match result.content.as_slice() {
        [ContentBlock::Text(t)] => &t.text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

/// Calls `ask`, with a progress token; the result and how many progress reports came.
async fn call_ask(client: &mcp_sdk::client::Client) -> (CallToolResult, usize) {
    let progress = Arc::new(Mutex::new(0));
    let counted = progress.clone();
    let options = CallOptions::default().on_progress(move |_| *counted.lock().unwrap() += 1);
    let mut params = CallToolRequestParams::new("ask");
    params.arguments = Some(Default::default());
    let result = client.call_tool_with(params, options).await.unwrap();
    let progress = *progress.lock().unwrap();
    (result, progress)
}

/// 2025-11-25: the elicitation is a request to the client; the layer changes its message and
/// sees the answer. The progress report is dropped, the log message (sent after it on the
/// same stream, before the result) goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_session_a_layer_changes_an_elicitation_sees_its_answer_and_drops_progress() {
    let (url, seen) = serve().await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let client = client(&events, ProtocolVersion::V2025_11_25).connect_http(&url).await.unwrap();
    let (result, progress) = call_ask(&client).await;
    assert_eq!(text(&result), "\"[mw] your name?\"", "the client was shown the changed message");
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(
        seen.requests,
        [(
            "elicitation/create".to_owned(),
            OutgoingRoute::Request,
            None,
            Ok(json!({"action": "accept", "content": {"name": "[mw] your name?"}}))
        )]
    );
    assert_eq!(seen.notifications, ["notifications/progress", "notifications/message"]);
    assert_eq!(progress, 0, "the progress notification was dropped");
    let logs: Vec<_> = events.lock().unwrap().iter().filter(|e| matches!(e, ServerEvent::Log(_))).cloned().collect();
    assert!(matches!(logs.as_slice(), [ServerEvent::Log(l)] if l.data == json!("asking")), "{logs:?}");
    client.close().await.unwrap();
}

/// 2026-07-28: the elicitation is an input of the call's round trip. The layer sees it in
/// each round: the first waits for the client's input, the retry brings the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_2026_07_28_a_layer_sees_the_input_round_trip_and_its_answer() {
    let (url, seen) = serve().await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let client = client(&events, ProtocolVersion::V2026_07_28).connect_http(&url).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let (result, progress) = call_ask(&client).await;
    assert_eq!(text(&result), "\"[mw] your name?\"", "the client was shown the changed message");
    assert_eq!(progress, 0, "the progress notifications were dropped");
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    let key = Some("elicitation-1".to_owned());
    let waiting = Err(mcp_sdk::server::ClientRequestError::InputRequired.to_string());
    let answer = Ok(json!({"action": "accept", "content": {"name": "[mw] your name?"}}));
    assert_eq!(
        seen.requests,
        [
            ("elicitation/create".to_owned(), OutgoingRoute::InputRequired, key.clone(), waiting),
            ("elicitation/create".to_owned(), OutgoingRoute::InputRequired, key, answer),
        ]
    );
    // The acknowledgement of the client's `subscriptions/listen` stream passes the layer too.
    let expected = ["notifications/progress", "notifications/message", "notifications/subscriptions/acknowledged"];
    assert!(seen.notifications.iter().all(|m| expected.contains(&m.as_str())), "{:?}", seen.notifications);
    assert!(seen.notifications.iter().any(|m| m == "notifications/progress"), "{:?}", seen.notifications);
    client.close().await.unwrap();
}
