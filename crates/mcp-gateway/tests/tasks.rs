//! Tasks through a gateway: a mounted tool that its server runs as a task is listed with its
//! `execution`, called as a task through the gateway (the mounted server's task, under an id
//! that names the mount), and its task is read, waited for, listed and cancelled through the
//! gateway, at 2025-11-25 (a session's tasks) and 2026-07-28 (the tasks extension).

use std::sync::Arc;

use mcp_client::ClientError;
use mcp_client::tasks::ToolTask;
use mcp_server::{Context, Server, TaskSupport, ToolDef, ToolError};
use mcp_types::{CallToolResult, ContentBlock, ProtocolVersion, TaskStatus, ToolExecutionTaskSupport};
use serde_json::json;
use tokio::sync::Semaphore;

/// A server whose tool `slow` (runnable as a task) answers "done" once `release` has a permit.
fn slow_server(release: &Arc<Semaphore>) -> Server {
    let release = release.clone();
    let tool = ToolDef::new("slow", json!({"type": "object"}), move |_args, _ctx: Context| {
        let release = release.clone();
        async move {
            release.acquire().await.unwrap().forget();
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("done")]))
        }
    })
    .unwrap()
    .task_support(TaskSupport::Optional);
    Server::builder("local", "1.0").tool(tool).build().unwrap()
}

/// The text of a result's first content block.
fn text(result: &CallToolResult) -> &str {
    result.content[0].as_text().expect("a text block")
}

/// A gateway mounting the slow server as `local` (its connections to it at `pinned`, else at
/// the client's default revision), and a client of the gateway at `version`: the tool's task
/// created, read, waited for, listed (2025-11-25), cancelled through the gateway.
async fn tasks_pass_through(version: ProtocolVersion, pinned: Option<ProtocolVersion>) {
    let release = Arc::new(Semaphore::new(0));
    let mut source = mcp_gateway::Source::local(slow_server(&release));
    if let Some(pinned) = pinned {
        source = source.configure(move |b| b.protocol_version(pinned));
    }
    let gateway = mcp_gateway::Gateway::builder("gateway", "1.0").mount("local", source).build().await.unwrap();
    if !version.is_stateless() {
        // The tool's task support is listed to a session revision's clients, however the
        // mounted server was read (its 2026-07-28 list carries none).
        let support = gateway.tools()[0].execution.as_ref().and_then(|e| e.task_support.clone());
        assert_eq!(support, Some(ToolExecutionTaskSupport::Optional), "listed without its execution");
    }
    let (ours, theirs) = mcp_jsonrpc::transport::memory(64);
    gateway.connect(theirs);
    let client = mcp_client::ClientBuilder::new("test", "1").protocol_version(version).connect(ours).await.unwrap();
    assert!(client.supports_tool_tasks(), "the gateway does not declare tasks");

    // Created: the mounted server's task, its id naming the mount.
    let task = match client.call_tool_as_task("local_slow", json!({}), None).await.unwrap() {
        ToolTask::Running(task) => task,
        other => panic!("not a task: {other:?}"),
    };
    assert!(task.task_id.starts_with("local:"), "{}", task.task_id);
    assert_eq!(client.get_task(&task.task_id).await.unwrap().status, TaskStatus::Working);
    if !version.is_stateless() {
        let listed = client.list_tasks(None).await.unwrap();
        assert!(listed.tasks.iter().any(|t| t.task_id == task.task_id), "{listed:?}");
    }
    // Its result, once the tool is let go.
    release.add_permits(1);
    let result = client.wait_for_task(&task.task_id).await.unwrap();
    assert_eq!(text(&result), "done");
    assert_eq!(client.get_task(&task.task_id).await.unwrap().status, TaskStatus::Completed);

    // Cancelled.
    let task = client.call_tool_as_task("local_slow", json!({}), None).await.unwrap().task().unwrap().clone();
    assert_eq!(client.cancel_task(&task.task_id).await.unwrap().status, TaskStatus::Cancelled);
    assert_eq!(client.get_task(&task.task_id).await.unwrap().status, TaskStatus::Cancelled);

    // A task no mount has is unknown.
    for unknown in ["local:nope", "nope", "other:x"] {
        match client.get_task(unknown).await {
            Err(ClientError::Remote(e)) => assert_eq!(e.code, -32602, "{unknown}: {e:?}"),
            other => panic!("{unknown}: {other:?}"),
        }
    }
    // A plain call of the same tool is still a plain call.
    release.add_permits(1);
    assert_eq!(text(&client.call_tool("local_slow", json!({})).await.unwrap()), "done");
}

#[tokio::test(start_paused = true)]
async fn a_mounted_tools_task_passes_through_the_gateway_in_a_session() {
    tasks_pass_through(ProtocolVersion::V2025_11_25, None).await;
}

#[tokio::test(start_paused = true)]
async fn a_mounted_tools_task_passes_through_the_gateway_in_a_session_with_the_mount_pinned() {
    let version = ProtocolVersion::V2025_11_25;
    tasks_pass_through(version, Some(version)).await;
}

#[tokio::test(start_paused = true)]
async fn a_mounted_tools_task_passes_through_the_gateway_with_the_extension() {
    tasks_pass_through(ProtocolVersion::V2026_07_28, None).await;
}

/// The next task status notification `events` carries (other events skipped).
async fn next_status(events: &mut tokio::sync::broadcast::Receiver<mcp_client::ServerEvent>) -> mcp_types::Task {
    loop {
        if let mcp_client::ServerEvent::TaskStatus(task) = events.recv().await.unwrap() {
            return task;
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_mounted_servers_task_status_reaches_the_session_that_owns_the_task() {
    let release = Arc::new(Semaphore::new(0));
    let source = mcp_gateway::Source::local(slow_server(&release));
    let gateway = mcp_gateway::Gateway::builder("gateway", "1.0").mount("local", source).build().await.unwrap();
    let connect = || {
        let (ours, theirs) = mcp_jsonrpc::transport::memory(64);
        gateway.connect(theirs);
        mcp_client::ClientBuilder::new("test", "1").protocol_version(ProtocolVersion::V2025_11_25).connect(ours)
    };
    let (owner, other) = (connect().await.unwrap(), connect().await.unwrap());
    let (mut owners, mut others) = (owner.events(), other.events());
    // The other session has a connection to the mount of its own.
    assert!(other.get_task("local:nope").await.is_err());

    let task = owner.call_tool_as_task("local_slow", json!({}), None).await.unwrap().task().unwrap().clone();
    release.add_permits(1);
    // The mounted server's notification, under the gateway's id of the task.
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), next_status(&mut owners)).await;
    let status = status.expect("no task status notification");
    assert_eq!((status.task_id.as_str(), status.status), (task.task_id.as_str(), TaskStatus::Completed));

    // The other session hears nothing of it (what its connection got so far is passed on
    // before this answer).
    assert!(other.get_task(&task.task_id).await.is_err());
    loop {
        match others.try_recv() {
            Ok(mcp_client::ServerEvent::TaskStatus(task)) => panic!("another session's task: {task:?}"),
            Ok(_) => continue,
            Err(_) => break,
        }
    }
}
