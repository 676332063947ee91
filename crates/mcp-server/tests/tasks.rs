//! Tasks of protocol revision 2025-11-25 as transcripts over the in-memory transport: a
//! task-augmented `tools/call` answered with a task, then `tasks/get`, `tasks/result`,
//! `tasks/list`, `tasks/cancel` and `notifications/tasks/status`; input asked inside a task;
//! the errors of each misuse; tasks invisible to other sessions; a bounded store.

use std::sync::Arc;
use std::time::Duration;

use mcp_jsonrpc::transport::memory;
use mcp_server::tasks::MemoryTaskStore;
use mcp_server::{Context, Server, TaskConfig, TaskSupport, ToolDef, ToolError};
use mcp_test_support::{Session, Wire, validate};
use mcp_types::{CallToolResult, ContentBlock, ElicitAction, ElicitRequestParams};
use serde_json::{Value, json};
use tokio::sync::Notify;

const REV: &str = "2025-11-25";

/// A tool answering `text` once `gate` opens (or failing when cancelled).
fn gated(name: &str, gate: Arc<Notify>) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), move |_args, ctx: Context| {
        let gate = gate.clone();
        async move {
            tokio::select! {
                () = gate.notified() => Ok(CallToolResult::success(vec![ContentBlock::text("done")])),
                () = ctx.cancellation().cancelled() => Err(ToolError::new("cancelled")),
            }
        }
    })
    .unwrap()
}

fn plain(name: &str, text: &'static str) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), move |_args, _ctx| async move {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text)]))
    })
    .unwrap()
}

fn server_with(config: Option<TaskConfig>, gate: Arc<Notify>) -> Server {
    let asks = ToolDef::new("asks", json!({"type": "object"}), |_args, ctx: Context| async move {
        let request: ElicitRequestParams = serde_json::from_value(json!({
            "message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
        }))
        .unwrap();
        let answer = ctx.elicit_raw(request).await.map_err(|e| ToolError::new(e.to_string()))?;
        assert_eq!(answer.action, ElicitAction::Accept);
        let name = answer.content.unwrap_or_default().get("name").map(|v| format!("{v:?}")).unwrap_or_default();
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!("hello {name}"))]))
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let asks_two = ToolDef::new("asks_two", json!({"type": "object"}), |_args, ctx: Context| async move {
        let request = |message: &str| -> ElicitRequestParams {
            serde_json::from_value(json!({
                "message": message,
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
            }))
            .unwrap()
        };
        let (a, b) = tokio::join!(ctx.elicit_raw(request("A?")), ctx.elicit_raw(request("B?")));
        a.and(b).map_err(|e| ToolError::new(e.to_string()))?;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("both")]))
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let fails = ToolDef::new("fails", json!({"type": "object"}), |_args, _ctx| async move {
        Err::<CallToolResult, _>(ToolError::new("the build broke"))
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let chatty = ToolDef::new("chatty", json!({"type": "object"}), |_args, ctx: Context| async move {
        ctx.log(mcp_types::LoggingLevel::Info, json!("working")).await;
        ctx.progress(1.0).total(1.0).await;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("said")]))
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let mut builder = Server::builder("tasks-test", "1.0.0")
        .tool(chatty)
        .tool(gated("slow", gate).task_support(TaskSupport::Optional))
        .tool(plain("required", "ok").task_support(TaskSupport::Required))
        .tool(plain("plain", "plain"))
        .tool(asks)
        .tool(asks_two)
        .tool(fails);
    if let Some(config) = config {
        builder = builder.tasks(config);
    }
    builder.build().unwrap()
}

async fn connect(server: &Server, rev: &str) -> Session {
    initialize(server, rev).await.0
}

/// A session of `server` at `rev` after the handshake, and the `initialize` result.
async fn initialize(server: &Server, rev: &str) -> (Session, Value) {
    let (a, b) = memory(256);
    server.connect(a);
    let mut client = Session::new(Wire::new(b).with_timeout(Duration::from_secs(30)), rev);
    let init = client
        .result(
            "initialize",
            json!({"protocolVersion": rev, "capabilities": {"elicitation": {"form": {}}},
                   "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    assert_eq!(init["protocolVersion"], rev);
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    (client, init)
}

/// Sends a task-augmented `tools/call` and returns the task it created.
async fn start_task(client: &mut Session, tool: &str, ttl: Option<i64>) -> Value {
    client.next += 1;
    let id = client.next;
    let task = match ttl {
        Some(ttl) => json!({"ttl": ttl}),
        None => json!({}),
    };
    let params = json!({"name": tool, "arguments": {}, "task": task});
    client.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})).await;
    let answer = client.recv().await;
    assert_eq!(answer["id"], id, "{answer}");
    let result = answer.get("result").unwrap_or_else(|| panic!("no task: {answer}"));
    validate(REV, "CreateTaskResult", result);
    result["task"].clone()
}

/// The next frame that is not a task status notification, and the statuses seen before it.
async fn next_skipping_status(client: &mut Session) -> (Value, Vec<String>) {
    let mut statuses = Vec::new();
    loop {
        let frame = client.recv().await;
        if frame["method"] == "notifications/tasks/status" {
            validate(REV, "TaskStatusNotification", &frame);
            statuses.push(frame["params"]["status"].as_str().unwrap().to_owned());
            continue;
        }
        return (frame, statuses);
    }
}

/// Waits for the status notification of `task` saying `status`.
async fn status_notification(client: &mut Session, task: &str, status: &str) -> Value {
    loop {
        let frame = client.recv().await;
        if frame["method"] == "notifications/tasks/status" && frame["params"]["taskId"] == task {
            if frame["params"]["status"] == status {
                return frame;
            }
        } else {
            panic!("expected the task's status {status}, got {frame}");
        }
    }
}

#[tokio::test]
async fn the_capability_and_each_tools_task_support_are_declared() {
    let server = server_with(None, Arc::new(Notify::new()));
    let (mut client, init) = initialize(&server, REV).await;
    assert_eq!(init["capabilities"]["tasks"], json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}));
    let tools = client.result("tools/list", json!({})).await;
    let support = |name: &str| {
        let tool = tools["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap();
        tool["execution"]["taskSupport"].clone()
    };
    assert_eq!(support("slow"), "optional");
    assert_eq!(support("required"), "required");
    assert_eq!(support("plain"), Value::Null);
    // Without task tools and without `tasks(..)`, no capability.
    let bare = Server::builder("bare", "1").tool(plain("plain", "x")).build().unwrap();
    let (_, init) = initialize(&bare, REV).await;
    assert!(init["capabilities"].get("tasks").is_none(), "{init}");
}

#[tokio::test]
async fn a_task_runs_in_the_background_and_its_result_waits_for_it() {
    let gate = Arc::new(Notify::new());
    let server = server_with(None, gate.clone());
    let mut client = connect(&server, REV).await;
    let task = start_task(&mut client, "slow", Some(60_000)).await;
    let id = task["taskId"].as_str().unwrap().to_owned();
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60_000);
    assert_eq!(task["pollInterval"], 1000);

    let got = client.result("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["status"], "working");
    let listed = client.result("tasks/list", json!({})).await;
    assert_eq!(listed["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(listed["tasks"][0]["taskId"], id.as_str());

    // tasks/result blocks until the task is done.
    client.next += 1;
    let waiting = client.next;
    client.send(json!({"jsonrpc": "2.0", "id": waiting, "method": "tasks/result", "params": {"taskId": id}})).await;
    client.wire.expect_silence(900).await;
    gate.notify_one();
    let (answer, statuses) = next_skipping_status(&mut client).await;
    assert_eq!(answer["id"], waiting, "{answer}");
    let result = &answer["result"];
    validate(REV, "CallToolResult", result);
    assert_eq!(result["content"][0]["text"], "done");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/related-task"], json!({"taskId": id}));
    assert!(statuses.iter().all(|s| s == "completed"), "{statuses:?}");

    let got = client.result("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["status"], "completed");
    // The result stays there to be read again.
    let again = client.result("tasks/result", json!({"taskId": id})).await;
    assert_eq!(again["content"][0]["text"], "done");
}

#[tokio::test]
async fn a_tool_error_fails_the_task_and_its_result_says_why() {
    let server = server_with(None, Arc::new(Notify::new()));
    let mut client = connect(&server, REV).await;
    let task = start_task(&mut client, "fails", None).await;
    let id = task["taskId"].as_str().unwrap();
    assert_eq!(task["ttl"], 300_000, "the default ttl");
    let failed = status_notification(&mut client, id, "failed").await;
    assert_eq!(failed["params"]["statusMessage"], "the build broke", "{failed}");
    let task = client.result("tasks/get", json!({"taskId": id})).await;
    assert_eq!(task["statusMessage"], "the build broke", "{task}");
    let result = client.result("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["isError"], true);
    assert_eq!(result["content"][0]["text"], "the build broke");
}

#[tokio::test]
async fn task_support_is_enforced_with_method_not_found() {
    let server = server_with(None, Arc::new(Notify::new()));
    let mut client = connect(&server, REV).await;
    let e = client.error("tools/call", json!({"name": "plain", "arguments": {}, "task": {}})).await;
    assert_eq!(e["code"], -32601, "{e}");
    let e = client.error("tools/call", json!({"name": "required", "arguments": {}})).await;
    assert_eq!(e["code"], -32601, "{e}");
    let task = start_task(&mut client, "required", None).await;
    let id = task["taskId"].as_str().unwrap();
    status_notification(&mut client, id, "completed").await;
    let result = client.result("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["content"][0]["text"], "ok");
}

#[tokio::test]
async fn unknown_ids_and_cancelling_a_finished_task_are_invalid_params() {
    let server = server_with(None, Arc::new(Notify::new()));
    let mut client = connect(&server, REV).await;
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let e = client.error(method, json!({"taskId": "no-such-task"})).await;
        assert_eq!(e["code"], -32602, "{method}: {e}");
    }
    let e = client.error("tasks/get", json!({})).await;
    assert_eq!(e["code"], -32602, "{e}");
    let task = start_task(&mut client, "required", None).await;
    let id = task["taskId"].as_str().unwrap();
    status_notification(&mut client, id, "completed").await;
    let e = client.error("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(e["code"], -32602, "{e}");
    let e = client.error("tasks/list", json!({"cursor": "bogus"})).await;
    assert_eq!(e["code"], -32602, "{e}");
}

#[tokio::test]
async fn cancelling_a_running_task_stops_its_handler_and_the_status_stays_cancelled() {
    let gate = Arc::new(Notify::new());
    let server = server_with(None, gate.clone());
    let mut client = connect(&server, REV).await;
    let task = start_task(&mut client, "slow", None).await;
    let id = task["taskId"].as_str().unwrap().to_owned();
    client.next += 1;
    let cancel = client.next;
    client.send(json!({"jsonrpc": "2.0", "id": cancel, "method": "tasks/cancel", "params": {"taskId": id}})).await;
    let (answer, statuses) = next_skipping_status(&mut client).await;
    assert_eq!(answer["id"], cancel, "{answer}");
    validate(REV, "CancelTaskResult", &answer["result"]);
    assert_eq!(answer["result"]["status"], "cancelled");
    assert!(statuses.iter().all(|s| s == "cancelled"), "{statuses:?}");
    // The handler saw the cancellation and returned; the task stays cancelled.
    let e = client.error("tasks/result", json!({"taskId": id})).await;
    assert!(e["message"].as_str().unwrap().contains("cancelled"), "{e}");
    assert_eq!(client.result("tasks/get", json!({"taskId": id})).await["status"], "cancelled");
    gate.notify_one();
    client.wire.expect_silence(901).await;
    assert_eq!(client.result("tasks/get", json!({"taskId": id})).await["status"], "cancelled");
}

/// A handler that never looks at its cancellation token is stopped all the same: its future
/// is dropped (as a cancelled request's is), not left running.
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
            Ok::<_, ToolError>(CallToolResult::success(vec![]))
        }
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let server = Server::builder("tasks-test", "1.0.0").tool(stubborn).build().unwrap();
    let mut client = connect(&server, REV).await;
    let task = start_task(&mut client, "stubborn", None).await;
    let id = task["taskId"].as_str().unwrap().to_owned();
    client.next += 1;
    let cancel = client.next;
    client.send(json!({"jsonrpc": "2.0", "id": cancel, "method": "tasks/cancel", "params": {"taskId": id}})).await;
    let (answer, _) = next_skipping_status(&mut client).await;
    assert_eq!(answer["result"]["status"], "cancelled", "{answer}");
    tokio::time::timeout(Duration::from_secs(10), dropped)
        .await
        .expect("the cancelled task's handler still runs")
        .unwrap();
}

#[tokio::test]
async fn another_session_cannot_see_or_touch_a_task() {
    let gate = Arc::new(Notify::new());
    let server = server_with(None, gate.clone());
    let mut alice = connect(&server, REV).await;
    let mut bob = connect(&server, REV).await;
    let task = start_task(&mut alice, "slow", None).await;
    let id = task["taskId"].as_str().unwrap().to_owned();
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let e = bob.error(method, json!({"taskId": id})).await;
        assert_eq!(e["code"], -32602, "{method}: {e}");
    }
    assert_eq!(bob.result("tasks/list", json!({})).await["tasks"], json!([]));
    assert_eq!(alice.result("tasks/get", json!({"taskId": id})).await["status"], "working");
    assert!(id.len() >= 22, "a guessable id: {id}");
}

#[tokio::test]
async fn with_two_input_requests_open_the_task_stays_input_required_until_both_are_answered() {
    let server = server_with(None, Arc::new(Notify::new()));
    let mut client = connect(&server, REV).await;
    let id = start_task(&mut client, "asks_two", None).await["taskId"].as_str().unwrap().to_owned();
    let (first, mut statuses) = next_skipping_status(&mut client).await;
    let (second, more) = next_skipping_status(&mut client).await;
    statuses.extend(more);
    assert_eq!(
        (first["method"].as_str(), second["method"].as_str()),
        (Some("elicitation/create"), Some("elicitation/create"))
    );
    let answer = |request: &Value| json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}});
    client.send(answer(&first)).await;
    // Answered one: still waiting for the other.
    assert_eq!(client.result("tasks/get", json!({"taskId": id})).await["status"], "input_required");
    client.send(answer(&second)).await;
    loop {
        let frame = client.recv().await;
        if frame["method"] == "notifications/tasks/status" {
            let status = frame["params"]["status"].as_str().unwrap().to_owned();
            statuses.push(status.clone());
            if status == "completed" {
                break;
            }
        }
    }
    // `working` once, when neither is open any more.
    assert_eq!(statuses, ["input_required", "working", "completed"]);
}

#[tokio::test]
async fn input_asked_inside_a_task_moves_it_to_input_required_and_names_the_task() {
    let server = server_with(None, Arc::new(Notify::new()));
    let mut client = connect(&server, REV).await;
    let task = start_task(&mut client, "asks", None).await;
    let id = task["taskId"].as_str().unwrap().to_owned();
    let (request, statuses) = next_skipping_status(&mut client).await;
    assert_eq!(statuses, ["input_required"]);
    assert_eq!(request["method"], "elicitation/create", "{request}");
    assert_eq!(request["params"]["_meta"]["io.modelcontextprotocol/related-task"], json!({"taskId": id}));
    assert_eq!(client.result("tasks/get", json!({"taskId": id})).await["status"], "input_required");
    client
        .send(
            json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}),
        )
        .await;
    let done = status_notification(&mut client, &id, "completed").await;
    assert_eq!(done["params"]["taskId"], id.as_str());
    let result = client.result("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["content"][0]["text"], "hello String(\"Ada\")");
}

#[tokio::test]
async fn ttls_are_clamped_and_a_full_store_refuses_new_tasks() {
    let config = TaskConfig::new().store(MemoryTaskStore::new(2)).max_ttl(Duration::from_secs(600));
    let server = server_with(Some(config), Arc::new(Notify::new()));
    let mut client = connect(&server, REV).await;
    assert_eq!(start_task(&mut client, "slow", Some(0)).await["ttl"], 1000);
    assert_eq!(start_task(&mut client, "slow", Some(i64::MAX)).await["ttl"], 600_000);
    let e = client.error("tools/call", json!({"name": "slow", "arguments": {}, "task": {}})).await;
    assert_eq!(e["code"], -32603, "{e}");
    assert!(e["message"].as_str().unwrap().contains("too many tasks"), "{e}");
}

#[tokio::test]
async fn before_2025_11_25_the_task_member_is_ignored_and_the_methods_do_not_exist() {
    let server = server_with(None, Arc::new(Notify::new()));
    let mut client = connect(&server, "2025-06-18").await;
    let result = client.result("tools/call", json!({"name": "required", "arguments": {}, "task": {}})).await;
    assert_eq!(result["content"][0]["text"], "ok");
    let e = client.error("tasks/list", json!({})).await;
    assert_eq!(e["code"], -32601, "{e}");
}

#[tokio::test]
async fn the_logs_and_progress_of_a_task_name_it() {
    let server = server_with(None, Arc::new(Notify::new()));
    let mut client = connect(&server, REV).await;
    client.next += 1;
    let id = client.next;
    let params = json!({"name": "chatty", "arguments": {}, "task": {}, "_meta": {"progressToken": "p1"}});
    client.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})).await;
    let mut task_id = None;
    let mut seen = Vec::new();
    while seen.len() < 2 || task_id.is_none() {
        let frame = client.recv().await;
        if frame["id"] == id {
            task_id = Some(frame["result"]["task"]["taskId"].as_str().unwrap().to_owned());
            continue;
        }
        match frame["method"].as_str() {
            Some("notifications/message") | Some("notifications/progress") => seen.push(frame),
            _ => {}
        }
    }
    let task_id = task_id.unwrap();
    for frame in seen {
        assert_eq!(
            frame["params"]["_meta"]["io.modelcontextprotocol/related-task"],
            json!({"taskId": task_id}),
            "{frame}"
        );
    }
}

#[tokio::test]
async fn a_task_member_that_is_not_an_object_is_invalid_params() {
    let server = server_with(None, Arc::new(Notify::new()));
    let mut client = connect(&server, REV).await;
    let e = client.error("tools/call", json!({"name": "slow", "arguments": {}, "task": 5})).await;
    assert_eq!(e["code"], -32602, "{e}");
}
