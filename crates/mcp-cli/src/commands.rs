//! The commands.

use std::process::ExitCode;

use crate::cli::{Cli, Command, exit};

/// Runs the command; its exit code.
pub async fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "mcp", &mut std::io::stdout());
            ExitCode::from(exit::OK)
        }
        Command::Proxy(args) => crate::proxy::run(args, &cli.global).await,
        Command::Auth(command) => crate::auth::run(command, &cli.global).await,
        Command::Check(server) => crate::check::run(server, &cli.global).await,
        _ => {
            eprintln!("mcp: this command is not written yet");
            ExitCode::from(exit::INTERNAL)
        }
    }
}
