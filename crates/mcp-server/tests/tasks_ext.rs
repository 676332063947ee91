//! The tasks extension of revision 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663), as
//! transcripts over the in-memory transport: a `tools/call` from a request that declares the
//! extension answered with a flat task, `tasks/get` in each status (with `inputRequests`,
//! `result`, `error`), `tasks/update` with partial answers, idempotent `tasks/cancel`, the
//! -32021 gate, unknown tasks, the removed methods, and calls without the extension served
//! synchronously. Every result is validated against the revision's schema.

use std::sync::Arc;

use mcp_jsonrpc::transport::memory;
use mcp_server::{Context, Server, TaskSupport, ToolDef, ToolError};
use mcp_test_support::{Wire, validate};
use mcp_types::{CallToolResult, ContentBlock, ElicitRequestFormParams, ElicitRequestParams, ErrorObject};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

const EXT: &str = "io.modelcontextprotocol/tasks";

fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

fn with_ext() -> Value {
    json!({"elicitation": {}, "extensions": {EXT: {}}})
}

fn without_ext() -> Value {
    json!({"elicitation": {}})
}

struct Client {
    wire: Wire,
    next: i64,
}

impl Client {
    /// Sends a request of the stateless revision declaring `caps`; its whole response.
    async fn send(&mut self, method: &str, mut params: Value, caps: Value) -> Value {
        params["_meta"] = meta(caps);
        self.next += 1;
        let id = self.next;
        self.wire.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        loop {
            let answer = self.wire.recv().await;
            if answer.get("id") == Some(&json!(id)) {
                return answer;
            }
        }
    }
    /// The result of a request declaring the extension (schema-checked as `def`).
    async fn ok(&mut self, method: &str, params: Value, def: &str) -> Value {
        let answer = self.send(method, params, with_ext()).await;
        let result = answer.get("result").cloned().unwrap_or_else(|| panic!("{method}: {answer}"));
        validate("2026-07-28", def, &result);
        result
    }
    /// The error of a request declaring `caps`.
    async fn error(&mut self, method: &str, params: Value, caps: Value) -> Value {
        let answer = self.send(method, params, caps).await;
        answer.get("error").cloned().unwrap_or_else(|| panic!("{method} should fail: {answer}"))
    }
    async fn get(&mut self, id: &str) -> Value {
        let task = self.ok("tasks/get", json!({"taskId": id}), "Result").await;
        assert_eq!(task["resultType"], "complete", "{task}");
        assert_eq!(task["taskId"], id, "{task}");
        assert!(task.get("requestState").is_none(), "{task}");
        task
    }
    /// Polls `tasks/get` until the task is in `status` (or terminal), yielding to the handler
    /// between polls.
    async fn until(&mut self, id: &str, status: &str) -> Value {
        for _ in 0..10_000 {
            let task = self.get(id).await;
            let now = task["status"].as_str().unwrap_or_default().to_owned();
            if now == status || ["completed", "failed", "cancelled"].contains(&now.as_str()) {
                return task;
            }
            tokio::task::yield_now().await;
        }
        panic!("task {id} never reached {status}");
    }
    /// Calls `tool` declaring the extension, expects a task; its id.
    async fn start(&mut self, tool: &str, arguments: Value) -> String {
        let created = self.ok("tools/call", json!({"name": tool, "arguments": arguments}), "Result").await;
        assert_eq!(created["resultType"], "task", "{created}");
        created["taskId"].as_str().unwrap().to_owned()
    }
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn form(message: &str, properties: Value) -> ElicitRequestParams {
    let schema: mcp_types::ElicitRequestFormParamsRequestedSchema =
        serde_json::from_value(json!({"type": "object", "properties": properties})).unwrap();
    ElicitRequestParams::ElicitRequestForm(ElicitRequestFormParams::new(message, schema))
}

fn name_of(answer: &mcp_types::ElicitResult) -> String {
    answer
        .content
        .as_ref()
        .and_then(|c| serde_json::to_value(c.get("name")?).ok())
        .map_or(String::new(), |v| v.as_str().map(str::to_owned).unwrap_or_default())
}

fn ok(text: impl Into<String>) -> Result<CallToolResult, ToolError> {
    Ok(CallToolResult::success(vec![ContentBlock::text(text.into())]))
}

/// The test server; `gate` holds `slow` until a permit is added.
fn server(gate: Arc<Semaphore>) -> Server {
    server_with(gate, mcp_server::TaskConfig::new())
}

/// The test server with `config` for its tasks.
fn server_with(gate: Arc<Semaphore>, config: mcp_server::TaskConfig) -> Server {
    let object = || json!({"type": "object"});
    let slow = ToolDef::new("slow", object(), move |_args, _ctx: Context| {
        let gate = gate.clone();
        async move {
            gate.acquire().await.map_err(|e| ToolError::Tool(e.to_string()))?.forget();
            ok("slow done")
        }
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let forever = ToolDef::new("forever", object(), |_args, ctx: Context| async move {
        ctx.cancellation().cancelled().await;
        Err::<CallToolResult, _>(ToolError::Tool("cancelled".into()))
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let instant = ToolDef::new("instant", object(), |_args, _ctx: Context| async move { ok("now") })
        .unwrap()
        .task_support(TaskSupport::Optional);
    let required = ToolDef::new("required", object(), |_args, _ctx: Context| async move { ok("required done") })
        .unwrap()
        .task_support(TaskSupport::Required);
    let tool_error = ToolDef::new("tool_error", object(), |_args, _ctx: Context| async move {
        Err::<CallToolResult, _>(ToolError::Tool("it broke".into()))
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let protocol_error = ToolDef::new("protocol_error", object(), |_args, _ctx: Context| async move {
        Err::<CallToolResult, _>(ToolError::Protocol(ErrorObject::internal_error("boom")))
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let ask_two = ToolDef::new("ask_two", object(), |_args, ctx: Context| async move {
        let name = json!({"name": {"type": "string"}});
        let (a, b) =
            tokio::join!(ctx.elicit_raw_as("a", form("A?", name.clone())), ctx.elicit_raw_as("b", form("B?", name)));
        let (a, b) = (a?, b?);
        ok(format!("{} and {}", name_of(&a), name_of(&b)))
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let plain = ToolDef::new("plain", object(), |_args, _ctx: Context| async move { ok("plain") }).unwrap();
    let steps = ToolDef::new("steps", object(), |_args, ctx: Context| async move {
        ctx.progress(1.0).total(3.0).message("step 1 of 3").await;
        ctx.progress(2.0).total(3.0).await;
        ctx.cancellation().cancelled().await;
        ok("stopped")
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let deferred = ToolDef::new("deferred", object(), |_args, ctx: Context| async move {
        let answer = ctx.elicit_raw_as("user_name", form("Name?", json!({"name": {"type": "string"}}))).await?;
        ctx.run_as_task().await?;
        assert!(ctx.task_id().is_some(), "the rest runs as a task");
        ok(format!("hello {}", name_of(&answer)))
    })
    .unwrap()
    .task_support(TaskSupport::Required)
    .deferred_task();
    Server::builder("tasks-ext-test", "1.0.0")
        .tools([slow, forever, instant, required, tool_error, protocol_error, ask_two, plain, deferred, steps])
        .tasks(config)
        .build()
        .unwrap()
}

fn connect(server: &Server) -> Client {
    let (ours, theirs) = memory(64);
    server.connect(theirs);
    Client { wire: Wire::new(ours), next: 0 }
}

#[tokio::test]
async fn discover_declares_the_extension_and_a_task_is_created_flat_and_completes() {
    let gate = Arc::new(Semaphore::new(0));
    let server = server(gate.clone());
    let mut c = connect(&server);
    let discover = c.ok("server/discover", json!({}), "DiscoverResult").await;
    assert_eq!(discover["capabilities"]["extensions"][EXT], json!({}), "{discover}");
    assert!(discover["capabilities"].get("tasks").is_none(), "{discover}");

    let created = c.ok("tools/call", json!({"name": "slow", "arguments": {}}), "Result").await;
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    for absent in ["task", "result", "error", "inputRequests", "requestState", "ttl", "pollInterval", "content"] {
        assert!(created.get(absent).is_none(), "`{absent}` in {created}");
    }
    assert!(created["ttlMs"].as_i64().is_some_and(|t| t > 0), "{created}");
    assert!(created["pollIntervalMs"].as_i64().is_some_and(|t| t > 0), "{created}");
    for stamp in ["createdAt", "lastUpdatedAt"] {
        let at = created[stamp].as_str().unwrap();
        assert!(humantime::parse_rfc3339(at).is_ok(), "{stamp}: {at}");
    }
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert!(id.len() >= 22, "{id}");

    // Stored before the answer: visible at once, working, with the task's fields only.
    let working = c.get(&id).await;
    assert_eq!(working["status"], "working");
    for absent in ["result", "error", "inputRequests"] {
        assert!(working.get(absent).is_none(), "`{absent}` in {working}");
    }
    gate.add_permits(1);
    let done = c.until(&id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(text(&done["result"]), "slow done");
    assert!(done.get("error").is_none());
    let related = done["result"].get("_meta").and_then(|m| m.get("io.modelcontextprotocol/related-task"));
    assert!(related.is_none(), "{done}");
}

#[tokio::test]
async fn a_tool_error_completes_the_task_and_a_protocol_error_fails_it() {
    let server = server(Arc::new(Semaphore::new(0)));
    let mut c = connect(&server);
    let id = c.start("tool_error", json!({})).await;
    let done = c.until(&id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");

    let id = c.start("protocol_error", json!({})).await;
    let failed = c.until(&id, "failed").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert_eq!(failed["error"]["message"], "internal error: boom", "{failed}");
    assert_eq!(failed["statusMessage"], failed["error"]["message"], "{failed}");
    assert!(failed.get("result").is_none(), "{failed}");
}

#[tokio::test]
async fn input_inside_a_task_is_asked_in_input_requests_and_answered_in_parts() {
    let server = server(Arc::new(Semaphore::new(0)));
    let mut c = connect(&server);
    let id = c.start("ask_two", json!({})).await;
    let mut waiting = c.until(&id, "input_required").await;
    // Both asks run together: wait until both are outstanding.
    for _ in 0..10_000 {
        if waiting["inputRequests"].as_object().is_some_and(|r| r.len() == 2) {
            break;
        }
        tokio::task::yield_now().await;
        waiting = c.get(&id).await;
    }
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    let requests = waiting["inputRequests"].as_object().unwrap();
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["a", "b"], "{waiting}");
    assert_eq!(requests["a"]["method"], "elicitation/create");
    assert_eq!(requests["a"]["params"]["message"], "A?");

    // One answer (and an unknown key, ignored): acknowledged with an empty result, and the
    // other stays outstanding.
    let answers = json!({
        "a": {"action": "accept", "content": {"name": "Ann"}},
        "unknown-key": {"ignored": true},
    });
    let ack = c.ok("tasks/update", json!({"taskId": id, "inputResponses": answers}), "Result").await;
    assert_eq!(ack["resultType"], "complete");
    for absent in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(ack.get(absent).is_none(), "`{absent}` in {ack}");
    }
    let still = c.get(&id).await;
    assert_eq!(still["status"], "input_required", "{still}");
    assert_eq!(still["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["b"], "{still}");

    let answers = json!({"b": {"action": "accept", "content": {"name": "Bob"}}});
    c.ok("tasks/update", json!({"taskId": id, "inputResponses": answers}), "Result").await;
    let done = c.until(&id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(text(&done["result"]), "Ann and Bob");
}

#[tokio::test]
async fn cancel_acknowledges_even_a_terminal_task_and_unknown_tasks_are_invalid_params() {
    let server = server(Arc::new(Semaphore::new(1)));
    let mut c = connect(&server);
    let id = c.start("forever", json!({})).await;
    let ack = c.ok("tasks/cancel", json!({"taskId": id}), "Result").await;
    assert_eq!(ack["resultType"], "complete");
    for absent in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(ack.get(absent).is_none(), "`{absent}` in {ack}");
    }
    let cancelled = c.get(&id).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(cancelled.get("result").is_none() && cancelled.get("error").is_none(), "{cancelled}");
    // Again, and on a completed task: the same acknowledgement, the status unchanged.
    let again = c.ok("tasks/cancel", json!({"taskId": id}), "Result").await;
    assert_eq!(again["resultType"], "complete");
    let id2 = c.start("slow", json!({})).await;
    assert_eq!(c.until(&id2, "completed").await["status"], "completed");
    c.ok("tasks/cancel", json!({"taskId": id2}), "Result").await;
    assert_eq!(c.get(&id2).await["status"], "completed");

    // A task waiting for input is cancelled too.
    let id3 = c.start("ask_two", json!({})).await;
    assert_eq!(c.until(&id3, "input_required").await["status"], "input_required");
    c.ok("tasks/cancel", json!({"taskId": id3}), "Result").await;
    let cancelled = c.get(&id3).await;
    assert_eq!(cancelled["status"], "cancelled");
    assert!(cancelled.get("inputRequests").is_none(), "{cancelled}");

    for method in ["tasks/get", "tasks/cancel", "tasks/update"] {
        let e = c.error(method, json!({"taskId": "no-such-task", "inputResponses": {}}), with_ext()).await;
        assert_eq!(e["code"], -32602, "{method}: {e}");
    }
    let e = c.error("tasks/get", json!({}), with_ext()).await;
    assert_eq!(e["code"], -32602, "no taskId: {e}");
    let e = c.error("tasks/update", json!({"taskId": id3, "inputResponses": [1]}), with_ext()).await;
    assert_eq!(e["code"], -32602, "inputResponses not an object: {e}");
}

/// A handler that never looks at its cancellation token is stopped all the same: its future
/// is dropped (as a cancelled request's is, and as a 2025-11-25 task's is).
#[tokio::test]
async fn cancelling_a_task_stops_a_handler_that_ignores_its_token() {
    struct Dropped(Option<tokio::sync::oneshot::Sender<()>>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            let _ = self.0.take().map(|tx| tx.send(()));
        }
    }
    let (tx, dropped) = tokio::sync::oneshot::channel();
    let tx = Arc::new(std::sync::Mutex::new(Some(tx)));
    let stubborn = ToolDef::new("stubborn", json!({"type": "object"}), move |_args, _ctx| {
        let guard = Dropped(tx.lock().unwrap().take());
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            ok("never")
        }
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let server = Server::builder("tasks-ext-test", "1.0.0").tool(stubborn).build().unwrap();
    let mut c = connect(&server);
    let id = c.start("stubborn", json!({})).await;
    c.ok("tasks/cancel", json!({"taskId": id}), "Result").await;
    assert_eq!(c.get(&id).await["status"], "cancelled");
    tokio::time::timeout(std::time::Duration::from_secs(10), dropped)
        .await
        .expect("the cancelled task's handler still runs")
        .unwrap();
}

#[tokio::test]
async fn without_the_extension_tasks_are_gated_and_calls_run_synchronously() {
    let server = server(Arc::new(Semaphore::new(1)));
    let mut c = connect(&server);
    let required = json!({"extensions": {EXT: {}}});
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let e = c.error(method, json!({"taskId": "gate-test", "inputResponses": {}}), without_ext()).await;
        assert_eq!(e["code"], -32021, "{method}: {e}");
        assert_eq!(e["data"]["requiredCapabilities"], required, "{method}: {e}");
        validate("2026-07-28", "MissingRequiredClientCapabilityError", &json!({"jsonrpc": "2.0", "id": 1, "error": e}));
    }
    let e = c.error("tools/call", json!({"name": "required", "arguments": {}}), without_ext()).await;
    assert_eq!(e["code"], -32021, "{e}");
    assert_eq!(e["data"]["requiredCapabilities"], required, "{e}");

    // An optional tool without the extension: a plain call.
    let answer = c.send("tools/call", json!({"name": "instant", "arguments": {}}), without_ext()).await;
    let result = &answer["result"];
    validate("2026-07-28", "CallToolResult", result);
    assert_eq!(result["resultType"], "complete", "{answer}");
    assert_eq!(text(result), "now");
    assert!(result.get("taskId").is_none(), "{answer}");

    // A tool without task support stays a plain call, even with the extension and a legacy
    // `task` param.
    let params = json!({"name": "plain", "arguments": {}, "task": {"ttl": 60000, "pollInterval": 100}});
    let plain = c.ok("tools/call", params, "CallToolResult").await;
    assert_eq!(plain["resultType"], "complete");
    assert_eq!(text(&plain), "plain");
    assert!(plain.get("taskId").is_none());

    // The 2025-11-25 methods the extension removed.
    for removed in ["tasks/result", "tasks/list"] {
        let e = c.error(removed, json!({"taskId": "x"}), with_ext()).await;
        assert_eq!(e["code"], -32601, "{removed}: {e}");
    }
}

#[tokio::test]
async fn a_deferred_task_runs_its_input_rounds_synchronously_then_becomes_a_task() {
    let server = server(Arc::new(Semaphore::new(0)));
    let mut c = connect(&server);
    let first = c.ok("tools/call", json!({"name": "deferred", "arguments": {}}), "InputRequiredResult").await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert!(first.get("taskId").is_none(), "{first}");
    assert_eq!(first["inputRequests"]["user_name"]["method"], "elicitation/create");
    let state = first["requestState"].clone();
    let answers = json!({"user_name": {"action": "accept", "content": {"name": "Alice"}}});
    let params = json!({"name": "deferred", "arguments": {}, "inputResponses": answers, "requestState": state});
    let created = c.ok("tools/call", params, "Result").await;
    assert_eq!(created["resultType"], "task", "{created}");
    assert!(created.get("requestState").is_none() && created.get("inputRequests").is_none(), "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    let done = c.until(&id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(text(&done["result"]), "hello Alice");
}

#[tokio::test]
async fn a_subscription_with_task_ids_hears_each_change_of_those_tasks() {
    let gate = Arc::new(Semaphore::new(0));
    let server = server(gate.clone());
    let mut c = connect(&server);
    let created = c.ok("tools/call", json!({"name": "slow", "arguments": {}}), "Result").await;
    let id = created["taskId"].as_str().unwrap().to_owned();

    // Another connection listens: the task it may read is honoured, an unknown one is not.
    let mut listener = connect(&server);
    let params = json!({"notifications": {"taskIds": [id, "no-such-task"]}, "_meta": meta(with_ext())});
    listener.wire.send(json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": params})).await;
    let ack = listener.wire.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]), "{ack}");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);

    gate.add_permits(1);
    let changed = listener.wire.recv().await;
    assert_eq!(changed["method"], "notifications/tasks", "{changed}");
    let task = &changed["params"];
    assert_eq!(task["taskId"], id.as_str());
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(text(&task["result"]), "slow done");
    assert!(task.get("resultType").is_none(), "{task}");
    assert_eq!(task["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);

    // Without the extension, following tasks is refused.
    let e = c.error("subscriptions/listen", json!({"notifications": {"taskIds": [id]}}), without_ext()).await;
    assert_eq!(e["code"], -32021, "{e}");
}

/// Without an HTTP principal an extension task is reachable by its id alone, from any
/// connection (the extension lets the id be the capability to the task), so the id must be
/// unguessable: 128 bits from the OS's generator, no two alike, and no bit fixed or biased (a
/// counter, a clock or a short random part would show here).
#[tokio::test]
async fn without_a_principal_the_id_is_the_capability_so_it_is_unguessable() {
    use base64::Engine as _;
    let server = server(Arc::new(Semaphore::new(0)));
    let (mut maker, mut other) = (connect(&server), connect(&server));
    let mut ids = Vec::new();
    for _ in 0..256 {
        ids.push(maker.start("instant", json!({})).await);
    }
    assert_eq!(text(&other.until(&ids[0], "completed").await["result"]), "now", "any connection reaches it");
    let bits: Vec<[u8; 16]> = ids
        .iter()
        .map(|id| {
            let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(id).unwrap_or_default();
            bytes.try_into().unwrap_or_else(|b: Vec<u8>| panic!("{id}: {} bytes, not 16", b.len()))
        })
        .collect();
    let distinct: std::collections::HashSet<_> = bits.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "two ids alike");
    for bit in 0..128 {
        let ones = bits.iter().filter(|b| b[bit / 8] & (1 << (bit % 8)) != 0).count();
        // Of 256 fair bits, outside 64..=192 is eight standard deviations away.
        assert!((64..=192).contains(&ones), "bit {bit} is set in {ones} of 256 ids");
    }
}

#[tokio::test]
async fn a_task_asks_its_ttl_within_the_configured_max_and_deferred_tasks_too() {
    let gate = Arc::new(Semaphore::new(0));
    let config = mcp_server::TaskConfig::new().max_ttl(std::time::Duration::from_secs(600));
    let server = server_with(gate, config);
    let mut c = connect(&server);
    let call = |ttl: Value| json!({"name": "slow", "arguments": {}, "task": {"ttl": ttl}});
    let asked = c.ok("tools/call", call(json!(500_000)), "Result").await;
    assert_eq!(asked["ttlMs"], 500_000, "{asked}");
    let id = asked["taskId"].as_str().unwrap().to_owned();
    assert_eq!(c.get(&id).await["ttlMs"], 500_000);
    let capped = c.ok("tools/call", call(json!(i64::MAX)), "Result").await;
    assert_eq!(capped["ttlMs"], 600_000, "{capped}");
    let default = c.ok("tools/call", json!({"name": "slow", "arguments": {}}), "Result").await;
    assert_eq!(default["ttlMs"], 300_000, "{default}");
    let odd = c.ok("tools/call", call(json!("soon")), "Result").await;
    assert_eq!(odd["ttlMs"], 300_000, "a ttl that is no number asks nothing: {odd}");
    // A deferred task gets the ttl its call asked, though it begins later.
    let first =
        c.ok("tools/call", json!({"name": "deferred", "arguments": {}, "task": {"ttl": 42_000}}), "Result").await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let retry = json!({
        "name": "deferred", "arguments": {}, "task": {"ttl": 42_000},
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": first["requestState"],
    });
    let task = c.ok("tools/call", retry, "Result").await;
    assert_eq!((task["resultType"].as_str(), task["ttlMs"].as_i64()), (Some("task"), Some(42_000)), "{task}");
}

#[tokio::test(start_paused = true)]
async fn a_task_running_past_its_ttl_keeps_its_result_for_the_ttl_after_it_ends() {
    // `slow_compute` of `everything` accepts 600 s; a 400-second task with the default 300-second
    // ttl must end with its result, kept 300 s from its end.
    let gate = Arc::new(Semaphore::new(0));
    let server = server(gate.clone());
    let mut c = connect(&server);
    let id = c.start("slow", json!({})).await;
    tokio::time::advance(std::time::Duration::from_secs(400)).await;
    assert_eq!(c.get(&id).await["status"], "working");
    gate.add_permits(1);
    let done = c.until(&id, "completed").await;
    assert_eq!(text(&done["result"]), "slow done", "{done}");
    tokio::time::advance(std::time::Duration::from_secs(299)).await;
    assert_eq!(text(&c.get(&id).await["result"]), "slow done");
    tokio::time::advance(std::time::Duration::from_secs(2)).await;
    let gone = c.error("tasks/get", json!({"taskId": id}), with_ext()).await;
    assert_eq!(gone["code"], -32602, "{gone}");
}

#[tokio::test]
async fn a_tasks_progress_after_its_call_was_answered_is_its_status_message() {
    // Over HTTP the call's response is over once the task is made: the extension's channel for
    // what the task does is the task itself (tasks/get, notifications/tasks).
    let server = server(Arc::new(Semaphore::new(0)));
    let mut c = connect(&server);
    let id = c.start("steps", json!({})).await;
    let mut seen = Vec::new();
    for _ in 0..2_000 {
        let task = c.get(&id).await;
        if let Some(message) = task["statusMessage"].as_str()
            && seen.last().map(String::as_str) != Some(message)
        {
            assert_eq!(task["status"], "working", "{task}");
            seen.push(message.to_owned());
        }
        if seen.last().map(String::as_str) == Some("2/3") {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(seen.last().map(String::as_str), Some("2/3"), "{seen:?}");
    c.ok("tasks/cancel", json!({"taskId": id}), "Result").await;
    assert_eq!(c.until(&id, "cancelled").await["statusMessage"], "The task was cancelled by request.");
}
