//! `mcp check`: a quick self-test of any server, printed as a report.

use std::process::ExitCode;

use crate::cli::{Global, ServerArgs, exit};

/// Checks the server; the report on stdout.
pub async fn run(server: ServerArgs, global: &Global) -> ExitCode {
    let _ = (server, global);
    eprintln!("mcp check: not written yet");
    ExitCode::from(exit::INTERNAL)
}
