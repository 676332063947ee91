//! Tasks on the wire: the tasks extension of 2026-07-28 declared in a request's `_meta` and its
//! tasks read from JSON, and requests answered with something else than their own result (a
//! task, the result of the request that made a task).

use mcp_types::{JsonObject, Revisions, Task, TaskStatus, meta};
use serde_json::Value;

use crate::error::{ClientError, Violation};

/// The tasks extension of 2026-07-28 (SEP-2663).
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Declares the tasks extension in the client capabilities of a request's `_meta`.
pub(crate) fn declare_tasks(params: &mut JsonObject) {
    let Some(Value::Object(meta)) = params.get_mut("_meta") else { return };
    let caps = meta.entry(meta::CLIENT_CAPABILITIES.to_owned()).or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(caps) = caps {
        let extensions = caps.entry("extensions").or_insert_with(|| Value::Object(JsonObject::new()));
        if let Value::Object(extensions) = extensions {
            extensions.insert(TASKS_EXTENSION.to_owned(), Value::Object(JsonObject::new()));
        }
    }
}

/// The task of an extension's task (`resultType: "task"`) or detailed task (`tasks/get`).
pub(crate) fn extension_task(method: &str, value: &Value) -> Result<Task, ClientError> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let malformed = || ClientError::protocol(method, Violation::MalformedTask("taskId"));
    let task_id = text("taskId").ok_or_else(malformed)?;
    let status: TaskStatus = serde_json::from_value(value.get("status").cloned().unwrap_or_default())
        .map_err(|e| ClientError::decode(method, e))?;
    let mut task =
        Task::new(text("createdAt").unwrap_or_default(), text("lastUpdatedAt").unwrap_or_default(), status, task_id);
    task.status_message = text("statusMessage");
    task.ttl = value.get("ttlMs").and_then(Value::as_i64);
    task.poll_interval = value.get("pollIntervalMs").and_then(Value::as_i64);
    Ok(task)
}

/// Request `R` answered with `T` instead of its own result: a task-augmented request is
/// answered with the task, `tasks/result` with the result of the request that made the task.
pub(crate) struct AnsweredWith<R, T>(std::marker::PhantomData<(R, T)>);

impl<R, T> mcp_types::Request for AnsweredWith<R, T>
where
    R: mcp_types::Request,
    T: serde::Serialize + mcp_types::WireSerialize + serde::de::DeserializeOwned + Send + 'static,
{
    const METHOD: &'static str = R::METHOD;
    const DIRECTION: mcp_types::Direction = R::DIRECTION;
    const REVISIONS: Revisions = R::REVISIONS;
    type Params = R::Params;
    type Result = T;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extension_task_is_read_flat_and_a_malformed_one_refused() {
        let task = serde_json::json!({"taskId": "t1", "status": "working", "createdAt": "2026-07-28T00:00:00Z",
            "lastUpdatedAt": "2026-07-28T00:00:01Z", "ttlMs": 60000, "pollIntervalMs": 500, "statusMessage": "busy"});
        let read = extension_task("tasks/get", &task).unwrap();
        assert_eq!((read.task_id.as_str(), read.ttl, read.poll_interval), ("t1", Some(60_000), Some(500)));
        assert_eq!(read.status_message.as_deref(), Some("busy"));
        let no_id = serde_json::json!({"status": "working"});
        assert!(matches!(
            extension_task("tasks/get", &no_id),
            Err(ClientError::Protocol { violation: Violation::MalformedTask("taskId"), .. })
        ));
        let bad_status = serde_json::json!({"taskId": "t1", "status": 7});
        assert!(matches!(extension_task("tasks/get", &bad_status), Err(ClientError::Decode { .. })));
    }
}
