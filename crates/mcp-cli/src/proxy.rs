//! `mcp proxy`: stdio <-> Streamable HTTP, both ways.

use std::process::ExitCode;

use crate::cli::{Global, ProxyArgs, exit};

/// Runs the proxy until either side ends.
pub async fn run(args: ProxyArgs, global: &Global) -> ExitCode {
    let _ = (args, global);
    eprintln!("mcp proxy: not written yet");
    ExitCode::from(exit::INTERNAL)
}
