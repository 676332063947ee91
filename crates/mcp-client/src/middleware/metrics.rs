//! [`Metrics`]: each request counted and timed through the `metrics` facade.

use std::sync::LazyLock;
use std::time::Instant;

use mcp_types::{Direction, METHODS, MethodKind};
use metrics::{Key, Label, Level, Metadata};

use super::{BoxFuture, ClientMiddleware, ClientRequest, ClientResponse, Next, outcome_kind};

/// Requests sent, by method and outcome (counter).
pub(crate) const REQUESTS: &str = "mcp_client_requests_total";
/// The time from a request's start to its outcome, by method (histogram, seconds).
pub(crate) const DURATION: &str = "mcp_client_request_duration_seconds";

/// The `method` label of every method not counted by name.
const OTHER: &str = "other";

/// The outcomes a request is counted under (see [`outcome_kind`]).
const OUTCOMES: [&str; 8] = ["ok", "error", "timeout", "cancelled", "closed", "transport", "protocol", "other"];

static METADATA: Metadata<'static> = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// The keys of one method's metrics, built once.
struct MethodKeys {
    method: &'static str,
    requests: Vec<Key>,
    duration: Key,
}

impl MethodKeys {
    fn new(method: &'static str) -> MethodKeys {
        let requests = OUTCOMES
            .iter()
            .map(|outcome| {
                let labels =
                    vec![Label::from_static_parts("method", method), Label::from_static_parts("outcome", outcome)];
                Key::from_parts(REQUESTS, labels)
            })
            .collect();
        MethodKeys {
            method,
            requests,
            duration: Key::from_parts(DURATION, vec![Label::from_static_parts("method", method)]),
        }
    }
}

/// Every method a client sends counted by name (the protocol's requests to a server and the
/// tasks extension's `tasks/update`), then `other`.
static KEYS: LazyLock<Vec<MethodKeys>> = LazyLock::new(|| {
    let methods = METHODS
        .iter()
        .filter(|m| m.kind == MethodKind::Request && m.direction != Direction::ServerToClient)
        .map(|m| m.method)
        .chain(["tasks/update"]);
    let mut keys: Vec<MethodKeys> = Vec::new();
    for method in methods {
        if !keys.iter().any(|k| k.method == method) {
            keys.push(MethodKeys::new(method));
        }
    }
    keys.push(MethodKeys::new(OTHER));
    keys
});

/// The keys of `method` (those of `other` for a method not counted by name).
fn keys(method: &str) -> &'static MethodKeys {
    let keys = &*KEYS;
    keys.iter().find(|k| k.method == method).unwrap_or(&keys[keys.len() - 1])
}

/// Counts and times each request through the `metrics` crate (a no-op until the application
/// installs a recorder):
/// - `mcp_client_requests_total` (counter; `method`, `outcome`): requests over, by outcome
///   (`ok`, `error` for a JSON-RPC error answer, `timeout`, `cancelled`, `closed`,
///   `transport`, `protocol`, `other`);
/// - `mcp_client_request_duration_seconds` (histogram; `method`): from the start to the
///   outcome.
///
/// The `method` label is one of the protocol's requests to a server (and the tasks
/// extension's `tasks/update`), or `other` for a custom method: its values are bounded. The
/// keys are built once: a request allocates nothing for its labels. A request whose future
/// is dropped is not counted.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    _private: (),
}

impl Metrics {
    /// The layer.
    pub fn new() -> Self {
        Metrics::default()
    }
}

impl ClientMiddleware for Metrics {
    fn call<'a>(&'a self, request: ClientRequest<'a>, next: Next<'a>) -> BoxFuture<'a, ClientResponse> {
        let keys = keys(request.method());
        Box::pin(async move {
            let started = Instant::now();
            let outcome = next.run(request).await;
            let seconds = started.elapsed().as_secs_f64();
            let kind = outcome_kind(&outcome);
            let i = OUTCOMES.iter().position(|o| *o == kind).unwrap_or(OUTCOMES.len() - 1);
            metrics::with_recorder(|r| {
                r.register_counter(&keys.requests[i], &METADATA).increment(1);
                r.register_histogram(&keys.duration, &METADATA).record(seconds);
            });
            outcome
        })
    }
}
