//! `auth_server`: the `stdio_server` feature set (tools, prompts, resources, completions) over
//! Streamable HTTP, protected as an OAuth 2.1 resource server (see `docs/auth.md`): every
//! request needs a JWT access token issued by `--issuer` for this resource. The issuer's
//! signing keys are fetched from the `jwks_uri` of its metadata (RFC 8414, else OpenID Connect
//! discovery; `JwtVerifier::from_issuer`) when the first token comes, cached, and fetched
//! again for an unknown key.
//!
//! ```sh
//! cargo run --example auth_server -- --http 127.0.0.1:8080 --issuer http://localhost:9000
//! ```
//!
//! Options: `--resource URL` (the resource identifier tokens must name as their audience;
//! default `http://ADDR/mcp`), `--scope SCOPE` (a scope every request needs; repeatable),
//! `--write-scope SCOPE` (the scope the tools that are not read-only need: `count_down`, `build`,
//! `ask_model`, `order`; a token without it is answered 403 `insufficient_scope`, and the
//! client steps up). It prints `listening on <resource>` once it accepts connections. Logs go
//! to stderr.

use std::sync::Arc;

use anyhow::{Context as _, bail};
use mcp_sdk::transport::http::server::auth::{AuthConfig, JwtVerifier};
use mcp_sdk::transport::http::server::{HttpServerConfig, serve_listener};

/// The command line.
struct Args {
    addr: String,
    issuer: String,
    resource: Option<String>,
    scopes: Vec<String>,
    write_scope: Option<String>,
}

fn args() -> anyhow::Result<Args> {
    let mut args = Args {
        addr: "127.0.0.1:8080".to_owned(),
        issuer: String::new(),
        resource: None,
        scopes: Vec::new(),
        write_scope: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--http" => args.addr = value()?,
            "--issuer" => args.issuer = value()?,
            "--resource" => args.resource = Some(value()?),
            "--scope" => args.scopes.push(value()?),
            "--write-scope" => args.write_scope = Some(value()?),
            other => bail!("unknown argument {other:?}; usage: auth_server --http ADDR --issuer URL"),
        }
    }
    if args.issuer.is_empty() {
        bail!("usage: auth_server --http ADDR --issuer URL [--resource URL] [--scope SCOPE]... [--write-scope SCOPE]");
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(tracing::Level::INFO).init();
    let args = args()?;
    let listener = tokio::net::TcpListener::bind(&args.addr).await.with_context(|| format!("binding {}", args.addr))?;
    let resource = args.resource.unwrap_or(format!("http://{}/mcp", listener.local_addr()?));
    let verifier = JwtVerifier::from_issuer(args.issuer.clone(), resource.clone())?;
    let mut auth = AuthConfig::new(resource.clone(), verifier)?.authorization_server(args.issuer);
    let supported: Vec<String> = args.scopes.iter().chain(&args.write_scope).cloned().collect();
    if !supported.is_empty() {
        auth = auth.scopes_supported(supported).required_scopes(args.scopes);
    }
    let server = mcp_examples::showcase::server_with_write_scope(args.write_scope.as_deref())?;
    eprintln!("listening on {resource}");
    serve_listener(Arc::new(server), HttpServerConfig::new().auth(auth), listener).await?;
    Ok(())
}
