//! `Spans` sees the events of a callsite that another thread, one with no subscriber of its
//! own, reached first. `tracing` caches a callsite's interest process-wide, computed against
//! the subscriber of the thread that registers it: without a global default that thread's
//! answer is `never`, and the recorder would miss the callsite's events for good (a test that
//! passes alone and fails beside its siblings). This binary holds this one test: the cache is
//! per process.

#![cfg(feature = "spans")]

fn probe() {
    tracing::debug!(n = 1, "probe");
}

#[test]
fn a_callsite_first_reached_by_a_thread_without_subscriber_is_still_recorded() {
    let (spans, _guard) = mcp_test_support::spans::Spans::install();
    // A sibling test's thread, with no subscriber of its own, registers the callsite first.
    std::thread::spawn(probe).join().unwrap();
    probe();
    assert_eq!(spans.event_fields("probe").len(), 1, "the probe on this thread is recorded");
}
