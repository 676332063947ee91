//! How the server runs tasks: [`TaskConfig`], the store and the ttls.

use std::sync::Arc;
use std::time::Duration;

use super::store::{MemoryTaskStore, TaskStore};

/// How the server runs tasks: where they live and for how long.
#[derive(Clone)]
pub struct TaskConfig {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) default_ttl: Duration,
    pub(crate) max_ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) page_size: usize,
}

impl std::fmt::Debug for TaskConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskConfig")
            .field("default_ttl", &self.default_ttl)
            .field("max_ttl", &self.max_ttl)
            .field("poll_interval", &self.poll_interval)
            .finish_non_exhaustive()
    }
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            store: Arc::new(MemoryTaskStore::default()),
            default_ttl: Duration::from_secs(300),
            max_ttl: Duration::from_secs(3600),
            poll_interval: Duration::from_secs(1),
            page_size: 100,
        }
    }
}

impl TaskConfig {
    /// A [`MemoryTaskStore`] of 1,000 tasks; tasks kept while they run and 5 minutes after
    /// they end unless the client asks for another ttl (at most an hour, at least a second);
    /// clients told to poll every second.
    pub fn new() -> Self {
        TaskConfig::default()
    }
    /// Keeps tasks in `store`.
    pub fn store(mut self, store: impl TaskStore) -> Self {
        self.store = Arc::new(store);
        self
    }
    /// The ttl of a task whose client names none (default 5 minutes): how long a task is
    /// kept once it has ended (a running task is kept whatever its ttl).
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = ttl;
        self
    }
    /// The longest ttl granted (default an hour): a longer one asked for is cut to it.
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl;
        self
    }
    /// The `pollInterval` clients are told (default 1 s).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// The ttl granted for a requested one (milliseconds): at least a second, at most
    /// [`max_ttl`](Self::max_ttl).
    pub(crate) fn ttl(&self, requested: Option<i64>) -> Duration {
        let ttl = match requested {
            Some(ms) => Duration::from_millis(u64::try_from(ms).unwrap_or(0)),
            None => self.default_ttl,
        };
        ttl.clamp(Duration::from_secs(1), self.max_ttl.max(Duration::from_secs(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttls_are_clamped() {
        let config = TaskConfig::new();
        assert_eq!(config.ttl(None), Duration::from_secs(300));
        assert_eq!(config.ttl(Some(0)), Duration::from_secs(1));
        assert_eq!(config.ttl(Some(-5)), Duration::from_secs(1));
        assert_eq!(config.ttl(Some(i64::MAX)), Duration::from_secs(3600));
        assert_eq!(config.ttl(Some(90_000)), Duration::from_secs(90));
    }
}
