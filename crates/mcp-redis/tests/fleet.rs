//! The fleet's coordination through a real Redis, store to store: tags claimed once each
//! (a held one skipped, one whose lease ran out reused, its former holder told it lost it);
//! messages sent while a reader is cut off delivered once it is back; a reader that fell
//! behind told how many it missed; a message to one instance reaching it alone; a message
//! about a session reaching the instances that hold a copy of it alone (its GET stream's
//! holder alone for a GET stream message), and one to a copy on a tag no instance holds
//! counted and the copy forgotten.

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_redis::{Redis, RedisConfig, RedisSessions};
use mcp_test_support::prometheus::Scrape;
use mcp_test_support::redis::{RedisProxy, RedisServer};
use mcp_transport_http::server::{Audience, Delivery, SessionCopy, SharedSessions as _, metrics};
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

/// Claims a tag for `store` and reads what reaches it; returns once its reader waits in
/// Redis (`blocked` readers were there before).
async fn reader(redis: &RedisServer, store: &RedisSessions, blocked: u64) -> (u32, mpsc::Receiver<Delivery>) {
    let tag = store.claim_tag("reader", LONG).await.unwrap();
    let inbox = store.subscribe(tag);
    until("the reader waits in Redis", || redis.blocked_clients() > blocked).await;
    (tag, inbox)
}

/// The messages `inbox` gets until `end` (which the caller sent last).
async fn until_end(inbox: &mut mpsc::Receiver<Delivery>, end: &[u8]) -> Vec<String> {
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
async fn three(redis: &RedisServer) -> ([RedisSessions; 3], Vec<(u32, mpsc::Receiver<Delivery>)>) {
    let stores = [sessions(redis), sessions(redis), sessions(redis)];
    let mut readers = Vec::new();
    for (i, store) in stores.iter().enumerate() {
        readers.push(reader(redis, store, i as u64).await);
    }
    (stores, readers)
}

/// What each of `readers` got, up to the end mark sent to each now.
async fn received(stores: &[RedisSessions; 3], readers: &mut [(u32, mpsc::Receiver<Delivery>)]) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    for (tag, inbox) in readers.iter_mut() {
        stores[0].send(*tag, Bytes::from_static(b"end")).await.unwrap();
        all.push(until_end(inbox, b"end").await);
    }
    all
}

/// Makes the record of session `id` on `stores[0]` (copy 1 of its tag), as the first request
/// of a session does.
async fn create(stores: &[RedisSessions; 3], tags: &[u32], id: &str) {
    let fields = [(".owner".to_owned(), Bytes::new()), (SessionCopy::field(tags[0]), Bytes::from_static(b"1"))];
    assert!(stores[0].create(id, &fields, LONG).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_sent_while_a_reader_is_cut_off_reach_it_once_it_is_back() {
    let redis = RedisServer::start();
    let proxy = RedisProxy::start(&redis);
    let sender = sessions(&redis);
    let receiver =
        Redis::connect_with(RedisConfig::new(proxy.url()).timeout(Duration::from_millis(500))).unwrap().sessions();
    let (tag, mut inbox) = reader(&redis, &receiver, 0).await;
    let fields = [(SessionCopy::field(tag), Bytes::from_static(b"1"))];
    assert!(sender.create("s", &fields, LONG).await.unwrap());
    // The receiver loses Redis (which the sender still reaches): its readers' connections drop.
    proxy.cut();
    until("the readers' connections dropped", || redis.blocked_clients() == 0).await;
    sender.send_to_copies("s", Audience::Copies, 0, Bytes::from_static(b"to the session's copies")).await.unwrap();
    sender.send(tag, Bytes::from_static(b"to the receiver")).await.unwrap();
    assert!(tokio::time::timeout(Duration::from_millis(200), inbox.recv()).await.is_err(), "nothing while cut off");
    proxy.restore();
    let mut got = vec![next(&mut inbox).await, next(&mut inbox).await];
    got.sort_by_key(|d| format!("{d:?}"));
    assert_eq!(
        got,
        [
            Delivery::Message(Bytes::from_static(b"to the receiver")),
            Delivery::Message(Bytes::from_static(b"to the session's copies")),
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
    let (stores, mut readers) = three(&redis).await;
    let to = readers[1].0;
    for n in 0..10 {
        stores[0].send(to, Bytes::from(format!("to {to}, {n}"))).await.unwrap();
    }
    let got = received(&stores, &mut readers).await;
    assert_eq!(got[1], (0..10).map(|n| format!("to {to}, {n}")).collect::<Vec<_>>());
    assert!(got[0].is_empty() && got[2].is_empty(), "{got:?}");
    // A message to a tag no instance holds is kept a minute at most (its instance may take
    // the tag back, after Redis restarted empty), then gone with its inbox.
    stores[0].send(999, Bytes::from_static(b"to no one")).await.unwrap();
    let ttl: i64 = redis.command("PTTL mcp:inbox:{999}").trim_start_matches(':').parse().unwrap();
    assert!(ttl > 0 && ttl <= 60_000, "PTTL {ttl}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_about_a_session_reaches_its_copies_alone() {
    let redis = RedisServer::start();
    let (stores, mut readers) = three(&redis).await;
    let tags: Vec<u32> = readers.iter().map(|(tag, _)| *tag).collect();
    // Instances 0 (which made it) and 1 hold a copy of session s; instance 2 none.
    create(&stores, &tags, "s").await;
    let record = stores[1].load_copy("s", SessionCopy { tag: tags[1], nonce: 1 }).await.unwrap().expect("the record");
    assert!(record.field(&SessionCopy::field(tags[1])).is_some(), "the copy named as it is loaded");
    assert!(stores[2].load_copy("t", SessionCopy { tag: tags[2], nonce: 1 }).await.unwrap().is_none());
    assert_eq!(redis.command("EXISTS mcp:session:{t}"), ":0", "no record made by a load");
    // A change on instance 0, a cancellation POSTed to instance 2, the end on instance 1: each
    // reaches the copies but its sender's, and never instance 2.
    stores[0].send_to_copies("s", Audience::Copies, tags[0], Bytes::from_static(b"changed")).await.unwrap();
    stores[2].send_to_copies("s", Audience::Copies, tags[2], Bytes::from_static(b"cancelled")).await.unwrap();
    stores[1].end("s", tags[1], Bytes::from_static(b"ended")).await.unwrap();
    assert_eq!(redis.command("EXISTS mcp:session:{s}"), ":0", "the record removed");
    // Nothing for a session without a record.
    stores[0].send_to_copies("s", Audience::Copies, tags[0], Bytes::from_static(b"too late")).await.unwrap();
    let got = received(&stores, &mut readers).await;
    assert_eq!(got[0], ["cancelled", "ended"]);
    assert_eq!(got[1], ["changed", "cancelled"]);
    assert!(got[2].is_empty(), "{:?}", got[2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_message_reaches_the_holder_of_the_get_stream_alone() {
    let redis = RedisServer::start();
    let (stores, mut readers) = three(&redis).await;
    let tags: Vec<u32> = readers.iter().map(|(tag, _)| *tag).collect();
    // Every instance holds a copy; instance 1 holds the GET stream.
    create(&stores, &tags, "s").await;
    for i in 1..3 {
        stores[i].load_copy("s", SessionCopy { tag: tags[i], nonce: 1 }).await.unwrap().expect("the record");
    }
    let standalone = |from: usize, text: &'static str| {
        stores[from].send_to_copies("s", Audience::Standalone, tags[from], Bytes::from_static(text.as_bytes()))
    };
    standalone(0, "no holder: every copy").await.unwrap();
    stores[1].hold_standalone("s", tags[1]).await.unwrap();
    standalone(0, "to the holder").await.unwrap();
    standalone(2, "to the holder too").await.unwrap();
    // From the instance named the holder, which does not hold it any more: every other copy.
    standalone(1, "from the former holder").await.unwrap();
    // A copy dropped (idle) is no longer a copy, nor the GET stream's holder: back to every copy.
    stores[1].drop_copy("s", SessionCopy { tag: tags[1], nonce: 1 }).await.unwrap();
    standalone(0, "holder gone").await.unwrap();
    let got = received(&stores, &mut readers).await;
    assert_eq!(got[0], ["from the former holder"]);
    assert_eq!(got[1], ["no holder: every copy", "to the holder", "to the holder too"]);
    assert_eq!(got[2], ["no holder: every copy", "from the former holder", "holder gone"]);
    // A copy dropped after a later copy of its instance was loaded leaves the later one named.
    stores[2].load_copy("s", SessionCopy { tag: tags[2], nonce: 2 }).await.unwrap().expect("the record");
    stores[2].drop_copy("s", SessionCopy { tag: tags[2], nonce: 1 }).await.unwrap();
    let field = format!(".copy:{}", tags[2]);
    assert_eq!(redis.query(&["HGET", "mcp:session:{s}", &field]).text(), "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_to_a_copy_whose_tag_no_one_holds_is_counted_and_the_copy_forgotten() {
    let handle = metrics::install_prometheus(None).unwrap();
    let unheld = || Scrape::parse(&handle.render()).sum("mcp_fleet_bus_unheld_total", &[]);
    let redis = RedisServer::start();
    let (stores, mut readers) = three(&redis).await;
    let tags: Vec<u32> = readers.iter().map(|(tag, _)| *tag).collect();
    // Instances 0 and 1 hold a copy; and so did an instance of tag 999, killed without cleanup
    // (its tag's lease ran out).
    create(&stores, &tags, "s").await;
    stores[1].load_copy("s", SessionCopy { tag: tags[1], nonce: 1 }).await.unwrap().expect("the record");
    stores[1].load_copy("s", SessionCopy { tag: 999, nonce: 1 }).await.unwrap().expect("the record");
    assert_eq!(unheld(), 0.0);
    stores[0].send_to_copies("s", Audience::Copies, tags[0], Bytes::from_static(b"changed")).await.unwrap();
    assert_eq!(unheld(), 1.0, "the message to tag 999 counted");
    assert_eq!(redis.command("HEXISTS mcp:session:{s} .copy:999"), ":0", "the dead copy forgotten");
    let ttl: i64 = redis.command("PTTL mcp:inbox:{999}").trim_start_matches(':').parse().unwrap();
    assert!(ttl > 0 && ttl <= 60_000, "kept a minute at most: PTTL {ttl}");
    // The next message goes to the live copies alone.
    stores[0].send_to_copies("s", Audience::Copies, tags[0], Bytes::from_static(b"changed again")).await.unwrap();
    assert_eq!(unheld(), 1.0);
    // A message to one tag no one holds is counted too.
    stores[0].send(998, Bytes::from_static(b"an answer")).await.unwrap();
    assert_eq!(unheld(), 2.0);
    let got = received(&stores, &mut readers).await;
    assert_eq!(got[1], ["changed", "changed again"]);
    assert!(got[0].is_empty() && got[2].is_empty(), "{got:?}");
}
