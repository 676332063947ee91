//! `mcp`: inspect, call, test and bridge any MCP server from the command line.
//!
//! ```sh
//! mcp tools -- npx -y @modelcontextprotocol/server-everything   # a server run as a command
//! mcp tools https://example.com/mcp                              # a server at a URL
//! mcp --config claude_desktop_config.json --server notes tools   # an entry of a host's config
//! mcp call echo text=hello -- ./my-server
//! mcp proxy https://example.com/mcp                              # stdio <-> Streamable HTTP
//! mcp check -- ./my-server                                       # a linter for server authors
//! mcp web -- ./my-server                                         # a browser inspector
//! ```
//!
//! See `docs/cli.md` for every command, its output and its exit codes.

mod args;
mod auth;
mod check;
mod cli;
mod commands;
mod interact;
mod output;
mod proxy;
mod session;
mod target;
mod task;
mod ui;
mod web;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    cli::init_logging(&cli.global);
    // The proxy's messages go through one task after another (stdin, the HTTP client, stdout):
    // on one thread each hand-over is a queue push, not a wake-up of another thread.
    // (`cargo xtask bench`: p50 82 µs rather than 96 µs through the proxy on loopback.)
    let mut builder = match &cli.command {
        cli::Command::Proxy(_) => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp: cannot start the runtime: {e}");
            return ExitCode::from(cli::exit::INTERNAL);
        }
    };
    runtime.block_on(commands::run(cli))
}
