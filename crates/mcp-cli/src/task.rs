//! A tool call run as a task (`mcp call --task`, or a tool whose `execution.taskSupport` is
//! `required`): the call answered with a task, then polled until it is over; Ctrl-C cancels
//! the task (`tasks/cancel`).

use std::time::Duration;

use mcp_sdk::client::tasks::ToolTask;
use mcp_sdk::client::{CallOptions, Client};
use mcp_types::{CallToolRequestParams, CallToolResult, ErrorCode, ErrorObject, Tool, ToolExecutionTaskSupport};

use crate::session::Failure;
use crate::ui::Ui;

/// How long `tasks/cancel` may take after Ctrl-C.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// Whether `tool` must be called as a task.
pub fn required(tool: &Tool) -> bool {
    let support = tool.execution.as_ref().and_then(|e| e.task_support.as_ref());
    matches!(support, Some(ToolExecutionTaskSupport::Required))
}

/// Whether the server refused a plain call because the tool must run as a task: -32021
/// (missing required client capability) naming the tasks extension.
pub fn needed(error: &ErrorObject) -> bool {
    error.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY.0 && error.message.contains("tasks")
}

/// Calls the tool as a task and waits for its result; Ctrl-C (`interrupt`) cancels it.
pub async fn call(
    client: &Client,
    params: CallToolRequestParams,
    options: CallOptions,
    ui: &Ui,
    interrupt: &mcp_sdk::jsonrpc::CancellationToken,
) -> Result<CallToolResult, Failure> {
    let started = tokio::select! {
        answer = client.call_tool_as_task_with(params, options) => answer?,
        () = interrupt.cancelled() => return Err(Failure::interrupted()),
    };
    let task = match started {
        ToolTask::Running(task) => task,
        ToolTask::Done(result) => return Ok(result),
        other => return Err(Failure::server(format!("an answer this tool does not know: {other:?}"))),
    };
    ui.eprintln(&format!("task {} {}", task.task_id, task.status.as_str()));
    tokio::select! {
        result = client.wait_for_task(&task.task_id) => Ok(result?),
        () = interrupt.cancelled() => {
            if let Ok(Err(e)) = tokio::time::timeout(CANCEL_GRACE, client.cancel_task(&task.task_id)).await {
                ui.eprintln(&format!("the task could not be cancelled: {e}"));
            }
            Err(Failure::interrupted())
        }
    }
}
