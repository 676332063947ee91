//! `mcp proxy [--serve ADDR] --named-server NAME TARGET...`: several servers on one endpoint,
//! through a gateway (`mcp_sdk::gateway`), as `mcp-proxy --named-server` offers them: each
//! mounted under its name (tools and prompts `NAME_tool`, resources `NAME+uri`), and the
//! server after `--` (or at a URL), if any, mounted unprefixed. Served over stdio, or over
//! Streamable HTTP at `--serve ADDR` (`http://ADDR/mcp`).
//!
//! Unlike `mcp proxy URL` and `mcp proxy --serve ADDR -- COMMAND`, which pass frames through,
//! the gateway speaks to each server as a client: each session of the endpoint gets its own
//! connection to each server it calls (a child process per session for a command), opened at
//! its first call.

use std::process::ExitCode;

use mcp_sdk::gateway::{Gateway, Source};
use mcp_sdk::server::Server;
use mcp_sdk::transport::http::server::HttpServerConfig;
use mcp_sdk::transport::stdio::{ChildCommand, StderrMode};

use crate::cli::{Global, ProxyArgs, exit};
use crate::target::{self, Target};

/// Builds the gateway and serves it until the client leaves (stdio) or Ctrl-C (HTTP).
pub async fn run(args: &ProxyArgs, global: &Global) -> ExitCode {
    let gateway = match build(args, global).await {
        Ok(gateway) => gateway,
        Err(e) => {
            eprintln!("mcp proxy: {e:#}");
            return ExitCode::from(exit::CONNECTION);
        }
    };
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let Some(addr) = &args.serve else {
        gateway.serve_stdio_until(stop).await;
        return ExitCode::SUCCESS;
    };
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("mcp proxy --serve: cannot listen on {addr}: {e}");
            return ExitCode::from(exit::CONNECTION);
        }
    };
    if let Ok(local) = listener.local_addr() {
        eprintln!("mcp proxy: serving http://{local}/mcp");
    }
    let config = HttpServerConfig::default();
    match mcp_sdk::transport::http::server::serve_listener_with_shutdown(
        std::sync::Arc::new(gateway),
        config,
        listener,
        stop,
    )
    .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp proxy --serve: {e}");
            ExitCode::from(exit::CONNECTION)
        }
    }
}

/// The gateway of the named servers (and the unnamed one).
async fn build(args: &ProxyArgs, global: &Global) -> anyhow::Result<Server> {
    let mut gateway = Gateway::builder("mcp-proxy", env!("CARGO_PKG_VERSION"));
    for pair in args.named_server.chunks(2) {
        let [name, target] = pair else { anyhow::bail!("--named-server takes a NAME and a TARGET") };
        gateway = gateway.mount(name.as_str(), source(target)?);
    }
    if !args.server.server.is_empty() {
        let source = match target::resolve(global, &args.server.server)? {
            Target::Url { url, .. } => Source::http(&url)?,
            Target::Command { program, args, env } => {
                let mut command = ChildCommand::new(program).args(args).stderr(StderrMode::Inherit);
                for (key, value) in env {
                    command = command.env(key, value);
                }
                Source::stdio(command)
            }
        };
        gateway = gateway.mount("", source);
    }
    Ok(gateway.build().await?)
}

/// A named server's `TARGET`: a URL, or a command line split at whitespace.
fn source(target: &str) -> anyhow::Result<Source> {
    if target.starts_with("http://") || target.starts_with("https://") {
        return Ok(Source::http(target)?);
    }
    let mut words = target.split_whitespace();
    let program = words.next().ok_or_else(|| anyhow::anyhow!("an empty --named-server command"))?;
    Ok(Source::stdio(ChildCommand::new(program).args(words).stderr(StderrMode::Inherit)))
}
