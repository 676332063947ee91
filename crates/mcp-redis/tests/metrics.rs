//! The metrics of Redis calls against a real redis-server (issue 31): each call's duration
//! by op, and a call Redis does not answer in time counted as a timeout.

use std::time::Duration;

use bytes::Bytes;
use mcp_redis::{Redis, RedisConfig};
use mcp_test_support::prometheus::Scrape;
use mcp_test_support::redis::RedisServer;
use mcp_transport_http::server::EventStore as _;
use mcp_transport_http::server::metrics;

#[tokio::test]
async fn redis_calls_are_timed_and_timeouts_counted() {
    let handle = metrics::install_prometheus(None).unwrap();
    let server = RedisServer::start();
    let redis = Redis::connect_with(RedisConfig::new(server.url()).timeout(Duration::from_millis(200))).unwrap();
    let store = redis.event_store();
    let before = Scrape::parse(&handle.render());

    store.append("s", 1, 1, Bytes::from_static(b"{}")).await;
    assert_eq!(store.replay("s", 1, 0).await.len(), 1);
    let after = Scrape::parse(&handle.render());
    let calls = |scrape: &Scrape| scrape.sum("mcp_redis_duration_seconds_count", &[]);
    assert!(calls(&after) >= calls(&before) + 2.0, "an append and a replay, timed");
    let ops = after.label_values("mcp_redis_duration_seconds", "op");
    assert!(ops.iter().any(|op| op == "evalsha"), "scripts run as evalsha: {ops:?}");
    assert!(ops.iter().all(|op| op != "other"), "every command the store sends has its name: {ops:?}");
    let timeouts = |scrape: &Scrape| scrape.sum("mcp_redis_failures_total", &[("kind", "timeout")]);
    assert_eq!(timeouts(&after), 0.0);

    // Redis holds every client's commands for a second: the next call times out.
    assert_eq!(server.command("CLIENT PAUSE 1000 ALL"), "+OK");
    store.append("s", 1, 2, Bytes::from_static(b"{}")).await;
    let paused = Scrape::parse(&handle.render());
    assert!(timeouts(&paused) >= 1.0, "the unanswered call is a timeout: {:?}", paused.samples);
    assert_eq!(paused.sum("mcp_redis_failures_total", &[("kind", "error")]), 0.0);
}
