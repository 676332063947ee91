//! What the fleet tests share: stores on a real Redis, readers of their inboxes, the
//! sessions they hold copies of.

#![allow(dead_code)] // each test binary uses some of it

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_redis::{Redis, RedisConfig, RedisSessions};
use mcp_test_support::redis::RedisServer;
use mcp_transport_http::server::{Delivery, SessionCopy, SharedSessions as _};
use tokio::sync::mpsc;

pub const LONG: Duration = Duration::from_secs(60);

pub fn sessions(redis: &RedisServer) -> RedisSessions {
    Redis::connect_with(RedisConfig::new(redis.url()).timeout(Duration::from_millis(500))).unwrap().sessions()
}

/// Waits (polling, with a deadline) until `condition` holds.
pub async fn until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !condition() {
        assert!(Instant::now() < deadline, "{what}: not within 15 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The next delivery of `inbox` (within 10 s).
pub async fn next(inbox: &mut mpsc::Receiver<Delivery>) -> Delivery {
    tokio::time::timeout(Duration::from_secs(10), inbox.recv()).await.expect("a delivery within 10 s").expect("open")
}

/// Claims a tag for `store` and reads what reaches it; returns once its reader waits in
/// Redis (`blocked` readers were there before).
pub async fn reader(redis: &RedisServer, store: &RedisSessions, blocked: u64) -> (u32, mpsc::Receiver<Delivery>) {
    let tag = store.claim_tag("reader", LONG).await.unwrap();
    let inbox = store.subscribe(tag);
    until("the reader waits in Redis", || redis.blocked_clients() > blocked).await;
    (tag, inbox)
}

/// The messages `inbox` gets until `end` (which the caller sent last).
pub async fn until_end(inbox: &mut mpsc::Receiver<Delivery>, end: &[u8]) -> Vec<String> {
    let mut got = Vec::new();
    loop {
        match next(inbox).await {
            Delivery::Message(m) if &m[..] == end => return got,
            Delivery::Message(m) => got.push(String::from_utf8(m.to_vec()).unwrap()),
            other => panic!("{other:?}"),
        }
    }
}

/// Three instances (a store and a reader each), the tags and inboxes of which are returned.
pub async fn three(redis: &RedisServer) -> ([RedisSessions; 3], Vec<(u32, mpsc::Receiver<Delivery>)>) {
    let stores = [sessions(redis), sessions(redis), sessions(redis)];
    let mut readers = Vec::new();
    for (i, store) in stores.iter().enumerate() {
        readers.push(reader(redis, store, i as u64).await);
    }
    (stores, readers)
}

/// What each of `readers` got, up to the end mark sent to each now.
pub async fn received(
    stores: &[RedisSessions; 3],
    readers: &mut [(u32, mpsc::Receiver<Delivery>)],
) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    for (tag, inbox) in readers.iter_mut() {
        stores[0].send(*tag, Bytes::from_static(b"end")).await.unwrap();
        all.push(until_end(inbox, b"end").await);
    }
    all
}

/// Makes the record of session `id` on `stores[0]` (copy 1 of its tag), as the first request
/// of a session does.
pub async fn create(stores: &[RedisSessions; 3], tags: &[u32], id: &str) {
    let fields = [(".owner".to_owned(), Bytes::new()), (SessionCopy::field(tags[0]), Bytes::from_static(b"1"))];
    assert!(stores[0].create(id, &fields, LONG).await.unwrap());
}
