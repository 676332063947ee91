//! The fleet's coordination through a real Redis, store to store: tags claimed once each
//! (a held one skipped, one whose lease ran out reused, its former holder told it lost it).

use std::time::{Duration, Instant};

use mcp_redis::{Redis, RedisConfig, RedisSessions};
use mcp_test_support::redis::RedisServer;
use mcp_transport_http::server::SharedSessions as _;

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
