//! The metrics of the requests a server serves and of its sessions, recorded through the
//! `metrics` facade at the one point every transport's requests pass (the connection's
//! `Service`): stdio, Streamable HTTP, HTTP+SSE and the stateless revision alike. Without an
//! installed recorder each is a no-op; `mcp-transport-http`'s feature `metrics` installs a
//! Prometheus one and serves `/metrics` (docs/deploy.md lists every metric).
//!
//! - `mcp_sessions` (gauge): the live sessions of this process (a fleet's copies of a shared
//!   session included); a stateless POST is no session.
//! - `mcp_requests_total` (counter, `method`): requests received, counted on arrival (a
//!   session revision's `ping`, which the JSON-RPC engine answers, never reaches here).
//! - `mcp_request_errors_total` (counter, `method`, `code`): requests answered with an error.
//! - `mcp_request_duration_seconds` (histogram, `method`): from arrival to the reply being
//!   ready (a request whose future is dropped first, cancelled or its connection gone, has no
//!   duration).
//!
//! The `method` label is one of the protocol's requests to a server, or `other` (a custom or
//! unknown method): its values are bounded whatever clients send. So is `code`: the codes
//! JSON-RPC and MCP define, or `other`. The keys of each method are built once, so that a
//! request allocates nothing for its labels (an error allocates the key of its counter).

use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use hashbrown::HashMap;
use mcp_jsonrpc::Reply;
use mcp_types::{Direction, METHODS, MethodKind};
use metrics::{Key, Label, Level, Metadata};

/// The live sessions of this process (gauge).
pub(crate) const SESSIONS: &str = "mcp_sessions";
/// Requests received, by method (counter).
pub(crate) const REQUESTS: &str = "mcp_requests_total";
/// Requests answered with an error, by method and code (counter).
pub(crate) const ERRORS: &str = "mcp_request_errors_total";
/// The time from a request's arrival to its reply, by method (histogram, seconds).
pub(crate) const DURATION: &str = "mcp_request_duration_seconds";

/// The `method` label of every method not counted by name.
const OTHER: &str = "other";

static METADATA: Metadata<'static> = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// The keys of one method's metrics, built once.
struct MethodKeys {
    method: &'static str,
    requests: Key,
    duration: Key,
}

impl MethodKeys {
    fn new(method: &'static str) -> MethodKeys {
        let label = || vec![Label::from_static_parts("method", method)];
        MethodKeys {
            method,
            requests: Key::from_parts(REQUESTS, label()),
            duration: Key::from_parts(DURATION, label()),
        }
    }
}

/// Every method counted by name (the requests a client sends a server: the protocol's and the
/// tasks extension's), then `other`; and the index of each by name.
static KEYS: LazyLock<(Vec<MethodKeys>, HashMap<&'static str, usize>)> = LazyLock::new(|| {
    let methods = METHODS
        .iter()
        .filter(|m| m.kind == MethodKind::Request && m.direction != Direction::ServerToClient)
        .map(|m| m.method)
        .chain([crate::tasks::UPDATE]);
    let mut keys: Vec<MethodKeys> = methods.map(MethodKeys::new).collect();
    let index = keys.iter().enumerate().map(|(i, k)| (k.method, i)).collect();
    keys.push(MethodKeys::new(OTHER));
    (keys, index)
});

/// The keys of `method` (those of `other` for a method not counted by name).
fn keys(method: &str) -> &'static MethodKeys {
    let (keys, index) = &*KEYS;
    let i = index.get(method).copied().unwrap_or(keys.len() - 1);
    &keys[i]
}

/// The `code` label of an error code: the ones JSON-RPC and MCP define, else `other`.
fn code_label(code: i64) -> &'static str {
    match code {
        -32700 => "-32700",
        -32600 => "-32600",
        -32601 => "-32601",
        -32602 => "-32602",
        -32603 => "-32603",
        -32000 => "-32000",
        -32001 => "-32001",
        -32002 => "-32002",
        -32020 => "-32020",
        -32021 => "-32021",
        -32022 => "-32022",
        -32042 => "-32042",
        _ => OTHER,
    }
}

/// A session began (`live`: one that counts, not a stateless POST's).
pub(crate) fn session_started() {
    metrics::gauge!(SESSIONS).increment(1.0);
}

/// A session counted by [`session_started`] ended.
pub(crate) fn session_ended() {
    metrics::gauge!(SESSIONS).decrement(1.0);
}

/// A request being measured: counted when it arrives ([`Meter::start`]), its duration and
/// error recorded when its reply is ready ([`Meter::measure`]).
pub(crate) struct Meter {
    keys: &'static MethodKeys,
    started: Instant,
}

impl Meter {
    /// A request of `method` arrived: counted now.
    pub(crate) fn start(method: &str) -> Meter {
        let keys = keys(method);
        metrics::with_recorder(|r| r.register_counter(&keys.requests, &METADATA).increment(1));
        Meter { keys, started: Instant::now() }
    }

    /// `inner`, the future of the request's reply, measured.
    pub(crate) fn measure<F>(self, inner: F) -> Measured<F> {
        Measured { inner, keys: self.keys, started: self.started }
    }
}

pin_project_lite::pin_project! {
    /// A request's future, measured: its duration and error (if any) recorded when ready.
    pub(crate) struct Measured<F> {
        #[pin]
        inner: F,
        keys: &'static MethodKeys,
        started: Instant,
    }
}

impl<F: Future<Output = Reply>> Future for Measured<F> {
    type Output = Reply;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        let this = self.project();
        let reply = ready!(this.inner.poll(cx));
        let keys = *this.keys;
        let seconds = this.started.elapsed().as_secs_f64();
        metrics::with_recorder(|r| r.register_histogram(&keys.duration, &METADATA).record(seconds));
        if let Err(error) = &reply {
            metrics::counter!(ERRORS, "method" => keys.method, "code" => code_label(error.code)).increment(1);
        }
        Poll::Ready(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_bounded() {
        assert_eq!(keys("tools/call").method, "tools/call");
        assert_eq!(keys("initialize").method, "initialize");
        assert_eq!(keys("tasks/update").method, "tasks/update");
        // Not a request to a server, a notification, custom or unknown: `other`.
        assert_eq!(keys("sampling/createMessage").method, OTHER);
        assert_eq!(keys("notifications/initialized").method, OTHER);
        assert_eq!(keys("acme/search").method, OTHER);
        assert_eq!(code_label(-32602), "-32602");
        assert_eq!(code_label(42), OTHER);
    }
}
