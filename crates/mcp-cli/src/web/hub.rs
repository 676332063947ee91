//! What the page is told (traffic, progress, logs, list changes, the server's questions) and
//! the questions waiting for the person's answer.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use mcp_types::ErrorObject;
use serde_json::{Value, json};
use tokio::sync::{broadcast, oneshot};

/// The traffic kept for a page that connects later (or reloads).
const BACKLOG: usize = 2000;

/// The events of the page and the questions waiting for it.
pub struct Hub {
    events: broadcast::Sender<String>,
    state: Mutex<HubState>,
    next: AtomicU64,
}

#[derive(Default)]
struct HubState {
    /// The traffic so far (the newest [`BACKLOG`] frames), as events.
    backlog: VecDeque<String>,
    /// The questions not answered yet: their event, and where the answer goes.
    pending: BTreeMap<u64, (String, oneshot::Sender<Answer>)>,
}

/// The person's answer to a question: the result's JSON, or a refusal (an error message).
pub type Answer = Result<Value, String>;

/// Removes a question once its request is over (answered, or cancelled by the server), and
/// tells the page to take it away.
struct Asked<'a> {
    hub: &'a Hub,
    id: u64,
}

impl Drop for Asked<'_> {
    fn drop(&mut self) {
        let removed = self.hub.lock().pending.remove(&self.id).is_some();
        if removed {
            self.hub.emit(&json!({"type": "asked", "id": self.id}));
        }
    }
}

impl Hub {
    /// A hub without events yet.
    pub fn new() -> Hub {
        let (events, _) = broadcast::channel(4096);
        Hub { events, state: Mutex::new(HubState::default()), next: AtomicU64::new(1) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HubState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Sends `event` to the pages connected.
    pub fn emit(&self, event: &Value) {
        let _ = self.events.send(event.to_string());
    }

    /// A frame of the session (`dir`: `in` from the server, `out` to it), kept in the backlog.
    pub fn traffic(&self, dir: &str, frame: &[u8]) {
        let message = serde_json::from_slice::<Value>(frame)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(frame).into_owned()));
        let millis = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        let event = json!({"type": "traffic", "dir": dir, "time": millis, "message": message}).to_string();
        let mut state = self.lock();
        if state.backlog.len() == BACKLOG {
            state.backlog.pop_front();
        }
        state.backlog.push_back(event.clone());
        // Under the lock: a page subscribing meanwhile gets it once, in the backlog or live.
        let _ = self.events.send(event);
    }

    /// The events a page connecting now gets first (the traffic so far, then the questions
    /// waiting), and the live events after them.
    pub fn subscribe(&self) -> (Vec<String>, broadcast::Receiver<String>) {
        let state = self.lock();
        let receiver = self.events.subscribe();
        let mut first: Vec<String> = state.backlog.iter().cloned().collect();
        first.extend(state.pending.values().map(|(event, _)| event.clone()));
        (first, receiver)
    }

    /// Asks the person at the page (`kind`: `elicitation`, `sampling`) and waits for the
    /// answer. Dropped (the server cancelled), the question is taken off the page.
    pub async fn ask(&self, kind: &str, params: Value) -> Result<Value, ErrorObject> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let event = json!({"type": "ask", "kind": kind, "id": id, "params": params}).to_string();
        {
            let mut state = self.lock();
            state.pending.insert(id, (event.clone(), tx));
            let _ = self.events.send(event);
        }
        let _asked = Asked { hub: self, id };
        match rx.await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(refused)) => Err(ErrorObject::new(-1, refused)),
            Err(_) => Err(ErrorObject::internal_error("the page went away")),
        }
    }

    /// Answers question `id`; false if there is none (answered already, or cancelled).
    pub fn answer(&self, id: u64, answer: Answer) -> bool {
        let Some((_, tx)) = self.lock().pending.remove(&id) else {
            return false;
        };
        self.emit(&json!({"type": "asked", "id": id}));
        tx.send(answer).is_ok()
    }
}
