//! Conversions between a [`Task`] and the messages that carry a task's members flat: the
//! results of `tasks/get` and `tasks/cancel`, and `notifications/tasks/status`.

use crate::{CancelTaskResult, GetTaskResult, Task, TaskStatusNotificationParams};

/// `From<Task>` for a flat carrier of a task's members, and back.
macro_rules! flat_task {
    ($($carrier:ident),* $(,)?) => {$(
        impl From<Task> for $carrier {
            fn from(t: Task) -> Self {
                let mut flat = $carrier::new(t.created_at, t.last_updated_at, t.status, t.task_id);
                flat.poll_interval = t.poll_interval;
                flat.status_message = t.status_message;
                flat.ttl = t.ttl;
                flat
            }
        }

        impl From<$carrier> for Task {
            fn from(flat: $carrier) -> Self {
                let mut t = Task::new(flat.created_at, flat.last_updated_at, flat.status, flat.task_id);
                t.poll_interval = flat.poll_interval;
                t.status_message = flat.status_message;
                t.ttl = flat.ttl;
                t
            }
        }
    )*};
}

flat_task!(GetTaskResult, CancelTaskResult, TaskStatusNotificationParams);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TaskStatus;

    #[test]
    fn a_task_goes_through_its_carriers_unchanged() {
        let mut task = Task::new("2025-11-25T10:30:00Z", "2025-11-25T10:31:00Z", TaskStatus::Working, "t1");
        task.poll_interval = Some(500);
        task.status_message = Some("busy".to_owned());
        task.ttl = Some(60_000);
        assert_eq!(Task::from(GetTaskResult::from(task.clone())), task);
        assert_eq!(Task::from(CancelTaskResult::from(task.clone())), task);
        assert_eq!(Task::from(TaskStatusNotificationParams::from(task.clone())), task);
    }
}
