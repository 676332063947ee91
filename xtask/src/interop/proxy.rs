//! `mcp proxy` in the interop run: the official SDK clients (stdio) carried to our
//! `http_server` over Streamable HTTP by `mcp proxy URL`; the official SDK clients (HTTP, the
//! TypeScript SDK 2.x's speaking 2026-07-28 too) carried to our `stdio_server` by
//! `mcp proxy --serve ADDR -- stdio_server`; and our client's server-everything checks and the
//! official SDK clients' (stdio; `MCP_INTEROP_CHECKS=server-everything` picks their
//! `everything_checks`) carried to the official server-everything over Streamable HTTP.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};

use super::{Client, SERVER_START_TIMEOUT, ServerProcess, free_port, run_client};

/// What makes the SDK clients run their checks of server-everything.
const EVERYTHING_CHECKS: (&str, &str) = ("MCP_INTEROP_CHECKS", "server-everything");

/// The servers and clients the proxy runs need.
pub(super) struct Setup<'a> {
    pub(super) clients: &'a [Client],
    pub(super) stdio_server: &'a Path,
    pub(super) http_server: &'a Path,
    pub(super) interop_client: &'a Path,
    /// `node .../server-everything/dist/index.js`.
    pub(super) everything: [String; 2],
    /// The TypeScript SDK 2.x client (2026-07-28, no session).
    pub(super) ts2_client: Client,
}

/// Runs every client through the proxy; the failures.
pub(super) fn run(root: &Path, setup: &Setup<'_>) -> Result<Vec<String>> {
    let mcp = build_mcp(root)?;
    let mcp_text = mcp.display().to_string();
    let mut failures = Vec::new();
    let mut check = |client: &Client, server: &[String], what: &str| -> Result<()> {
        let outcome = run_client(root, client, server)?;
        if !outcome.passed {
            failures.push(format!("{} {what}: {}", client.name, outcome.summary));
        }
        Ok(())
    };
    {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()?));
        let mut command = Command::new(setup.http_server);
        command.arg(addr.to_string());
        let _server = ServerProcess::start(command, addr, SERVER_START_TIMEOUT)?;
        let proxy = [mcp_text.clone(), "proxy".to_owned(), format!("http://{addr}/mcp")];
        for client in setup.clients {
            check(client, &proxy, "through `mcp proxy URL` to http_server")?;
        }
    }
    {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], free_port()?));
        let mut command = Command::new(&mcp);
        command.args(["proxy", "--serve", &addr.to_string(), "--"]).arg(setup.stdio_server);
        let _proxy = ServerProcess::start(command, addr, SERVER_START_TIMEOUT)?;
        let endpoint = ["--http".to_owned(), format!("http://{addr}/mcp")];
        for client in setup.clients.iter().chain([&setup.ts2_client]) {
            check(client, &endpoint, "through `mcp proxy --serve` to stdio_server")?;
        }
    }
    {
        let port = free_port()?;
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let mut command = Command::new(&setup.everything[0]);
        command.args([&setup.everything[1], "streamableHttp"]).env("PORT", port.to_string());
        let _server = ServerProcess::start(command, addr, SERVER_START_TIMEOUT)?;
        let client = Client {
            name: "our",
            program: setup.interop_client.to_owned(),
            args: vec!["--server-everything".to_owned()],
            env: &[],
        };
        let proxy = [mcp_text, "proxy".to_owned(), format!("http://{addr}/mcp")];
        check(&client, &proxy, "through `mcp proxy URL` to server-everything (Streamable HTTP)")?;
        for sdk in setup.clients {
            // The process ends soon after: the environment is leaked, not freed.
            let env = Vec::leak([sdk.env, &[EVERYTHING_CHECKS]].concat());
            let client = Client { name: sdk.name, program: sdk.program.clone(), args: sdk.args.clone(), env };
            check(&client, &proxy, "through `mcp proxy URL` to server-everything (Streamable HTTP)")?;
        }
    }
    Ok(failures)
}

/// Builds the `mcp` binary; its path, as cargo reports it.
pub(crate) fn build_mcp(root: &Path) -> Result<PathBuf> {
    println!("==> building mcp: cargo build -p mcp-cli --bin mcp");
    let out = Command::new(env!("CARGO"))
        .args(["build", "-p", "mcp-cli", "--bin", "mcp", "--message-format=json-render-diagnostics"])
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo build")?;
    if !out.status.success() {
        bail!("building mcp failed ({})", out.status);
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "mcp")
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
        .context("cargo reported no executable for mcp")
}
