//! Our client's task API (protocol revision 2025-11-25) against our server over the in-memory
//! transport: a tool called as a task, polled, awaited, listed and cancelled; input asked
//! inside a task answered by the client's handler; status events; servers without tasks.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_client::{ClientBuilder, ClientError, ServerEvent};
use mcp_jsonrpc::transport::memory;
use mcp_server::{Context, Server, TaskSupport, ToolDef, ToolError};
use mcp_types::{
    CallToolResult, ContentBlock, ElicitAction, ElicitRequestParams, ElicitResult, ElicitResultContentValue, TaskStatus,
};
use serde_json::json;
use tokio::sync::Notify;

fn server(gate: Arc<Notify>) -> Server {
    let steps_gate = gate.clone();
    let slow = ToolDef::new("slow", json!({"type": "object"}), move |_args, ctx: Context| {
        let gate = gate.clone();
        async move {
            tokio::select! {
                () = gate.notified() => Ok(CallToolResult::success(vec![ContentBlock::text("built")])),
                () = ctx.cancellation().cancelled() => Err(ToolError::new("cancelled")),
            }
        }
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let asks = ToolDef::new("asks", json!({"type": "object"}), |_args, ctx: Context| async move {
        let form: ElicitRequestParams = serde_json::from_value(json!({"message": "Name?", "requestedSchema":
            {"type": "object", "properties": {"name": {"type": "string"}}}}))
        .unwrap();
        let answer = ctx.elicit_raw(form).await.map_err(ToolError::new)?;
        let name = match answer.content.unwrap_or_default().remove("name") {
            Some(ElicitResultContentValue::String(name)) => name,
            other => format!("{other:?}"),
        };
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!("hello {name}"))]))
    })
    .unwrap()
    .task_support(TaskSupport::Required);
    // Reports its progress once the gate opens: after the call that created its task was answered.
    let steps = ToolDef::new("steps", json!({"type": "object"}), move |_args, ctx: Context| {
        let gate = steps_gate.clone();
        async move {
            gate.notified().await;
            for step in 1..=3 {
                ctx.progress(f64::from(step)).total(3.0).message(format!("step {step}")).await;
            }
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("3 steps")]))
        }
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    Server::builder("tasks", "1").tool(slow).tool(asks).tool(steps).build().unwrap()
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("cli", "1").on_elicitation(|_params: ElicitRequestParams| async move {
        let mut r = ElicitResult::new(ElicitAction::Accept);
        r.content = Some(BTreeMap::from([("name".to_owned(), ElicitResultContentValue::String("Ada".into()))]));
        Ok(r)
    })
}

async fn connect(server: &Server) -> mcp_client::Client {
    let (a, b) = memory(256);
    server.connect(a);
    builder().session_revisions_only().connect(b).await.unwrap()
}

#[tokio::test]
async fn a_tool_called_as_a_task_is_polled_listed_and_awaited() {
    let gate = Arc::new(Notify::new());
    let client = connect(&server(gate.clone())).await;
    assert!(client.supports_tool_tasks());
    let mut events = client.events();
    let task = client
        .call_tool_as_task("slow", json!({}), Some(std::time::Duration::from_secs(90)))
        .await
        .unwrap()
        .task()
        .cloned()
        .expect("a task");
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!(task.ttl, Some(90_000));
    assert_eq!(client.get_task(&task.task_id).await.unwrap().status, TaskStatus::Working);
    let listed = client.list_tasks(None).await.unwrap();
    assert_eq!(listed.tasks.len(), 1);
    // 2025-11-25 has no subscriptions: status changes are events of the connection.
    assert!(matches!(client.follow_tasks(&[&task.task_id]).await, Err(ClientError::NotSupported("tasks"))));
    gate.notify_one();
    let result = client.wait_for_task(&task.task_id).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("built"));
    // The status notification came as an event.
    loop {
        match events.recv().await.unwrap() {
            ServerEvent::TaskStatus(t) if t.task_id == task.task_id => {
                assert_eq!(t.status, TaskStatus::Completed);
                break;
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_tasks_progress_reaches_the_callback_of_the_call_that_created_it() {
    let gate = Arc::new(Notify::new());
    let client = connect(&server(gate.clone())).await;
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = mcp_client::CallOptions::default()
        .on_progress(move |p| sink.lock().unwrap().push((p.progress, p.message.unwrap_or_default())));
    let task = client
        .call_tool_as_task_with(mcp_types::CallToolRequestParams::new("steps"), options)
        .await
        .unwrap()
        .task()
        .cloned()
        .expect("a task");
    gate.notify_one();
    let result = client.wait_for_task(&task.task_id).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("3 steps"));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, [(1.0, "step 1".to_owned()), (2.0, "step 2".to_owned()), (3.0, "step 3".to_owned())]);
}

#[tokio::test]
async fn a_cancelled_task_stays_cancelled_and_cancelling_again_fails() {
    let client = connect(&server(Arc::new(Notify::new()))).await;
    let task = client.call_tool_as_task("slow", json!({}), None).await.unwrap().task().cloned().expect("a task");
    let cancelled = client.cancel_task(&task.task_id).await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(client.get_task(&task.task_id).await.unwrap().status, TaskStatus::Cancelled);
    match client.cancel_task(&task.task_id).await {
        Err(ClientError::Remote(e)) => assert_eq!(e.code, -32602, "{e:?}"),
        other => panic!("cancelled twice: {other:?}"),
    }
    assert!(client.wait_for_task(&task.task_id).await.is_err(), "a cancelled task has no result");
}

#[tokio::test]
async fn waiting_for_a_task_gives_up_after_its_timeout_or_its_token_and_the_task_runs_on() {
    let gate = Arc::new(Notify::new());
    let server = server(gate.clone());
    for stateless in [false, true] {
        let (a, b) = memory(256);
        server.connect(a);
        let client = match stateless {
            false => builder().session_revisions_only().connect(b).await.unwrap(),
            true => builder().connect(b).await.unwrap(),
        };
        let task = client.call_tool_as_task("slow", json!({}), None).await.unwrap().task().cloned().unwrap();
        let timeout = std::time::Duration::from_millis(50);
        match client.wait_for_task_with(&task.task_id, Some(timeout), None).await {
            Err(ClientError::Timeout { elapsed, .. }) => assert_eq!(elapsed, timeout),
            other => panic!("waited past the timeout: {other:?}"),
        }
        let token = mcp_jsonrpc::CancellationToken::new();
        // Polled first (the wait begins), then the token fires.
        let (waited, ()) =
            tokio::join!(client.wait_for_task_with(&task.task_id, None, Some(&token)), async { token.cancel() });
        match waited {
            Err(ClientError::Cancelled) => {}
            other => panic!("waited past the token: {other:?}"),
        }
        // The task runs on: its result is still to come.
        assert_eq!(client.get_task(&task.task_id).await.unwrap().status, TaskStatus::Working);
        gate.notify_one();
        let result = client.wait_for_task(&task.task_id).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("built"));
    }
}

#[tokio::test]
async fn the_elicitation_handler_is_told_which_task_asks() {
    let server = server(Arc::new(Notify::new()));
    for stateless in [false, true] {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = seen.clone();
        let builder = ClientBuilder::new("cli", "1").on_elicitation(move |params: ElicitRequestParams| {
            let params = serde_json::to_value(&params).unwrap();
            record.lock().unwrap().push(params["_meta"]["io.modelcontextprotocol/related-task"].clone());
            async move {
                let mut r = ElicitResult::new(ElicitAction::Accept);
                r.content = Some(BTreeMap::from([("name".to_owned(), ElicitResultContentValue::String("Ada".into()))]));
                Ok(r)
            }
        });
        let (a, b) = memory(256);
        server.connect(a);
        let client = match stateless {
            false => builder.session_revisions_only().connect(b).await.unwrap(),
            true => builder.connect(b).await.unwrap(),
        };
        let task = client.call_tool_as_task("asks", json!({}), None).await.unwrap().task().cloned().unwrap();
        let result = client.wait_for_task(&task.task_id).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("hello Ada"));
        assert_eq!(*seen.lock().unwrap(), [json!({"taskId": task.task_id})], "stateless: {stateless}");
    }
}

#[tokio::test]
async fn input_a_task_needs_is_answered_by_the_clients_handler() {
    let client = connect(&server(Arc::new(Notify::new()))).await;
    let task = client.call_tool_as_task("asks", json!({}), None).await.unwrap().task().cloned().expect("a task");
    let result = client.wait_for_task(&task.task_id).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("hello Ada"));
    // A tool that must run as a task refuses a plain call.
    match client.call_tool("asks", json!({})).await {
        Err(ClientError::Remote(e)) => assert_eq!(e.code, -32601, "{e:?}"),
        other => panic!("a plain call of a task-only tool: {other:?}"),
    }
}

#[tokio::test]
async fn a_server_without_tasks_is_told_apart() {
    let server = Server::builder("plain", "1")
        .tool(
            ToolDef::new("t", json!({"type": "object"}), |_a, _c| async {
                Ok::<_, ToolError>(CallToolResult::success(vec![]))
            })
            .unwrap(),
        )
        .build()
        .unwrap();
    let client = connect(&server).await;
    assert!(!client.supports_tool_tasks());
    assert!(matches!(client.call_tool_as_task("t", json!({}), None).await, Err(ClientError::NotSupported("tasks"))));
    assert!(matches!(client.list_tasks(None).await, Err(ClientError::NotSupported("tasks"))));
}

/// The client as the receiver of tasks: a raw server makes its sampling request a task, polls
/// it and reads its result; lists, cancels and misuses it.
#[tokio::test]
async fn the_servers_sampling_request_runs_as_a_task_of_the_client() {
    use mcp_jsonrpc::{CallOptions, Peer, PeerConfig, Router};
    use mcp_types::{
        CreateMessageRequestParams, CreateMessageResult, Implementation, InitializeRequest, InitializeResult, Role,
        SamplingContent, ServerCapabilities, TextContent,
    };
    let (a, b) = memory(64);
    let (init_tx, init_rx) = tokio::sync::oneshot::channel();
    let init_tx = std::sync::Mutex::new(Some(init_tx));
    let router = Router::new().request::<InitializeRequest, _, _>(move |params, _ctx| {
        if let Some(tx) = init_tx.lock().unwrap().take() {
            let _ = tx.send(params.capabilities.clone());
        }
        async {
            Ok(InitializeResult::new(ServerCapabilities::default(), "2025-11-25", Implementation::new("raw", "0")))
        }
    });
    let server = Peer::spawn(a, Arc::new(router), PeerConfig::default());
    let gate = Arc::new(Notify::new());
    let answer_gate = gate.clone();
    let client = ClientBuilder::new("cli", "1")
        .session_revisions_only()
        .input_tasks()
        .on_sampling(move |_params: CreateMessageRequestParams| {
            let gate = answer_gate.clone();
            async move {
                gate.notified().await;
                Ok(CreateMessageResult::new(Role::Assistant, SamplingContent::Text(TextContent::new("4")), "m"))
            }
        })
        .connect(b)
        .await
        .unwrap();
    let declared = serde_json::to_value(init_rx.await.unwrap()).unwrap();
    assert_eq!(declared["tasks"], json!({"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}}}));

    let request = |method: &'static str, params: serde_json::Value| {
        let server = server.clone();
        async move { server.request_raw(method, Some(&params), CallOptions::default()).await }
    };
    let params = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
                        "maxTokens": 5, "task": {"ttl": 60000}});
    let created: serde_json::Value =
        serde_json::from_str(request("sampling/createMessage", params).await.unwrap().get()).unwrap();
    let id = created["task"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(created["task"]["status"], "working");
    let got: serde_json::Value =
        serde_json::from_str(request("tasks/get", json!({"taskId": id})).await.unwrap().get()).unwrap();
    assert_eq!(got["status"], "working");
    let listed: serde_json::Value =
        serde_json::from_str(request("tasks/list", json!({})).await.unwrap().get()).unwrap();
    assert_eq!(listed["tasks"][0]["taskId"], id.as_str());
    gate.notify_one();
    let result: serde_json::Value =
        serde_json::from_str(request("tasks/result", json!({"taskId": id})).await.unwrap().get()).unwrap();
    assert_eq!(result["content"]["text"], "4");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], id.as_str());
    let got: serde_json::Value =
        serde_json::from_str(request("tasks/get", json!({"taskId": id})).await.unwrap().get()).unwrap();
    assert_eq!(got["status"], "completed");
    for (method, task) in [("tasks/cancel", id.as_str()), ("tasks/get", "no-such-task")] {
        match request(method, json!({"taskId": task})).await {
            Err(mcp_jsonrpc::CallError::Remote(e)) => assert_eq!(e.code, -32602, "{method}: {e:?}"),
            other => panic!("{method}: {other:?}"),
        }
    }
    // A plain request is answered as before.
    let params = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 5});
    gate.notify_one();
    let plain: serde_json::Value =
        serde_json::from_str(request("sampling/createMessage", params).await.unwrap().get()).unwrap();
    assert_eq!(plain["content"]["text"], "4");
    drop(client);
}

/// The same calls in 2026-07-28, where tasks are the extension `io.modelcontextprotocol/tasks`:
/// the call declares it, `tasks/get` carries the result or the input the task waits for,
/// which the client answers with `tasks/update`.
#[tokio::test]
async fn in_2026_07_28_the_same_calls_speak_the_tasks_extension() {
    use mcp_client::tasks::ToolTask;
    let gate = Arc::new(Notify::new());
    let server = server(gate.clone());
    let (a, b) = memory(256);
    server.connect(a);
    let client = builder().connect(b).await.unwrap();
    assert!(client.protocol_version().is_stateless(), "{}", client.protocol_version());
    assert!(client.supports_tool_tasks());

    let ToolTask::Running(task) = client.call_tool_as_task("slow", json!({}), None).await.unwrap() else {
        panic!("no task")
    };
    assert_eq!(task.status, TaskStatus::Working);
    assert!(task.ttl.is_some(), "ttlMs read as the ttl");
    // A ttl asked is granted (the server's default is 5 minutes).
    let asked = client.call_tool_as_task("slow", json!({}), Some(std::time::Duration::from_secs(42))).await.unwrap();
    assert_eq!(asked.task().and_then(|t| t.ttl), Some(42_000), "{asked:?}");
    client.cancel_task(&asked.task().unwrap().task_id).await.unwrap();
    assert_eq!(client.get_task(&task.task_id).await.unwrap().status, TaskStatus::Working);
    // Followed through subscriptions/listen: its end comes as an event.
    let mut followed = client.follow_tasks(&[&task.task_id]).await.unwrap();
    gate.notify_one();
    match followed.next().await {
        Some(ServerEvent::TaskStatus(t)) => {
            assert_eq!(t.task_id, task.task_id);
            assert_eq!(t.status, TaskStatus::Completed);
        }
        other => panic!("expected the task's status, got {other:?}"),
    }
    drop(followed);
    let result = client.wait_for_task(&task.task_id).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("built"));

    // Input inside the task: answered by the handler through tasks/update.
    let asked = client.call_tool_as_task("asks", json!({}), None).await.unwrap();
    let task = asked.task().cloned().expect("a task");
    let result = client.wait_for_task(&task.task_id).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("hello Ada"));

    // Cancelled: acknowledged, and the task says so.
    let slow = client.call_tool_as_task("slow", json!({}), None).await.unwrap();
    let task = slow.task().cloned().expect("a task");
    assert_eq!(client.cancel_task(&task.task_id).await.unwrap().status, TaskStatus::Cancelled);
    // No result and no JSON-RPC error: the call was cancelled, not failed by the server.
    match client.wait_for_task(&task.task_id).await {
        Err(ClientError::Cancelled) => {}
        other => panic!("a cancelled task waited for: {other:?}"),
    }

    // A tool that must be a task, called plainly (without the extension): -32021.
    match client.call_tool("asks", json!({})).await {
        Err(ClientError::Remote(e)) => assert_eq!(e.code, -32021, "{e:?}"),
        other => panic!("a plain call of a task-only tool: {other:?}"),
    }
    // The methods the extension removed.
    assert!(matches!(client.list_tasks(None).await, Err(ClientError::NotSupported("tasks"))));
    assert!(matches!(client.task_result("t", Default::default()).await, Err(ClientError::NotSupported("tasks"))));
    match client.get_task("no-such-task").await {
        Err(ClientError::Remote(e)) => assert_eq!(e.code, -32602, "{e:?}"),
        other => panic!("an unknown task: {other:?}"),
    }
}

/// `call_tool_as_task_and_wait`: a name, JSON arguments and options, as `call_tool` takes, and
/// the task's result; its progress reaches the callback of the options.
#[tokio::test]
async fn a_task_call_with_progress_takes_the_shape_of_call_tool() {
    let gate = Arc::new(Notify::new());
    let server = server(gate.clone());
    for stateless in [false, true] {
        let (a, b) = memory(256);
        server.connect(a);
        let client = match stateless {
            false => builder().session_revisions_only().connect(b).await.unwrap(),
            true => builder().connect(b).await.unwrap(),
        };
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = seen.clone();
        let options = mcp_client::CallOptions::default().on_progress(move |p| sink.lock().unwrap().push(p.progress));
        // The permit is kept until the tool waits for it.
        gate.notify_one();
        let result = client.call_tool_as_task_and_wait("steps", json!({}), options).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("3 steps"), "stateless: {stateless}");
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0], "stateless: {stateless}");
        let result = client.call_tool_as_task_and_wait("asks", json!({}), Default::default()).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("hello Ada"), "stateless: {stateless}");
    }
}

/// Its timeout or its token gives up the wait and cancels the task, as they cancel a plain
/// call (virtual time: the timeout and the token's moment are exact).
#[tokio::test(start_paused = true)]
async fn a_task_call_given_up_on_cancels_its_task() {
    // `waits` runs until cancelled; it says which task it runs as.
    let running = Arc::new(std::sync::Mutex::new(None::<String>));
    let told = running.clone();
    let waits = ToolDef::new("waits", json!({"type": "object"}), move |_args, ctx: Context| {
        *told.lock().unwrap() = ctx.task_id().map(str::to_owned);
        async move {
            ctx.cancellation().cancelled().await;
            Err::<CallToolResult, _>(ToolError::new("cancelled"))
        }
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    let server = Server::builder("tasks", "1").tool(waits).build().unwrap();
    for stateless in [false, true] {
        let (a, b) = memory(256);
        server.connect(a);
        let client = match stateless {
            false => builder().session_revisions_only().connect(b).await.unwrap(),
            true => builder().connect(b).await.unwrap(),
        };
        let task = || running.lock().unwrap().take().expect("the tool ran as a task");
        let timeout = std::time::Duration::from_secs(30);
        let options = mcp_client::CallOptions::default().timeout(timeout);
        match client.call_tool_as_task_and_wait("waits", json!({}), options).await {
            Err(ClientError::Timeout { elapsed, .. }) => assert_eq!(elapsed, timeout, "stateless: {stateless}"),
            other => panic!("stateless: {stateless}: {other:?}"),
        }
        let status = client.get_task(&task()).await.unwrap().status;
        assert_eq!(status, TaskStatus::Cancelled, "stateless: {stateless}");
        let token = mcp_jsonrpc::CancellationToken::new();
        let fire = token.clone();
        let options = mcp_client::CallOptions::default().cancel_on(token);
        let (given_up, ()) = tokio::join!(client.call_tool_as_task_and_wait("waits", json!({}), options), async move {
            tokio::time::sleep(std::time::Duration::from_secs(10)).await;
            fire.cancel();
        });
        assert!(matches!(given_up, Err(ClientError::Cancelled)), "stateless: {stateless}: {given_up:?}");
        let status = client.get_task(&task()).await.unwrap().status;
        assert_eq!(status, TaskStatus::Cancelled, "stateless: {stateless}");
    }
}
