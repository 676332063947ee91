//! The fleet's coordination through a real Redis, store to store: tags claimed once each
//! (a held one skipped, one whose lease ran out reused, its former holder told it lost it);
//! messages sent while a reader is cut off delivered once it is back; a reader that fell
//! behind told how many it missed; a message to one instance reaching it alone.

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_redis::{Redis, RedisConfig, RedisSessions};
use mcp_test_support::redis::{RedisProxy, RedisServer};
use mcp_transport_http::server::{Delivery, SharedSessions as _};
use tokio::sync::mpsc;

const LONG: Duration = Duration::from_secs(60);

fn sessions(redis: &RedisServer) -> RedisSessions {
    Redis::connect_with(RedisConfig::new(redis.url()).timeout(Duration::from_millis(500))).unwrap().sessions()
}

/// Waits (polling, with a deadline) until `condition` holds.
async fn until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !condition() {
        assert!(Instant::now() < deadline, "{what}: not within 15 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_are_held_by_one_instance_at_a_time() {
    let redis = RedisServer::start();
    let (a, b, c) = (sessions(&redis), sessions(&redis), sessions(&redis));
    assert_eq!(a.claim_tag("a", Duration::from_millis(300)).await.unwrap(), 1);
    assert_eq!(b.claim_tag("b", LONG).await.unwrap(), 2);
    // Tag 3 is held (by an instance that claimed it some other way): skipped.
    assert_eq!(redis.command("SET mcp:tag:{3} someone"), "+OK");
    assert_eq!(c.claim_tag("c", LONG).await.unwrap(), 4);
    assert!(a.renew_tag(1, "a", Duration::from_millis(300)).await.unwrap());
    assert!(!b.renew_tag(3, "b", LONG).await.unwrap(), "3 is another's");
    // The counter comes round (2^20 - 1 claims later): the held tags are skipped...
    assert_eq!(redis.command("SET mcp:tags 1048575"), "+OK");
    assert_eq!(c.claim_tag("d", LONG).await.unwrap(), 5, "1 to 4 are held");
    // ... and tag 1, once its lease ran out unrenewed, is free again.
    until("tag 1's lease ends", || redis.command("EXISTS mcp:tag:{1}") == ":0").await;
    assert_eq!(redis.command("SET mcp:tags 1048575"), "+OK");
    assert_eq!(b.claim_tag("e", LONG).await.unwrap(), 1);
    // Its former holder finds it taken: it must stop using it.
    assert!(!a.renew_tag(1, "a", LONG).await.unwrap());
    // A holder whose tag Redis lost (restarted empty, say) takes it back, if free.
    assert_eq!(redis.command("DEL mcp:tag:{2}"), ":1");
    assert!(b.renew_tag(2, "b", LONG).await.unwrap());
    assert_eq!(redis.command("GET mcp:tag:{2}"), "$1");
    // Every tag held: a claim gives up (bounded), with an error.
    let every = (1..=1100).map(|n| format!("mcp:tag:{{{n}}} x")).collect::<Vec<_>>().join(" ");
    assert_eq!(redis.command(&format!("MSET {every}")), "+OK");
    assert_eq!(redis.command("SET mcp:tags 0"), "+OK");
    assert!(c.claim_tag("f", LONG).await.is_err());
}

/// The next delivery of `inbox` (within 10 s).
async fn next(inbox: &mut mpsc::Receiver<Delivery>) -> Delivery {
    tokio::time::timeout(Duration::from_secs(10), inbox.recv()).await.expect("a delivery within 10 s").expect("open")
}

/// Claims a tag for `store` and reads what reaches it; returns once its two readers wait in
/// Redis (`blocked` of them were there before).
async fn reader(redis: &RedisServer, store: &RedisSessions, blocked: u64) -> (u32, mpsc::Receiver<Delivery>) {
    let tag = store.claim_tag("reader", LONG).await.unwrap();
    let inbox = store.subscribe(tag);
    until("the readers wait in Redis", || redis.blocked_clients() >= blocked + 2).await;
    (tag, inbox)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_sent_while_a_reader_is_cut_off_reach_it_once_it_is_back() {
    let redis = RedisServer::start();
    let proxy = RedisProxy::start(&redis);
    let sender = sessions(&redis);
    let receiver =
        Redis::connect_with(RedisConfig::new(proxy.url()).timeout(Duration::from_millis(500))).unwrap().sessions();
    let (tag, mut inbox) = reader(&redis, &receiver, 0).await;
    // The receiver loses Redis (which the sender still reaches): its readers' connections drop.
    proxy.cut();
    until("the readers' connections dropped", || redis.blocked_clients() == 0).await;
    sender.publish(Bytes::from_static(b"to every instance")).await.unwrap();
    sender.send(tag, Bytes::from_static(b"to the receiver")).await.unwrap();
    assert!(tokio::time::timeout(Duration::from_millis(200), inbox.recv()).await.is_err(), "nothing while cut off");
    proxy.restore();
    let mut got = vec![next(&mut inbox).await, next(&mut inbox).await];
    got.sort_by_key(|d| format!("{d:?}"));
    assert_eq!(
        got,
        [
            Delivery::Message(Bytes::from_static(b"to every instance")),
            Delivery::Message(Bytes::from_static(b"to the receiver"))
        ],
        "both delivered once the reader is back, nothing missed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_falls_behind_the_bound_is_told_how_many_it_missed() {
    let redis = RedisServer::start();
    let receiver = sessions(&redis);
    let (tag, mut inbox) = reader(&redis, &receiver, 0).await;
    // The inbox keeps about 5 messages; the receiver does not read while 2,000 are sent (its
    // readers stop once its queue is full: the rest wait in Redis, and most are trimmed).
    let sender = sessions(&redis).inbox_bound(5);
    const SENT: u64 = 2_000;
    for n in 0..SENT {
        sender.send(tag, Bytes::from(n.to_string())).await.unwrap();
    }
    let (mut received, mut missed, mut previous) = (0u64, 0u64, None::<u64>);
    while received + missed < SENT {
        match next(&mut inbox).await {
            Delivery::Message(m) => {
                let n: u64 = std::str::from_utf8(&m).unwrap().parse().unwrap();
                assert!(previous.is_none_or(|p| n > p), "in order");
                previous = Some(n);
                received += 1;
            }
            Delivery::Missed(n) => missed += n,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(received + missed, SENT, "every message delivered or counted as missed");
    assert!(missed > 0 && received > 0, "{received} received, {missed} missed");
    assert_eq!(previous, Some(SENT - 1), "the newest delivered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_to_one_instance_reaches_it_alone() {
    let redis = RedisServer::start();
    let stores = [sessions(&redis), sessions(&redis), sessions(&redis)];
    let mut readers = Vec::new();
    for (i, store) in stores.iter().enumerate() {
        readers.push(reader(&redis, store, 2 * i as u64).await);
    }
    let to = readers[1].0;
    for n in 0..10 {
        stores[0].send(to, Bytes::from(format!("to {to}, {n}"))).await.unwrap();
    }
    stores[2].publish(Bytes::from_static(b"to all")).await.unwrap();
    // Every instance hears the message to all; only the addressee the others: the message to
    // all comes after them in the addressee's inbox as in the others'.
    for (i, (_, inbox)) in readers.iter_mut().enumerate() {
        let mut got = Vec::new();
        loop {
            match next(inbox).await {
                Delivery::Message(m) if &m[..] == b"to all" => break,
                Delivery::Message(m) => got.push(String::from_utf8(m.to_vec()).unwrap()),
                other => panic!("{other:?}"),
            }
        }
        let expected: Vec<String> =
            if i == 1 { (0..10).map(|n| format!("to {to}, {n}")).collect() } else { Vec::new() };
        // The inbox and the stream to all are read apart: the last addressed ones may follow.
        while got.len() < expected.len() {
            match next(inbox).await {
                Delivery::Message(m) => got.push(String::from_utf8(m.to_vec()).unwrap()),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(got, expected, "instance {i}");
        assert!(tokio::time::timeout(Duration::from_millis(100), inbox.recv()).await.is_err(), "nothing more");
    }
    // A message to a tag no instance holds is kept a minute at most (its instance may take
    // the tag back, after Redis restarted empty), then gone with its inbox.
    stores[0].send(999, Bytes::from_static(b"to no one")).await.unwrap();
    let ttl: i64 = redis.command("PTTL mcp:inbox:{999}").trim_start_matches(':').parse().unwrap();
    assert!(ttl > 0 && ttl <= 60_000, "PTTL {ttl}");
}
