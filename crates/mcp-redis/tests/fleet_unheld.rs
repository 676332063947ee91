//! A message to a copy on a tag no instance holds is counted (`mcp_fleet_bus_unheld_total`)
//! and the copy forgotten. Alone in its test binary: the metrics recorder is global to the
//! process, and the other fleet tests send to unheld tags too.

use bytes::Bytes;
use mcp_test_support::prometheus::Scrape;
use mcp_test_support::redis::RedisServer;
use mcp_transport_http::server::{Audience, SessionCopy, SharedSessions as _, metrics};

mod support;
use support::*;

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
