//! `RedisEventStore` against a real redis-server: replay in order of storage after an event
//! (everything when it is not found), each bound, expiries, two instances sharing a stream,
//! and Redis going away and coming back.

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_redis::{Redis, RedisConfig};
use mcp_test_support::redis::RedisServer;
use mcp_transport_http::server::{EventStore, StoredEvent};

const TIMEOUT: Duration = Duration::from_millis(500);

fn connect(server: &RedisServer) -> Redis {
    Redis::connect_with(RedisConfig::new(server.url()).timeout(TIMEOUT)).unwrap()
}

fn seqs(events: Vec<StoredEvent>) -> Vec<u64> {
    events.into_iter().map(|(seq, _)| seq).collect()
}

fn message(seq: u64) -> Bytes {
    Bytes::from(format!(r#"{{"jsonrpc":"2.0","method":"m","params":{{"n":{seq}}}}}"#))
}

#[tokio::test]
async fn replays_in_order_of_storage_after_the_event_or_everything_held() {
    let server = RedisServer::start();
    let store = connect(&server).event_store();
    // Seqs numbered by different instances: unique, not ordered.
    for seq in [5, 2, 9, 7] {
        store.append("s", 1, seq, message(seq)).await;
    }
    store.append("s", 2, 3, message(3)).await;
    store.append("t", 1, 4, message(4)).await;
    let replayed = store.replay("s", 1, 2).await;
    assert_eq!(seqs(replayed.clone()), [9, 7], "after seq 2 in order of storage, not of seq");
    assert_eq!(replayed[0].1, message(9), "the message as stored");
    assert_eq!(seqs(store.replay("s", 1, 7).await), Vec::<u64>::new(), "nothing after the last");
    assert_eq!(seqs(store.replay("s", 1, 100).await), [5, 2, 9, 7], "not found: everything held");
    assert_eq!(seqs(store.replay("s", 2, 0).await), [3], "only that stream's events");
    assert_eq!(seqs(store.replay("s", 3, 0).await), Vec::<u64>::new());
    assert_eq!(seqs(store.replay("t", 1, 0).await), [4], "only that session's events");

    store.remove_session("s").await;
    assert!(store.replay("s", 1, 0).await.is_empty());
    assert_eq!(seqs(store.replay("t", 1, 0).await), [4], "other sessions stay");
    store.remove_session("t").await;
    assert_eq!(server.command("DBSIZE"), ":0", "every key of the sessions is gone");
}

#[tokio::test]
async fn a_stream_holds_its_newest_events() {
    let server = RedisServer::start();
    let store = connect(&server).event_store().events_per_stream(3);
    for seq in 1..=5 {
        store.append("s", 1, seq, message(seq)).await;
    }
    assert_eq!(seqs(store.replay("s", 1, 0).await), [3, 4, 5]);
    assert_eq!(seqs(store.replay("s", 1, 1).await), [3, 4, 5], "seq 1 was trimmed: everything held");
    assert_eq!(server.command("LLEN mcp:events:{s}:s:1"), ":3");
}

#[tokio::test]
async fn a_session_holds_its_streams_appended_to_most_recently() {
    let server = RedisServer::start();
    let store = connect(&server).event_store().streams_per_session(2);
    store.append("s", 1, 1, message(1)).await;
    store.append("s", 2, 2, message(2)).await;
    store.append("s", 1, 3, message(3)).await;
    store.append("s", 3, 4, message(4)).await;
    assert!(store.replay("s", 2, 0).await.is_empty(), "stream 2 was the least recently used");
    assert_eq!(seqs(store.replay("s", 1, 0).await), [1, 3]);
    assert_eq!(seqs(store.replay("s", 3, 0).await), [4]);
    assert_eq!(server.command("ZCARD mcp:events:{s}:streams"), ":2");
    assert_eq!(server.command("EXISTS mcp:events:{s}:s:2"), ":0", "its list is deleted");
}

#[tokio::test]
async fn a_session_holds_about_its_bytes_oldest_first_newest_always() {
    let server = RedisServer::start();
    // Each event counts its message and its 8-byte seq: 48 bytes here. Events up to 1000
    // bytes are kept (the bound on one event is the budget unless set).
    let store = connect(&server).event_store().bytes_per_session(100).max_event_bytes(1000);
    let event = |c: u8| Bytes::from(vec![c; 40]);
    store.append("s", 1, 1, event(b'a')).await;
    store.append("s", 1, 2, event(b'b')).await;
    store.append("s", 2, 3, event(b'c')).await;
    // 144 bytes: the oldest event of the least recently used stream went.
    assert_eq!(seqs(store.replay("s", 1, 0).await), [2]);
    assert_eq!(seqs(store.replay("s", 2, 0).await), [3]);
    assert_eq!(server.command("HGET mcp:events:{s} bytes"), "$2", "a two-digit count");
    // One event over the budget by itself (within the bound on one event) is kept, alone.
    store.append("s", 3, 4, Bytes::from(vec![b'd'; 500])).await;
    assert!(store.replay("s", 1, 0).await.is_empty());
    assert!(store.replay("s", 2, 0).await.is_empty());
    assert_eq!(seqs(store.replay("s", 3, 0).await), [4]);
    // Other sessions have budgets of their own.
    store.append("t", 1, 1, event(b'e')).await;
    assert_eq!(seqs(store.replay("t", 1, 0).await), [1]);
    assert_eq!(seqs(store.replay("s", 3, 0).await), [4]);
}

#[tokio::test]
async fn every_key_expires_and_an_append_refreshes_the_whole_session_every_quarter_of_the_ttl() {
    let server = RedisServer::start();
    let store = connect(&server).event_store().ttl(Duration::from_secs(60));
    store.append("s", 1, 1, message(1)).await;
    let ttl = |key: &str| -> i64 {
        let reply = server.command(&format!("TTL {key}"));
        reply.trim_start_matches(':').parse().unwrap_or_else(|_| panic!("TTL {key}: {reply}"))
    };
    for key in ["mcp:events:{s}", "mcp:events:{s}:streams", "mcp:events:{s}:s:1"] {
        let left = ttl(key);
        assert!((55..=60).contains(&left), "{key} expires in {left} s");
    }
    // Every list was refreshed by the first append: an append to stream 2 refreshes its own
    // list and the session's keys, not stream 1's list.
    assert_eq!(server.command("EXPIRE mcp:events:{s}:s:1 50"), ":1");
    store.append("s", 2, 2, message(2)).await;
    assert!((45..=50).contains(&ttl("mcp:events:{s}:s:1")), "stream 1's list left alone");
    for key in ["mcp:events:{s}", "mcp:events:{s}:streams", "mcp:events:{s}:s:2"] {
        let left = ttl(key);
        assert!((55..=60).contains(&left), "{key} expires in {left} s");
    }
    // A quarter of the TTL after every list was refreshed (as if: the time of that refresh
    // moved back), the next append refreshes them all again.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis();
    assert_eq!(server.command(&format!("HSET mcp:events:{{s}} r {}", now - 15_000)), ":0");
    assert_eq!(server.command("EXPIRE mcp:events:{s}:s:1 5"), ":1");
    store.append("s", 2, 3, message(3)).await;
    for key in ["mcp:events:{s}:s:1", "mcp:events:{s}:s:2"] {
        let left = ttl(key);
        assert!((55..=60).contains(&left), "{key} expires in {left} s");
    }
}

#[tokio::test]
async fn an_event_one_instance_stores_is_replayed_by_another() {
    let server = RedisServer::start();
    let (one, two) = (connect(&server).event_store(), connect(&server).event_store());
    one.append("s", 1 << 48, 1, message(1)).await;
    two.append("s", 1 << 48, 1 << 40, message(2)).await;
    one.append("s", 1 << 48, 2, message(3)).await;
    assert_eq!(seqs(two.replay("s", 1 << 48, 1).await), [1 << 40, 2]);
    assert_eq!(seqs(one.replay("s", 1 << 48, 1 << 40).await), [2]);
    two.remove_session("s").await;
    assert!(one.replay("s", 1 << 48, 0).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_redis_is_down_appends_drop_and_replays_are_empty_then_it_works_again() {
    let mut server = RedisServer::start();
    let store = connect(&server).event_store();
    store.append("s", 1, 1, message(1)).await;
    server.kill();

    let started = Instant::now();
    store.append("s", 1, 2, message(2)).await;
    assert!(store.replay("s", 1, 0).await.is_empty());
    store.remove_session("s").await;
    assert!(started.elapsed() < 3 * TIMEOUT + Duration::from_millis(500), "took {:?}", started.elapsed());

    server.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seq = 10;
    loop {
        seq += 1;
        store.append("s", 1, seq, message(seq)).await;
        if seqs(store.replay("s", 1, 0).await).contains(&seq) {
            break;
        }
        assert!(Instant::now() < deadline, "the store did not work again after Redis came back");
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_redis_does_not_answer_operations_end_within_the_timeout() {
    let server = RedisServer::start();
    let store = connect(&server).event_store();
    store.append("s", 1, 1, message(1)).await;
    // Redis holds every client's commands for 2.5 s.
    assert_eq!(server.command("CLIENT PAUSE 2500 ALL"), "+OK");
    let started = Instant::now();
    store.append("s", 1, 2, message(2)).await;
    assert!(started.elapsed() < TIMEOUT + Duration::from_millis(700), "append took {:?}", started.elapsed());
    let started = Instant::now();
    assert!(store.replay("s", 1, 0).await.is_empty(), "nothing replayed in time");
    assert!(started.elapsed() < TIMEOUT + Duration::from_millis(700), "replay took {:?}", started.elapsed());
    assert_eq!(server.command("CLIENT UNPAUSE"), "+OK");
    let deadline = Instant::now() + Duration::from_secs(10);
    while seqs(store.replay("s", 1, 0).await).first() != Some(&1) {
        assert!(Instant::now() < deadline, "the store did not answer again");
    }
}

/// A response of `bytes` bytes to request `id`.
fn big_response(id: u64, bytes: usize) -> Bytes {
    Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"text":"{}"}}}}"#, "x".repeat(bytes)))
}

#[tokio::test]
async fn an_event_larger_than_the_bound_is_not_kept_and_a_response_becomes_an_error() {
    let server = RedisServer::start();
    // The bound on one event is the session's budget unless set.
    let store = connect(&server).event_store().bytes_per_session(4000);
    store.append("s", 1, 1, message(1)).await;
    // Too large: a notification is not kept at all...
    let notification =
        Bytes::from(format!(r#"{{"jsonrpc":"2.0","method":"m","params":{{"t":"{}"}}}}"#, "y".repeat(5000)));
    store.append("s", 1, 2, notification).await;
    // ...and a response is kept as an error answering the same request, so that a client
    // resuming the stream gets an answer rather than waiting for one.
    store.append("s", 1, 3, big_response(7, 5000)).await;
    store.append("s", 1, 4, message(4)).await;
    let replayed = store.replay("s", 1, 1).await;
    assert_eq!(seqs(replayed.clone()), [3, 4], "the notification is not held");
    let answer: serde_json::Value = serde_json::from_slice(&replayed[0].1).unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(answer.get("result").is_none());
    assert_eq!(replayed[1].1, message(4));
    // What Redis holds stays within the budget: the earlier events were not pushed out.
    assert_eq!(seqs(store.replay("s", 1, 0).await), [1, 3, 4]);
    let held: usize = server.query(&["HGET", "mcp:events:{s}", "bytes"]).text().parse().unwrap();
    assert!(held < 4000, "held {held} bytes");
    // Set apart from the budget: a smaller bound.
    let store = connect(&server).event_store().max_event_bytes(100);
    store.append("t", 1, 1, big_response(8, 200)).await;
    let replayed = store.replay("t", 1, 0).await;
    let answer: serde_json::Value = serde_json::from_slice(&replayed[0].1).unwrap();
    assert_eq!((answer["id"].as_u64(), answer["error"]["code"].as_i64()), (Some(8), Some(-32603)));
}
