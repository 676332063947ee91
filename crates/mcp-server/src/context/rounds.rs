//! The input-required round trips of a 2026-07-28 request, as its handler sees them: the
//! answers the request carries, and the input the handler asks for in this round. The serving
//! reads them from the request and answers with them (`serve::stateless`).

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::BTreeMap;
use std::sync::Mutex;

use mcp_types::ClientCapabilities;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::capability::input_missing;

/// The input-required round trips of one request of the stateless revision (`tools/call`,
/// `prompts/get`, `resources/read`): the answers it carries (`inputResponses` of this retry
/// and, through `requestState`, of earlier rounds) and the input requests its handler makes in
/// this round. A round that asked for input ends with an `input_required` result instead of the
/// handler's (`InputRounds::outcome`, in `serve::stateless`); the client retries with the answers.
pub(crate) struct InputRounds {
    pub(crate) capabilities: ClientCapabilities,
    /// Answers by key.
    pub(crate) answers: BTreeMap<String, Value>,
    /// Input requests made in this round, by key, as JSON text: written as the handler's
    /// params were encoded (an elicitation form keeps its fields' order).
    pub(crate) pending: Mutex<BTreeMap<String, Box<RawValue>>>,
    /// A capability the handler needed and the client lacks.
    pub(crate) missing: Mutex<Option<&'static str>>,
    /// Counters for automatic keys, per kind.
    pub(crate) counters: Mutex<BTreeMap<&'static str, usize>>,
    /// The request's digest (see `request_digest` in `serve::stateless`), computed when state is opened or sealed:
    /// most requests do neither.
    pub(crate) digest: std::sync::OnceLock<String>,
}

/// What asking the client for input gives a handler serving the stateless revision.
pub(crate) enum Asked {
    /// The client answered (in this retry or an earlier one).
    Answer(Value),
    /// Not yet: the request ends with an input-required result (the handler's `Err`).
    Pending,
    /// The client did not declare the capability.
    Missing,
}

impl InputRounds {
    /// The next automatic key of a kind: `elicitation-1`, `sampling-1`, `roots-1`, ...
    pub(crate) fn next_key(&self, kind: &'static str) -> String {
        let mut counters = self.counters.lock_unpoisoned();
        let n = counters.entry(kind).or_default();
        *n += 1;
        format!("{kind}-{n}")
    }

    /// Asks for input under `key`: the answer if the client gave it, else a pending request.
    /// `params` is the request's params as JSON text.
    pub(crate) fn ask(&self, key: &str, capability: &'static str, method: &str, params: &str) -> Asked {
        let parsed = serde_json::from_str::<Value>(params).unwrap_or_default();
        if let Some(missing) = input_missing(&self.capabilities, capability, &parsed) {
            *self.missing.lock_unpoisoned() = Some(missing);
            return Asked::Missing;
        }
        if let Some(answer) = self.answers.get(key) {
            return Asked::Answer(answer.clone());
        }
        #[derive(serde::Serialize)]
        struct InputRequest<'a> {
            method: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            params: Option<&'a RawValue>,
        }
        // `params` came from the serializer: it is JSON.
        let params =
            serde_json::from_str::<&RawValue>(params).ok().filter(|_| !parsed.as_object().is_some_and(Map::is_empty));
        if let Ok(request) = serde_json::value::to_raw_value(&InputRequest { method, params }) {
            self.pending.lock_unpoisoned().insert(key.to_owned(), request);
        }
        Asked::Pending
    }
}
