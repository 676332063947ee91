//! Every store of the crate (request-state keys, SSE events, session records and the fleet's
//! messages, the change bus, tasks), used by two instances (two `Redis` handles), on each
//! deployment the crate connects to: a TLS-only server trusting a test CA, a Sentinel set
//! failing over in the middle (`SENTINEL FAILOVER`, then the primary killed), and a Redis
//! Cluster of three primaries (every script's keys in one slot).

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_redis::{Redis, RedisConfig};
use mcp_server::tasks::TaskStore as _;
use mcp_server::{ChangeEvent, SubscriptionBus as _};
use mcp_test_support::redis::{RedisCluster, RedisSentinel, RedisServer, Reply};
use mcp_transport_http::server::{Audience, Delivery, EventStore as _, FieldChange, SessionCopy, SharedSessions as _};
use mcp_types::TaskStatus;
use tokio::sync::{broadcast, mpsc};

const LONG: Duration = Duration::from_secs(60);

/// Waits (polling, with a deadline) until `condition` holds.
async fn until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !condition() {
        assert!(Instant::now() < deadline, "{what}: not within 20 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Sends with `send` until `rx` receives what `matches` accepts (a subscription may still be
/// on its way), skipping anything else.
async fn send_until_heard<T: Clone>(
    what: &str,
    mut send: impl AsyncFnMut(),
    rx: &mut broadcast::Receiver<T>,
    matches: impl Fn(&T) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        send().await;
        let heard = tokio::time::timeout(Duration::from_millis(300), async {
            loop {
                match rx.recv().await {
                    Ok(got) if matches(&got) => return,
                    Err(broadcast::error::RecvError::Closed) => panic!("{what}: the channel closed"),
                    _ => continue,
                }
            }
        });
        if heard.await.is_ok() {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: never heard by the other instance");
    }
}

/// Sends with `send` until `rx` receives `message` (a reader may still be on its way),
/// skipping anything else.
async fn send_until_delivered(
    what: &str,
    mut send: impl AsyncFnMut(),
    rx: &mut mpsc::Receiver<Delivery>,
    message: &Bytes,
) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        send().await;
        let heard = tokio::time::timeout(Duration::from_millis(300), async {
            loop {
                match rx.recv().await {
                    Some(Delivery::Message(got)) if got == *message => return,
                    None => panic!("{what}: the inbox closed"),
                    _ => continue,
                }
            }
        });
        if heard.await.is_ok() {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: never heard by the other instance");
    }
}

/// Two instances' handles, and their subscriptions (kept across rounds: they must survive
/// what happens between them).
struct Fleet {
    a: Redis,
    b: Redis,
    sessions_a: mcp_redis::RedisSessions,
    sessions_b: mcp_redis::RedisSessions,
    /// `sessions_b`'s tag and what reaches it (from the first round on).
    inbox: Option<(u32, mpsc::Receiver<Delivery>)>,
    bus_a: mcp_redis::RedisBus,
    bus_b: mcp_redis::RedisBus,
    changes: broadcast::Receiver<ChangeEvent>,
}

impl Fleet {
    fn new(config: impl Fn() -> RedisConfig) -> Fleet {
        let (a, b) = (Redis::connect_with(config()).unwrap(), Redis::connect_with(config()).unwrap());
        // Bounded fleet-wide: the count's scripts run on every deployment too.
        let (sessions_a, sessions_b) = (a.sessions().max_sessions(1000), b.sessions().max_sessions(1000));
        let (bus_a, bus_b) = (a.subscription_bus(), b.subscription_bus());
        let changes = bus_b.subscribe();
        Fleet { a, b, sessions_a, sessions_b, inbox: None, bus_a, bus_b, changes }
    }
}

/// One round of every store, written through one instance and read through the other
/// (`round` tells rounds apart). Returns the task made, for the caller's checks.
async fn every_store(fleet: &mut Fleet, round: &str) -> String {
    let (a, b) = (&fleet.a, &fleet.b);
    // requestState keys: the same for both.
    let keys = a.request_state_keys(Duration::from_secs(3600)).await.expect("request-state keys");
    assert_eq!(b.request_state_keys(Duration::from_secs(3600)).await.expect("request-state keys"), keys);

    // SSE events: stored by one, replayed by the other, removed.
    let (events_a, events_b) = (a.event_store(), b.event_store());
    let session = format!("session-{round}");
    for seq in 1..=3u64 {
        events_a.append(&session, 7, seq, Bytes::from(format!("event {seq}"))).await;
    }
    let replayed: Vec<u64> = events_b.replay(&session, 7, 1).await.into_iter().map(|(seq, _)| seq).collect();
    assert_eq!(replayed, [2, 3], "{round}: replayed through the other instance");
    events_b.remove_session(&session).await;
    assert!(events_a.replay(&session, 7, 0).await.is_empty(), "{round}: removed");

    // Session records and the fleet's channel.
    let (sessions_a, sessions_b) = (&fleet.sessions_a, &fleet.sessions_b);
    let fixed = [("session".to_owned(), Bytes::from_static(b"record"))];
    let admitted = sessions_b.admit(&session, LONG).expect("bounded").await.expect("admit");
    assert!(admitted, "{round}: counted in the fleet");
    assert!(sessions_a.create(&session, &fixed, LONG).await.expect("create"), "{round}: created");
    let level = FieldChange::Set("level".to_owned(), Bytes::from_static(b"1"));
    let changed = sessions_b.update(&session, &[level], LONG).await.expect("update").expect("the record exists");
    let loaded = sessions_a.load(&session).await.expect("load").expect("the record");
    assert_eq!(loaded, changed, "{round}: read back through the other instance");
    assert_eq!(loaded.field("session").map(|v| &v[..]), Some(&b"record"[..]));
    assert!(sessions_b.touch(&session, LONG).await.expect("touch"), "{round}: touched");
    sessions_b.remove(&session).await.expect("remove");
    assert_eq!(sessions_a.load(&session).await.expect("load"), None, "{round}: removed");
    // The fleet's messages: to a session's copies (as its record names them), and to one
    // instance (its inbox).
    if fleet.inbox.is_none() {
        let tag = sessions_b.claim_tag("b", LONG).await.expect("a tag");
        fleet.inbox = Some((tag, sessions_b.subscribe(tag)));
    }
    let (tag, inbox) = fleet.inbox.as_mut().unwrap();
    let tag = *tag;
    assert!(sessions_b.renew_tag(tag, "b", LONG).await.expect("renewed"), "{round}: the tag is b's");
    let copied = format!("{session}-copied");
    let fields = [(SessionCopy::field(tag), Bytes::from_static(b"1"))];
    assert!(sessions_a.create(&copied, &fields, LONG).await.expect("create"), "{round}: a record naming b's copy");
    let message = Bytes::from(format!("to the session's copies, {round}"));
    let send = async || sessions_a.send_to_copies(&copied, Audience::Copies, 0, message.clone()).await.expect("send");
    send_until_delivered("a message to a session's copies", send, inbox, &message).await;
    let message = Bytes::from(format!("to b, {round}"));
    let send = async || sessions_a.send(tag, message.clone()).await.expect("send");
    send_until_delivered("a message to b", send, inbox, &message).await;

    // The change bus.
    until("the bus subscribed", || fleet.bus_b.is_connected()).await;
    let event = ChangeEvent::ResourceUpdated(format!("file:///{round}"));
    let bus_a = &fleet.bus_a;
    let publish = async || bus_a.publish(event.clone());
    send_until_heard("a change on the bus", publish, &mut fleet.changes, |e| *e == event).await;

    // Tasks: made by one, seen, finished and listed through the other.
    let (tasks_a, tasks_b) = (a.task_store(), b.task_store());
    let task = tasks_a.create("owner", LONG, Duration::from_secs(1)).await.expect("create a task").task_id;
    assert!(tasks_b.get("owner", &task).await.is_some(), "{round}: the task seen by the other instance");
    assert!(tasks_b.get("someone else", &task).await.is_none());
    let asked = tasks_b.request_input("owner", &task, "k", serde_json::json!({"ask": 1})).await.expect("input");
    assert_eq!(asked.map(|t| t.status), Some(TaskStatus::InputRequired));
    let mut answers = serde_json::Map::new();
    answers.insert("k".to_owned(), serde_json::json!({"answer": 1}));
    tasks_a.answer_input("owner", &task, answers).await.expect("answered");
    assert_eq!(tasks_b.take_input("owner", &task, "k").await, Some(serde_json::json!({"answer": 1})));
    let done = tasks_b.finish("owner", &task, TaskStatus::Completed, Ok(serde_json::json!({"ok": true}))).await;
    assert_eq!(done.map(|t| t.status), Some(TaskStatus::Completed));
    let page = tasks_a.list("owner", None, 100).await.expect("list");
    assert!(page.tasks.iter().any(|t| t.task_id == task), "{round}: listed");
    task
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_store_works_over_tls_trusting_a_private_ca() {
    let server = RedisServer::start_tls();
    let config = || RedisConfig::new(server.url()).tls_ca_pem(server.ca_pem()).timeout(Duration::from_secs(5));
    let mut fleet = Fleet::new(config);
    every_store(&mut fleet, "tls").await;
    let kept: u64 = server.command("DBSIZE").parse().expect("DBSIZE");
    assert!(kept > 0, "the stores wrote to the TLS server");

    // Without the CA, the server's certificate is not trusted (the system's store is used).
    let untrusted = Redis::connect_with(RedisConfig::new(server.url()).timeout(Duration::from_secs(2))).unwrap();
    let refused = untrusted.request_state_keys(Duration::from_secs(3600)).await.expect_err("an untrusted server");
    assert!(refused.to_string().to_lowercase().contains("certificate"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_store_keeps_working_across_sentinel_failovers() {
    let mut set = RedisSentinel::start(3);
    let first = set.primary().port();
    // Longer than a failover takes: a command waits for the new primary rather than failing.
    let config = || {
        RedisConfig::sentinel(set.sentinel_urls(), mcp_test_support::redis::SENTINEL_SERVICE)
            .timeout(Duration::from_secs(20))
    };
    let mut fleet = Fleet::new(config);
    let before = every_store(&mut fleet, "before").await;

    // A failover asked of the sentinels: they demote the primary and drop its clients' connections
    // at once; the stores ask the sentinels again and go on with the new primary.
    let second = set.failover();
    assert_ne!(second, first);
    let tasks = fleet.a.task_store();
    assert!(tasks.get("owner", &before).await.is_some(), "the task made before the failover is on the new primary");
    tasks.create("owner", LONG, LONG).await.expect("a write after the failover");
    every_store(&mut fleet, "after a failover").await;

    // A switch by hand that keeps the connections: the former primary, now a replica, refuses
    // the next write (READONLY); the stores ask the sentinels again and go on with the new one.
    let third = set.switch_over_by_hand();
    assert_eq!(third, first);
    fleet.a.task_store().create("owner", LONG, LONG).await.expect("a write after the switch");
    let old = set.servers().iter().find(|s| s.port() == second).unwrap();
    let errors = old.query(&["INFO", "errorstats"]);
    assert!(errors.text().contains("errorstat_READONLY"), "the former primary refused a write: {errors:?}");
    every_store(&mut fleet, "after a switch").await;

    // The primary killed: after the sentinels agree it is down and promote the replica, the
    // stores go on there.
    let primary = set.servers().iter().position(|s| s.port() == first).unwrap();
    set.kill_server(primary);
    every_store(&mut fleet, "after the primary was killed").await;
    assert_eq!(set.primary().port(), second, "the sentinels promoted the replica");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_store_works_on_a_cluster_with_each_scripts_keys_in_one_slot() {
    let cluster = RedisCluster::start();
    let config = || RedisConfig::cluster(cluster.urls()).timeout(Duration::from_secs(5));
    let mut fleet = Fleet::new(config);
    for round in ["one", "two", "three", "four"] {
        every_store(&mut fleet, round).await;
    }

    // What one script touches shares a slot; other sessions spread over the nodes.
    let slot = |key: &str| match cluster.nodes()[0].query(&["CLUSTER", "KEYSLOT", key]) {
        Reply::Int(slot) => slot,
        other => panic!("CLUSTER KEYSLOT: {other:?}"),
    };
    assert_eq!(slot("mcp:session:{s1}"), slot("mcp:events:{s1}"));
    assert_eq!(slot("mcp:events:{s1}"), slot("mcp:events:{s1}:streams"));
    assert_eq!(slot("mcp:{tasks}:live"), slot("mcp:{tasks}:task:0123"));
    let nodes: std::collections::HashSet<u16> =
        (0..32).map(|i| cluster.node_of(&format!("mcp:session:{{s{i}}}")).port()).collect();
    assert_eq!(nodes.len(), 3, "sessions spread over every node");
    let kept: i64 = cluster
        .nodes()
        .iter()
        .map(|n| match n.query(&["DBSIZE"]) {
            Reply::Int(n) => n,
            other => panic!("DBSIZE: {other:?}"),
        })
        .sum();
    assert!(kept > 0, "the stores wrote to the cluster");
}
