//! Incoming frames: the queue the read half takes them from, the answers they carry (which
//! settle the requests that await them, and give the negotiated revision), and the failures
//! of requests the transport could not deliver.

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::HeaderValue;
use mcp_jsonrpc::message;
use mcp_jsonrpc::transport::{Inbound, ReadError, TransportError};
use mcp_types::{ErrorObject, RequestId};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;
use tracing::debug;

use super::Core;
use crate::client::error::HttpRequestError;

/// How a request failed: the server's JSON-RPC error (delivered as it sent it), or HTTP's.
#[derive(Debug)]
pub(crate) enum Failure {
    Remote(ErrorObject),
    Http(HttpRequestError),
}

impl From<HttpRequestError> for Failure {
    fn from(e: HttpRequestError) -> Self {
        Failure::Http(e)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Remote(e) => e.fmt(f),
            Failure::Http(e) => e.fmt(f),
        }
    }
}

/// The requests one POST waits to see answered.
pub(super) struct Awaited {
    pub(super) pending: Mutex<HashSet<RequestId>>,
    /// Fires once every one is answered (on any stream), cancelled, or failed, and on close.
    pub(super) done: CancellationToken,
}

/// The frames of a body: the elements of a batch, or the message itself.
fn split_batch(frame: Bytes) -> Vec<Bytes> {
    if frame.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'[') {
        return vec![frame];
    }
    match serde_json::from_slice::<Vec<&RawValue>>(&frame) {
        Ok(items) if !items.is_empty() => items.iter().map(|r| Bytes::copy_from_slice(r.get().as_bytes())).collect(),
        _ => vec![frame],
    }
}

/// Just enough of a message to route it: a response's id, and its result.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
    #[serde(borrow, default, deserialize_with = "mcp_jsonrpc::raw::present")]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

/// The revision in the answer to `initialize`.
#[derive(Deserialize)]
struct InitProbe {
    #[serde(rename = "protocolVersion")]
    protocol_version: String,
}

impl Core {
    /// Queues an item for the read half; `false` once the transport is closing.
    pub(super) async fn push(&self, item: Result<Inbound, ReadError>) -> bool {
        tokio::select! {
            sent = self.inbound.send(item) => sent.is_ok(),
            _ = self.closing.cancelled() => false,
        }
    }

    /// Hands the messages of a body or event to the read half, noting answers.
    pub(super) async fn deliver(&self, body: Bytes) -> bool {
        for frame in split_batch(body) {
            let answered = self.inspect(&frame);
            if !self.push(Ok(Inbound::from(frame))).await {
                return false;
            }
            if let Some(id) = answered {
                self.settle(&id);
            }
        }
        true
    }

    /// The id of a response; from the answer to `initialize`, the negotiated revision (which
    /// goes as `MCP-Protocol-Version` from then on).
    fn inspect(&self, frame: &[u8]) -> Option<RequestId> {
        let probe: Probe<'_> = serde_json::from_slice(frame).ok()?;
        if probe.method.is_some() || (probe.result.is_none() && probe.error.is_none()) {
            return None;
        }
        let id = probe.id?;
        let mut st = self.state.lock_unpoisoned();
        if st.init_id.as_ref() == Some(&id) {
            st.init_id = None;
            let version = probe.result.and_then(|r| serde_json::from_str::<InitProbe>(r.get()).ok());
            if let Some(v) = version.and_then(|v| HeaderValue::from_str(&v.protocol_version).ok()) {
                debug!(version = ?v, "negotiated protocol revision");
                st.protocol_version = Some(v);
            }
        }
        Some(id)
    }

    pub(super) fn register(&self, ids: &[RequestId]) -> Arc<Awaited> {
        let awaited =
            Arc::new(Awaited { pending: Mutex::new(ids.iter().cloned().collect()), done: self.closing.child_token() });
        let mut map = self.awaited.lock_unpoisoned();
        for id in ids {
            map.insert(id.clone(), awaited.clone());
        }
        awaited
    }

    /// Request `id` was answered or cancelled: whoever waits for it stops.
    pub(super) fn settle(&self, id: &RequestId) {
        let Some(awaited) = self.awaited.lock_unpoisoned().remove(id) else { return };
        let mut pending = awaited.pending.lock_unpoisoned();
        pending.remove(id);
        if pending.is_empty() {
            awaited.done.cancel();
        }
    }

    /// Fails every request still pending in `awaited`: the server's JSON-RPC error goes to
    /// each as a response, HTTP's as the transport's error.
    pub(super) async fn fail(&self, awaited: &Awaited, failure: impl Into<Failure>) {
        let failure = failure.into();
        let ids: Vec<RequestId> = awaited.pending.lock_unpoisoned().drain().collect();
        {
            let mut map = self.awaited.lock_unpoisoned();
            for id in &ids {
                if map.get(id).is_some_and(|a| std::ptr::eq(Arc::as_ptr(a), awaited)) {
                    map.remove(id);
                }
            }
        }
        awaited.done.cancel();
        self.fail_ids(&ids, failure).await;
    }

    /// Fails the requests `ids` with `failure`.
    pub(super) async fn fail_ids(&self, ids: &[RequestId], failure: Failure) {
        debug!(requests = ?ids, error = %failure, "request failed in the transport");
        match failure {
            Failure::Remote(error) => {
                for id in ids {
                    let frame = message::encode_error(Some(id), &error);
                    if !self.push(Ok(Inbound::from(frame))).await {
                        return;
                    }
                }
            }
            Failure::Http(error) => {
                let error: TransportError = Arc::new(error);
                for id in ids {
                    let failed = ReadError::RequestFailed { id: id.clone(), source: error.clone() };
                    if !self.push(Err(failed)).await {
                        return;
                    }
                }
            }
        }
    }
}
