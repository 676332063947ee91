//! Micro-benchmarks of the engine's hot path: decode a frame, dispatch it through the router,
//! encode the answer; and a whole round trip over the in-memory transport.
//!
//! `cargo bench -p mcp-jsonrpc`

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_jsonrpc::message::{self, Message, Parsed};
use mcp_jsonrpc::transport::memory;
use mcp_jsonrpc::{CallOptions, Peer, PeerConfig, Router};
use mcp_types::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ContentBlock, ForRevision, ProtocolVersion, RequestId,
};

const FRAME: &[u8] =
    br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"}}}"#;

fn echo_router() -> Router {
    Router::new().request::<CallToolRequest, _, _>(|params, _ctx| async move {
        let text = params.arguments.as_ref().and_then(|a| a.get("text")).and_then(|t| t.as_str()).unwrap_or_default();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    })
}

fn decode(c: &mut Criterion) {
    c.bench_function("decode tools/call frame + params", |b| {
        b.iter(|| {
            let Parsed::Single(Message::Request(req)) = message::parse(std::hint::black_box(FRAME)) else {
                unreachable!()
            };
            let params: CallToolRequestParams = message::decode_params(req.params.as_deref()).unwrap();
            std::hint::black_box(params);
        })
    });
}

fn encode(c: &mut Criterion) {
    let result = CallToolResult::success(vec![ContentBlock::text("hello world")]);
    let id = RequestId::Integer(42);
    c.bench_function("encode tools/call response", |b| {
        b.iter(|| {
            let body = ForRevision::new(&result, ProtocolVersion::V2025_06_18);
            std::hint::black_box(message::encode_result(&id, &body).unwrap());
        })
    });
}

fn round_trip(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (a, b) = memory(1024);
    let (client, _server) = rt.block_on(async {
        let server = Peer::spawn(a, Arc::new(echo_router()), PeerConfig::default());
        let client = Peer::spawn(b, Arc::new(Router::new()), PeerConfig::default());
        (client, server)
    });
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = serde_json::from_str(r#"{"text":"hello world"}"#).unwrap();
    c.bench_function("round trip over the in-memory transport (dispatch)", |b| {
        b.iter(|| {
            rt.block_on(async {
                let r = client.request::<CallToolRequest>(params.clone(), CallOptions::default()).await.unwrap();
                std::hint::black_box(r);
            })
        })
    });
}

criterion_group!(benches, decode, encode, round_trip);
criterion_main!(benches);
