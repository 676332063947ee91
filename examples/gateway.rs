//! `gateway`: several MCP servers behind one endpoint, each under a prefix
//! (`mcp_sdk::gateway`): the official `server-everything` run as a child over stdio, and our
//! `everything` example reached over Streamable HTTP.
//!
//! ```sh
//! cargo run --example everything -- --http 127.0.0.1:3001 &
//! cargo run --example gateway -- --http 127.0.0.1:8080   # serves http://127.0.0.1:8080/mcp
//! # the same, spelled out; any number of mounts:
//! cargo run --example gateway -- --http 127.0.0.1:8080 \
//!     --mount 'official=npx -y @modelcontextprotocol/server-everything' \
//!     --mount 'ours=http://127.0.0.1:3001/mcp'
//! ```
//!
//! `--mount PREFIX=TARGET` mounts a server: a `TARGET` that starts with `http://` or `https://`
//! is a Streamable HTTP endpoint, anything else a command line run as a child (split at
//! whitespace). An empty prefix (`--mount =http://...`) mounts a server unprefixed (`cargo
//! xtask conformance` runs the server scenarios against `everything` mounted so). Tools and
//! prompts are listed as `official_echo`, `ours_test_simple_text`; resources as
//! `official+demo://resource/static/document/...`. `--stdio` serves over stdio instead.
//!
//! In front of it (over HTTP), as a product would put them:
//! - `--issuer URL [--resource URL]`: OAuth 2.1; every request needs a JWT access token of
//!   that issuer for this endpoint (`JwtVerifier::from_issuer`, as the `auth_server`
//!   example). The mounted servers keep their own authorization: the client's token is never
//!   passed on.
//! - `--scoped PREFIX` (repeatable): the items of that mount are seen only by tokens with
//!   `PREFIX` as a scope; to the others they are unknown, as if absent (visibility).
//! - `--calls-per-minute N`: tool calls limited per principal (per client address without
//!   `--issuer`), answered with -32000 and a `retryAfterMs` hint (a rate-limit layer).
//!
//! Ctrl-C or SIGTERM stops it as `everything` stops. Logs go to stderr (`RUST_LOG`).

use std::num::NonZeroU32;

use mcp_examples::gateway::front;
use mcp_sdk::gateway::{Gateway, Source};
use mcp_sdk::server::shutdown_signal;
use mcp_sdk::transport::http::server::HttpServerConfig;
use mcp_sdk::transport::http::server::auth::{AuthConfig, JwtVerifier};
use mcp_sdk::transport::stdio::ChildCommand;
use tracing_subscriber::filter::LevelFilter;

const USAGE: &str = "usage: gateway --stdio | --http ADDR [--mount PREFIX=URL|COMMAND]... \
                     [--issuer URL [--resource URL]] [--scoped PREFIX]... [--calls-per-minute N] \
                     (ADDR e.g. 127.0.0.1:8080; serves http://ADDR/mcp)";

/// The mounts without `--mount`.
const DEFAULT_MOUNTS: [&str; 2] =
    ["official=npx -y @modelcontextprotocol/server-everything", "ours=http://127.0.0.1:3001/mcp"];

/// A mount's target, read from `PREFIX=TARGET`.
fn source(target: &str) -> anyhow::Result<Source> {
    if target.starts_with("http://") || target.starts_with("https://") {
        return Ok(Source::http(target)?);
    }
    let mut words = target.split_whitespace();
    let program = words.next().ok_or_else(|| anyhow::anyhow!("an empty mount target\n{USAGE}"))?;
    Ok(Source::stdio(ChildCommand::new(program).args(words)))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let level = std::env::var("RUST_LOG").ok().and_then(|l| l.parse().ok()).unwrap_or(LevelFilter::WARN);
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(level).init();
    let (mut stdio, mut http, mut mounts) = (false, None, Vec::new());
    let (mut issuer, mut resource, mut scoped, mut rate) = (None, None, Vec::new(), None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| anyhow::anyhow!("{arg} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--stdio" => stdio = true,
            "--http" => http = Some(value()?),
            "--mount" => mounts.push(value()?),
            "--issuer" => issuer = Some(value()?),
            "--resource" => resource = Some(value()?),
            "--scoped" => scoped.push(value()?),
            "--calls-per-minute" => rate = Some(value()?.parse::<NonZeroU32>()?),
            _ => anyhow::bail!("unknown argument `{arg}`\n{USAGE}"),
        }
    }
    if stdio == http.is_some() {
        anyhow::bail!(USAGE);
    }
    if mounts.is_empty() {
        mounts = DEFAULT_MOUNTS.map(str::to_owned).to_vec();
    }

    let mut gateway = Gateway::builder("mcp-rust-gateway", env!("CARGO_PKG_VERSION"));
    for mount in &mounts {
        let (prefix, target) = mount.split_once('=').ok_or_else(|| anyhow::anyhow!("`{mount}`: no `=`\n{USAGE}"))?;
        gateway = gateway.mount(prefix, source(target)?);
    }
    if issuer.is_some() && stdio {
        anyhow::bail!("--issuer protects an HTTP endpoint: use it with --http\n{USAGE}");
    }
    let authorized = issuer.is_some();
    let server = gateway.server(|builder| front(builder, scoped, rate, authorized)).build().await?;
    if stdio {
        server.serve_stdio_until(shutdown_signal()).await;
        return Ok(());
    }
    let addr = http.unwrap_or_default();
    let mut config = HttpServerConfig::default().health_routes(true);
    if let Some(issuer) = issuer {
        let resource = resource.unwrap_or(format!("http://{addr}/mcp"));
        let verifier = JwtVerifier::from_issuer(issuer.clone(), resource.clone())?;
        config = config.auth(AuthConfig::new(resource, verifier)?.authorization_server(issuer));
    }
    tracing::info!(mounts = ?mounts, "serving Streamable HTTP at http://{addr}/mcp");
    server.serve_http_until(addr.as_str(), config, shutdown_signal()).await?;
    Ok(())
}
