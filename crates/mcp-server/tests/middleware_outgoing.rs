//! Middleware around what the server sends (issue 32), over in-memory connections served as
//! stdio's are: a layer sees each kind of notification the server sends (list changes, from a
//! broadcast, directly or relayed from a bus that fans out, and from a session's
//! `SessionControl`; resource updates; task status; the same on a 2026-07-28
//! `subscriptions/listen` stream), may change it, and dropping it means the client gets none;
//! and it sees the input requests of a task of the 2026-07-28 tasks extension
//! (`OutgoingRoute::TaskInput`), and their answers, or answers one itself.
//!
//! "The client gets none" is shown without timing: the layer tells the test it dropped the
//! notification, and a frame the server sends after it on the same connection comes first.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use mcp_jsonrpc::transport::memory;
use mcp_server::middleware::{
    Middleware, OutgoingNext, OutgoingNotification, OutgoingReply, OutgoingRequest, OutgoingRoute,
};
use mcp_server::{Context, PromptDef, ResourceDef, Server, TaskSupport, ToolDef, ToolError};
use mcp_test_support::{Session, Wire};
use mcp_types::{
    CallToolResult, ContentBlock, ElicitRequestFormParams, ElicitRequestParams, GetPromptResult, TextResourceContents,
};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};

const REV: &str = "2025-11-25";
const STATELESS: &str = "2026-07-28";
const EXT: &str = "io.modelcontextprotocol/tasks";

/// What a layer does with a notification: its method and params (`{}` when absent), which it
/// may change; `false` drops it.
type Rule = Box<dyn Fn(&str, &mut Value) -> bool + Send + Sync>;

/// Applies its rule to every notification the server sends, and tells the test of each
/// (method, params as the rule left them, kept).
struct Notifications {
    rule: Rule,
    seen: mpsc::UnboundedSender<(String, Value, bool)>,
}

impl Middleware for Notifications {
    fn outgoing_notification(&self, n: &mut OutgoingNotification<'_>) -> bool {
        let before: Value = n.params().unwrap();
        let mut params = before.clone();
        let keep = (self.rule)(n.method(), &mut params);
        if params != before {
            n.set_params(Some(&params)).unwrap();
        }
        let _ = self.seen.send((n.method().to_owned(), params, keep));
        keep
    }
}

/// Stamps `_meta.mw` into the notifications of `stamp`, drops those of `drop`.
fn stamp_and_drop(stamp: &'static [&'static str], drop: &'static [&'static str]) -> Rule {
    Box::new(move |method, params| {
        if stamp.contains(&method) {
            params["_meta"]["mw"] = json!("stamped");
        }
        !drop.contains(&method)
    })
}

/// The layer with `rule`, and the receiver of what it sees.
fn layer(rule: Rule) -> (Notifications, mpsc::UnboundedReceiver<(String, Value, bool)>) {
    let (seen, rx) = mpsc::unbounded_channel();
    (Notifications { rule, seen }, rx)
}

/// Waits until the layer saw a notification of `method` (failing after a minute); its params
/// and whether it was kept.
async fn saw(rx: &mut mpsc::UnboundedReceiver<(String, Value, bool)>, method: &str) -> (Value, bool) {
    let next = async {
        loop {
            let (m, params, kept) = rx.recv().await.expect("the layer is gone");
            if m == method {
                return (params, kept);
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), next)
        .await
        .unwrap_or_else(|_| panic!("the layer never saw {method}"))
}

fn text(s: &str) -> Result<CallToolResult, ToolError> {
    Ok(CallToolResult::success(vec![ContentBlock::text(s)]))
}

fn form(message: &str) -> ElicitRequestParams {
    let schema: mcp_types::ElicitRequestFormParamsRequestedSchema =
        serde_json::from_value(json!({"type": "object", "properties": {"name": {"type": "string"}}})).unwrap();
    ElicitRequestParams::ElicitRequestForm(ElicitRequestFormParams::new(message, schema))
}

/// A server with a tool, a prompt and a resource (so that each list exists), `hide_echo`
/// (which hides `echo` from its session), `ask` (which elicits a name, as a task if asked) and
/// `layer`.
fn server(layer: impl Middleware) -> Server {
    builder(layer).build().unwrap()
}

/// [`server`]'s builder.
fn builder(layer: impl Middleware) -> mcp_server::ServerBuilder {
    let echo = ToolDef::new("echo", json!({"type": "object"}), |_, _| async { text("echo") }).unwrap();
    let hide = ToolDef::new("hide_echo", json!({"type": "object"}), |_, ctx: Context| async move {
        ctx.session().hide_tool("echo").await?;
        text("hidden")
    })
    .unwrap();
    let ask = ToolDef::new("ask", json!({"type": "object"}), |_, ctx: Context| async move {
        let answer = ctx.elicit_raw(form("Name?")).await?;
        text(&serde_json::to_value(answer.content).unwrap()["name"].to_string())
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let prompt = PromptDef::new("greet", |_, _| async { Ok(GetPromptResult::new(vec![])) });
    let resource = ResourceDef::new("doc", "file:///doc", |uri: String, _, _| async move {
        Ok(vec![TextResourceContents::new(uri, "doc").into()])
    });
    Server::builder("outgoing", "1.0").tools([echo, hide, ask]).prompt(prompt).resource(resource).middleware(layer)
}

/// A 2025-11-25 session over an in-memory connection, its client able to elicit.
async fn session(server: &Server) -> Session {
    let (a, b) = memory(64);
    server.connect(a);
    let mut session = Session::new(Wire::new(b), REV);
    let init = json!({"protocolVersion": REV, "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "t", "version": "1"}});
    session.result("initialize", init).await;
    session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    session
}

/// Each list change the server broadcasts (`notify_*_list_changed`, and `add_tool`) passes the
/// layer: changed, the client gets the change; dropped, the client gets none.
#[tokio::test]
async fn broadcast_list_changes_pass_the_layer_which_changes_or_drops_them() {
    let (layer, mut seen) = layer(stamp_and_drop(
        &["notifications/tools/list_changed", "notifications/resources/list_changed"],
        &["notifications/prompts/list_changed"],
    ));
    let server = server(layer);
    let mut client = session(&server).await;

    server.notify_tool_list_changed().await;
    let tools = client.recv().await;
    assert_eq!(tools["method"], "notifications/tools/list_changed", "{tools}");
    assert_eq!(tools["params"]["_meta"]["mw"], "stamped", "{tools}");

    let extra = ToolDef::new("extra", json!({"type": "object"}), |_, _| async { text("extra") }).unwrap();
    server.add_tool(extra).await.unwrap();
    let added = client.recv().await;
    assert_eq!(added["method"], "notifications/tools/list_changed", "{added}");
    assert_eq!(added["params"]["_meta"]["mw"], "stamped", "{added}");

    // Dropped: the layer saw it, and the next frame the client gets is the one after it.
    server.notify_prompt_list_changed().await;
    assert!(!saw(&mut seen, "notifications/prompts/list_changed").await.1);
    server.notify_resource_list_changed().await;
    let next = client.recv().await;
    assert_eq!(next["method"], "notifications/resources/list_changed", "{next}");
    assert_eq!(next["params"]["_meta"]["mw"], "stamped", "{next}");
    client.wire.expect_silence(99).await;
}

/// A bus that says it fans out (as a fleet's does): the server tells its sessions of changes
/// through its relay of the bus's events.
struct FanningBus(mcp_server::InMemoryBus);

impl mcp_server::SubscriptionBus for FanningBus {
    fn publish(&self, event: mcp_server::ChangeEvent) {
        self.0.publish(event);
    }
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<mcp_server::ChangeEvent> {
        self.0.subscribe()
    }
    fn fans_out(&self) -> bool {
        true
    }
}

/// With a bus that fans out, the relay tells the sessions of each change; what it sends passes
/// the layer too: the dropped change never reaches the client, the changed one after it does.
#[tokio::test]
async fn list_changes_a_fanning_bus_relays_pass_the_layer() {
    let (layer, mut seen) = layer(stamp_and_drop(
        &["notifications/tools/list_changed", "notifications/resources/updated"],
        &["notifications/prompts/list_changed"],
    ));
    let bus = Arc::new(FanningBus(mcp_server::InMemoryBus::default()));
    let server = builder(layer).subscription_bus(bus).build().unwrap();
    let mut client = session(&server).await;
    client.result("resources/subscribe", json!({"uri": "file:///doc"})).await;

    server.notify_prompt_list_changed().await;
    server.notify_resource_updated("file:///doc").await;
    server.notify_tool_list_changed().await;
    let updated = client.recv().await;
    assert_eq!(updated["method"], "notifications/resources/updated", "{updated}");
    assert_eq!(updated["params"]["_meta"]["mw"], "stamped", "{updated}");
    let tools = client.recv().await;
    assert_eq!(tools["method"], "notifications/tools/list_changed", "{tools}");
    assert_eq!(tools["params"]["_meta"]["mw"], "stamped", "{tools}");
    assert!(!saw(&mut seen, "notifications/prompts/list_changed").await.1);
    client.wire.expect_silence(99).await;
}

/// The `list_changed` a session's `SessionControl` sends (a tool hides another from its
/// session) passes the layer: changed, the client gets the change before the call's result;
/// dropped, the result comes alone.
#[tokio::test]
async fn a_sessions_list_change_passes_the_layer_which_changes_or_drops_it() {
    let drop_it = Arc::new(Mutex::new(false));
    let flag = drop_it.clone();
    let (layer, mut seen) = layer(Box::new(move |method, params| {
        if method != "notifications/tools/list_changed" {
            return true;
        }
        params["_meta"]["mw"] = json!("stamped");
        !*flag.lock().unwrap()
    }));
    let server = server(layer);

    let mut stamped = session(&server).await;
    stamped
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "hide_echo", "arguments": {}}}))
        .await;
    let changed = stamped.recv().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed", "{changed}");
    assert_eq!(changed["params"]["_meta"]["mw"], "stamped", "{changed}");
    let result = stamped.recv().await;
    assert_eq!(result["result"]["content"][0]["text"], "hidden", "{result}");

    *drop_it.lock().unwrap() = true;
    let mut dropped = session(&server).await;
    let result = dropped.result("tools/call", json!({"name": "hide_echo", "arguments": {}})).await;
    assert_eq!(result["content"][0]["text"], "hidden", "the result is the next frame: {result}");
    // The layer saw both (the first kept, the second dropped).
    assert!(saw(&mut seen, "notifications/tools/list_changed").await.1);
    assert!(!saw(&mut seen, "notifications/tools/list_changed").await.1);
}

/// `notifications/resources/updated` to a subscribed session passes the layer: changed, the
/// client gets the change; dropped, the client gets none.
#[tokio::test]
async fn resource_updates_pass_the_layer_which_changes_or_drops_them() {
    let drop_it = Arc::new(Mutex::new(false));
    let flag = drop_it.clone();
    let (layer, mut seen) = layer(Box::new(move |method, params| {
        if method != "notifications/resources/updated" {
            return true;
        }
        params["_meta"]["mw"] = json!("stamped");
        !*flag.lock().unwrap()
    }));
    let server = server(layer);
    let mut client = session(&server).await;
    client.result("resources/subscribe", json!({"uri": "file:///doc"})).await;

    server.notify_resource_updated("file:///doc").await;
    let updated = client.recv().await;
    assert_eq!(updated["method"], "notifications/resources/updated", "{updated}");
    assert_eq!(updated["params"]["uri"], "file:///doc", "{updated}");
    assert_eq!(updated["params"]["_meta"]["mw"], "stamped", "{updated}");
    assert!(saw(&mut seen, "notifications/resources/updated").await.1);

    *drop_it.lock().unwrap() = true;
    server.notify_resource_updated("file:///doc").await;
    assert!(!saw(&mut seen, "notifications/resources/updated").await.1);
    client.wire.expect_silence(99).await;
}

/// `notifications/tasks/status` (2025-11-25 tasks) passes the layer: a task that asks for input
/// goes `input_required`, announced before its elicitation is sent. Changed, the client gets the
/// change before the elicitation; dropped, the elicitation comes first.
#[tokio::test]
async fn task_status_passes_the_layer_which_changes_or_drops_it() {
    let drop_it = Arc::new(Mutex::new(false));
    let flag = drop_it.clone();
    let (layer, _seen) = layer(Box::new(move |method, params| {
        if method != "notifications/tasks/status" {
            return true;
        }
        params["_meta"]["mw"] = json!("stamped");
        !*flag.lock().unwrap()
    }));
    let server = server(layer);
    let mut client = session(&server).await;

    for (call, dropped) in [(1, false), (2, true)] {
        *drop_it.lock().unwrap() = dropped;
        let params = json!({"name": "ask", "arguments": {}, "task": {}});
        client.send(json!({"jsonrpc": "2.0", "id": call, "method": "tools/call", "params": params})).await;
        // Until the elicitation: the task created, and the statuses announced before it.
        let (mut task, mut statuses) = (None, Vec::new());
        let elicitation = loop {
            let frame = client.recv().await;
            if frame["id"] == call {
                task = Some(frame["result"]["task"]["taskId"].as_str().unwrap().to_owned());
            } else if frame["method"] == "notifications/tasks/status" {
                assert_eq!(frame["params"]["_meta"]["mw"], "stamped", "{frame}");
                statuses.push(frame["params"]["status"].as_str().unwrap().to_owned());
            } else {
                break frame;
            }
        };
        assert_eq!(elicitation["method"], "elicitation/create", "{elicitation}");
        match dropped {
            false => assert_eq!(statuses.last().map(String::as_str), Some("input_required"), "{statuses:?}"),
            true => assert!(statuses.is_empty(), "dropped: {statuses:?}"),
        }
        let answer = json!({"action": "accept", "content": {"name": "Ann"}});
        client.send(json!({"jsonrpc": "2.0", "id": elicitation["id"], "result": answer})).await;
        if task.is_none() {
            task = Some(client.recv().await["result"]["task"]["taskId"].as_str().unwrap().to_owned());
        }
        // The task ends: `working`, then `completed`, announced unless dropped.
        if !dropped {
            for status in ["working", "completed"] {
                let frame = client.recv().await;
                assert_eq!(frame["params"]["taskId"], task.as_deref().unwrap(), "{frame}");
                assert_eq!(frame["params"]["status"], status, "{frame}");
                assert_eq!(frame["params"]["_meta"]["mw"], "stamped", "{frame}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2026-07-28: `subscriptions/listen` streams and extension tasks.

/// The `_meta` of a 2026-07-28 request declaring the tasks extension.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {EXT: {}}},
    })
}

/// A connection for 2026-07-28 requests.
fn stateless(server: &Server) -> Wire {
    let (a, b) = memory(64);
    server.connect(a);
    Wire::new(b)
}

/// Sends request `id` of 2026-07-28; its response (frames before it skipped).
async fn request(wire: &mut Wire, id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    wire.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
    loop {
        let frame = wire.recv().await;
        if frame.get("id") == Some(&json!(id)) {
            return frame;
        }
    }
}

/// Opens `subscriptions/listen` with `notifications` on a connection of its own; the wire,
/// past the acknowledgement (which the layer may change too).
async fn listen(server: &Server, notifications: Value) -> Wire {
    let mut wire = stateless(server);
    let params = json!({"notifications": notifications, "_meta": meta()});
    wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params})).await;
    let ack = wire.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    wire
}

/// On a `subscriptions/listen` stream, list changes and resource updates pass the layer:
/// changed, the listener gets the change; dropped, it gets none (the change after it comes
/// first).
#[tokio::test]
async fn a_listen_streams_changes_pass_the_layer_which_changes_or_drops_them() {
    let (layer, mut seen) = layer(stamp_and_drop(
        &["notifications/tools/list_changed", "notifications/subscriptions/acknowledged"],
        &["notifications/resources/updated", "notifications/prompts/list_changed"],
    ));
    let server = server(layer);
    let notifications = json!({"toolsListChanged": true, "promptsListChanged": true,
        "resourceSubscriptions": ["file:///doc"]});
    let mut wire = listen(&server, notifications).await;
    let (ack, kept) = saw(&mut seen, "notifications/subscriptions/acknowledged").await;
    assert!(kept && ack["_meta"]["mw"] == "stamped", "{ack}");

    server.notify_resource_updated("file:///doc").await;
    server.notify_prompt_list_changed().await;
    server.notify_tool_list_changed().await;
    let changed = wire.recv().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed", "{changed}");
    assert_eq!(changed["params"]["_meta"]["mw"], "stamped", "{changed}");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1, "{changed}");
    assert!(!saw(&mut seen, "notifications/resources/updated").await.1);
    assert!(!saw(&mut seen, "notifications/prompts/list_changed").await.1);
}

/// On a `subscriptions/listen` stream following a task of the tasks extension, its
/// `notifications/tasks` pass the layer: the layer drops the one of `input_required` and
/// stamps the others, and the listener's first is a later one.
#[tokio::test]
async fn a_listen_streams_task_notifications_pass_the_layer() {
    let (layer, mut seen) = layer(Box::new(|method, params| {
        if method != "notifications/tasks" {
            return true;
        }
        params["_meta"]["mw"] = json!("stamped");
        params["status"] != "input_required"
    }));
    // `gated_ask` waits for the gate, then asks for a name: the listener is there before.
    let gate = Arc::new(Semaphore::new(0));
    let opened = gate.clone();
    let gated = ToolDef::new("gated_ask", json!({"type": "object"}), move |_, ctx: Context| {
        let gate = opened.clone();
        async move {
            gate.acquire().await.map_err(|e| ToolError::Tool(e.to_string()))?.forget();
            let answer = ctx.elicit_raw(form("Name?")).await?;
            text(&serde_json::to_value(answer.content).unwrap()["name"].to_string())
        }
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let server = builder(layer).tool(gated).build().unwrap();
    let mut caller = stateless(&server);
    let created = request(&mut caller, 1, "tools/call", json!({"name": "gated_ask", "arguments": {}})).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mut listener = listen(&server, json!({"taskIds": [task]})).await;
    gate.add_permits(1);

    // The layer dropped the input_required notification; only then is the input answered.
    loop {
        let (params, kept) = saw(&mut seen, "notifications/tasks").await;
        if params["status"] == "input_required" {
            assert!(!kept);
            break;
        }
    }
    let key = "elicitation-1";
    let answers = json!({"taskId": task, "inputResponses": {key: {"action": "accept", "content": {"name": "Ann"}}}});
    let ack = request(&mut caller, 2, "tasks/update", answers).await;
    assert!(ack.get("result").is_some(), "{ack}");
    let next = listener.recv().await;
    assert_eq!(next["method"], "notifications/tasks", "{next}");
    assert_ne!(next["params"]["status"], "input_required", "{next}");
    assert_eq!(next["params"]["_meta"]["mw"], "stamped", "{next}");
}

/// An input request of an extension task, as a layer sees it: its route and key, the client's
/// answer; a layer may answer one itself.
type Asked = (String, OutgoingRoute, Option<String>, Result<Value, String>);

/// Answers the input `auto` itself; prefixes the message of the others with `[mw] ` and records
/// each with the answer.
struct TaskInputs(Arc<Mutex<Vec<Asked>>>);

impl Middleware for TaskInputs {
    fn outgoing_request<'a>(
        &'a self,
        mut req: OutgoingRequest<'a>,
        next: OutgoingNext<'a>,
    ) -> BoxFuture<'a, OutgoingReply> {
        Box::pin(async move {
            let (method, route, key) = (req.method().to_owned(), req.route(), req.input_key().map(str::to_owned));
            let answer = match key.as_deref() {
                Some("auto") => {
                    let mine = json!({"action": "accept", "content": {"name": "layer"}});
                    Ok(serde_json::value::to_raw_value(&mine).unwrap())
                }
                _ => {
                    let mut params: Value = req.params().unwrap();
                    params["message"] = json!(format!("[mw] {}", params["message"].as_str().unwrap()));
                    req.set_params(Some(&params)).unwrap();
                    next.run(req).await
                }
            };
            let seen = match &answer {
                Ok(raw) => Ok(serde_json::from_str(raw.get()).unwrap()),
                Err(e) => Err(e.to_string()),
            };
            self.0.lock().unwrap().push((method, route, key, seen));
            answer
        })
    }
}

/// `tasks/get` of `task` as request `id` (counted up); its result.
async fn get(c: &mut Wire, id: &mut i64, task: &str) -> Value {
    *id += 1;
    request(c, *id, "tasks/get", json!({"taskId": task})).await["result"].clone()
}

/// Polls `tasks/get` until `task` is no longer in `status`; its state then.
async fn past(c: &mut Wire, id: &mut i64, task: &str, status: &str) -> Value {
    loop {
        let now = get(c, id, task).await;
        if now["status"] != status {
            return now;
        }
        tokio::task::yield_now().await;
    }
}

/// A tool run as a task of the 2026-07-28 extension asks for two inputs: the layer sees each
/// with route `TaskInput` and its key, answers `auto` itself (the client is never asked it),
/// changes the other's message (the client reads the changed one in `inputRequests`) and sees
/// the answer `tasks/update` brings.
#[tokio::test]
async fn a_layer_sees_an_extension_tasks_input_requests_and_answers_one() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let two = ToolDef::new("two", json!({"type": "object"}), |_, ctx: Context| async move {
        let mine = ctx.elicit_raw_as("auto", form("Auto?")).await?;
        let theirs = ctx.elicit_raw_as("name", form("Name?")).await?;
        let name = |a: mcp_types::ElicitResult| serde_json::to_value(a.content).unwrap()["name"].clone();
        text(&format!("{} and {}", name(mine), name(theirs)))
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let server = Server::builder("task-input", "1.0").tool(two).middleware(TaskInputs(asked.clone())).build().unwrap();
    let mut c = stateless(&server);
    let created = request(&mut c, 1, "tools/call", json!({"name": "two", "arguments": {}})).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();

    // `auto` was answered by the layer: the only input the client is asked is `name`.
    let mut id = 1;
    let waiting = past(&mut c, &mut id, &task, "working").await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    let requests = waiting["inputRequests"].as_object().unwrap();
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["name"], "{waiting}");
    assert_eq!(requests["name"]["method"], "elicitation/create", "{waiting}");
    assert_eq!(requests["name"]["params"]["message"], "[mw] Name?", "{waiting}");

    let answer = json!({"action": "accept", "content": {"name": "Ann"}});
    let update = json!({"taskId": task, "inputResponses": {"name": answer}});
    let ack = request(&mut c, 100, "tasks/update", update).await;
    assert!(ack.get("result").is_some(), "{ack}");
    let done = past(&mut c, &mut id, &task, "input_required").await;
    let done = match done["status"].as_str() {
        Some("working") => past(&mut c, &mut id, &task, "working").await,
        _ => done,
    };
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "\"layer\" and \"Ann\"", "{done}");
    let mine = json!({"action": "accept", "content": {"name": "layer"}});
    assert_eq!(
        *asked.lock().unwrap(),
        [
            ("elicitation/create".to_owned(), OutgoingRoute::TaskInput, Some("auto".to_owned()), Ok(mine)),
            ("elicitation/create".to_owned(), OutgoingRoute::TaskInput, Some("name".to_owned()), Ok(answer)),
        ]
    );
}
