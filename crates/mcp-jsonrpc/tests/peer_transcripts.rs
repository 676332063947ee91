//! The peer engine as transcripts: JSON-RPC in, JSON-RPC out, over the in-memory transport.
//!
//! One side is a real `Peer`; the test plays the other side frame by frame. Where a rule says
//! "no response", a `ping` follows and the next frame must be its answer. Time is paused:
//! timeouts elapse instantly and deterministically.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::transport::{MemoryTransport, Transport, TransportRead, TransportWrite, memory};
use mcp_jsonrpc::{CallError, CallOptions, ErrorObject, Peer, PeerConfig, Router};
use mcp_test_support::Wire;
use mcp_types::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ContentBlock, EmptyResult, InitializeRequest,
    ProtocolVersion, SetLevelRequest,
};
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};

/// The test's end of the connection. Time is paused, so its wait of an hour elapses only when
/// every timer of the peer before it has fired.
type Raw = Wire;

fn raw(end: MemoryTransport) -> Raw {
    Wire::new(end).with_timeout(Duration::from_secs(3600))
}

fn router() -> Router {
    Router::new()
        .request::<SetLevelRequest, _, _>(|_params, _ctx| async { Ok(EmptyResult::default()) })
        .request::<CallToolRequest, _, _>(|params, ctx| async move {
            match params.name.as_str() {
                "echo" => {
                    let text = params.arguments.and_then(|a| a.get("text").cloned()).unwrap_or_default();
                    Ok(CallToolResult::success(vec![ContentBlock::text(text.as_str().unwrap_or_default())]))
                }
                "wait" => {
                    ctx.cancellation().cancelled().await;
                    Ok(CallToolResult::success(vec![]))
                }
                "panic" => panic!("boom"),
                other => Err(ErrorObject::invalid_params(format!("unknown tool {other}"))),
            }
        })
}

fn serve(router: Router, config: PeerConfig) -> (Peer, Raw) {
    let (a, b) = memory(64);
    let peer = Peer::spawn(a, Arc::new(router), config);
    (peer, raw(b))
}

#[tokio::test(start_paused = true)]
async fn answers_ping_and_typed_requests() {
    let (_peer, mut raw) = serve(router(), PeerConfig::default());
    raw.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await;
    assert_eq!(raw.recv().await, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    raw.send_text(
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
    )
    .await;
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc": "2.0", "id": "a", "result": {"content": [{"type": "text", "text": "hi"}]}})
    );
}

#[tokio::test(start_paused = true)]
async fn bad_input_gets_the_right_error_and_the_connection_keeps_serving() {
    let (_peer, mut raw) = serve(router(), PeerConfig::default());
    let cases: &[(&str, Value)] = &[
        ("{not json", json!(null)),
        ("[1,", json!(null)),
        ("42", json!(null)),
        // A response with neither result nor error: its id names one of the other side's
        // requests, so the error must not look like the answer to it.
        (r#"{"jsonrpc":"2.0","id":5}"#, json!(null)),
        (r#"{"id":6,"method":"ping"}"#, json!(6)),
        (r#"{"jsonrpc":"2.0","id":7,"method":"no/such"}"#, json!(7)),
        (r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"nom":"x"}}"#, json!(8)),
        (r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1,2]}"#, json!(9)),
        (r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"nope"}}"#, json!(10)),
    ];
    let codes = [-32700, -32700, -32600, -32600, -32600, -32601, -32602, -32602, -32602];
    for ((frame, id), code) in cases.iter().zip(codes) {
        raw.send_text(frame).await;
        let answer = raw.recv().await;
        assert_eq!(answer["id"], *id, "{frame}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{frame}: {answer}");
        assert!(answer["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    raw.expect_silence(100).await;
}

#[tokio::test(start_paused = true)]
async fn a_panicking_handler_becomes_an_error_and_the_server_lives_on() {
    let (_peer, mut raw) = serve(router(), PeerConfig::default());
    raw.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"panic"}}"#).await;
    let answer = raw.recv().await;
    assert_eq!(answer["error"]["code"], -32603);
    assert!(answer["error"]["message"].as_str().unwrap().contains("boom"), "{answer}");
    raw.expect_silence(2).await;
}

#[tokio::test(start_paused = true)]
async fn cancellation_stops_the_handler_and_sends_no_response() {
    let observed = Arc::new(Notify::new());
    let seen = observed.clone();
    let router = Router::new().request::<CallToolRequest, _, _>(move |_p, ctx| {
        // Work the handler spawned sees the token fire; the handler's own future is dropped.
        let token = ctx.cancellation().clone();
        let seen = seen.clone();
        tokio::spawn(async move {
            token.cancelled().await;
            seen.notify_one();
        });
        async move {
            std::future::pending::<()>().await;
            Ok(CallToolResult::success(vec![]))
        }
    });
    let (peer, mut raw) = serve(router, PeerConfig::default());
    raw.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#).await;
    raw.expect_silence(50).await; // the call is running
    assert_eq!(peer.running_requests(), 1);
    raw.send_text(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}"#)
        .await;
    tokio::time::timeout(Duration::from_secs(60), observed.notified()).await.expect("the token fired");
    raw.expect_silence(51).await;
    assert_eq!(peer.running_requests(), 0);
    // Cancelling it again, or cancelling what never existed, is ignored.
    raw.send_text(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#).await;
    raw.send_text(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"zzz"}}"#).await;
    raw.send_text(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"oops":true}}"#).await;
    raw.expect_silence(52).await;
}

#[tokio::test(start_paused = true)]
async fn a_cancellation_crossing_the_response_is_ignored() {
    let (_peer, mut raw) = serve(router(), PeerConfig::default());
    raw.send_text(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}"#,
    )
    .await;
    let answer = raw.recv().await;
    assert_eq!(answer["id"], 1);
    raw.send_text(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#).await;
    raw.expect_silence(2).await;
}

#[tokio::test(start_paused = true)]
async fn initialize_is_never_cancelled() {
    let release = Arc::new(Notify::new());
    let gate = release.clone();
    let router = Router::new().request::<InitializeRequest, _, _>(move |_p, _ctx| {
        let gate = gate.clone();
        async move {
            gate.notified().await;
            Err(ErrorObject::internal_error("done"))
        }
    });
    let (_peer, mut raw) = serve(router, PeerConfig::default());
    // Valid params, so that the handler runs (and waits) rather than failing to decode them.
    raw.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    raw.send_text(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#).await;
    raw.expect_silence(9).await;
    release.notify_one();
    assert_eq!(raw.recv().await["id"], 1);
}

#[tokio::test(start_paused = true)]
async fn duplicate_request_ids_are_ignored_while_the_first_runs() {
    let (peer, mut raw) = serve(router(), PeerConfig::default());
    raw.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}"#).await;
    raw.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#).await;
    raw.expect_silence(2).await;
    assert_eq!(peer.running_requests(), 1);
}

#[tokio::test(start_paused = true)]
async fn requests_beyond_the_concurrency_limit_are_refused() {
    let config = PeerConfig { max_concurrent_requests: 2, ..PeerConfig::default() };
    let (peer, mut raw) = serve(router(), config);
    for id in 1..=2 {
        raw.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"wait"}})).await;
    }
    raw.send_text(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}"#).await;
    let answer = raw.recv().await;
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["error"]["code"], -32603);
    assert!(answer["error"]["message"].as_str().unwrap().contains("limit 2"));
    assert_eq!(peer.running_requests(), 2);
    // Cancelling one frees a slot.
    raw.send_text(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#).await;
    raw.expect_silence(4).await;
    raw.send_text(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}"#).await;
    assert_eq!(raw.recv().await["result"]["content"][0]["text"], "");
}

#[tokio::test(start_paused = true)]
async fn batches_are_answered_only_in_2025_03_26() {
    let (peer, mut raw) = serve(router(), PeerConfig::default());
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},
        {"jsonrpc":"2.0","id":2,"method":"no/such"},7]"#;
    raw.send_text(batch).await;
    let answer = raw.recv().await;
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32600);
    assert!(answer["error"]["message"].as_str().unwrap().contains("2025-11-25"));

    peer.set_protocol_version(ProtocolVersion::V2025_03_26);
    raw.send_text(batch).await;
    let answer = raw.recv().await;
    let items = answer.as_array().expect("a batch response");
    assert_eq!(items.len(), 3, "{answer}");
    assert!(items.contains(&json!({"jsonrpc":"2.0","id":1,"result":{}})));
    assert!(items.iter().any(|i| i["id"] == 2 && i["error"]["code"] == -32601));
    assert!(items.iter().any(|i| i["id"].is_null() && i["error"]["code"] == -32600));
    // A batch of notifications only gets no response at all.
    raw.send_text(r#"[{"jsonrpc":"2.0","method":"notifications/x"}]"#).await;
    raw.expect_silence(3).await;
}

#[tokio::test(start_paused = true)]
async fn unreadable_and_unknown_responses_are_ignored() {
    let (_peer, mut raw) = serve(router(), PeerConfig::default());
    raw.send_text(r#"{"jsonrpc":"2.0","id":999,"result":{}}"#).await;
    raw.send_text(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#).await;
    raw.expect_silence(1).await;
}

// ---- the calling side ----

fn client() -> (Peer, Raw) {
    serve(Router::new(), PeerConfig { request_timeout: Some(Duration::from_secs(10)), ..PeerConfig::default() })
}

fn call_params(name: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(name)
}

#[tokio::test(start_paused = true)]
async fn calls_are_correlated_by_id_and_ids_are_never_reused() {
    let (peer, mut raw) = client();
    let a = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<CallToolRequest>(call_params("a"), CallOptions::default()).await }
    });
    let b = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<CallToolRequest>(call_params("b"), CallOptions::default()).await }
    });
    let first = raw.recv().await;
    let second = raw.recv().await;
    assert_ne!(first["id"], second["id"]);
    // Answer in reverse order.
    for req in [&second, &first] {
        let name = req["params"]["name"].as_str().unwrap();
        raw.send(json!({"jsonrpc":"2.0","id":req["id"],"result":{"content":[{"type":"text","text":name}]}})).await;
    }
    assert_eq!(a.await.unwrap().unwrap().content[0].as_text(), Some("a"));
    assert_eq!(b.await.unwrap().unwrap().content[0].as_text(), Some("b"));
    let third = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<CallToolRequest>(call_params("c"), CallOptions::default()).await }
    });
    let req = raw.recv().await;
    assert!(req["id"] != first["id"] && req["id"] != second["id"]);
    raw.send(json!({"jsonrpc":"2.0","id":req["id"],"error":{"code":-32602,"message":"no"}})).await;
    match third.await.unwrap() {
        Err(CallError::Remote(e)) => assert_eq!((e.code, e.message.as_str()), (-32602, "no")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn progress_reaches_the_callback_resets_the_timeout_and_stops_after_completion() {
    let (peer, mut raw) = client();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    let options = CallOptions::default().timeout(Duration::from_secs(10)).on_progress(move |p| {
        assert_eq!(p.progress, seen.fetch_add(1, Ordering::SeqCst) as f64);
    });
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<CallToolRequest>(call_params("slow"), options).await }
    });
    let req = raw.recv().await;
    let token = req["params"]["_meta"]["progressToken"].clone();
    assert!(!token.is_null(), "{req}");
    // Twenty progress notifications, 8 s apart: 160 s in all, far past the 10 s timeout.
    for i in 0..20 {
        tokio::time::sleep(Duration::from_secs(8)).await;
        raw.send(
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":token,"progress":i}}),
        )
        .await;
        raw.expect_silence(1000 + i).await;
    }
    raw.send(json!({"jsonrpc":"2.0","id":req["id"],"result":{"content":[]}})).await;
    call.await.unwrap().unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 20);
    // Progress after completion is dropped.
    raw.send(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":token,"progress":99}}))
        .await;
    raw.expect_silence(2000).await;
    assert_eq!(count.load(Ordering::SeqCst), 20);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_fails_the_call_and_sends_a_cancellation_and_the_late_answer_is_ignored() {
    let (peer, mut raw) = client();
    let call = tokio::spawn({
        let peer = peer.clone();
        async move {
            peer.request::<CallToolRequest>(call_params("x"), CallOptions::default().timeout(Duration::from_secs(3)))
                .await
        }
    });
    let req = raw.recv().await;
    let cancel = raw.recv().await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], req["id"]);
    assert_eq!(cancel["params"]["reason"], "timeout");
    match call.await.unwrap() {
        Err(e @ CallError::Timeout { .. }) => assert!(e.to_string().contains("tools/call"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(peer.pending_calls(), 0);
    raw.send(json!({"jsonrpc":"2.0","id":req["id"],"result":{"content":[]}})).await;
    raw.expect_silence(1).await;
}

#[tokio::test(start_paused = true)]
async fn the_hard_maximum_holds_even_with_progress() {
    let (a, b) = memory(64);
    let config = PeerConfig { max_request_timeout: Duration::from_secs(30), ..PeerConfig::default() };
    let peer = Peer::spawn(a, Arc::new(Router::new()), config);
    let mut raw = raw(b);
    let call = tokio::spawn({
        let peer = peer.clone();
        let options = CallOptions::default().timeout(Duration::from_secs(10)).on_progress(|_| {});
        async move { peer.request::<CallToolRequest>(call_params("x"), options).await }
    });
    let req = raw.recv().await;
    let token = req["params"]["_meta"]["progressToken"].clone();
    let mut progress_sent = 0;
    loop {
        tokio::time::sleep(Duration::from_secs(5)).await;
        if call.is_finished() {
            break;
        }
        raw.send(
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":token,"progress":1}}),
        )
        .await;
        progress_sent += 1;
        assert!(progress_sent < 20, "the call outlived its hard maximum");
    }
    assert!(matches!(call.await.unwrap(), Err(CallError::Timeout { .. })));
}

#[tokio::test(start_paused = true)]
async fn dropping_a_call_sends_a_cancellation_except_for_initialize() {
    let (peer, mut raw) = client();
    let (started_tx, started_rx) = oneshot::channel();
    let call = tokio::spawn({
        let peer = peer.clone();
        async move {
            let fut = peer.request::<CallToolRequest>(call_params("x"), CallOptions::default());
            let _ = started_tx.send(());
            fut.await
        }
    });
    started_rx.await.unwrap();
    let req = raw.recv().await;
    call.abort();
    let cancel = raw.recv().await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], req["id"]);

    let init = tokio::spawn({
        let peer = peer.clone();
        async move {
            let params = serde_json::from_value(
                json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}),
            )
            .unwrap();
            peer.request::<InitializeRequest>(params, CallOptions::default()).await
        }
    });
    let req = raw.recv().await;
    assert_eq!(req["method"], "initialize");
    init.abort();
    let _ = init.await;
    raw.send(json!({"jsonrpc":"2.0","id":"probe","method":"ping"})).await;
    assert_eq!(raw.recv().await["id"], "probe", "no cancellation may precede the pong");
}

#[tokio::test(start_paused = true)]
async fn explicit_cancellation_sends_a_cancellation() {
    let (peer, mut raw) = client();
    let token = mcp_jsonrpc::CancellationToken::new();
    let call = tokio::spawn({
        let peer = peer.clone();
        let options = CallOptions::default().cancel_on(token.clone());
        async move { peer.request::<CallToolRequest>(call_params("x"), options).await }
    });
    let req = raw.recv().await;
    token.cancel();
    let cancel = raw.recv().await;
    assert_eq!(cancel["params"]["requestId"], req["id"]);
    assert!(matches!(call.await.unwrap(), Err(CallError::Cancelled)));
}

/// A progress callback cancels the call, and the answer comes right behind the notification:
/// the call ends cancelled (the caller asked so before it could take the answer), every time.
#[tokio::test(start_paused = true)]
async fn a_call_cancelled_by_its_progress_callback_is_cancelled_though_the_answer_follows() {
    let (peer, mut raw) = client();
    for round in 0..32 {
        let token = mcp_jsonrpc::CancellationToken::new();
        let trigger = token.clone();
        let options = CallOptions::default().cancel_on(token).on_progress(move |_| trigger.cancel());
        let call = tokio::spawn({
            let peer = peer.clone();
            async move { peer.request::<CallToolRequest>(call_params("x"), options).await }
        });
        // (A cancellation of the round before may come first: sent when the answer had not
        // been read yet, left out when it had.)
        let req = loop {
            let frame = raw.recv().await;
            if frame["method"] == "tools/call" {
                break frame;
            }
            assert_eq!(frame["method"], "notifications/cancelled");
        };
        let progress_token = req["params"]["_meta"]["progressToken"].clone();
        raw.send(json!({"jsonrpc":"2.0","method":"notifications/progress",
            "params":{"progressToken":progress_token,"progress":1}}))
            .await;
        raw.send(json!({"jsonrpc":"2.0","id":req["id"],"result":{"content":[]}})).await;
        let outcome = call.await.unwrap();
        assert!(matches!(outcome, Err(CallError::Cancelled)), "round {round}: {outcome:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn closing_fails_pending_calls_and_nothing_hangs() {
    let (peer, mut raw) = client();
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<CallToolRequest>(call_params("x"), CallOptions::default()).await }
    });
    let _req = raw.recv().await;
    drop(raw); // the other side goes away
    assert!(matches!(call.await.unwrap(), Err(CallError::Closed)));
    peer.closed().await;
    assert!(peer.is_closed());
    let after = peer.request::<CallToolRequest>(call_params("y"), CallOptions::default()).await;
    assert!(matches!(after, Err(CallError::Closed)));
}

#[tokio::test(start_paused = true)]
async fn shutdown_lets_running_handlers_finish_within_the_grace_then_cancels_them() {
    let config = PeerConfig { shutdown_grace: Duration::from_secs(2), ..PeerConfig::default() };
    let (peer, mut raw) = serve(router(), config);
    raw.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}"#).await;
    raw.expect_silence(2).await;
    let Wire { read, mut write, .. } = raw;
    write.close().await.unwrap();
    drop(read);
    // The waiting handler is cancelled after the grace and the connection ends.
    peer.closed().await;
    assert_eq!(peer.running_requests(), 0);
}

#[tokio::test(start_paused = true)]
async fn two_engines_talk_to_each_other() {
    let (a, b) = memory(64);
    let _server = Peer::spawn(a, Arc::new(router()), PeerConfig::default());
    let client = Peer::spawn(b, Arc::new(Router::new()), PeerConfig::default());
    let mut params = call_params("echo");
    params.arguments = Some(serde_json::from_value(json!({"text": "hello"})).unwrap());
    let result = client.request::<CallToolRequest>(params, CallOptions::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("hello"));
    let level: mcp_types::SetLevelRequestParams = serde_json::from_value(json!({"level": "info"})).unwrap();
    client.request::<SetLevelRequest>(level.clone(), CallOptions::default()).await.unwrap();
    // logging/setLevel is gone in 2026-07-28: calling it there fails before anything is sent.
    client.set_protocol_version(ProtocolVersion::V2026_07_28);
    let err = client.request::<SetLevelRequest>(level, CallOptions::default()).await.unwrap_err();
    assert!(matches!(err, CallError::NotInRevision { method: "logging/setLevel", .. }), "{err}");
}

// ---- The driven peer: no tasks; messages handed in, frames delivered to a sink. ----

/// A sink that records every frame with its route.
#[derive(Default)]
struct Recorder {
    frames: std::sync::Mutex<Vec<(Value, mcp_jsonrpc::Route)>>,
    delivered: Notify,
}

impl mcp_jsonrpc::FrameSink for Recorder {
    fn deliver(
        &self,
        frame: mcp_jsonrpc::Outbound,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            let value =
                if frame.frame.is_empty() { Value::Null } else { serde_json::from_slice(&frame.frame).unwrap() };
            self.frames.lock().unwrap().push((value, frame.route));
            self.delivered.notify_waiters();
        })
    }
}

impl Recorder {
    fn take(&self) -> Vec<(Value, mcp_jsonrpc::Route)> {
        std::mem::take(&mut *self.frames.lock().unwrap())
    }
    /// Waits until `n` frames were delivered in all.
    async fn wait_for(&self, n: usize) {
        loop {
            let delivered = self.delivered.notified();
            tokio::pin!(delivered);
            delivered.as_mut().enable();
            if self.frames.lock().unwrap().len() >= n {
                return;
            }
            delivered.await;
        }
    }
}

/// A `logging/setLevel` call from `peer` to the other side, running.
fn set_level_from(peer: &Peer) -> tokio::task::JoinHandle<Result<EmptyResult, CallError>> {
    let peer = peer.clone();
    let params = serde_json::from_value(json!({"level": "info"})).unwrap();
    tokio::spawn(async move { peer.request::<SetLevelRequest>(params, CallOptions::default()).await })
}

fn parsed(v: Value) -> mcp_jsonrpc::message::Parsed {
    mcp_jsonrpc::message::parse(v.to_string().as_bytes())
}

#[tokio::test(start_paused = true)]
async fn a_driven_peer_answers_in_the_dispatching_task_with_no_task_of_its_own() {
    let sink = Arc::new(Recorder::default());
    let driven = Peer::driven(sink.clone(), Arc::new(router()), PeerConfig::default());
    let echo = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}});
    driven.dispatch(parsed(echo), None).await;
    // Answered before dispatch returned: the handler ran here, nothing was spawned.
    let frames = sink.take();
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].0["result"]["content"][0]["text"], "hi");
    assert_eq!(frames[0].1, mcp_jsonrpc::Route::Response(mcp_jsonrpc::RequestId::Integer(7)));
    // Malformed input gets its error through the sink too.
    driven.dispatch(mcp_jsonrpc::message::parse(b"{nope"), None).await;
    assert_eq!(sink.take()[0].0["error"]["code"], -32700);
    // A panicking handler becomes an internal error; the connection goes on.
    let panic = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "panic"}});
    driven.dispatch(parsed(panic), None).await;
    assert_eq!(sink.take()[0].0["error"]["code"], -32603);
    assert_eq!(driven.peer().running_requests(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_driven_handler_that_waits_is_spawned_and_can_be_cancelled_by_id() {
    let sink = Arc::new(Recorder::default());
    let driven = Peer::driven(sink.clone(), Arc::new(router()), PeerConfig::default());
    let wait = json!({"jsonrpc": "2.0", "id": "w", "method": "tools/call", "params": {"name": "wait"}});
    driven.dispatch(parsed(wait), None).await;
    assert!(sink.take().is_empty());
    assert_eq!(driven.peer().running_requests(), 1);
    // The dispatching side (an HTTP POST) goes away: the request is cancelled, no answer, and
    // the routing transport is told so with an empty frame.
    assert!(driven.peer().cancel_incoming(&mcp_jsonrpc::RequestId::String("w".into())));
    sink.wait_for(1).await;
    let frames = sink.take();
    assert_eq!(frames[0].0, Value::Null);
    assert_eq!(frames[0].1, mcp_jsonrpc::Route::Response(mcp_jsonrpc::RequestId::String("w".into())));
    assert!(!driven.peer().cancel_incoming(&mcp_jsonrpc::RequestId::String("w".into())));
    assert_eq!(driven.peer().running_requests(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_driven_peer_calls_out_and_gets_its_answer_dispatched_back() {
    let sink = Arc::new(Recorder::default());
    let driven = Peer::driven(sink.clone(), Arc::new(router()), PeerConfig::default());
    let call = set_level_from(driven.peer());
    sink.wait_for(1).await;
    let (request, route) = sink.take().remove(0);
    assert_eq!(request["method"], "logging/setLevel");
    assert_eq!(route, mcp_jsonrpc::Route::Unrelated);
    driven.dispatch(parsed(json!({"jsonrpc": "2.0", "id": request["id"], "result": {}})), None).await;
    call.await.unwrap().unwrap();
    assert_eq!(driven.peer().pending_calls(), 0);
}

#[tokio::test(start_paused = true)]
async fn closing_a_driven_peer_fails_calls_and_cancels_handlers_after_the_grace() {
    let sink = Arc::new(Recorder::default());
    let config = PeerConfig { shutdown_grace: Duration::from_secs(2), ..PeerConfig::default() };
    let driven = Peer::driven(sink.clone(), Arc::new(router()), config);
    let wait = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "wait"}});
    driven.dispatch(parsed(wait), None).await;
    let call = set_level_from(driven.peer());
    sink.wait_for(1).await;
    sink.take();
    driven.peer().close();
    assert!(driven.peer().is_closed());
    assert!(matches!(call.await.unwrap(), Err(CallError::Closed)));
    // The waiting handler gets the grace, then its cancellation: it answers (it returns on
    // cancellation), the connection is done.
    tokio::time::timeout(Duration::from_secs(10), driven.peer().closed()).await.expect("closed after the grace");
    assert_eq!(driven.peer().running_requests(), 0);
    // Nothing more is served once closed.
    let echo = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}});
    driven.dispatch(parsed(echo), None).await;
    assert!(sink.take().iter().all(|(v, _)| v["id"] != 2));
    assert!(matches!(driven.peer().request_raw("ping", None, CallOptions::default()).await, Err(CallError::Closed)));
}

#[tokio::test(start_paused = true)]
async fn a_driven_request_can_be_cancelled_from_the_moment_its_handler_first_runs() {
    // Other tasks dispatch to a driven peer at the same time: a cancellation may arrive while
    // the handler's first poll is still under way. The handler below cancels itself then,
    // standing in for that other task.
    let found = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = found.clone();
    let router = Router::new().request::<CallToolRequest, _, _>(move |_params, ctx| {
        seen.store(ctx.peer().cancel_incoming(ctx.id()), Ordering::SeqCst);
        async move {
            ctx.cancellation().cancelled().await;
            Ok(CallToolResult::success(vec![ContentBlock::text("cancelled")]))
        }
    });
    let sink = Arc::new(Recorder::default());
    let driven = Peer::driven(sink.clone(), Arc::new(router), PeerConfig::default());
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "any"}});
    driven.dispatch(parsed(call), None).await;
    assert!(found.load(Ordering::SeqCst), "the running request was not found by its id");
    // Its token fired: the handler saw it at once and answered so.
    let frames = sink.take();
    assert_eq!(frames[0].0["result"]["content"][0]["text"], "cancelled");
    assert_eq!(driven.peer().running_requests(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_batch_whose_requests_all_end_unanswered_tells_the_transport_so() {
    // An HTTP POST of a 2025-03-26 batch waits for the batch's frame; when every request of
    // it is cancelled, the empty frame says that none will come.
    let sink = Arc::new(Recorder::default());
    let driven = Peer::driven(sink.clone(), Arc::new(router()), PeerConfig::default());
    driven.peer().set_protocol_version(ProtocolVersion::V2025_03_26);
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "wait"}}]);
    driven.dispatch(parsed(batch), None).await;
    assert!(sink.take().is_empty());
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    driven.dispatch(parsed(cancel), None).await;
    tokio::time::timeout(Duration::from_secs(10), sink.wait_for(1)).await.expect("a frame for the batch");
    let frames = sink.take();
    assert_eq!(frames[0].0, Value::Null, "{frames:?}");
    assert_eq!(frames[0].1, mcp_jsonrpc::Route::Response(mcp_jsonrpc::RequestId::Integer(1)));
}

#[tokio::test]
async fn a_handler_that_answers_after_the_end_of_input_is_still_answered() {
    // The other side closes its end while a handler runs, with the transport and the outgoing
    // queue full; the handler then answers: its answer must be queued before the writer closes
    // (the engine waits for spawned handlers' answers to be queued, not only for the handlers
    // to end; this test does not force the interleaving where that matters).
    let (waiting, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let router = {
        let (waiting, release) = (waiting.clone(), release.clone());
        Router::new().request::<CallToolRequest, _, _>(move |_params, ctx| {
            let (waiting, release) = (waiting.clone(), release.clone());
            async move {
                let note = |i: i32| {
                    let peer = ctx.peer().clone();
                    async move {
                        let params = serde_json::from_value(json!({"level": "info", "data": i})).unwrap();
                        peer.notify::<mcp_types::LoggingMessageNotification>(params).await
                    }
                };
                // Three fit: one in the transport, one being written, one queued.
                for i in 0..3 {
                    note(i).await.unwrap();
                }
                waiting.notify_one();
                release.notified().await;
                Ok(CallToolResult::success(vec![ContentBlock::text("late")]))
            }
        })
    };
    let (a, b) = memory(1);
    let config = PeerConfig { outgoing_capacity: 1, shutdown_grace: Duration::from_secs(30), ..PeerConfig::default() };
    let peer = Peer::spawn(a, Arc::new(router), config);
    let (mut read, mut write) = b.split();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"any"}}"#;
    write.write(&[Bytes::from_static(call.as_bytes()).into()]).await.unwrap();
    waiting.notified().await;
    write.close().await.unwrap();
    release.notify_one();
    let mut frames = Vec::new();
    while let Some(Ok(f)) = read.read().await {
        frames.push(serde_json::from_slice::<Value>(&f.frame).unwrap());
    }
    assert_eq!(frames.len(), 4, "{frames:?}");
    assert_eq!(frames[3]["result"]["content"][0]["text"], "late", "{frames:?}");
    peer.closed().await;
}

#[tokio::test(start_paused = true)]
async fn panics_in_code_the_reader_runs_do_not_end_the_connection() {
    // A notification handler, and the synchronous part of a request handler (what runs before
    // its future), run on the reader task.
    let router = Router::new()
        .notification::<mcp_types::InitializedNotification, _>(|_params, _peer| panic!("notified"))
        .request::<CallToolRequest, _, _>(|params, _ctx| {
            assert_ne!(params.name, "sync-panic", "before the future");
            async { Ok(CallToolResult::success(vec![ContentBlock::text("fine")])) }
        });
    let (_peer, mut raw) = serve(router, PeerConfig::default());
    raw.send_text(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    raw.expect_silence(1).await;
    raw.send_text(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sync-panic"}}"#).await;
    let answer = raw.recv().await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    raw.send_text(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"other"}}"#).await;
    assert_eq!(raw.recv().await["result"]["content"][0]["text"], "fine");

    // A progress callback of an outgoing call.
    let (peer, mut raw) = client();
    let options = CallOptions::default().on_progress(|_| panic!("progress"));
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<CallToolRequest>(call_params("x"), options).await }
    });
    let req = raw.recv().await;
    let token = req["params"]["_meta"]["progressToken"].clone();
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 1}}))
        .await;
    raw.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"content": []}})).await;
    assert!(call.await.unwrap().is_ok());
    assert!(!peer.is_closed());
}

#[tokio::test(start_paused = true)]
async fn calls_time_out_and_cancel_while_waiting_for_room_to_send() {
    // The other side reads nothing: the transport and the outgoing queue fill, and later
    // calls wait for room. That wait counts against their timeout and their cancellation.
    let (a, b) = memory(1);
    let config = PeerConfig { outgoing_capacity: 1, ..PeerConfig::default() };
    let peer = Peer::spawn(a, Arc::new(Router::new()), config);
    let _unread = b;
    let calls: Vec<_> = (0..4)
        .map(|i| {
            let peer = peer.clone();
            let options = CallOptions::default().timeout(Duration::from_secs(1));
            tokio::spawn(async move { peer.request::<CallToolRequest>(call_params(&i.to_string()), options).await })
        })
        .collect();
    for call in calls {
        let outcome = tokio::time::timeout(Duration::from_secs(60), call).await.expect("the call ends").unwrap();
        assert!(matches!(outcome, Err(CallError::Timeout { .. })), "{outcome:?}");
    }
    let cancel = tokio_util::sync::CancellationToken::new();
    let options = CallOptions::default().timeout(Duration::from_secs(3600)).cancel_on(cancel.clone());
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<CallToolRequest>(call_params("c"), options).await }
    });
    cancel.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(60), call).await.expect("the call ends").unwrap();
    assert!(matches!(outcome, Err(CallError::Cancelled)), "{outcome:?}");
}

#[tokio::test(start_paused = true)]
async fn closing_ends_the_connection_even_when_the_other_side_reads_nothing() {
    // The transport and the outgoing queue are full, the writer waits on the transport and
    // the reader on the queue (answering pings): close still ends it all, after the grace.
    let (a, b) = memory(1);
    let config = PeerConfig { outgoing_capacity: 1, shutdown_grace: Duration::from_secs(2), ..PeerConfig::default() };
    let peer = Peer::spawn(a, Arc::new(Router::new()), config);
    let (_unread, mut write) = b.split();
    // Pong 0 sits in the transport, pong 1 in the writer's hands, pong 2 in the queue; the
    // write of ping 4 returns once the reader took ping 3, whose pong it then waits to queue.
    for i in 0..5 {
        let ping = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#);
        write.write(&[Bytes::from(ping).into()]).await.unwrap();
    }
    peer.close();
    tokio::time::timeout(Duration::from_secs(60), peer.closed()).await.expect("the connection ends");
}

/// `CallOptions::meta`: its members join the params' `_meta` (created if need be), a member
/// the params have already is kept as the caller wrote it, and typed and raw requests alike.
#[tokio::test(start_paused = true)]
async fn call_options_meta_members_join_the_params_meta_without_overwriting() {
    let (peer, mut raw) = serve(Router::new(), PeerConfig::default());
    peer.set_protocol_version(ProtocolVersion::V2025_06_18);
    let options = || {
        CallOptions::default()
            .meta_member("traceparent", json!("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
            .meta_member("baggage", json!("k=v"))
    };
    let mut params = CallToolRequestParams::new("echo");
    params.meta = Some(mcp_types::RequestMetaObject {
        extra: serde_json::from_value(
            json!({"traceparent": "00-11111111111111111111111111111111-2222222222222222-01"}),
        )
        .unwrap(),
        ..Default::default()
    });
    let typed = {
        let peer = peer.clone();
        tokio::spawn(async move { peer.request::<CallToolRequest>(params, options()).await })
    };
    let frame = raw.recv().await;
    assert_eq!(
        frame,
        json!({"jsonrpc": "2.0", "id": frame["id"], "method": "tools/call", "params": {"name": "echo", "_meta": {
            "traceparent": "00-11111111111111111111111111111111-2222222222222222-01",
            "baggage": "k=v",
        }}})
    );
    raw.send(json!({"jsonrpc": "2.0", "id": frame["id"], "result": {"content": []}})).await;
    assert!(typed.await.unwrap().is_ok());

    // Not `Send` (its params are a `&dyn Body`): the call and the other side in one task.
    let untyped = peer.request_raw("custom/thing", None, options());
    let other_side = async {
        let frame = raw.recv().await;
        raw.send(json!({"jsonrpc": "2.0", "id": frame["id"], "result": {}})).await;
        frame
    };
    let (answer, frame) = tokio::join!(untyped, other_side);
    assert!(answer.is_ok());
    assert_eq!(
        frame["params"],
        json!({"_meta": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "baggage": "k=v"}})
    );
}

#[tokio::test(start_paused = true)]
async fn pending_calls_failed_by_the_transport_get_its_error_and_a_late_answer_is_ignored() {
    let (peer, mut raw) = client();
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request::<CallToolRequest>(call_params("x"), CallOptions::default()).await }
    });
    let req = raw.recv().await;
    let lost = mcp_jsonrpc::ErrorObject::internal_error("its answer was lost");
    assert_eq!(peer.fail_pending_calls(&lost), 1);
    match call.await.unwrap() {
        Err(CallError::Remote(e)) => assert_eq!(e, lost),
        other => panic!("{other:?}"),
    }
    assert_eq!((peer.pending_calls(), peer.fail_pending_calls(&lost)), (0, 0));
    raw.send(json!({"jsonrpc":"2.0","id":req["id"],"result":{"content":[]}})).await;
    raw.expect_silence(1).await;
    assert!(!peer.is_closed(), "the connection goes on");
}
