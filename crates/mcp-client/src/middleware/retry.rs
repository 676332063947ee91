//! [`Retry`]: a request that failed on its way (the connection refused or broken, an HTTP
//! 5xx or 429) sent again after a growing, jittered delay, for calls that may be repeated.

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::{BoxFuture, ClientMiddleware, ClientRequest, ClientResponse, Next};
use crate::error::ClientError;

/// The methods that may be sent twice: they read, or set what a second call sets again.
const SAFE_METHODS: [&str; 15] = [
    "ping",
    "server/discover",
    "tools/list",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
];

/// The most tool names a [`Retry`] remembers as idempotent from the tool lists it sees.
const MAX_LEARNED_TOOLS: usize = 10_000;

/// Sends a request again when it failed on its way, after a delay that doubles from attempt
/// to attempt (with jitter: between half of it and all of it), within a number of attempts
/// and a total time.
///
/// What is retried:
/// - transport errors only: over HTTP the connection refused, reset or broken
///   ([`HttpErrorKind::Connection`](crate::http::HttpErrorKind::Connection), a response
///   stream that ended before the answer), and the statuses 5xx and 429, after the
///   `Retry-After` the server gave when it gave one (a `Retry-After` beyond the total time
///   ends the retries at once); an I/O error of refusal or reset on another transport; a
///   timeout only with [`retry_timeouts`](Retry::retry_timeouts) (a request that timed out
///   may have run). Never a JSON-RPC error answer, nor a closed connection.
/// - the methods that may be repeated: those that read (`tools/list`, `resources/read`,
///   `prompts/get`, `ping`, `tasks/get`, ...) and `resources/subscribe`/`unsubscribe`,
///   `logging/setLevel`; `tools/call` only for a tool whose annotations say
///   `idempotentHint: true` (learned from the `tools/list` answers that pass this layer), or
///   one named with [`idempotent_tool`](Retry::idempotent_tool), or every tool with
///   [`all_tool_calls`](Retry::all_tool_calls); a custom method only when named with
///   [`method`](Retry::method). Never `tasks/cancel` or `tasks/update`.
///
/// A wait ends early when the call's cancellation token fires ([`ClientError::Cancelled`]).
/// Put it outermost to have [`Logging`](super::Logging) and [`Metrics`](super::Metrics) see
/// each attempt, innermost to have them see the call.
#[derive(Debug)]
pub struct Retry {
    max_attempts: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    max_elapsed: Duration,
    retry_timeouts: bool,
    all_tool_calls: bool,
    tools: HashSet<String>,
    methods: HashSet<String>,
    learned: Mutex<HashSet<String>>,
}

impl Default for Retry {
    fn default() -> Self {
        Retry::new()
    }
}

impl Retry {
    /// At most 3 attempts, the first wait 100 ms (then 200 ms, ... up to 5 s), 30 s in all.
    pub fn new() -> Self {
        Retry {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            max_elapsed: Duration::from_secs(30),
            retry_timeouts: false,
            all_tool_calls: false,
            tools: HashSet::new(),
            methods: HashSet::new(),
            learned: Mutex::default(),
        }
    }

    /// The most attempts, the first included (at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The wait before the second attempt; each later one doubles it, up to `max`.
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }

    /// The total time from the first attempt after which no attempt starts (a wait that
    /// would end later is not begun).
    pub fn max_elapsed(mut self, total: Duration) -> Self {
        self.max_elapsed = total;
        self
    }

    /// Retries a call that timed out ([`ClientError::Timeout`]) too: for servers whose calls
    /// are safe to run twice.
    pub fn retry_timeouts(mut self, on: bool) -> Self {
        self.retry_timeouts = on;
        self
    }

    /// Retries `tools/call` of this tool, whatever its annotations say.
    pub fn idempotent_tool(mut self, name: impl Into<String>) -> Self {
        self.tools.insert(name.into());
        self
    }

    /// Retries every `tools/call`, whatever the tools' annotations say.
    pub fn all_tool_calls(mut self) -> Self {
        self.all_tool_calls = true;
        self
    }

    /// Retries requests of this method (a custom method's, or one not retried by default).
    pub fn method(mut self, method: impl Into<String>) -> Self {
        self.methods.insert(method.into());
        self
    }

    /// Whether `request` may be sent again.
    fn repeatable(&self, request: &ClientRequest<'_>) -> bool {
        let method = request.method();
        if self.methods.contains(method) {
            return true;
        }
        if let Some(tool) = request.tool_name() {
            return self.all_tool_calls || self.tools.contains(tool) || self.learned.lock_unpoisoned().contains(tool);
        }
        SAFE_METHODS.contains(&method)
    }

    /// Remembers the idempotent tools of a `tools/list` page (its first page forgets those
    /// remembered before).
    fn learn(&self, request: &ClientRequest<'_>, page: &Value) {
        let Some(tools) = page.get("tools").and_then(Value::as_array) else { return };
        let first = request.params.get("cursor").is_none_or(Value::is_null);
        let mut learned = self.learned.lock_unpoisoned();
        if first {
            learned.clear();
        }
        for tool in tools {
            let idempotent = tool.pointer("/annotations/idempotentHint").and_then(Value::as_bool) == Some(true);
            if let (true, Some(name)) = (idempotent, tool.get("name").and_then(Value::as_str))
                && learned.len() < MAX_LEARNED_TOOLS
            {
                learned.insert(name.to_owned());
            }
        }
    }

    /// Whether `error` is worth another attempt, and the wait the server asked for.
    fn transient(&self, error: &ClientError) -> Option<Option<Duration>> {
        match error {
            ClientError::Timeout { .. } if self.retry_timeouts => Some(None),
            ClientError::Transport(e) => transient_transport(e.as_ref()),
            _ => None,
        }
    }

    /// The wait before attempt `attempt + 1` (`attempt` ≥ 1): the backoff doubled
    /// `attempt - 1` times, capped, with jitter (between half of it and all of it).
    pub(crate) fn delay(&self, attempt: u32, random: u64) -> Duration {
        let doubled = self.initial_backoff.saturating_mul(1u32 << (attempt - 1).min(20));
        let full = doubled.min(self.max_backoff);
        let half = full / 2;
        let span = (full - half).as_nanos() as u64;
        half + Duration::from_nanos(if span == 0 { 0 } else { random % (span + 1) })
    }
}

/// A transport error worth another attempt, and the wait the server asked for.
fn transient_transport(error: &(dyn std::error::Error + 'static)) -> Option<Option<Duration>> {
    #[cfg(feature = "http")]
    if let Some(e) = error.downcast_ref::<crate::http::HttpRequestError>() {
        use crate::http::HttpErrorKind;
        return match e.kind() {
            HttpErrorKind::Connection | HttpErrorKind::StreamEnded => Some(None),
            HttpErrorKind::Status => {
                let status = e.status().map_or(0, |s| s.as_u16());
                (status == 429 || (500..600).contains(&status)).then(|| e.retry_after())
            }
            _ => None,
        };
    }
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            return matches!(io.kind(), ConnectionRefused | ConnectionReset | ConnectionAborted).then_some(None);
        }
        cause = e.source();
    }
    None
}

impl ClientMiddleware for Retry {
    fn call<'a>(&'a self, request: ClientRequest<'a>, next: Next<'a>) -> BoxFuture<'a, ClientResponse> {
        Box::pin(async move {
            let tools_list = request.method() == "tools/list";
            if !self.repeatable(&request) {
                let outcome = next.run(request).await;
                return outcome;
            }
            let started = Instant::now();
            let deadline = started + self.max_elapsed;
            let mut attempt = 1;
            loop {
                let outcome = next.run(request.clone()).await;
                let error = match outcome {
                    Ok(value) => {
                        if tools_list {
                            self.learn(&request, &value);
                        }
                        return Ok(value);
                    }
                    Err(error) => error,
                };
                let Some(asked) = self.transient(&error) else { return Err(error) };
                if attempt >= self.max_attempts {
                    return Err(error);
                }
                let wait = asked.unwrap_or_else(|| self.delay(attempt, getrandom::u64().unwrap_or(0)));
                if Instant::now() + wait > deadline {
                    tracing::debug!(method = request.method(), attempt, ?wait, "no time left for another attempt");
                    return Err(error);
                }
                tracing::debug!(method = request.method(), attempt, ?wait, error = %error, "retrying after a transport error");
                match &request.options.cancel {
                    Some(token) => tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = token.cancelled() => return Err(ClientError::Cancelled),
                    },
                    None => tokio::time::sleep(wait).await,
                }
                attempt += 1;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_within_its_jitter_and_its_cap() {
        let retry = Retry::new().backoff(Duration::from_millis(100), Duration::from_millis(350));
        // Without jitter's random part: half the delay; with the most: all of it.
        assert_eq!(retry.delay(1, 0), Duration::from_millis(50));
        assert_eq!(retry.delay(1, u64::MAX - (u64::MAX % 50_000_001)), Duration::from_millis(50));
        assert_eq!(retry.delay(1, 50_000_000), Duration::from_millis(100));
        assert_eq!(retry.delay(2, 0), Duration::from_millis(100));
        assert_eq!(retry.delay(3, 0), Duration::from_millis(175));
        assert_eq!(retry.delay(30, 175_000_000), Duration::from_millis(350));
        for random in [1, 7, 123_456_789, u64::MAX] {
            let d = retry.delay(2, random);
            assert!(d >= Duration::from_millis(100) && d <= Duration::from_millis(200), "{d:?}");
        }
    }
}
