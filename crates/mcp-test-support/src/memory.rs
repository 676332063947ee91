//! The test's end of an in-memory connection ([`mcp_jsonrpc::transport::memory`]): JSON-RPC
//! frames sent and received one by one, and a session of requests whose results are checked
//! against the official schema.

use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::transport::{MemoryRead, MemoryTransport, MemoryWrite};
use mcp_jsonrpc::{Transport, TransportRead, TransportWrite};
use serde_json::{Value, json};

use crate::schema::{result_def, validate};

/// One end of an in-memory connection, played by the test frame by frame.
pub struct Wire {
    /// Frames from the other end.
    pub read: MemoryRead,
    /// Frames to the other end.
    pub write: MemoryWrite,
    timeout: Duration,
}

impl Wire {
    /// The test's end `end`; [`recv`](Self::recv) waits at most 60 s.
    pub fn new(end: MemoryTransport) -> Wire {
        let (read, write) = end.split();
        Wire { read, write, timeout: Duration::from_secs(60) }
    }

    /// How long [`recv`](Self::recv) waits for a frame (with paused time, a long one lets the
    /// other end's own timers fire first).
    pub fn with_timeout(mut self, timeout: Duration) -> Wire {
        self.timeout = timeout;
        self
    }

    /// Sends `message` as one frame.
    pub async fn send(&mut self, message: Value) {
        self.write.write(&[Bytes::from(message.to_string()).into()]).await.unwrap();
    }

    /// Sends `frame` as it is (which need not be valid JSON).
    pub async fn send_text(&mut self, frame: &str) {
        self.write.write(&[Bytes::copy_from_slice(frame.as_bytes()).into()]).await.unwrap();
    }

    /// The next frame, as JSON.
    ///
    /// # Panics
    ///
    /// If none comes within the timeout, the connection closed, or the frame is not JSON.
    pub async fn recv(&mut self) -> Value {
        let frame = tokio::time::timeout(self.timeout, self.read.read())
            .await
            .unwrap_or_else(|_| panic!("no frame came within {:?}", self.timeout))
            .expect("the connection closed")
            .unwrap();
        serde_json::from_slice(&frame.frame).unwrap()
    }

    /// Pings with id `marker` and expects the pong to be the very next frame: nothing else was
    /// sent before it.
    pub async fn expect_silence(&mut self, marker: i64) {
        self.send(json!({"jsonrpc": "2.0", "id": marker, "method": "ping"})).await;
        assert_eq!(self.recv().await, json!({"jsonrpc": "2.0", "id": marker, "result": {}}));
    }
}

/// A client's requests to a server over a [`Wire`], in one revision: numbered from 1, each
/// answer the very next frame, every result checked against the revision's schema.
pub struct Session {
    /// The connection.
    pub wire: Wire,
    /// The revision the results are checked against.
    pub rev: String,
    /// The id of the last request sent.
    pub next: i64,
}

impl Session {
    /// A session over `wire` whose results are checked against revision `rev`.
    pub fn new(wire: Wire, rev: &str) -> Session {
        Session { wire, rev: rev.to_owned(), next: 0 }
    }

    /// Sends `message` as one frame.
    pub async fn send(&mut self, message: Value) {
        self.wire.send(message).await;
    }

    /// The next frame, as JSON.
    pub async fn recv(&mut self) -> Value {
        self.wire.recv().await
    }

    /// Sends a request and returns its response, checking a result against the schema.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let answer = self.recv().await;
        assert_eq!(answer["id"], id, "{answer}");
        if let Some(result) = answer.get("result") {
            validate(&self.rev, result_def(method), result);
        }
        answer
    }

    /// The result of a request, which must succeed.
    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let answer = self.call(method, params).await;
        answer.get("result").cloned().unwrap_or_else(|| panic!("{method} failed: {answer}"))
    }

    /// The error of a request, which must fail.
    pub async fn error(&mut self, method: &str, params: Value) -> Value {
        let answer = self.call(method, params).await;
        answer.get("error").cloned().unwrap_or_else(|| panic!("{method} should fail: {answer}"))
    }
}
