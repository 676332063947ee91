//! `mcp auth login|logout|status`: OAuth tokens for servers at URLs, in a file.

use std::process::ExitCode;

use crate::cli::{AuthCommand, Global, exit};

/// Runs an `auth` command.
pub async fn run(command: AuthCommand, global: &Global) -> ExitCode {
    let _ = (command, global);
    eprintln!("mcp auth: not written yet");
    ExitCode::from(exit::INTERNAL)
}
