//! `baseline_http`: the no-library baseline of the HTTP benchmarks, the yardstick the `echo`
//! server's Streamable HTTP endpoint is measured against. Plain hyper: HTTP/1.1 with keep-alive
//! and TCP_NODELAY on a multi-thread tokio runtime; each POST to `/mcp` is read (up to 4 MiB),
//! parsed with serde_json and answered with a reply built with serde_json. It does only what a
//! server minimally must: no sessions (it hands out a fixed `Mcp-Session-Id` and never checks
//! it), no schema validation, no header checks; 2026-07-28 requests (`_meta` envelope) are
//! answered like the others, their results with the `resultType` that revision requires.
//!
//! ```sh
//! cargo run --release --example baseline_http -- --http ADDR [--sse]
//! ```
//!
//! It answers `initialize`, `tools/list` and `tools/call` of `echo` ({"text": string}); other
//! requests get -32601, notifications and responses 202. Replies are `application/json`, or
//! with `--sse` one `message` event of a `text/event-stream` that then ends. It prints
//! `listening on http://ADDR/mcp` to stderr once bound.

use std::convert::Infallible;

use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::HeaderValue;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// The largest request body read; beyond it the answer is 413.
const MAX_BODY: usize = 4 * 1024 * 1024;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(addr) = args.iter().position(|a| a == "--http").and_then(|i| args.get(i + 1)).cloned() else {
        anyhow::bail!("usage: baseline_http --http ADDR [--sse]");
    };
    let sse = args.iter().any(|a| a == "--sse");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&addr).await?;
        eprintln!("listening on http://{}/mcp", listener.local_addr()?);
        loop {
            let tcp = match listener.accept().await {
                Ok((tcp, _)) => tcp,
                Err(_) => {
                    // Out of descriptors and the like: back off a little rather than spin.
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    continue;
                }
            };
            let _ = tcp.set_nodelay(true);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| handle(req, sse));
                let conn = hyper::server::conn::http1::Builder::new()
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(tcp), service);
                let _ = conn.await;
            });
        }
    })
}

fn reply(status: StatusCode, content_type: Option<&'static str>, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Some(content_type) = content_type {
        response.headers_mut().insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    response
}

async fn handle(req: Request<Incoming>, sse: bool) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.uri().path() != "/mcp" {
        return Ok(reply(StatusCode::NOT_FOUND, None, Vec::new()));
    }
    if req.method() != Method::POST {
        return Ok(reply(StatusCode::METHOD_NOT_ALLOWED, None, Vec::new()));
    }
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) if e.is::<LengthLimitError>() => return Ok(reply(StatusCode::PAYLOAD_TOO_LARGE, None, Vec::new())),
        Err(_) => return Ok(reply(StatusCode::BAD_REQUEST, None, Vec::new())),
    };
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
        let error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}});
        return Ok(reply(StatusCode::BAD_REQUEST, Some("application/json"), error.to_string().into_bytes()));
    };
    // Notifications (no id) and responses (no method) are accepted and dropped.
    let (Some(id), Some(method)) = (msg.get("id"), msg.get("method").and_then(Value::as_str)) else {
        return Ok(reply(StatusCode::ACCEPTED, None, Vec::new()));
    };
    let params = &msg["params"];
    let outcome = match method {
        "initialize" => Ok(json!({
            "protocolVersion": params["protocolVersion"].as_str().unwrap_or("2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "baseline", "version": "1"},
        })),
        "tools/list" => Ok(json!({"tools": [{
            "name": "echo",
            "description": "Returns the text it is given",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        }]})),
        "tools/call" if params["name"] == "echo" => {
            let text = params["arguments"]["text"].as_str().unwrap_or_default();
            Ok(json!({"content": [{"type": "text", "text": text}], "isError": false}))
        }
        _ => Err(json!({"code": -32601, "message": format!("method not found: {method}")})),
    };
    let stateless = params["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28";
    let answer = match outcome {
        Ok(mut result) => {
            if stateless {
                result["resultType"] = json!("complete");
            }
            json!({"jsonrpc": "2.0", "id": id, "result": result})
        }
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    };
    let mut response = if sse {
        let mut body = b"event: message\ndata: ".to_vec();
        serde_json::to_writer(&mut body, &answer).expect("a Value serializes");
        body.extend_from_slice(b"\n\n");
        reply(StatusCode::OK, Some("text/event-stream"), body)
    } else {
        reply(StatusCode::OK, Some("application/json"), serde_json::to_vec(&answer).expect("a Value serializes"))
    };
    if method == "initialize" {
        response.headers_mut().insert("mcp-session-id", HeaderValue::from_static("baseline"));
    }
    Ok(response)
}
