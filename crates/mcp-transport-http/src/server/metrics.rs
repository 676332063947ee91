//! Metrics in the Prometheus text format (feature `metrics`): what the SDK's crates record
//! through the `metrics` facade (sessions, requests, errors and durations by method, the
//! fleet's bus, Redis calls), rendered by `metrics-exporter-prometheus` at `GET /metrics`
//! beside the endpoint ([`HttpServerConfig::metrics`](super::HttpServerConfig::metrics)).
//!
//! ```no_run
//! use mcp_transport_http::server::{HttpServerConfig, metrics};
//!
//! # fn config() -> Result<HttpServerConfig, metrics::BuildError> {
//! // Once per process: the recorder every metric of the process goes to.
//! let handle = metrics::install_prometheus(Some("mcp-a"))?;
//! Ok(HttpServerConfig::default().metrics(handle))
//! # }
//! ```
//!
//! Each instance of a fleet serves its own; Prometheus's `instance` label is the address it
//! scraped, and [`INSTANCE_LABEL`] (`mcp_instance`), when given, names the instance as the
//! application does (a pod's name, say), the same across restarts and scrape addresses.
//! docs/deploy.md lists every metric.

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
pub use metrics_exporter_prometheus::{BuildError, PrometheusBuilder, PrometheusHandle};

/// The label [`install_prometheus`] puts on every metric to name the instance.
pub const INSTANCE_LABEL: &str = "mcp_instance";

/// The buckets of every `_seconds` histogram: 0.5 ms to 60 s.
pub const SECONDS_BUCKETS: &[f64] =
    &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

/// How often [`install_prometheus`]'s thread drains the histograms' samples into their
/// buckets, so that they do not pile up between scrapes (or without any).
const UPKEEP: Duration = Duration::from_secs(5);

/// A [`PrometheusBuilder`] with the SDK's histogram buckets ([`SECONDS_BUCKETS`]) and, when
/// `instance` is given, the label [`INSTANCE_LABEL`] on every metric: to add settings of one's
/// own before installing it (then call [`describe`] and run the handle's upkeep).
pub fn prometheus_builder(instance: Option<&str>) -> PrometheusBuilder {
    let builder = PrometheusBuilder::new()
        .set_buckets_for_metric(metrics_exporter_prometheus::Matcher::Suffix("_seconds".to_owned()), SECONDS_BUCKETS)
        .expect("the buckets are not empty");
    match instance {
        Some(instance) => builder.add_global_label(INSTANCE_LABEL, instance),
        None => builder,
    }
}

/// Installs a Prometheus recorder from [`prometheus_builder`] as the process's global one,
/// describes the SDK's metrics ([`describe`]), and starts a thread that runs its upkeep every
/// 5 seconds. Fails if the process already has a global recorder.
pub fn install_prometheus(instance: Option<&str>) -> Result<PrometheusHandle, BuildError> {
    let handle = prometheus_builder(instance).install_recorder()?;
    describe();
    let upkeep = handle.clone();
    let thread = std::thread::Builder::new().name("mcp-metrics-upkeep".to_owned()).spawn(move || {
        loop {
            std::thread::sleep(UPKEEP);
            upkeep.run_upkeep();
        }
    });
    if let Err(e) = thread {
        tracing::warn!("metrics: no upkeep thread ({e}): histograms are drained only when scraped");
    }
    Ok(handle)
}

/// Gives the installed recorder the help text and unit of each metric the SDK records.
pub fn describe() {
    use ::metrics::Unit;
    ::metrics::describe_gauge!("mcp_sessions", "Live sessions of this instance (a fleet's copies included).");
    ::metrics::describe_counter!("mcp_requests_total", "JSON-RPC requests received, by method.");
    ::metrics::describe_counter!("mcp_request_errors_total", "Requests answered with an error, by method and code.");
    ::metrics::describe_histogram!(
        "mcp_request_duration_seconds",
        Unit::Seconds,
        "Time from a request's arrival to its reply, by method."
    );
    ::metrics::describe_counter!("mcp_fleet_bus_messages_total", "Messages of other instances handled, by kind.");
    ::metrics::describe_counter!("mcp_fleet_bus_dropped_total", "Messages of the fleet's bus known lost.");
    ::metrics::describe_histogram!(
        "mcp_fleet_bus_lag_seconds",
        Unit::Seconds,
        "Time from a bus message's publication to its handling."
    );
    ::metrics::describe_counter!("mcp_fleet_bus_resyncs_total", "Resynchronisations after a gap on the bus.");
    ::metrics::describe_counter!("mcp_fleet_bus_unheld_total", "Messages sent to a tag no instance holds.");
    ::metrics::describe_histogram!("mcp_redis_duration_seconds", Unit::Seconds, "Redis calls' durations, by op.");
    ::metrics::describe_counter!("mcp_redis_failures_total", "Redis calls failed, by op and kind.");
    ::metrics::describe_gauge!("mcp_redis_circuit_open", "1 while the circuit breaker around Redis is open.");
}

/// The answer of `GET /metrics`: what `handle`'s recorder holds, in the text format.
pub(crate) fn render(handle: &PrometheusHandle) -> Response {
    let content_type = HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");
    (StatusCode::OK, [(header::CONTENT_TYPE, content_type)], handle.render()).into_response()
}
