//! `Redis::request_state_keys` against a real redis-server: one key for instances starting
//! together, rotation keeping the previous key, pruning, expiry, and Redis down.

use std::time::{Duration, Instant};

use mcp_redis::{Redis, RedisConfig};
use mcp_test_support::redis::RedisServer;

const TIMEOUT: Duration = Duration::from_millis(500);
const DAY: Duration = Duration::from_secs(24 * 3600);

fn connect(server: &RedisServer) -> Redis {
    Redis::connect_with(RedisConfig::new(server.url()).timeout(TIMEOUT)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_starting_together_get_the_same_key() {
    let server = RedisServer::start();
    let instances: Vec<Redis> = (0..8).map(|_| connect(&server)).collect();
    let calls = instances.iter().map(|redis| redis.request_state_keys(DAY));
    let all = futures_util::future::join_all(calls).await;
    let first = all[0].as_ref().unwrap().clone();
    assert_eq!(first.len(), 1, "one key");
    assert_eq!(first[0].len(), 32, "of 32 bytes");
    for keys in &all {
        assert_eq!(keys.as_ref().unwrap(), &first, "every instance has the same keys");
    }
    assert_eq!(instances[3].request_state_keys(DAY).await.unwrap(), first, "and keeps them");
    assert_eq!(server.command("ZCARD mcp:request-state-keys"), ":1");
    let ttl: i64 = server.command("TTL mcp:request-state-keys").trim_start_matches(':').parse().unwrap();
    assert!((2 * 86_400 - 60..=2 * 86_400).contains(&ttl), "expires 2×rotation after the newest key: {ttl}");
}

#[tokio::test]
async fn rotation_adds_a_key_keeps_the_previous_and_prunes_the_old() {
    let server = RedisServer::start();
    let redis = connect(&server);
    let rotation = Duration::from_secs(1);
    let first = redis.request_state_keys(rotation).await.unwrap();
    assert_eq!(first.len(), 1);
    // Once the key is a rotation old, a new one comes first and the old one stays.
    let deadline = Instant::now() + Duration::from_secs(10);
    let rotated = loop {
        let keys = redis.request_state_keys(rotation).await.unwrap();
        if keys.len() > 1 {
            break keys;
        }
        assert!(Instant::now() < deadline, "no rotation");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(rotated.len(), 2, "{rotated:?}");
    assert_ne!(rotated[0], first[0], "a new key first");
    assert_eq!(rotated[1], first[0], "the previous key kept");
    // Once it is 2 rotations old, it is gone; there are never more than 3 keys.
    loop {
        let keys = redis.request_state_keys(rotation).await.unwrap();
        assert!(keys.len() <= 3, "{keys:?}");
        if !keys.contains(&first[0]) {
            break;
        }
        assert!(Instant::now() < deadline, "the old key was not pruned");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_redis_is_down_it_fails_within_the_timeout() {
    let mut server = RedisServer::start();
    let redis = connect(&server);
    let keys = redis.request_state_keys(DAY).await.unwrap();
    server.kill();
    let started = Instant::now();
    let error = redis.request_state_keys(DAY).await.expect_err("Redis is down");
    assert!(started.elapsed() < TIMEOUT + Duration::from_millis(500), "took {:?}", started.elapsed());
    assert!(error.to_string().starts_with("redis: "), "{error}");
    server.restart();
    // Redis came back empty: a new key, the same for everyone again.
    let deadline = Instant::now() + Duration::from_secs(10);
    let again = loop {
        match redis.request_state_keys(DAY).await {
            Ok(again) => break again,
            Err(error) => assert!(Instant::now() < deadline, "still failing: {error}"),
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(again.len(), 1);
    assert_ne!(again, keys, "a new key (nothing was persisted)");
    assert_eq!(connect(&server).request_state_keys(DAY).await.unwrap(), again);
}
