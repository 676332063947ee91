//! `conformance_client`: the client under test for the official MCP conformance suite's client
//! scenarios (`@modelcontextprotocol/conformance`).
//!
//! ```sh
//! MCP_CONFORMANCE_SCENARIO=initialize conformance_client http://localhost:3000/mcp
//! npx @modelcontextprotocol/conformance client --command target/debug/examples/conformance_client --scenario sse-retry
//! ```
//!
//! The server URL is the last argument; the scenario comes from `MCP_CONFORMANCE_SCENARIO`:
//! - `initialize`: initialize, list the tools, close;
//! - `tools_call`: call `add_numbers` with `{a, b}`;
//! - `elicitation-sep1034-client-defaults`: call `test_client_elicitation_defaults`, answering
//!   its elicitation with an accepted empty form that the client's SEP-1034 defaults fill in;
//! - `sse-retry`: call `test_reconnection`, whose SSE stream the server closes; the transport
//!   resumes it with GET and `Last-Event-ID` after the server's `retry`.
//!
//! Exits with 0 on success; otherwise with 1 and the reason on stderr. Logs go to stderr.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};
use mcp_sdk::client::{CallOptions, Client, ClientBuilder};
use mcp_sdk::types::{ContentBlock, ElicitAction, ElicitRequestParams, ElicitResult, ErrorObject, ListToolsRequest};
use serde_json::json;

/// The longest the whole scenario may take.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let result = tokio::time::timeout(SCENARIO_TIMEOUT, run()).await;
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("conformance_client: {e:#}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("conformance_client: the scenario did not finish within {SCENARIO_TIMEOUT:?}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    let url = std::env::args().skip(1).last().context("usage: conformance_client <server URL>")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").context("MCP_CONFORMANCE_SCENARIO is not set")?;
    log(&format!("scenario {scenario} against {url}"));
    let builder = ClientBuilder::new("mcp-rust-sdk-conformance", env!("CARGO_PKG_VERSION"));
    match scenario.as_str() {
        "initialize" => {
            let client = builder.connect_http(&url).await.context("initialize")?;
            log(&format!("connected to {} ({})", client.server_info().name, client.protocol_version()));
            // The server declares no capabilities: ask the way a lenient client would.
            let tools =
                client.peer().request::<ListToolsRequest>(Default::default(), CallOptions::default()).await?.tools;
            log(&format!("{} tools", tools.len()));
            close(client).await
        }
        "tools_call" => {
            let client = builder.connect_http(&url).await.context("initialize")?;
            let tools = client.list_all_tools().await?;
            ensure!(tools.iter().any(|t| t.name == "add_numbers"), "no add_numbers tool in {tools:?}");
            let result = client.call_tool("add_numbers", json!({"a": 5, "b": 3})).await?;
            let text = text_of(&result.content);
            ensure!(!result.is_error() && text.contains('8'), "add_numbers answered {text:?}");
            log(&format!("add_numbers: {text}"));
            close(client).await
        }
        "elicitation-sep1034-client-defaults" => {
            let client = builder
                .on_elicitation(|params: ElicitRequestParams| async move {
                    log(&format!("elicitation: {}", params_message(&params)));
                    // The user accepts without filling anything in: the defaults apply.
                    let mut result = ElicitResult::new(ElicitAction::Accept);
                    result.content = Some(Default::default());
                    Ok::<_, ErrorObject>(result)
                })
                .apply_elicitation_defaults()
                .connect_http(&url)
                .await
                .context("initialize")?;
            let result = client.call_tool("test_client_elicitation_defaults", json!({})).await?;
            let text = text_of(&result.content);
            ensure!(!result.is_error(), "the tool failed: {text}");
            log(&format!("test_client_elicitation_defaults: {text}"));
            close(client).await
        }
        "sse-retry" => {
            let client = builder.connect_http(&url).await.context("initialize")?;
            let result = client.call_tool("test_reconnection", json!({})).await?;
            let text = text_of(&result.content);
            ensure!(!result.is_error(), "the tool failed: {text}");
            log(&format!("test_reconnection: {text}"));
            close(client).await
        }
        other => bail!("unknown scenario {other:?}"),
    }
}

async fn close(client: Client) -> anyhow::Result<()> {
    client.close().await.context("close")?;
    Ok(())
}

fn text_of(content: &[ContentBlock]) -> String {
    content.iter().filter_map(ContentBlock::as_text).collect::<Vec<_>>().join(" ")
}

fn params_message(params: &ElicitRequestParams) -> &str {
    match params {
        ElicitRequestParams::ElicitRequestForm(f) => &f.message,
        ElicitRequestParams::ElicitRequestURL(u) => &u.message,
    }
}

fn log(line: &str) {
    eprintln!("conformance_client: {line}");
}
