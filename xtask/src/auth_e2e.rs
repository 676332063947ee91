//! `cargo xtask auth-e2e`: authorization end to end, with a real OpenID provider.
//!
//! It starts the npm package `oidc-provider` (`interop/oidc/provider.mjs`: Dynamic Client
//! Registration, PKCE, resource indicators with JWT access tokens, refresh tokens, an
//! interaction page that signs `alice` in and consents), two `auth_server` examples that
//! trust it, resource A (scope `mcp:read` for everything, `mcp:write` for the tools that are
//! not read-only) and resource B, and a server of the official TypeScript SDK trusting it with
//! A's scopes (`interop/ts/protected_server.mjs`: `requireBearerAuth`, `mcpAuthMetadataRouter`,
//! a `jose` verifier of the provider's JWTs). Then three clients authorize against A through
//! the provider and call it, and ours against the TypeScript SDK's server too:
//!
//! - ours (the `oauth_e2e` example): discovery, registration, the code flow, refresh before
//!   expiry, step-up on 403, the file token store, audience and signature checks, logout;
//! - the official TypeScript SDK's (`interop/ts/oauth_client.mjs`) and Python SDK's
//!   (`interop/python/oauth_client.py`) OAuth clients, which find our server's protected
//!   resource metadata, get a token from the provider and call tools with it.
//!
//! Each prints `N passed, M failed`; the command fails if any check fails. The access tokens
//! live 20 s, less than our client's 30 s refresh margin, so its refreshes happen at once
//! rather than after a wait.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::interop::{self, Client, ServerProcess};

mod cli;

/// How long the provider and the servers may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The provider's access token lifetime, in seconds.
const ACCESS_TTL: &str = "20";

/// Installs the provider and the official clients, starts the provider and three resource
/// servers (two of ours, one of the TypeScript SDK), runs every client against them.
pub fn run(root: &Path) -> Result<()> {
    let started = Instant::now();
    let work = root.join("target/interop");
    let node = interop::install_node(root, &work)?;
    let oidc = interop::install_npm_project(root, &work, "oidc")?;
    interop::copy_scripts(&root.join("interop/oidc"), &oidc)?;
    let ts = interop::install_npm_project(root, &work, "ts")?;
    interop::copy_scripts(&root.join("interop/ts"), &ts)?;
    let python = interop::install_python(root, &work)?;
    let [auth_server, oauth_e2e] = interop::build_examples(root, ["auth_server", "oauth_e2e"])?;

    let local = |port| SocketAddr::from(([127, 0, 0, 1], port));
    let [issuer_addr, a_addr, b_addr, ts_addr] = [
        local(interop::free_port()?),
        local(interop::free_port()?),
        local(interop::free_port()?),
        local(interop::free_port()?),
    ];
    let issuer = format!("http://{issuer_addr}");
    let (resource_a, resource_b) = (format!("http://{a_addr}/mcp"), format!("http://{b_addr}/mcp"));
    let resource_ts = format!("http://{ts_addr}/mcp");

    let mut provider = Command::new(&node);
    provider.arg(oidc.join("provider.mjs")).args(["--port", &issuer_addr.port().to_string()]);
    provider.args(["--resource", &resource_a, "--resource", &resource_b, "--resource", &resource_ts]);
    provider.args(["--access-ttl", ACCESS_TTL]);
    let _provider = ServerProcess::start(provider, issuer_addr, START_TIMEOUT)?;
    let server = |addr: SocketAddr, write_scope: bool| {
        let mut command = Command::new(&auth_server);
        command.args(["--http", &addr.to_string(), "--issuer", &issuer, "--scope", "mcp:read"]);
        if write_scope {
            command.args(["--write-scope", "mcp:write"]);
        }
        ServerProcess::start(command, addr, START_TIMEOUT)
    };
    let _a = server(a_addr, true)?;
    let _b = server(b_addr, false)?;
    // The TypeScript SDK's server, with A's scopes (it fetches the provider's metadata first).
    let mut ts_server = Command::new(&node);
    ts_server.arg(ts.join("protected_server.mjs")).args(["--port", &ts_addr.port().to_string()]);
    ts_server.args(["--issuer", &issuer, "--scope", "mcp:read", "--write-scope", "mcp:write"]);
    let _ts_server = ServerProcess::start(ts_server, ts_addr, START_TIMEOUT)?;

    let [store, ts_store] = [work.join("auth-e2e-tokens.json"), work.join("auth-e2e-tokens-ts.json")];
    for file in [&store, &ts_store] {
        if file.exists() {
            std::fs::remove_file(file)?;
        }
    }
    let ours = |name, server: &str, store: &Path| {
        let args = ["--server", server, "--other", &resource_b, "--store", &store.display().to_string()];
        (Client { name, program: oauth_e2e.clone(), args: Vec::new(), env: &[] }, args.map(str::to_owned).to_vec())
    };
    let python_env: &[(&str, &str)] = &[("PYTHONDONTWRITEBYTECODE", "1"), ("PYTHONUTF8", "1")];
    let runs = [
        ours("our OAuth", &resource_a, &store),
        // The other way round: our client against the TypeScript SDK's protected server.
        ours("our OAuth (TypeScript SDK server)", &resource_ts, &ts_store),
        (
            Client {
                name: "TypeScript SDK OAuth",
                program: node.clone(),
                args: vec![ts.join("oauth_client.mjs").display().to_string()],
                env: &[],
            },
            vec![resource_a.clone()],
        ),
        (
            Client {
                name: "Python SDK OAuth",
                program: python,
                args: vec![root.join("interop/python/oauth_client.py").display().to_string()],
                env: python_env,
            },
            vec![resource_a.clone()],
        ),
    ];
    let mut failures = Vec::new();
    for (client, target) in &runs {
        let run_started = Instant::now();
        let outcome = interop::run_client(root, client, target)?;
        println!("==> {} client: {:.1} s", client.name, run_started.elapsed().as_secs_f64());
        if !outcome.passed {
            failures.push(format!("{} client: {}", client.name, outcome.summary));
        }
    }
    // `mcp auth` and `mcp proxy` with the tokens it keeps.
    failures.extend(cli::run(root, &work, &resource_a)?);
    if !failures.is_empty() {
        bail!("auth-e2e failed:\n  {}", failures.join("\n  "));
    }
    println!("==> auth-e2e: every run passed ({:.1} s)", started.elapsed().as_secs_f64());
    Ok(())
}
