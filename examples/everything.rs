//! `everything`: the server the official MCP conformance suite's server scenarios expect
//! (`mcp_examples::everything`: those of 0.1.16 for the session revisions, and those
//! 0.2.0-alpha.12 requires for protocol revision 2026-07-28), over stdio or Streamable HTTP.
//!
//! ```sh
//! cargo run --example everything -- --stdio
//! cargo run --example everything -- --http 127.0.0.1:3000   # serves http://127.0.0.1:3000/mcp
//! # One instance of a fleet sharing its state through Redis (see `cargo xtask fleet`):
//! cargo run --example everything -- --http 127.0.0.1:3001 --redis redis://127.0.0.1:6379 --name a
//! ```
//!
//! `--name NAME` names the instance in its logs and in the progress messages of its
//! `count_down` tool (default `everything`). `--redis URL` (with `--http`) makes it one
//! instance of a fleet ([`mcp_examples::everything::fleet`]).
//!
//! For `cargo xtask soak`: `--idle-timeout SECS` (with `--http`) ends sessions idle that long
//! (default 30 min), and `--metrics` writes `metrics tasks=N` (the tokio tasks alive) to
//! stderr once a second.
//!
//! `--prometheus` (with `--http`) serves `GET /metrics` in the Prometheus text format: the
//! SDK's metrics (sessions, requests, errors and durations by method, the fleet's bus, Redis
//! calls), every series labelled `mcp_instance` with the `--name` (docs/deploy.md, "Metrics").
//!
//! Ctrl-C or SIGTERM stops it gracefully: over HTTP, new connections are refused, `/readyz`
//! turns 503 (`/healthz` and `/readyz` are served), and requests in flight get 10 seconds to
//! finish; over stdio, it stops reading and lets the requests in flight finish.
//!
//! Logs go to stderr (level from `RUST_LOG`: `error`, `warn` (the default), `info`, `debug`,
//! `trace` or `off`).

use mcp_examples::everything::{self, Instance, ServerHandle};
use mcp_sdk::server::shutdown_signal;
use mcp_sdk::transport::http::server::{HttpServerConfig, metrics};
use tracing_subscriber::filter::LevelFilter;

const USAGE: &str = "usage: everything --stdio | --http ADDR [--redis URL] [--name NAME] \
                     [--idle-timeout SECS] [--metrics] [--prometheus] (ADDR e.g. 127.0.0.1:3000; serves http://ADDR/mcp)";

/// The command line.
#[derive(Default)]
struct Args {
    stdio: bool,
    http: Option<String>,
    redis: Option<String>,
    name: Option<String>,
    idle_timeout: Option<u64>,
    metrics: bool,
    prometheus: bool,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut args = Args::default();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| anyhow::anyhow!("{arg} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--stdio" => args.stdio = true,
            "--http" => args.http = Some(value()?),
            "--redis" => args.redis = Some(value()?),
            "--name" => args.name = Some(value()?),
            "--idle-timeout" => args.idle_timeout = Some(value()?.parse()?),
            "--metrics" => args.metrics = true,
            "--prometheus" => args.prometheus = true,
            _ => anyhow::bail!("unknown argument `{arg}`\n{USAGE}"),
        }
    }
    if args.stdio == args.http.is_some() || ((args.redis.is_some() || args.prometheus) && args.http.is_none()) {
        anyhow::bail!(USAGE);
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let level = std::env::var("RUST_LOG").ok().and_then(|l| l.parse().ok()).unwrap_or(LevelFilter::WARN);
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(level).init();

    let args = parse_args()?;
    if args.metrics {
        tokio::spawn(metrics());
    }
    let name = args.name.clone().unwrap_or_else(|| "everything".to_owned());
    let handle = ServerHandle::default();
    let builder = everything::builder(&handle)?.state(Instance(name.clone()));
    let Some(addr) = args.http else {
        let server = everything::build(builder, &handle)?;
        server.serve_stdio_until(shutdown_signal()).await;
        return Ok(());
    };
    // Ctrl-C or SIGTERM drains: new connections are refused, /readyz turns 503, requests in
    // flight get 10 seconds to finish.
    let mut config = HttpServerConfig::default().health_routes(true);
    if let Some(secs) = args.idle_timeout {
        config = config.session_idle_timeout(std::time::Duration::from_secs(secs));
    }
    if args.prometheus {
        config = config.metrics(metrics::install_prometheus(Some(&name))?);
    }
    let (builder, config) = match &args.redis {
        Some(url) => everything::fleet(url, builder, config).await?,
        None => (builder, config),
    };
    let server = everything::build(builder, &handle)?;
    tracing::info!(instance = %name, redis = ?args.redis, "serving Streamable HTTP at http://{addr}/mcp (health at /healthz, /readyz)");
    server.serve_http_until(addr.as_str(), config, shutdown_signal()).await?;
    Ok(())
}

/// `--metrics`: the tokio tasks alive, on stderr once a second (read by `cargo xtask soak`).
async fn metrics() {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        tick.tick().await;
        let tasks = tokio::runtime::Handle::current().metrics().num_alive_tasks();
        eprintln!("metrics tasks={tasks}");
    }
}
