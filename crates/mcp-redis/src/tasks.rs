//! [`RedisTaskStore`]: the tasks of a fleet (2025-11-25 tasks and the 2026-07-28 tasks
//! extension), so that a task created through one instance is read, listed, cancelled,
//! answered and its result fetched through any other.
//!
//! The semantics are those of [`MemoryTaskStore`](mcp_server::tasks::MemoryTaskStore): a task
//! belongs to its owner (another owner gets "unknown"), its id is 128 random bits, it is kept
//! while it runs and forgotten `ttl` after its end (the key's Redis expiry), a terminal status
//! never changes, at most [`max_tasks`](RedisTaskStore::max_tasks) live tasks in all. A running
//! task is held for a lease ([`running_lease`](RedisTaskStore::running_lease), a minute) that
//! the instance running it renews ([`TaskStore::keep_alive`]): the tasks of an instance that
//! died do not stay forever.
//!
//! # Keys
//!
//! | key | what | expiry |
//! |---|---|---|
//! | `prefix:{tasks}:task:<id>` | a hash: owner, status, message, timestamps, ttl, poll interval, outcome, input requests (`q:<key>`) and answers (`a:<key>`) | the lease while it runs, then the task's ttl from its end |
//! | `prefix:{tasks}:live` | a sorted set of the live tasks by expiry time (the bound on live tasks) | the latest expiry of a task |
//! | `prefix:{tasks}:owner:<sha1 of owner>` | a sorted set of the owner's tasks by creation (`tasks/list`, its cursors) | the latest expiry of the owner's tasks |
//! | `prefix:{tasks}:last` | the last creation number (creation order across instances) | 60 s |
//!
//! Every change of a task is one Lua script, so that a status moves only from a non-terminal
//! one even when two instances race (one finishing the task, the other cancelling it: exactly
//! one wins). Every key shares the hash tag `{tasks}`: on a Redis Cluster the whole store lives
//! in one slot (one shard), because creating a task checks the fleet-wide bound and orders it
//! among all tasks in the same script; the listing script reads the task keys of an owner's
//! index by their prefix (ARGV), which that slot also holds.
//!
//! # When Redis fails
//!
//! Every call gives up after [`RedisConfig::timeout`](crate::RedisConfig::timeout).
//! [`create`](TaskStore::create) and [`request_input`](TaskStore::request_input) fail with
//! [`TaskStoreError::Backend`], [`list`](TaskStore::list) with an internal error (-32603); the
//! others, whose answer cannot say "failed", log a warning and answer "unknown task" (`None`).

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::LazyLock;
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use mcp_jsonrpc::ErrorObject;
use mcp_server::tasks::{MAX_INPUT_REQUESTS, StoredTask, TaskOutcome, TaskPage, TaskStore, TaskStoreError};
use mcp_types::{Task, TaskStatus};
use redis::Script;
use serde_json::Value;

use crate::Redis;

/// What every script starts with: helpers on a task's hash.
const PRELUDE: &str = r#"
local function terminal(s) return s == 'completed' or s == 'failed' or s == 'cancelled' end
local function fields(k) return redis.call('HMGET', k, 'status', 'msg', 'created', 'updated', 'ttl', 'poll') end
local function mine(k, owner) return redis.call('HGET', k, 'owner') == owner end
local function tagged(tag, f)
  local out = {tag}
  for i = 1, 6 do out[i + 1] = f[i] end
  return out
end
local function clear_input(k)
  for _, f in ipairs(redis.call('HKEYS', k)) do
    local p = string.sub(f, 1, 2)
    if p == 'q:' or p == 'a:' then redis.call('HDEL', k, f) end
  end
  redis.call('HSET', k, 'nq', 0)
end
local function stretch(k, ttl)
  if redis.call('PTTL', k) < ttl then redis.call('PEXPIRE', k, ttl) end
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- Task id in live set `live` and owner index `index` until `ms` from now.
local function hold(live, index, id, ms)
  redis.call('ZADD', live, string.format('%.0f', now_ms() + ms), id)
  stretch(live, ms)
  stretch(index, ms)
end
-- Task `k` (id `id`) turned terminal: kept its ttl from now; with none, gone now.
local function ended(k, live, index, id)
  local ttl = tonumber(redis.call('HGET', k, 'ttl') or '0')
  if ttl <= 0 then
    redis.call('DEL', k)
    redis.call('ZREM', live, id)
    return
  end
  redis.call('PEXPIRE', k, ttl)
  hold(live, index, id, ttl)
end
"#;

/// KEYS: task, live set, owner index, last number. ARGV: max tasks, ttl (ms), owner, id,
/// timestamp, poll interval (ms), lease (ms), most live tasks of the owner (0: no bound). A
/// running task is held for the lease (renewed by its instance), its ttl counts from its end.
const CREATE: &str = r#"
local max, lease = tonumber(ARGV[1]), tonumber(ARGV[7])
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%.0f', now_ms))
local live = redis.call('ZCARD', KEYS[2])
if live >= max then return {'full', tostring(live)} end
local per_owner = tonumber(ARGV[8])
if per_owner > 0 and redis.call('ZCARD', KEYS[3]) >= per_owner then
  -- The index keeps ids that expired since: only those the live set holds count.
  for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    if not redis.call('ZSCORE', KEYS[2], id) then redis.call('ZREM', KEYS[3], id) end
  end
  local mine = redis.call('ZCARD', KEYS[3])
  if mine >= per_owner then return {'owner', tostring(mine)} end
end
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local seq = string.format('%.0f', math.max(now_us, tonumber(redis.call('GET', KEYS[4]) or '0') + 1))
redis.call('SET', KEYS[4], seq, 'PX', 60000)
redis.call('HSET', KEYS[1], 'owner', ARGV[3], 'status', 'working', 'created', ARGV[5], 'updated', ARGV[5],
  'ttl', ARGV[2], 'poll', ARGV[6], 'nq', 0)
redis.call('PEXPIRE', KEYS[1], lease)
redis.call('ZADD', KEYS[2], string.format('%.0f', now_ms + lease), ARGV[4])
stretch(KEYS[2], lease)
redis.call('ZADD', KEYS[3], seq, ARGV[4])
if redis.call('ZCARD', KEYS[3]) > max then
  -- What the live set no longer holds goes: the set just dropped what expired by this
  -- millisecond, while Redis keeps a key through its last millisecond, so asking EXISTS
  -- would keep the tasks expiring now and let the index grow past the live tasks.
  for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    if not redis.call('ZSCORE', KEYS[2], id) then redis.call('ZREM', KEYS[3], id) end
  end
end
stretch(KEYS[3], lease)
return {'ok'}
"#;

/// KEYS: task, live set, owner index. ARGV: owner, status, '1' with a message or '0',
/// message, timestamp, id.
const SET_STATUS: &str = r#"
local k = KEYS[1]
if not mine(k, ARGV[1]) then return false end
if terminal(redis.call('HGET', k, 'status')) then return fields(k) end
if terminal(ARGV[2]) then clear_input(k) end
redis.call('HSET', k, 'status', ARGV[2], 'updated', ARGV[5])
if ARGV[3] == '1' then redis.call('HSET', k, 'msg', ARGV[4]) else redis.call('HDEL', k, 'msg') end
local out = fields(k)
if terminal(ARGV[2]) then ended(k, KEYS[2], KEYS[3], ARGV[6]) end
return out
"#;

/// KEYS: task, live set, owner index. ARGV: owner, status, outcome, '1' with a message or
/// '0', message, timestamp, id.
const FINISH: &str = r#"
local k = KEYS[1]
if not mine(k, ARGV[1]) then return false end
if terminal(redis.call('HGET', k, 'status')) then return fields(k) end
clear_input(k)
redis.call('HSET', k, 'status', ARGV[2], 'updated', ARGV[6], 'outcome', ARGV[3])
if ARGV[4] == '1' then redis.call('HSET', k, 'msg', ARGV[5]) else redis.call('HDEL', k, 'msg') end
local out = fields(k)
ended(k, KEYS[2], KEYS[3], ARGV[7])
return out
"#;

/// KEYS: task. ARGV: owner, message, timestamp. The message of a `working` task.
const SET_MESSAGE: &str = r#"
local k = KEYS[1]
if not mine(k, ARGV[1]) or redis.call('HGET', k, 'status') ~= 'working' then return false end
redis.call('HSET', k, 'msg', ARGV[2], 'updated', ARGV[3])
return fields(k)
"#;

/// KEYS: task, live set, owner index. ARGV: owner, id, lease (ms). Renews a running task's
/// lease; 1 if it did.
const KEEP_ALIVE: &str = r#"
local k = KEYS[1]
if not mine(k, ARGV[1]) or terminal(redis.call('HGET', k, 'status')) then return 0 end
local lease = tonumber(ARGV[3])
redis.call('PEXPIRE', k, lease)
hold(KEYS[2], KEYS[3], ARGV[2], lease)
return 1
"#;

/// KEYS: task. ARGV: owner, key, request, timestamp, most outstanding.
const REQUEST_INPUT: &str = r#"
local k = KEYS[1]
if not mine(k, ARGV[1]) then return false end
if terminal(redis.call('HGET', k, 'status')) then return tagged('ok', fields(k)) end
local q = 'q:' .. ARGV[2]
local n = tonumber(redis.call('HGET', k, 'nq') or '0')
if redis.call('HEXISTS', k, q) == 0 then
  if n >= tonumber(ARGV[5]) then return {'many', tostring(n)} end
  redis.call('HSET', k, 'nq', n + 1)
end
redis.call('HSET', k, q, ARGV[3], 'status', 'input_required', 'msg', "waiting for the client's input",
  'updated', ARGV[4])
return tagged('ok', fields(k))
"#;

/// KEYS: task. ARGV: owner, timestamp, then key and answer pairs.
const ANSWER_INPUT: &str = r#"
local k = KEYS[1]
if not mine(k, ARGV[1]) then return false end
local n = tonumber(redis.call('HGET', k, 'nq') or '0')
local answered = false
for i = 3, #ARGV - 1, 2 do
  if redis.call('HDEL', k, 'q:' .. ARGV[i]) == 1 then
    redis.call('HSET', k, 'a:' .. ARGV[i], ARGV[i + 1])
    n = n - 1
    answered = true
  end
end
if answered then
  redis.call('HSET', k, 'nq', n, 'updated', ARGV[2])
  if n <= 0 and redis.call('HGET', k, 'status') == 'input_required' then
    redis.call('HSET', k, 'status', 'working')
    redis.call('HDEL', k, 'msg')
  end
end
return fields(k)
"#;

/// KEYS: task. ARGV: owner, key.
const TAKE_INPUT: &str = r#"
local k = KEYS[1]
if not mine(k, ARGV[1]) then return false end
local answer = redis.call('HGET', k, 'a:' .. ARGV[2])
if answer then redis.call('HDEL', k, 'a:' .. ARGV[2]) end
return answer
"#;

/// KEYS: owner index. ARGV: owner, start score ('-inf' or '(N'), page size, task key prefix.
/// The next cursor (or nil), then id and fields (7 values) per task; forgets expired ones.
const LIST: &str = r#"
local out, start, limit, count = {false}, ARGV[2], tonumber(ARGV[3]), 0
while true do
  local batch = redis.call('ZRANGEBYSCORE', KEYS[1], start, '+inf', 'WITHSCORES', 'LIMIT', 0, 100)
  if #batch == 0 then break end
  for i = 1, #batch, 2 do
    local id, score = batch[i], batch[i + 1]
    local k = ARGV[4] .. id
    if mine(k, ARGV[1]) then
      if count == limit then
        out[1] = string.sub(start, 2)
        return out
      end
      local f = fields(k)
      out[#out + 1] = id
      for j = 1, 6 do out[#out + 1] = f[j] end
      count = count + 1
    else
      redis.call('ZREM', KEYS[1], id)
    end
    start = '(' .. score
  end
end
return out
"#;

fn script(body: &str) -> Script {
    Script::new(&format!("{PRELUDE}{body}"))
}

static CREATE_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(CREATE));
static SET_STATUS_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(SET_STATUS));
static FINISH_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(FINISH));
static REQUEST_INPUT_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(REQUEST_INPUT));
static ANSWER_INPUT_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(ANSWER_INPUT));
static TAKE_INPUT_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(TAKE_INPUT));
static LIST_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(LIST));
static KEEP_ALIVE_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(KEEP_ALIVE));
static SET_MESSAGE_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(SET_MESSAGE));

/// A [`TaskStore`] in Redis, which every instance of a fleet shares (from
/// [`Redis::task_store`]). Give it to each instance's server with
/// [`TaskConfig::store`](mcp_server::TaskConfig::store).
///
/// ```no_run
/// use mcp_redis::Redis;
/// use mcp_server::{Server, TaskConfig};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let redis = Redis::connect("redis://127.0.0.1:6379")?;
/// let tasks = TaskConfig::new().store(redis.task_store().max_tasks(10_000));
/// let server = Server::builder("fleet", "1.0.0").tasks(tasks).build()?;
/// # let _ = server; Ok(()) }
/// ```
///
/// A task's work runs on the instance that started it; the others read and change its record.
/// See docs/deploy.md ("Tasks in a fleet") for what that means for cancellation.
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    redis: Redis,
    max_tasks: usize,
    max_value_bytes: usize,
    lease: Duration,
    max_per_owner: usize,
}

impl Redis {
    /// The tasks of the fleet: at most 1,000 live tasks in all, each value (a result, an input
    /// request or answer) at most 4 MiB; see [`RedisTaskStore`].
    pub fn task_store(&self) -> RedisTaskStore {
        RedisTaskStore {
            redis: self.clone(),
            max_tasks: 1000,
            max_value_bytes: 4 << 20,
            lease: Duration::from_secs(60),
            max_per_owner: 0,
        }
    }
}

impl RedisTaskStore {
    /// Sets how many live tasks the fleet holds at most, all owners together (default 1,000,
    /// as [`MemoryTaskStore`](mcp_server::tasks::MemoryTaskStore)); a new one beyond it is
    /// refused with [`TaskStoreError::Full`].
    pub fn max_tasks(mut self, max: usize) -> Self {
        self.max_tasks = max.max(1);
        self
    }

    /// Sets how large a value kept in a task may be, as JSON (default 4 MiB): a result
    /// larger fails the task (-32603, saying so), a larger input request is refused
    /// ([`TaskStoreError::Backend`]), a larger answer is ignored (the request stays
    /// outstanding).
    pub fn max_value_bytes(mut self, max: usize) -> Self {
        self.max_value_bytes = max;
        self
    }

    /// The key `prefix:{tasks}:part:...`: every key of the store shares the hash tag `{tasks}`,
    /// so that a script that changes a task and the fleet-wide live set and owner index runs in
    /// one slot of a Redis Cluster.
    fn store_key(&self, parts: &[&str]) -> String {
        let mut all = vec!["{tasks}"];
        all.extend_from_slice(parts);
        self.redis.key(&all)
    }

    /// Sets how many live tasks one owner may have in the fleet (default: as many as
    /// [`max_tasks`](Self::max_tasks)), so that one requestor cannot take them all; a new one
    /// beyond it is refused with [`TaskStoreError::OwnerFull`]. Extension tasks without an
    /// HTTP principal all have one owner (they are server-global), so this bounds them
    /// together.
    pub fn max_per_owner(mut self, max: usize) -> Self {
        self.max_per_owner = max.max(1);
        self
    }

    /// Sets how long a running task is held without its instance renewing it (default a
    /// minute; at least 30 ms). The instance running a task renews it every third of that
    /// ([`TaskStore::keep_alive_interval`]), so it lives however long it runs, whatever its ttl;
    /// the tasks of an instance that died go a lease after its last renewal.
    pub fn running_lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(30));
        self
    }

    fn live_key(&self) -> String {
        self.store_key(&["live"])
    }

    fn task_key(&self, id: &str) -> String {
        self.store_key(&["task", id])
    }

    fn owner_key(&self, owner: &str) -> String {
        self.store_key(&["owner", &sha1_smol::Sha1::from(owner).digest().to_string()])
    }

    /// Runs a command, giving up after the configured timeout.
    async fn run<T>(&self, what: &str, call: impl Future<Output = redis::RedisResult<T>>) -> Result<T, String> {
        let timeout = self.redis.config().timeout;
        let result = match tokio::time::timeout(timeout, call).await {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(e)) => format!("redis: {e}"),
            Err(_) => format!("redis did not answer within {timeout:?}"),
        };
        tracing::warn!(error = %result, "task store: {what} failed");
        Err(result)
    }

    /// Runs a script on one task's key (the first argument is the owner).
    async fn on_task(&self, what: &str, body: &Script, id: &str, args: &[&str]) -> Option<Vec<Option<String>>> {
        self.on_task_keys(what, body, id, false, args).await
    }

    /// [`on_task`](Self::on_task), with the live set and the owner's index as KEYS 2 and 3
    /// when `indexed` (the scripts that change a task's expiry).
    async fn on_task_keys(
        &self,
        what: &str,
        body: &Script,
        id: &str,
        indexed: bool,
        args: &[&str],
    ) -> Option<Vec<Option<String>>> {
        if !valid_id(id) {
            return None;
        }
        let mut conn = self.redis.conn();
        let mut invocation = body.key(self.task_key(id));
        if indexed {
            let owner = args.first().copied().unwrap_or_default();
            invocation.key(self.live_key()).key(self.owner_key(owner));
        }
        for arg in args {
            invocation.arg(*arg);
        }
        self.run(what, invocation.invoke_async(&mut conn)).await.ok().flatten()
    }
}

/// Whether `id` is of the form this store makes (so that no other reaches Redis).
fn valid_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// 128 random bits, in hex.
fn new_id() -> Result<String, TaskStoreError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| TaskStoreError::Backend(format!("no random task id: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// An RFC 3339 timestamp in UTC, to the millisecond (as the memory store writes them).
fn now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The wire name of a status.
fn status_name(status: &TaskStatus) -> String {
    match serde_json::to_value(status) {
        Ok(Value::String(name)) => name,
        _ => "working".to_owned(),
    }
}

/// A task from its id and its fields as the scripts return them (status, message, created,
/// updated, ttl, poll interval).
fn task_of(id: &str, f: &[Option<String>]) -> Option<Task> {
    let [Some(status), msg, Some(created), Some(updated), ttl, poll] = f else { return None };
    let status: TaskStatus = serde_json::from_value(Value::String(status.clone())).ok()?;
    let mut task = Task::new(created.clone(), updated.clone(), status, id.to_owned());
    task.status_message = msg.clone();
    task.ttl = ttl.as_deref().and_then(|t| t.parse().ok());
    task.poll_interval = poll.as_deref().and_then(|p| p.parse().ok());
    Some(task)
}

/// A task as a script returned it (`None` when it is not one).
fn task_from(id: &str, what: &str, fields: Option<Vec<Option<String>>>) -> Option<Task> {
    let fields = fields?;
    let task = task_of(id, &fields);
    if task.is_none() {
        tracing::warn!(task = id, "task store: {what}: corrupt task record");
    }
    task
}

/// How an outcome is kept.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kept {
    Ok(Value),
    Error(ErrorObject),
}

/// A task's record (`HGETALL`) as [`StoredTask`], if `owner`'s.
fn stored_of(owner: &str, id: &str, hash: HashMap<String, String>) -> Option<StoredTask> {
    if hash.get("owner").map(String::as_str) != Some(owner) {
        return None;
    }
    let names = ["status", "msg", "created", "updated", "ttl", "poll"];
    let fields: Vec<Option<String>> = names.iter().map(|n| hash.get(*n).cloned()).collect();
    let Some(task) = task_of(id, &fields) else {
        tracing::warn!(task = id, "task store: corrupt task record");
        return None;
    };
    let mut stored = StoredTask::new(task);
    stored.outcome = hash.get("outcome").and_then(|o| match serde_json::from_str(o) {
        Ok(Kept::Ok(value)) => Some(Ok(value)),
        Ok(Kept::Error(error)) => Some(Err(error)),
        Err(e) => {
            tracing::warn!(task = id, error = %e, "task store: corrupt task outcome");
            None
        }
    });
    let json = |v: &String| serde_json::from_str::<Value>(v).ok();
    let inputs = |prefix: &str| -> BTreeMap<String, Value> {
        hash.iter().filter_map(|(k, v)| Some((k.strip_prefix(prefix)?.to_owned(), json(v)?))).collect()
    };
    stored.input_requests = inputs("q:");
    stored.input_responses = inputs("a:");
    Some(stored)
}

impl TaskStore for RedisTaskStore {
    fn create(
        &self,
        owner: &str,
        ttl: Duration,
        poll_interval: Duration,
    ) -> BoxFuture<'_, Result<Task, TaskStoreError>> {
        let owner = owner.to_owned();
        Box::pin(async move {
            let id = new_id()?;
            let stamp = now();
            let (ttl, poll) = (millis(ttl), millis(poll_interval));
            let mut conn = self.redis.conn();
            let mut invocation = CREATE_SCRIPT.key(self.task_key(&id));
            invocation
                .key(self.live_key())
                .key(self.owner_key(&owner))
                .key(self.store_key(&["last"]))
                .arg(self.max_tasks)
                .arg(ttl)
                .arg(&owner)
                .arg(&id)
                .arg(&stamp)
                .arg(poll)
                .arg(millis(self.lease))
                .arg(self.max_per_owner);
            let answer: Vec<String> =
                self.run("create", invocation.invoke_async(&mut conn)).await.map_err(TaskStoreError::Backend)?;
            match answer.as_slice() {
                [ok] if ok == "ok" => {
                    let mut task = Task::new(stamp.clone(), stamp, TaskStatus::Working, id);
                    task.ttl = Some(ttl);
                    task.poll_interval = Some(poll);
                    Ok(task)
                }
                [full, live] if full == "full" => Err(TaskStoreError::Full(live.parse().unwrap_or(self.max_tasks))),
                [full, live] if full == "owner" => {
                    Err(TaskStoreError::OwnerFull(live.parse().unwrap_or(self.max_per_owner)))
                }
                other => Err(TaskStoreError::Backend(format!("unexpected answer from redis: {other:?}"))),
            }
        })
    }

    fn get(&self, owner: &str, id: &str) -> BoxFuture<'_, Option<StoredTask>> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        Box::pin(async move {
            if !valid_id(&id) {
                return None;
            }
            let mut conn = self.redis.conn();
            let key = self.task_key(&id);
            let hash: HashMap<String, String> =
                self.run("get", redis::cmd("HGETALL").arg(&key).query_async(&mut conn)).await.ok()?;
            stored_of(&owner, &id, hash)
        })
    }

    fn set_status(
        &self,
        owner: &str,
        id: &str,
        status: TaskStatus,
        message: Option<String>,
    ) -> BoxFuture<'_, Option<Task>> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        Box::pin(async move {
            let has = if message.is_some() { "1" } else { "0" };
            let args = [owner.as_str(), &status_name(&status), has, message.as_deref().unwrap_or(""), &now(), &id];
            task_from(&id, "set_status", self.on_task_keys("set_status", &SET_STATUS_SCRIPT, &id, true, &args).await)
        })
    }

    fn finish(&self, owner: &str, id: &str, status: TaskStatus, outcome: TaskOutcome) -> BoxFuture<'_, Option<Task>> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        Box::pin(async move {
            let (status, outcome, kept) = self.keepable(status, outcome);
            let message = mcp_server::tasks::outcome_message(&status, &outcome);
            let has = if message.is_some() { "1" } else { "0" };
            let args =
                [owner.as_str(), &status_name(&status), &kept, has, message.as_deref().unwrap_or(""), &now(), &id];
            task_from(&id, "finish", self.on_task_keys("finish", &FINISH_SCRIPT, &id, true, &args).await)
        })
    }

    fn list(&self, owner: &str, cursor: Option<&str>, limit: usize) -> BoxFuture<'_, Result<TaskPage, ErrorObject>> {
        let owner = owner.to_owned();
        let start = match cursor {
            None => Ok("-inf".to_owned()),
            Some(c) if c.len() <= 20 && c.parse::<u64>().is_ok() => Ok(format!("({c}")),
            Some(_) => Err(ErrorObject::invalid_params("invalid cursor")),
        };
        Box::pin(async move { self.page(&owner, &start?, limit.max(1)).await })
    }

    fn request_input(
        &self,
        owner: &str,
        id: &str,
        key: &str,
        request: Value,
    ) -> BoxFuture<'_, Result<Option<Task>, TaskStoreError>> {
        let (owner, id, key) = (owner.to_owned(), id.to_owned(), key.to_owned());
        Box::pin(async move {
            let request = request.to_string();
            if request.len() > self.max_value_bytes {
                let limit = self.max_value_bytes;
                return Err(TaskStoreError::Backend(format!(
                    "input request of {} bytes (at most {limit})",
                    request.len()
                )));
            }
            if !valid_id(&id) {
                return Ok(None);
            }
            let mut conn = self.redis.conn();
            let mut invocation = REQUEST_INPUT_SCRIPT.key(self.task_key(&id));
            invocation.arg(&owner).arg(&key).arg(&request).arg(now()).arg(MAX_INPUT_REQUESTS);
            let answer: Option<Vec<Option<String>>> =
                self.run("request_input", invocation.invoke_async(&mut conn)).await.map_err(TaskStoreError::Backend)?;
            match answer.as_deref() {
                None => Ok(None),
                Some([Some(tag), Some(n)]) if tag == "many" => {
                    Err(TaskStoreError::TooManyInputs(n.parse().unwrap_or(MAX_INPUT_REQUESTS)))
                }
                Some([Some(tag), fields @ ..]) if tag == "ok" => match task_of(&id, fields) {
                    Some(task) => Ok(Some(task)),
                    None => Err(TaskStoreError::Backend(format!("corrupt record of task `{id}`"))),
                },
                Some(other) => Err(TaskStoreError::Backend(format!("unexpected answer from redis: {other:?}"))),
            }
        })
    }

    fn answer_input(
        &self,
        owner: &str,
        id: &str,
        responses: serde_json::Map<String, Value>,
    ) -> BoxFuture<'_, Option<Task>> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        Box::pin(async move {
            let mut args = vec![owner, now()];
            for (key, answer) in responses {
                let answer = answer.to_string();
                if answer.len() > self.max_value_bytes {
                    tracing::warn!(task = %id, key, bytes = answer.len(), "task store: an answer too large is ignored");
                    continue;
                }
                args.extend([key, answer]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            task_from(&id, "answer_input", self.on_task("answer_input", &ANSWER_INPUT_SCRIPT, &id, &args).await)
        })
    }

    fn take_input(&self, owner: &str, id: &str, key: &str) -> BoxFuture<'_, Option<Value>> {
        let (owner, id, key) = (owner.to_owned(), id.to_owned(), key.to_owned());
        Box::pin(async move {
            let answer = self.on_task("take_input", &TAKE_INPUT_SCRIPT, &id, &[&owner, &key]).await?;
            let answer = answer.into_iter().next().flatten()?;
            serde_json::from_str(&answer).ok()
        })
    }

    fn set_message(&self, owner: &str, id: &str, message: String) -> BoxFuture<'_, Option<Task>> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        Box::pin(async move {
            let message: String = message.chars().take(1024).collect();
            let args = [owner.as_str(), &message, &now()];
            task_from(&id, "set_message", self.on_task("set_message", &SET_MESSAGE_SCRIPT, &id, &args).await)
        })
    }

    fn keep_alive_interval(&self) -> Option<Duration> {
        Some(self.lease / 3)
    }

    fn keep_alive(&self, owner: &str, id: &str) -> BoxFuture<'_, ()> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        Box::pin(async move {
            if !valid_id(&id) {
                return;
            }
            let mut conn = self.redis.conn();
            let mut invocation = KEEP_ALIVE_SCRIPT.key(self.task_key(&id));
            invocation.key(self.live_key()).key(self.owner_key(&owner)).arg(&owner).arg(&id).arg(millis(self.lease));
            let _: Result<i64, _> = self.run("keep_alive", invocation.invoke_async(&mut conn)).await;
        })
    }
}

impl RedisTaskStore {
    /// The outcome as kept (JSON), with the status and outcome it stands for: one larger than
    /// [`max_value_bytes`](Self::max_value_bytes) fails the task instead.
    fn keepable(&self, status: TaskStatus, outcome: TaskOutcome) -> (TaskStatus, TaskOutcome, String) {
        let kept = match &outcome {
            Ok(value) => serde_json::to_string(&Kept::Ok(value.clone())),
            Err(error) => serde_json::to_string(&Kept::Error(error.clone())),
        };
        match kept {
            Ok(kept) if kept.len() <= self.max_value_bytes => (status, outcome, kept),
            Ok(kept) => {
                let why = format!(
                    "the task's result is too large to keep ({} bytes; at most {})",
                    kept.len(),
                    self.max_value_bytes
                );
                self.failed(ErrorObject::internal_error(why))
            }
            Err(e) => self.failed(ErrorObject::internal_error(format!("the task's result is not JSON: {e}"))),
        }
    }

    fn failed(&self, error: ErrorObject) -> (TaskStatus, TaskOutcome, String) {
        let kept = serde_json::to_string(&Kept::Error(error.clone())).unwrap_or_default();
        (TaskStatus::Failed, Err(error), kept)
    }

    /// A page of `owner`'s tasks from `start` (a score bound).
    async fn page(&self, owner: &str, start: &str, limit: usize) -> Result<TaskPage, ErrorObject> {
        let mut conn = self.redis.conn();
        let mut invocation = LIST_SCRIPT.key(self.owner_key(owner));
        invocation.arg(owner).arg(start).arg(limit).arg(self.task_key(""));
        let answer: Vec<Option<String>> = self
            .run("list", invocation.invoke_async(&mut conn))
            .await
            .map_err(|e| ErrorObject::internal_error(format!("the task store failed: {e}")))?;
        let Some((next, rows)) = answer.split_first() else {
            return Err(ErrorObject::internal_error("the task store failed: an empty answer"));
        };
        let mut tasks = Vec::with_capacity(rows.len() / 7);
        for row in rows.chunks(7) {
            let [Some(id), fields @ ..] = row else { continue };
            match task_of(id, fields) {
                Some(task) => tasks.push(task),
                None => tracing::warn!(task = %id, "task store: list: corrupt task record"),
            }
        }
        Ok(TaskPage { tasks, next_cursor: next.clone() })
    }
}
