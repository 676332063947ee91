//! `interop_apps`: our client as the host side of MCP Apps (SEP-1865) against an official
//! example app server, `@modelcontextprotocol/server-basic-vanillajs` (stdio), as
//! `cargo xtask interop` runs it:
//!
//! ```sh
//! interop_apps node target/interop/apps/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js --stdio
//! ```
//!
//! It declares the extension (`ClientBuilder::apps`), finds the tool with a view
//! (`UiTool::ui_resource_uri`), reads and checks the view (`Client::read_ui_resource`: a
//! `ui://` URI, `text/html;profile=mcp-app`), calls the tool as the model would and again as
//! its view would (`Client::call_tool_for_app`), and reads what a view posts with
//! `apps::host::parse`. Prints `ok - <check>` or `not ok - <check>: <why>` per check, then
//! `N passed, M failed`.

use std::time::Duration;

use anyhow::{Context as _, bail, ensure};
use mcp_examples::checks::Report;
use mcp_sdk::client::ClientBuilder;
use mcp_sdk::client::apps::{UiTool as _, host};
use mcp_sdk::transport::stdio::ChildCommand;
use mcp_sdk::types::Tool;
use serde_json::json;

/// The longest one check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<std::process::ExitCode> {
    let mut args = std::env::args().skip(1);
    let Some(program) = args.next() else { bail!("usage: interop_apps <server command> [args...]") };
    let args: Vec<String> = args.collect();
    let mut report = Report::new(CHECK_TIMEOUT);
    let client = match ClientBuilder::new("mcp-rust-interop-apps", "1.0.0")
        .apps()
        .spawn(ChildCommand::new(&program).args(&args))
        .await
    {
        Ok(client) => client,
        Err(e) => {
            report.fail("connect", e);
            return Ok(report.finish());
        }
    };
    let mut found: Option<(Tool, String)> = None;
    report
        .check("a tool has a view (_meta.ui.resourceUri)", async {
            let tools = client.list_all_tools().await?;
            let (tool, uri) = tools
                .into_iter()
                .find_map(|t| t.ui_resource_uri().map(|uri| (t, uri)))
                .context("no tool with a view")?;
            ensure!(uri.starts_with("ui://"), "{uri} is not ui://");
            ensure!(tool.visible_to_model() && tool.callable_by_app(), "{} is not for both", tool.name);
            let note = format!("{} -> {uri}", tool.name);
            found = Some((tool, uri));
            Ok(note)
        })
        .await;
    let Some((tool, uri)) = found else { return Ok(report.finish()) };
    report
        .check("the view is read and checked (text/html;profile=mcp-app)", async {
            let view = client.read_ui_resource(&uri).await?;
            ensure!(view.html.contains("<html") || view.html.contains("<!DOCTYPE"), "no HTML document");
            Ok(format!("{} bytes", view.html.len()))
        })
        .await;
    report
        .check("the tool answers the model's call", async {
            let result = client.call_tool(&tool.name, json!({})).await?;
            ensure!(result.is_error != Some(true), "an error result: {result:?}");
            ensure!(!result.content.is_empty(), "no content");
            Ok(result.content[0].as_text().unwrap_or_default().to_owned())
        })
        .await;
    report
        .check("a view's ui/initialize is read as the host side reads it", async {
            let init = json!({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {
                "appInfo": {"name": "view", "version": "1"}, "appCapabilities": {}, "protocolVersion": "2026-01-26"}});
            match host::parse(&init) {
                Ok(host::FromView::Initialize { params, .. }) => Ok(params.app_info.name),
                other => bail!("read as {other:?}"),
            }
        })
        .await;
    report
        .check("a view's tools/call goes through the host to the server and back", async {
            let posted = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool.name, "arguments": {}}});
            let host::FromView::CallTool { id, params } = host::parse(&posted)? else { bail!("not read as a tool call") };
            let result = client.call_tool_for_app(&tool, params).await?;
            ensure!(result.is_error != Some(true), "an error result: {result:?}");
            let answer = host::result_of(&id, &result);
            ensure!(answer["id"] == 7 && answer["result"]["content"].is_array(), "the answer to post: {answer}");
            Ok(String::new())
        })
        .await;
    Ok(report.finish())
}
