//! `RedisTaskStore` against a real redis-server: the cases of `MemoryTaskStore`'s tests (owner
//! scoping, terminal statuses, ttl expiry, the bound on live tasks, paging, input requests),
//! every transition, Redis expiry of every key, two handles (two instances) sharing tasks, a
//! race of finish against cancel with one winner, Redis killed and back; then two servers
//! sharing the store, a task started through one and served by the other.

use std::time::{Duration, Instant};

use mcp_redis::{Redis, RedisConfig, RedisTaskStore};
use mcp_server::tasks::{MAX_INPUT_REQUESTS, TaskPage, TaskStore, TaskStoreError};
use mcp_test_support::redis::RedisServer;
use mcp_types::{ErrorObject, TaskStatus};
use serde_json::{Value, json};

const LONG: Duration = Duration::from_secs(60);

fn store(server: &RedisServer) -> RedisTaskStore {
    Redis::connect(&server.url()).unwrap().task_store()
}

/// The integer of a reply line (`:42`).
fn int(reply: &str) -> i64 {
    reply.trim_start_matches(':').parse().unwrap_or_else(|_| panic!("not an integer reply: {reply}"))
}

/// Polls `check` until it holds, for at most `within`.
async fn until(within: Duration, what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !check().await {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn ask(key: &str) -> Value {
    json!({"method": "elicitation/create", "params": {"message": key}})
}

#[tokio::test]
async fn tasks_belong_to_their_owner_and_keep_a_terminal_status() {
    let redis = RedisServer::start();
    let store = store(&redis);
    let task = store.create("alice", LONG, Duration::from_secs(1)).await.unwrap();
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!((task.ttl, task.poll_interval), (Some(60_000), Some(1000)));
    assert!(task.task_id.len() >= 22, "{}", task.task_id);
    assert!(humantime::parse_rfc3339(&task.created_at).is_ok(), "{}", task.created_at);
    let stored = store.get("alice", &task.task_id).await.unwrap();
    assert_eq!(stored.task, task);
    assert!(stored.outcome.is_none());
    // Unguessable: another id is another task.
    assert_ne!(store.create("alice", LONG, LONG).await.unwrap().task_id, task.task_id);
    assert!(store.get("bob", &task.task_id).await.is_none(), "another owner sees it");
    assert!(store.get("alice", "not-an-id").await.is_none());
    assert!(store.set_status("bob", &task.task_id, TaskStatus::Cancelled, None).await.is_none());
    let done = store.finish("alice", &task.task_id, TaskStatus::Completed, Ok(json!({"content": []}))).await;
    assert_eq!(done.unwrap().status, TaskStatus::Completed);
    let again = store.set_status("alice", &task.task_id, TaskStatus::Cancelled, None).await.unwrap();
    assert_eq!(again.status, TaskStatus::Completed, "a terminal status changed");
    let again = store.finish("alice", &task.task_id, TaskStatus::Failed, Ok(Value::Null)).await.unwrap();
    assert_eq!(again.status, TaskStatus::Completed, "a terminal status changed");
    assert!(store.finish("bob", &task.task_id, TaskStatus::Failed, Ok(Value::Null)).await.is_none());
    let stored = store.get("alice", &task.task_id).await.unwrap();
    assert_eq!(stored.outcome.unwrap().unwrap(), json!({"content": []}), "the outcome is kept as it was");
    // A task past its ttl (from its end) is unknown.
    let gone = store.create("alice", Duration::ZERO, Duration::ZERO).await.unwrap();
    store.finish("alice", &gone.task_id, TaskStatus::Completed, Ok(Value::Null)).await;
    assert!(store.get("alice", &gone.task_id).await.is_none());
    assert!(store.set_status("alice", &gone.task_id, TaskStatus::Cancelled, None).await.is_none());
}

#[tokio::test]
async fn every_transition_from_working_and_none_from_a_terminal_status() {
    let redis = RedisServer::start();
    let store = store(&redis);
    let id = store.create("a", LONG, LONG).await.unwrap().task_id;
    let waiting = store.set_status("a", &id, TaskStatus::InputRequired, Some("asking".into())).await.unwrap();
    assert_eq!((waiting.status, waiting.status_message.as_deref()), (TaskStatus::InputRequired, Some("asking")));
    let back = store.set_status("a", &id, TaskStatus::Working, None).await.unwrap();
    assert_eq!((back.status, back.status_message), (TaskStatus::Working, None));
    let failed = store.finish("a", &id, TaskStatus::Failed, Err(ErrorObject::internal_error("boom"))).await.unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert!(failed.status_message.as_deref().is_some_and(|m| m.contains("boom")), "{failed:?}");
    let stored = store.get("a", &id).await.unwrap();
    let error = stored.outcome.unwrap().unwrap_err();
    assert_eq!((error.code, error.message.contains("boom")), (-32603, true), "{error:?}");
    for status in [TaskStatus::Working, TaskStatus::InputRequired, TaskStatus::Cancelled] {
        assert_eq!(store.set_status("a", &id, status, None).await.unwrap().status, TaskStatus::Failed);
    }
    // Cancelled from input_required: terminal, without outcome; finish does nothing then.
    let id = store.create("a", LONG, LONG).await.unwrap().task_id;
    store.set_status("a", &id, TaskStatus::InputRequired, None).await.unwrap();
    let cancelled = store.set_status("a", &id, TaskStatus::Cancelled, Some("by request".into())).await.unwrap();
    assert_eq!((cancelled.status, cancelled.status_message.as_deref()), (TaskStatus::Cancelled, Some("by request")));
    let after = store.finish("a", &id, TaskStatus::Completed, Ok(json!({}))).await.unwrap();
    assert_eq!(after.status, TaskStatus::Cancelled);
    assert!(store.get("a", &id).await.unwrap().outcome.is_none(), "a cancelled task has no outcome");
    // Completed straight from working, with a status message cleared.
    let id = store.create("a", LONG, LONG).await.unwrap().task_id;
    store.set_status("a", &id, TaskStatus::Working, Some("halfway".into())).await.unwrap();
    let done = store.finish("a", &id, TaskStatus::Completed, Ok(json!({"ok": 1}))).await.unwrap();
    assert_eq!((done.status, done.status_message), (TaskStatus::Completed, None));
    // A working task's message (its progress, 2026-07-28); none of a task waiting for input.
    let id = store.create("a", LONG, LONG).await.unwrap().task_id;
    let said = store.set_message("a", &id, "step 1 of 3".into()).await.unwrap();
    assert_eq!((said.status, said.status_message.as_deref()), (TaskStatus::Working, Some("step 1 of 3")));
    assert!(store.set_message("b", &id, "no".into()).await.is_none(), "another owner");
    store.request_input("a", &id, "k", ask("k")).await.unwrap();
    assert!(store.set_message("a", &id, "no".into()).await.is_none(), "input_required");
    // Failed by a result with isError (2025-11-25): its text says why.
    let id = store.create("a", LONG, LONG).await.unwrap().task_id;
    let result = json!({"content": [{"type": "text", "text": "the build broke"}], "isError": true});
    let failed = store.finish("a", &id, TaskStatus::Failed, Ok(result)).await.unwrap();
    assert_eq!(failed.status_message.as_deref(), Some("the build broke"));
    assert_eq!(store.get("a", &id).await.unwrap().task.status_message.as_deref(), Some("the build broke"));
}

#[tokio::test]
async fn tasks_expire_with_their_ttl_as_a_redis_expiry_and_every_key_expires() {
    let redis = RedisServer::start();
    let store = store(&redis);
    let id = store.create("a", LONG, LONG).await.unwrap().task_id;
    let pttl = int(&redis.command(&format!("PTTL mcp:{{tasks}}:task:{id}")));
    assert!(pttl > 55_000 && pttl <= 60_000, "{pttl}");
    // Ended, it is kept its ttl from then.
    store.request_input("a", &id, "k", ask("k")).await.unwrap();
    store.finish("a", &id, TaskStatus::Completed, Ok(json!({}))).await.unwrap();
    let after = int(&redis.command(&format!("PTTL mcp:{{tasks}}:task:{id}")));
    assert!(after > 55_000 && after <= 60_000, "{after}");
    let short = store.create("a", Duration::from_secs(1), LONG).await.unwrap().task_id;
    assert!(store.get("a", &short).await.is_some());
    store.finish("a", &short, TaskStatus::Completed, Ok(json!({}))).await.unwrap();
    let expired = async || store.get("a", &short).await.is_none();
    until(Duration::from_secs(5), "the task expired", expired).await;
    assert_eq!(int(&redis.command(&format!("EXISTS mcp:{{tasks}}:task:{short}"))), 0);
    let page = store.list("a", None, 10).await.unwrap();
    assert_eq!(page.tasks.iter().map(|t| &t.task_id).collect::<Vec<_>>(), [&id], "the expired one is not listed");
    // Every key the store wrote has an expiry.
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query_async(&mut conn).await.unwrap();
    assert!(keys.len() >= 4, "{keys:?}");
    for key in keys {
        let pttl: i64 = redis::cmd("PTTL").arg(&key).query_async(&mut conn).await.unwrap();
        assert!(pttl > 0, "{key} has no expiry ({pttl})");
    }
}

#[tokio::test]
async fn a_running_task_outlives_its_ttl_and_its_result_is_kept_its_ttl_from_its_end() {
    let redis = RedisServer::start();
    let store = store(&redis);
    let pttl = |id: &str| int(&redis.command(&format!("PTTL mcp:{{tasks}}:task:{id}")));
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let mut live = async |id: &str| -> f64 {
        redis::cmd("ZSCORE").arg("mcp:{tasks}:live").arg(id).query_async(&mut conn).await.unwrap()
    };
    for end in [TaskStatus::Completed, TaskStatus::Cancelled] {
        // A 300 ms ttl: the running task is held for its lease (a minute), not its ttl.
        let id = store.create("a", Duration::from_millis(300), LONG).await.unwrap().task_id;
        assert!(pttl(&id) > 55_000, "a running task expires with its ttl: {}", pttl(&id));
        store.request_input("a", &id, "k", ask("k")).await.unwrap();
        assert!(pttl(&id) > 55_000, "{}", pttl(&id));
        let leased = live(&id).await;
        if end == TaskStatus::Completed {
            store.finish("a", &id, end.clone(), Ok(json!({"content": []}))).await.unwrap();
        } else {
            store.set_status("a", &id, end.clone(), None).await.unwrap();
        }
        // Ended: kept its ttl from now, in the live set too.
        assert!(pttl(&id) > 0 && pttl(&id) <= 300, "{}", pttl(&id));
        let ends = live(&id).await;
        assert!(ends < leased - 50_000.0, "the live set still counts the lease: {ends} against {leased}");
        assert_eq!(store.get("a", &id).await.unwrap().task.status, end);
        let expired = async || store.get("a", &id).await.is_none();
        until(Duration::from_secs(5), "the ended task expired", expired).await;
    }
    // A ttl of zero: kept while it runs, gone when it ends.
    let id = store.create("a", Duration::ZERO, LONG).await.unwrap().task_id;
    assert!(store.get("a", &id).await.is_some(), "a running task with a zero ttl is gone");
    let done = store.finish("a", &id, TaskStatus::Completed, Ok(json!({}))).await.unwrap();
    assert_eq!(done.status, TaskStatus::Completed, "the task as it ended");
    assert!(store.get("a", &id).await.is_none());
}

#[tokio::test]
async fn a_running_task_lives_on_a_lease_its_instance_renews() {
    let redis = RedisServer::start();
    let lease = Duration::from_millis(600);
    let store = store(&redis).running_lease(lease);
    assert_eq!(store.keep_alive_interval(), Some(lease / 3));
    let pttl = |id: &str| int(&redis.command(&format!("PTTL mcp:{{tasks}}:task:{id}")));
    let id = store.create("a", LONG, LONG).await.unwrap().task_id;
    assert!(pttl(&id) > 0 && pttl(&id) <= 600, "{}", pttl(&id));
    // Renewed while it runs (by its instance; here by hand), by its owner only.
    redis.command(&format!("PEXPIRE mcp:{{tasks}}:task:{id} 100"));
    store.keep_alive("b", &id).await;
    assert!(pttl(&id) <= 100, "another owner renewed it: {}", pttl(&id));
    store.keep_alive("a", &id).await;
    assert!(pttl(&id) > 100, "not renewed: {}", pttl(&id));
    // Ended: renewing changes nothing of its ttl (a minute).
    store.finish("a", &id, TaskStatus::Completed, Ok(json!({}))).await.unwrap();
    assert!(pttl(&id) > 55_000, "{}", pttl(&id));
    store.keep_alive("a", &id).await;
    assert!(pttl(&id) > 55_000, "{}", pttl(&id));
    // An instance that died renews nothing: its task goes with the lease.
    let orphan = store.create("a", LONG, LONG).await.unwrap().task_id;
    let gone = async || store.get("a", &orphan).await.is_none();
    until(Duration::from_secs(5), "the orphan task expired", gone).await;
}

#[tokio::test]
async fn a_full_store_refuses_new_tasks_but_expired_ones_make_room_and_redis_stays_bounded() {
    let redis = RedisServer::start();
    let store = store(&redis).max_tasks(3);
    for _ in 0..300 {
        let id = store.create("a", Duration::ZERO, Duration::ZERO).await.unwrap().task_id;
        store.finish("a", &id, TaskStatus::Completed, Ok(Value::Null)).await.unwrap();
    }
    assert!(int(&redis.command("DBSIZE")) <= 4, "{}", redis.command("DBSIZE"));
    let store = store.max_tasks(2);
    store.create("a", LONG, LONG).await.unwrap();
    let short = store.create("b", Duration::from_secs(1), LONG).await.unwrap().task_id;
    assert!(matches!(store.create("c", LONG, LONG).await, Err(TaskStoreError::Full(2))));
    store.set_status("b", &short, TaskStatus::Cancelled, None).await.unwrap();
    assert!(matches!(store.create("c", LONG, LONG).await, Err(TaskStoreError::Full(2))), "an ended task counts");
    // Once the short one has expired (a second after its end), there is room again.
    let room = async || store.create("c", LONG, LONG).await.is_ok();
    until(Duration::from_secs(5), "room for a new task", room).await;
    assert!(matches!(store.create("c", LONG, LONG).await, Err(TaskStoreError::Full(2))));
    // Many tasks of one owner expiring: its index stays bounded by the live ones.
    let store = store.max_tasks(5);
    let index = format!("ZCARD mcp:{{tasks}}:owner:{}", sha1_smol::Sha1::from("d").digest());
    for _ in 0..50 {
        if let Ok(task) = store.create("d", Duration::from_millis(1), LONG).await {
            store.finish("d", &task.task_id, TaskStatus::Completed, Ok(Value::Null)).await;
        }
        assert!(int(&redis.command("ZCARD mcp:{tasks}:live")) <= 5);
        assert!(int(&redis.command(&index)) <= 6, "{}", redis.command(&index));
    }
    assert!(int(&redis.command(&index)) >= 1, "the index is where the test looks");
}

#[tokio::test]
async fn one_owner_cannot_take_every_task_of_the_fleet() {
    let redis = RedisServer::start();
    let store = store(&redis).max_tasks(10).max_per_owner(2);
    let other = store.clone(); // another instance, the same bound
    let first = store.create("greedy", LONG, LONG).await.unwrap().task_id;
    other.create("greedy", LONG, LONG).await.unwrap();
    assert!(matches!(store.create("greedy", LONG, LONG).await, Err(TaskStoreError::OwnerFull(2))));
    assert!(matches!(other.create("greedy", LONG, LONG).await, Err(TaskStoreError::OwnerFull(2))));
    for _ in 0..2 {
        store.create("modest", LONG, LONG).await.unwrap();
    }
    // An ended task counts until its ttl has passed; then it makes room for its owner.
    store.finish("greedy", &first, TaskStatus::Completed, Ok(Value::Null)).await.unwrap();
    assert!(matches!(store.create("greedy", LONG, LONG).await, Err(TaskStoreError::OwnerFull(2))));
    let short = store.max_per_owner(1);
    let id = short.create("brief", Duration::from_millis(50), LONG).await.unwrap().task_id;
    short.finish("brief", &id, TaskStatus::Completed, Ok(Value::Null)).await.unwrap();
    let room = async || short.create("brief", LONG, LONG).await.is_ok();
    until(Duration::from_secs(5), "room for the owner's next task", room).await;
}

#[tokio::test]
async fn lists_page_by_creation_and_only_the_owners_tasks() {
    let redis = RedisServer::start();
    let store = store(&redis);
    let mut mine = Vec::new();
    for i in 0..5 {
        mine.push(store.create("a", LONG, LONG).await.unwrap().task_id);
        if i % 2 == 0 {
            store.create("b", LONG, LONG).await.unwrap();
            // An expired task of the owner between the others is skipped.
            let gone = store.create("a", Duration::ZERO, LONG).await.unwrap().task_id;
            store.finish("a", &gone, TaskStatus::Completed, Ok(Value::Null)).await.unwrap();
        }
    }
    let TaskPage { tasks: first, next_cursor: next } = store.list("a", None, 2).await.unwrap();
    assert_eq!(first.iter().map(|t| &t.task_id).collect::<Vec<_>>(), [&mine[0], &mine[1]]);
    let TaskPage { tasks: second, next_cursor: next } = store.list("a", next.as_deref(), 2).await.unwrap();
    assert_eq!(second.iter().map(|t| &t.task_id).collect::<Vec<_>>(), [&mine[2], &mine[3]]);
    let TaskPage { tasks: third, next_cursor: next } = store.list("a", next.as_deref(), 2).await.unwrap();
    assert_eq!(third.iter().map(|t| &t.task_id).collect::<Vec<_>>(), [&mine[4]]);
    assert!(next.is_none());
    let all = store.list("a", None, 100).await.unwrap();
    assert_eq!(all.tasks.len(), 5);
    assert!(all.next_cursor.is_none());
    assert_eq!(store.list("b", None, 100).await.unwrap().tasks.len(), 3);
    assert!(store.list("nobody", None, 100).await.unwrap().tasks.is_empty());
    for bad in ["not a cursor", "-1", "99999999999999999999999"] {
        let e = store.list("a", Some(bad), 2).await.unwrap_err();
        assert_eq!(e.code, -32602, "{bad}: {e:?}");
    }
}

#[tokio::test]
async fn input_requests_are_bounded_and_only_outstanding_keys_are_answered() {
    let redis = RedisServer::start();
    let store = store(&redis);
    let id = store.create("a", LONG, LONG).await.unwrap().task_id;
    let task = store.request_input("a", &id, "k1", ask("k1")).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::InputRequired);
    assert!(store.request_input("b", &id, "k1", ask("k1")).await.unwrap().is_none(), "another owner");
    for i in 2..=MAX_INPUT_REQUESTS {
        store.request_input("a", &id, &format!("k{i}"), ask("k")).await.unwrap();
    }
    // Asking again for an outstanding key is not one more.
    store.request_input("a", &id, "k1", ask("k1")).await.unwrap().unwrap();
    assert!(matches!(
        store.request_input("a", &id, "one-too-many", ask("k")).await,
        Err(TaskStoreError::TooManyInputs(MAX_INPUT_REQUESTS))
    ));
    assert_eq!(store.get("a", &id).await.unwrap().input_requests["k1"], ask("k1"));
    // Unknown keys are ignored; answered ones stop being outstanding.
    let mut answers = serde_json::Map::new();
    answers.insert("k1".into(), json!({"action": "accept"}));
    answers.insert("nope".into(), json!(1));
    let task = store.answer_input("a", &id, answers).await.unwrap();
    assert_eq!(task.status, TaskStatus::InputRequired, "others are outstanding");
    assert!(store.answer_input("b", &id, serde_json::Map::new()).await.is_none(), "another owner");
    let stored = store.get("a", &id).await.unwrap();
    assert_eq!(stored.input_requests.len(), MAX_INPUT_REQUESTS - 1);
    assert_eq!(stored.input_responses.keys().collect::<Vec<_>>(), ["k1"]);
    assert_eq!(store.take_input("b", &id, "k1").await, None, "another owner");
    assert_eq!(store.take_input("a", &id, "k1").await, Some(json!({"action": "accept"})));
    assert_eq!(store.take_input("a", &id, "k1").await, None, "taken once");
    let rest: serde_json::Map<String, Value> = (2..=MAX_INPUT_REQUESTS).map(|i| (format!("k{i}"), json!({}))).collect();
    let task = store.answer_input("a", &id, rest).await.unwrap();
    assert_eq!((task.status, task.status_message), (TaskStatus::Working, None));
    // Room again for new requests; cancelling drops what is outstanding and delivered.
    store.request_input("a", &id, "late", ask("late")).await.unwrap();
    store.set_status("a", &id, TaskStatus::Cancelled, None).await;
    let stored = store.get("a", &id).await.unwrap();
    assert!(stored.input_requests.is_empty() && stored.input_responses.is_empty());
    let after = store.request_input("a", &id, "x", ask("x")).await.unwrap().unwrap();
    assert_eq!(after.status, TaskStatus::Cancelled, "a terminal task asks nothing");
    assert!(store.get("a", &id).await.unwrap().input_requests.is_empty());
}

#[tokio::test]
async fn values_are_bounded_in_size() {
    let redis = RedisServer::start();
    let store = store(&redis).max_value_bytes(1000);
    let big = json!({"content": [{"type": "text", "text": "x".repeat(2000)}]});
    let id = store.create("a", LONG, LONG).await.unwrap().task_id;
    let failed = store.finish("a", &id, TaskStatus::Completed, Ok(big.clone())).await.unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    let error = store.get("a", &id).await.unwrap().outcome.unwrap().unwrap_err();
    assert!(error.message.contains("too large"), "{error:?}");
    let id = store.create("a", LONG, LONG).await.unwrap().task_id;
    assert!(matches!(store.request_input("a", &id, "k", big.clone()).await, Err(TaskStoreError::Backend(_))));
    store.request_input("a", &id, "k", ask("k")).await.unwrap();
    let answers: serde_json::Map<String, Value> = [("k".to_owned(), big)].into_iter().collect();
    assert_eq!(store.answer_input("a", &id, answers).await.unwrap().status, TaskStatus::InputRequired);
    assert!(store.get("a", &id).await.unwrap().input_responses.is_empty(), "a too large answer is ignored");
}

#[tokio::test]
async fn two_instances_see_and_change_each_others_tasks() {
    let redis = RedisServer::start();
    let (one, two) = (store(&redis), store(&redis));
    let id = one.create("a", LONG, LONG).await.unwrap().task_id;
    assert_eq!(two.get("a", &id).await.unwrap().task.status, TaskStatus::Working);
    assert!(two.get("b", &id).await.is_none());
    assert_eq!(two.list("a", None, 10).await.unwrap().tasks[0].task_id, id);
    // Input asked on one, answered on the other, taken on the first.
    one.request_input("a", &id, "k", ask("k")).await.unwrap();
    let waiting = two.get("a", &id).await.unwrap();
    assert_eq!((waiting.task.status, waiting.input_requests["k"].clone()), (TaskStatus::InputRequired, ask("k")));
    let answers: serde_json::Map<String, Value> =
        [("k".to_owned(), json!({"action": "decline"}))].into_iter().collect();
    assert_eq!(two.answer_input("a", &id, answers).await.unwrap().status, TaskStatus::Working);
    assert_eq!(one.take_input("a", &id, "k").await, Some(json!({"action": "decline"})));
    // Finished on one: the other reads the outcome; cancelled on the other: the first sees it.
    one.finish("a", &id, TaskStatus::Completed, Ok(json!({"n": 1}))).await.unwrap();
    assert_eq!(two.get("a", &id).await.unwrap().outcome.unwrap().unwrap(), json!({"n": 1}));
    let id = one.create("a", LONG, LONG).await.unwrap().task_id;
    two.set_status("a", &id, TaskStatus::Cancelled, None).await.unwrap();
    assert_eq!(one.get("a", &id).await.unwrap().task.status, TaskStatus::Cancelled);
    let late = one.finish("a", &id, TaskStatus::Completed, Ok(json!({}))).await.unwrap();
    assert_eq!(late.status, TaskStatus::Cancelled, "the work ending later does not undo the cancel");
}

/// The task as stored after a finish (`Completed`, with a result) and a cancel raced: it holds
/// the winner's status, a cancelled task has no result, a finished one was not cancelled.
async fn check_winner(store: &RedisTaskStore, id: &str, winner: TaskStatus) {
    let stored = store.get("a", id).await.unwrap();
    assert_eq!(stored.task.status, winner, "task {id}");
    match winner {
        TaskStatus::Completed => assert_eq!(stored.outcome.unwrap().unwrap(), json!({"n": 1}), "task {id}"),
        TaskStatus::Cancelled => assert!(stored.outcome.is_none(), "task {id}: a cancelled task got the late result"),
        other => panic!("task {id}: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_race_of_finish_and_cancel_from_two_instances_has_exactly_one_winner() {
    let redis = RedisServer::start();
    let (one, two) = (store(&redis), store(&redis));
    let finish = |id: String| {
        let one = one.clone();
        async move { one.finish("a", &id, TaskStatus::Completed, Ok(json!({"n": 1}))).await.unwrap().status }
    };
    let cancel = |id: String| {
        let two = two.clone();
        async move { two.set_status("a", &id, TaskStatus::Cancelled, None).await.unwrap().status }
    };
    // Both orders, each on half of the tasks: the first to reach Redis wins, and the loser
    // sees the winner's status (never its own).
    let mut winners = (0, 0);
    for i in 0..100 {
        let id = one.create("a", LONG, LONG).await.unwrap().task_id;
        let (first, second) = if i % 2 == 0 {
            (finish(id.clone()).await, cancel(id.clone()).await)
        } else {
            (cancel(id.clone()).await, finish(id.clone()).await)
        };
        let expected = || if i % 2 == 0 { TaskStatus::Completed } else { TaskStatus::Cancelled };
        assert_eq!((first, second), (expected(), expected()), "task {i}: the first wins, the second sees it");
        check_winner(&one, &id, expected()).await;
        check_winner(&two, &id, expected()).await;
        if expected() == TaskStatus::Completed { winners.0 += 1 } else { winners.1 += 1 }
    }
    assert_eq!(winners, (50, 50), "(finished, cancelled)");
    // Then at once, the order Redis's: whichever won, both see it and the task agrees.
    for _ in 0..100 {
        let id = one.create("a", LONG, LONG).await.unwrap().task_id;
        let (finished, cancelled) = (tokio::spawn(finish(id.clone())), tokio::spawn(cancel(id.clone())));
        let (finished, cancelled) = (finished.await.unwrap(), cancelled.await.unwrap());
        assert_eq!(finished, cancelled, "both saw the one outcome");
        check_winner(&one, &id, finished).await;
    }
}

#[tokio::test]
async fn with_redis_down_calls_fail_within_the_timeout_and_work_again_once_it_is_back() {
    let mut redis = RedisServer::start();
    let timeout = Duration::from_millis(300);
    let store = Redis::connect_with(RedisConfig::new(redis.url()).timeout(timeout)).unwrap().task_store();
    let id = store.create("a", LONG, LONG).await.unwrap().task_id;
    redis.kill();
    let bound = timeout + Duration::from_millis(700);
    let timed = async |name: &str, call: std::pin::Pin<Box<dyn std::future::Future<Output = bool> + '_>>| {
        let start = Instant::now();
        assert!(call.await, "{name}: the answer for a failure");
        assert!(start.elapsed() < bound, "{name} took {:?}", start.elapsed());
    };
    timed("create", Box::pin(async { matches!(store.create("a", LONG, LONG).await, Err(TaskStoreError::Backend(_))) }))
        .await;
    timed("get", Box::pin(async { store.get("a", &id).await.is_none() })).await;
    timed("set_status", Box::pin(async { store.set_status("a", &id, TaskStatus::Cancelled, None).await.is_none() }))
        .await;
    let finish = store.finish("a", &id, TaskStatus::Completed, Ok(json!({})));
    timed("finish", Box::pin(async { finish.await.is_none() })).await;
    timed("list", Box::pin(async { store.list("a", None, 10).await.is_err_and(|e| e.code == -32603) })).await;
    let request = store.request_input("a", &id, "k", ask("k"));
    timed("request_input", Box::pin(async { matches!(request.await, Err(TaskStoreError::Backend(_))) })).await;
    timed("answer_input", Box::pin(async { store.answer_input("a", &id, Default::default()).await.is_none() })).await;
    timed("take_input", Box::pin(async { store.take_input("a", &id, "k").await.is_none() })).await;
    // Back (empty: the test's Redis keeps nothing): the store works again by itself.
    redis.restart();
    let works = async || store.create("a", LONG, LONG).await.is_ok();
    until(Duration::from_secs(10), "the store works again", works).await;
    let id = store.create("a", LONG, LONG).await.unwrap().task_id;
    assert_eq!(store.get("a", &id).await.unwrap().task.status, TaskStatus::Working);
    assert_eq!(store.list("a", None, 10).await.unwrap().tasks.len(), 2);
}

// ---------------------------------------------------------------------------------------------
// Two servers sharing the store.

mod servers {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use mcp_jsonrpc::transport::memory;
    use mcp_redis::Redis;
    use mcp_server::{Context, Server, TaskConfig, TaskSupport, ToolDef, ToolError};
    use mcp_test_support::redis::RedisServer;
    use mcp_test_support::{Session, Wire, validate};
    use mcp_types::{CallToolResult, ContentBlock, ElicitRequestFormParams, ElicitRequestParams};
    use serde_json::{Value, json};
    use tokio::sync::Semaphore;

    const EXT: &str = "io.modelcontextprotocol/tasks";

    fn ok(text: impl Into<String>) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(vec![ContentBlock::text(text.into())]))
    }

    fn form(message: &str) -> ElicitRequestParams {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let schema: mcp_types::ElicitRequestFormParamsRequestedSchema = serde_json::from_value(schema).unwrap();
        ElicitRequestParams::ElicitRequestForm(ElicitRequestFormParams::new(message, schema))
    }

    /// An instance of the fleet: the same tools, tasks in `redis`; `gate` holds `slow`.
    fn instance(redis: &Redis, gate: Arc<Semaphore>) -> Server {
        let object = || json!({"type": "object"});
        let slow = ToolDef::new("slow", object(), move |_args, _ctx: Context| {
            let gate = gate.clone();
            async move {
                gate.acquire().await.map_err(|e| ToolError::Tool(e.to_string()))?.forget();
                ok("slow done")
            }
        })
        .unwrap()
        .task_support(TaskSupport::Optional);
        let ask = ToolDef::new("ask", object(), |_args, ctx: Context| async move {
            let answer = ctx.elicit_raw_as("name", form("Name?")).await?;
            let name = answer.content.as_ref().and_then(|c| serde_json::to_value(c.get("name")?).ok());
            ok(format!("hello {}", name.as_ref().and_then(Value::as_str).unwrap_or("?")))
        })
        .unwrap()
        .task_support(TaskSupport::Optional);
        let tasks = TaskConfig::new().store(redis.task_store()).poll_interval(Duration::from_millis(50));
        Server::builder("fleet", "1.0.0").tools([slow, ask]).tasks(tasks).build().unwrap()
    }

    /// A client of the 2026-07-28 revision declaring the tasks extension.
    struct Client {
        wire: Wire,
        next: i64,
    }

    impl Client {
        fn of(server: &Server) -> Client {
            let (ours, theirs) = memory(64);
            server.connect(theirs);
            Client { wire: Wire::new(ours).with_timeout(Duration::from_secs(30)), next: 0 }
        }

        async fn ok(&mut self, method: &str, mut params: Value) -> Value {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {EXT: {}}},
            });
            self.next += 1;
            let id = self.next;
            self.wire.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
            let answer = loop {
                let answer = self.wire.recv().await;
                if answer.get("id") == Some(&json!(id)) {
                    break answer;
                }
            };
            let result = answer.get("result").cloned().unwrap_or_else(|| panic!("{method}: {answer}"));
            validate("2026-07-28", "Result", &result);
            result
        }

        async fn get(&mut self, id: &str) -> Value {
            self.ok("tasks/get", json!({"taskId": id})).await
        }

        /// Polls `tasks/get` until the task is in `status`.
        async fn until(&mut self, id: &str, status: &str) -> Value {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let task = self.get(id).await;
                if task["status"] == status {
                    return task;
                }
                assert!(Instant::now() < deadline, "task {id} never reached {status}: {task}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }

    #[tokio::test]
    async fn an_extension_task_started_on_one_instance_is_served_by_another() {
        let redis = RedisServer::start();
        let (gate, other_gate) = (Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0)));
        let one = instance(&Redis::connect(&redis.url()).unwrap(), gate.clone());
        let two = instance(&Redis::connect(&redis.url()).unwrap(), other_gate);
        let (mut c1, mut c2) = (Client::of(&one), Client::of(&two));
        let created = c1.ok("tools/call", json!({"name": "slow", "arguments": {}})).await;
        assert_eq!(created["resultType"], "task", "{created}");
        let id = created["taskId"].as_str().unwrap().to_owned();
        assert_eq!(c2.get(&id).await["status"], "working");
        gate.add_permits(1); // the work runs on the first instance
        let done = c2.until(&id, "completed").await;
        assert_eq!(done["result"]["content"][0]["text"], "slow done", "{done}");

        // Input asked by a handler on the first, answered through the second.
        let id =
            c1.ok("tools/call", json!({"name": "ask", "arguments": {}})).await["taskId"].as_str().unwrap().to_owned();
        let waiting = c2.until(&id, "input_required").await;
        assert_eq!(waiting["inputRequests"]["name"]["method"], "elicitation/create", "{waiting}");
        let answers = json!({"name": {"action": "accept", "content": {"name": "Ann"}}});
        c2.ok("tasks/update", json!({"taskId": id, "inputResponses": answers})).await;
        let done = c1.until(&id, "completed").await;
        assert_eq!(done["result"]["content"][0]["text"], "hello Ann", "{done}");

        // Cancelled through the second: both see it cancelled, and the handler waiting for
        // input on the first stops asking (it polls the record).
        let id =
            c1.ok("tools/call", json!({"name": "ask", "arguments": {}})).await["taskId"].as_str().unwrap().to_owned();
        c2.until(&id, "input_required").await;
        c2.ok("tasks/cancel", json!({"taskId": id})).await;
        let cancelled = c1.get(&id).await;
        assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
        assert!(cancelled.get("inputRequests").is_none(), "{cancelled}");
    }

    #[tokio::test]
    async fn the_instance_running_a_task_renews_its_lease_until_it_ends() {
        let redis = RedisServer::start();
        let gate = Arc::new(Semaphore::new(0));
        let store = Redis::connect(&redis.url()).unwrap().task_store().running_lease(Duration::from_millis(300));
        let object = json!({"type": "object"});
        let slow = ToolDef::new("slow", object, move |_args, _ctx: Context| {
            let gate = gate.clone();
            async move {
                gate.acquire().await.map_err(|e| ToolError::Tool(e.to_string()))?.forget();
                ok("slow done")
            }
        })
        .unwrap()
        .task_support(TaskSupport::Optional);
        let tasks = TaskConfig::new().store(store);
        let server = Server::builder("fleet", "1.0.0").tools([slow]).tasks(tasks).build().unwrap();
        let mut c = Client::of(&server);
        let id =
            c.ok("tools/call", json!({"name": "slow", "arguments": {}})).await["taskId"].as_str().unwrap().to_owned();
        // About to expire: the instance renews it (every 100 ms) for another lease.
        let key = format!("mcp:{{tasks}}:task:{id}");
        redis.command(&format!("PEXPIRE {key} 250"));
        let pttl = || redis.command(&format!("PTTL {key}")).trim_start_matches(':').parse::<i64>().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut last = pttl();
        loop {
            let now = pttl();
            assert!(now > 0, "the running task expired");
            if now > last {
                break;
            }
            last = now;
            assert!(Instant::now() < deadline, "never renewed");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(c.get(&id).await["status"], "working");
    }

    /// Says on its channel that it was dropped: a handler that holds it was stopped (its
    /// future dropped, or it returned).
    struct Stopped(tokio::sync::mpsc::UnboundedSender<()>);

    impl Drop for Stopped {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }

    /// An instance whose tasks and change bus are in `redis`, with one tool whose handler
    /// waits until it is cancelled, and says on `stopped` when it stops.
    fn stoppable(
        redis: &Redis,
        bus: Arc<mcp_redis::RedisBus>,
        stopped: tokio::sync::mpsc::UnboundedSender<()>,
    ) -> Server {
        let tool = ToolDef::new("stoppable", json!({"type": "object"}), move |_args, ctx: Context| {
            let stopped = Stopped(stopped.clone());
            async move {
                let _stopped = stopped;
                ctx.cancellation().cancelled().await;
                ok("stopped")
            }
        })
        .unwrap()
        .task_support(TaskSupport::Optional);
        let tasks = TaskConfig::new().store(redis.task_store());
        Server::builder("fleet", "1.0.0").tool(tool).tasks(tasks).subscription_bus(bus).build().unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_task_cancelled_through_another_instance_stops_where_it_runs() {
        let redis = RedisServer::start();
        let (stopped_tx, mut stopped) = tokio::sync::mpsc::unbounded_channel();
        let (h1, h2) = (Redis::connect(&redis.url()).unwrap(), Redis::connect(&redis.url()).unwrap());
        let (b1, b2) = (Arc::new(h1.subscription_bus()), Arc::new(h2.subscription_bus()));
        let (one, two) = (stoppable(&h1, b1.clone(), stopped_tx.clone()), stoppable(&h2, b2.clone(), stopped_tx));
        let (mut c1, mut c2) = (Client::of(&one), Client::of(&two));
        let created = c1.ok("tools/call", json!({"name": "stoppable", "arguments": {}})).await;
        let id = created["taskId"].as_str().unwrap().to_owned();
        // Both buses subscribed to Redis (their tasks start with their first use).
        let _keep = mcp_server::SubscriptionBus::subscribe(&*b2);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !(b1.is_connected() && b2.is_connected()) {
            assert!(Instant::now() < deadline, "the buses did not connect to Redis");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(c2.get(&id).await["status"], "working");
        c2.ok("tasks/cancel", json!({"taskId": id})).await;
        // The handler on the first instance sees its cancellation (the bus told it).
        tokio::time::timeout(Duration::from_secs(10), stopped.recv())
            .await
            .expect("the handler on the other instance was cancelled");
        assert_eq!(c1.get(&id).await["status"], "cancelled");
    }

    #[tokio::test]
    async fn a_2025_11_25_task_lives_in_redis() {
        let redis = RedisServer::start();
        let gate = Arc::new(Semaphore::new(0));
        let server = instance(&Redis::connect(&redis.url()).unwrap(), gate.clone());
        let (ours, theirs) = memory(64);
        server.connect(theirs);
        let mut client = Session::new(Wire::new(ours).with_timeout(Duration::from_secs(30)), "2025-11-25");
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "t", "version": "1"}});
        client.result("initialize", init).await;
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        let params = json!({"name": "slow", "arguments": {}, "task": {"ttl": 60_000}});
        client.send(json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call", "params": params})).await;
        let created = client.recv().await;
        validate("2025-11-25", "CreateTaskResult", &created["result"]);
        let id = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
        let pttl: i64 =
            redis.command(&format!("PTTL mcp:{{tasks}}:task:{id}")).trim_start_matches(':').parse().unwrap();
        assert!(pttl > 50_000 && pttl <= 60_000, "{pttl}");
        assert_eq!(client.result("tasks/get", json!({"taskId": id})).await["status"], "working");
        let listed = client.result("tasks/list", json!({})).await;
        assert_eq!(listed["tasks"][0]["taskId"], id.as_str(), "{listed}");
        gate.add_permits(1);
        // tasks/result waits for it; a status notification may come first.
        client.next += 1;
        let request = client.next;
        client.send(json!({"jsonrpc": "2.0", "id": request, "method": "tasks/result", "params": {"taskId": id}})).await;
        let answer = loop {
            let frame = client.recv().await;
            if frame.get("id") == Some(&json!(request)) {
                break frame;
            }
        };
        assert_eq!(answer["result"]["content"][0]["text"], "slow done", "{answer}");
        let e = client.error("tasks/cancel", json!({"taskId": id})).await;
        assert_eq!(e["code"], -32602, "a finished task: {e}");
    }
}
