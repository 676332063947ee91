//! `mcp`: inspect, call, test and bridge any MCP server from the command line.
//!
//! ```sh
//! mcp tools -- npx -y @modelcontextprotocol/server-everything   # a server run as a command
//! mcp tools https://example.com/mcp                              # a server at a URL
//! mcp --config claude_desktop_config.json --server notes tools   # an entry of a host's config
//! mcp call echo text=hello -- ./my-server
//! mcp proxy https://example.com/mcp                              # stdio <-> Streamable HTTP
//! mcp check -- ./my-server                                       # a linter for server authors
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

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    cli::init_logging(&cli.global);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp: cannot start the runtime: {e}");
            return ExitCode::from(cli::exit::INTERNAL);
        }
    };
    runtime.block_on(commands::run(cli))
}
