//! `echo_client`: our `Client` calling the `echo` tool of a server it runs as a child process,
//! as many times as it is told on stdin. It is the client under test of the client rows of
//! `cargo xtask bench --callgrind` (docs/benchmarks.md, "Client middleware").
//!
//! ```sh
//! cargo run --release --example echo_client -- [--middleware] target/release/examples/echo --stdio
//! ```
//!
//! Each line read from stdin is a number N: it makes N sequential `tools/call` of `echo`, then
//! writes `done` to stdout. It ends at the end of stdin. `--middleware` adds the client's
//! `Logging` and `Metrics` layers, with a Prometheus recorder installed and no `tracing`
//! subscriber (as the server's row `ours stdio +mw`).

use std::io::{BufRead as _, Write as _};

use mcp_sdk::client::ClientBuilder;
use mcp_sdk::transport::stdio::ChildCommand;

fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let middleware = args.first().is_some_and(|a| a == "--middleware");
    if middleware {
        args.remove(0);
    }
    if args.is_empty() {
        anyhow::bail!("usage: echo_client [--middleware] <server command> [args...]");
    }
    let program = args.remove(0);
    let mut builder = ClientBuilder::new("echo-client", env!("CARGO_PKG_VERSION")).session_revisions_only();
    if middleware {
        use mcp_sdk::client::middleware::{Logging, Metrics};
        mcp_sdk::transport::http::server::metrics::install_prometheus(None)?;
        builder = builder.layer(Logging::new()).layer(Metrics::new());
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
    let client = runtime.block_on(builder.spawn(ChildCommand::new(program).args(args)))?;
    let arguments = serde_json::json!({"text": "hello world"});
    let mut stdout = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let calls: u64 = line?.trim().parse()?;
        runtime.block_on(async {
            for _ in 0..calls {
                let result = client.call_tool("echo", arguments.clone()).await?;
                anyhow::ensure!(result.is_error != Some(true), "echo failed: {result:?}");
            }
            anyhow::Ok(())
        })?;
        writeln!(stdout, "done")?;
        stdout.flush()?;
    }
    runtime.block_on(client.close())?;
    Ok(())
}
