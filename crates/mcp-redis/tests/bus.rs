//! `RedisBus` against a real redis-server: local delivery (even outside a runtime), two
//! instances hearing each other and not themselves twice, Redis going away (local delivery
//! goes on, receivers told to resync once it is back, remote delivery again), and the tasks
//! stopping with the bus.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_jsonrpc::transport::memory;
use mcp_redis::{Redis, RedisBus, RedisConfig};
use mcp_server::{ChangeEvent, Server, SubscriptionBus, ToolDef, ToolError};
use mcp_test_support::Wire;
use mcp_test_support::redis::RedisServer;
use serde_json::json;
use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};

const TIMEOUT: Duration = Duration::from_millis(500);

fn connect(server: &RedisServer) -> Redis {
    Redis::connect_with(RedisConfig::new(server.url()).timeout(TIMEOUT)).unwrap()
}

/// Waits (polling, with a deadline) until `condition` holds.
async fn until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !condition() {
        assert!(Instant::now() < deadline, "{what}: not within 15 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The next event of `rx` (within 5 s).
async fn next(rx: &mut broadcast::Receiver<ChangeEvent>) -> Result<ChangeEvent, RecvError> {
    tokio::time::timeout(Duration::from_secs(5), rx.recv()).await.expect("an event within 5 s")
}

/// Publishes `event` on `from` until `to` receives it (the other side may still be
/// reconnecting), skipping what `to` gets before it.
async fn publish_until_heard(from: &RedisBus, to: &mut broadcast::Receiver<ChangeEvent>, event: ChangeEvent) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        from.publish(event.clone());
        let heard = tokio::time::timeout(Duration::from_millis(200), async {
            loop {
                match to.recv().await {
                    Ok(got) if got == event => return,
                    Err(RecvError::Closed) => panic!("the bus closed"),
                    _ => continue,
                }
            }
        });
        if heard.await.is_ok() {
            return;
        }
        assert!(Instant::now() < deadline, "{event:?} never reached the other instance");
    }
}

#[test]
fn a_bus_made_outside_a_runtime_delivers_locally_and_starts_its_tasks_within_one() {
    let server = RedisServer::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // `Redis::connect` itself needs a runtime (its connection is a task of its own): an
    // error outside one, not a panic.
    assert!(matches!(mcp_redis::Redis::connect(&server.url()), Err(mcp_redis::Error::NoRuntime)));
    let redis = runtime.block_on(async { connect(&server) });
    let (bus, other) = (redis.subscription_bus(), connect_in(&runtime, &server).subscription_bus());
    assert!(bus.fans_out());
    let mut rx = bus.subscribe();
    bus.publish(ChangeEvent::ResourceUpdated("file:///a".to_owned()));
    assert_eq!(rx.try_recv(), Ok(ChangeEvent::ResourceUpdated("file:///a".to_owned())));
    assert!(!bus.is_connected(), "no task outside a runtime");
    runtime.block_on(async {
        let mut rx_other = other.subscribe();
        publish_until_heard(&bus, &mut rx_other, ChangeEvent::ToolsListChanged).await;
        // Its subscriber started too.
        publish_until_heard(&other, &mut rx, ChangeEvent::PromptsListChanged).await;
        assert!(bus.is_connected());
    });
}

fn connect_in(runtime: &tokio::runtime::Runtime, server: &RedisServer) -> Redis {
    runtime.block_on(async { connect(server) })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_hear_each_other_once() {
    let server = RedisServer::start();
    let (one, two) = (connect(&server).subscription_bus(), connect(&server).subscription_bus());
    let (mut rx_one, mut rx_two) = (one.subscribe(), two.subscribe());
    until("both subscribed", || one.is_connected() && two.is_connected()).await;

    let uri = ChangeEvent::ResourceUpdated("file:///a b".to_owned());
    one.publish(uri.clone());
    assert_eq!(rx_one.try_recv(), Ok(uri.clone()), "delivered locally at once");
    assert_eq!(next(&mut rx_two).await, Ok(uri.clone()), "and to the other instance");
    two.publish(ChangeEvent::TaskChanged("t-1".to_owned()));
    assert_eq!(next(&mut rx_two).await, Ok(ChangeEvent::TaskChanged("t-1".to_owned())));
    // The other's event comes next: one's own event was not echoed back to it.
    assert_eq!(next(&mut rx_one).await, Ok(ChangeEvent::TaskChanged("t-1".to_owned())));
    // And two did not hear its own either: one's next event is the next thing it gets.
    one.publish(ChangeEvent::ToolsListChanged);
    assert_eq!(next(&mut rx_two).await, Ok(ChangeEvent::ToolsListChanged));
    assert_eq!(rx_two.try_recv(), Err(TryRecvError::Empty));
    assert_eq!(rx_one.try_recv(), Ok(ChangeEvent::ToolsListChanged));
    assert_eq!(rx_one.try_recv(), Err(TryRecvError::Empty));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_redis_goes_away_local_delivery_goes_on_and_remote_comes_back() {
    let mut server = RedisServer::start();
    let (one, two) = (connect(&server).subscription_bus(), connect(&server).subscription_bus());
    let (mut rx_one, mut rx_two) = (one.subscribe(), two.subscribe());
    until("both subscribed", || one.is_connected() && two.is_connected()).await;
    // A receiver nobody reads while Redis is away.
    let mut idle = two.subscribe();

    server.kill();
    until("both saw Redis go", || !one.is_connected() && !two.is_connected()).await;
    let started = Instant::now();
    // More than the queue to Redis holds: the rest are dropped, without waiting.
    for _ in 0..1000 {
        one.publish(ChangeEvent::PromptsListChanged);
    }
    assert!(started.elapsed() < TIMEOUT, "publishing does not wait for Redis");
    assert!(matches!(rx_one.try_recv(), Err(TryRecvError::Lagged(_))), "a receiver that fell behind is told");
    let mut fresh = one.subscribe();
    one.publish(ChangeEvent::ResourceUpdated("file:///b".to_owned()));
    assert_eq!(fresh.try_recv(), Ok(ChangeEvent::ResourceUpdated("file:///b".to_owned())), "local delivery goes on");

    server.restart();
    until("both subscribed again", || one.is_connected() && two.is_connected()).await;
    assert_eq!(idle.recv().await, Ok(ChangeEvent::Resync), "told it may have missed events");
    publish_until_heard(&one, &mut rx_two, ChangeEvent::ResourcesListChanged).await;
    publish_until_heard(&two, &mut rx_one, ChangeEvent::ToolsListChanged).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_that_stops_answering_is_made_anew() {
    let server = RedisServer::start();
    let (one, two) = (connect(&server).subscription_bus(), connect(&server).subscription_bus());
    let mut rx_two = two.subscribe();
    until("subscribed", || two.is_connected()).await;
    // Redis holds every command for 12 s: the connection stays open but does not answer, so
    // redis-rs sees no disconnection; the health check (every 10 s) finds it.
    assert_eq!(server.command("CLIENT PAUSE 12000 ALL"), "+OK");
    until("the silent subscription noticed", || !two.is_connected()).await;
    until("subscribed anew once Redis answers", || two.is_connected()).await;
    assert_eq!(next(&mut rx_two).await, Ok(ChangeEvent::Resync), "told it may have missed events");
    publish_until_heard(&one, &mut rx_two, ChangeEvent::PromptsListChanged).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tasks_stop_when_the_bus_is_dropped() {
    let server = RedisServer::start();
    let bus = connect(&server).subscription_bus();
    let mut rx = bus.subscribe();
    until("subscribed", || bus.is_connected()).await;
    let client = redis::Client::open(server.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let subscribers = || {
        let mut conn = conn.clone();
        async move {
            let counts: Vec<(String, i64)> =
                redis::cmd("PUBSUB").arg("NUMSUB").arg("mcp:bus").query_async(&mut conn).await.unwrap();
            counts[0].1
        }
    };
    assert_eq!(subscribers().await, 1);
    drop(bus);
    let deadline = Instant::now() + Duration::from_secs(15);
    while subscribers().await != 0 {
        assert!(Instant::now() < deadline, "the subscriber is still there");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(rx.recv().await, Err(RecvError::Closed), "its receivers are told the bus closed");
    let _: () = redis::cmd("PING").query_async(&mut conn).await.unwrap();
}

/// A server of the fleet: a tool, the bus of `redis`.
fn instance(redis: &Redis) -> (Server, Arc<RedisBus>) {
    let bus = Arc::new(redis.subscription_bus());
    let echo = ToolDef::new("echo", json!({"type": "object"}), |_args, _ctx| async move {
        Ok::<_, ToolError>(mcp_types::CallToolResult::success(vec![]))
    })
    .unwrap();
    let server = Server::builder("fleet", "1.0.0").tool(echo).subscription_bus(bus.clone()).build().unwrap();
    (server, bus)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_on_one_instance_hears_a_tool_added_on_another() {
    let server = RedisServer::start();
    let (one, bus_one) = instance(&connect(&server));
    let (two, _bus_two) = instance(&connect(&server));
    let (ours, theirs) = memory(64);
    one.connect(theirs);
    let mut wire = Wire::new(ours).with_timeout(Duration::from_secs(10));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let params = json!({"_meta": meta, "notifications": {"toolsListChanged": true}});
    wire.send(json!({"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen", "params": params})).await;
    let ack = wire.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    until("instance one subscribed", || bus_one.is_connected()).await;

    let added = ToolDef::new("added", json!({"type": "object"}), |_args, _ctx| async move {
        Ok::<_, ToolError>(mcp_types::CallToolResult::success(vec![]))
    })
    .unwrap();
    two.add_tool(added).await.unwrap();
    let changed = wire.recv().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed", "{changed}");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen");
}
