//! The fleet's coordination through a real Redis, store to store: tags claimed once each
//! (a held one skipped, one whose lease ran out reused, its former holder told it lost it);
//! messages sent while a reader is cut off delivered once it is back; a reader that fell
//! behind told how many it missed; a message to one instance reaching it alone; a message
//! about a session reaching the instances that hold a copy of it alone (its GET stream's
//! holder alone for a GET stream message). (A message to a copy on a tag no instance holds:
//! `fleet_unheld.rs`, alone in its process for the global metrics recorder.)

use std::time::Duration;

use bytes::Bytes;
use mcp_redis::{Redis, RedisConfig};
use mcp_test_support::redis::{RedisProxy, RedisServer};
use mcp_transport_http::server::{Audience, Delivery, SessionCopy, SharedSessions as _};
mod support;
use support::*;

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
