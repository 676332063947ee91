//! `otel`: one trace across an MCP client and server, exported to stdout by OpenTelemetry.
//!
//! The server (an `echo` tool) serves Streamable HTTP on a local port; the client calls it
//! inside a span `agent`. The client's `mcp.client.request` span puts its W3C trace context in
//! the request's `_meta` (`traceparent`), and the server's `mcp.server.request` span continues
//! it: the stdout exporter prints the three spans (`agent`, the client's `tools/call echo` of
//! kind Client, the server's `tools/call echo` of kind Server) with one trace id, each the
//! parent of the next. The last line sums it up.
//!
//! `cargo run -p mcp-examples --features opentelemetry --example otel`

use std::sync::Arc;

use mcp_sdk::client::ClientBuilder;
use mcp_sdk::server::{Server, ToolDef, ToolError};
use mcp_sdk::transport::http::server::{HttpServerConfig, serve_listener};
use mcp_sdk::types::{CallToolResult, ContentBlock};
use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::json;
use tracing::Instrument as _;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // One provider for both sides (they share a process here); across processes each side
    // installs its own and the trace id travels in `_meta`.
    let provider =
        SdkTracerProvider::builder().with_simple_exporter(opentelemetry_stdout::SpanExporter::default()).build();
    tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("mcp-otel-example")))
        .init();

    let echo = ToolDef::new(
        "echo",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        |args, _ctx| async move {
            let text = args.get("text").and_then(|t| t.as_str()).unwrap_or_default().to_owned();
            Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text)]))
        },
    )?;
    let server = Server::builder("otel-example", "1.0").tool(echo).build()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    tokio::spawn(serve_listener(Arc::new(server), HttpServerConfig::default(), listener));

    let client = ClientBuilder::new("otel-example-client", "1.0").connect_http(&url).await?;
    let agent = tracing::info_span!("agent");
    let trace_id = agent.context().span().span_context().trace_id();
    let result = client.call_tool("echo", json!({"text": "traced"})).instrument(agent).await?;
    client.close().await?;
    provider.shutdown()?;
    println!("tool answered {:?}; client and server spans above share trace id {trace_id}", result.content);
    Ok(())
}
