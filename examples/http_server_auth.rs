//! `http_server_auth`: an MCP server over Streamable HTTP that is an OAuth 2.1 resource server
//! (feature `auth`, see `docs/auth.md`): every request needs a JWT access token of the
//! authorization server, for this resource, with the scope `notes:read`; the `add_note` tool
//! also needs `notes:write` (403 `insufficient_scope` otherwise), and the tools see who calls.
//! The protected resource metadata is at `/.well-known/oauth-protected-resource/mcp`.
//!
//! `cargo run --example http_server_auth -- JWKS_FILE [ADDR]`: the authorization server's
//! public keys as a JWKS document; `ADDR` defaults to `127.0.0.1:8080`. The issuer is read from
//! `MCP_ISSUER` (default `http://localhost:9000`). It prints `listening on http://ADDR/mcp`.

use std::sync::Mutex;

use mcp_sdk::server::{Context, Server};
use mcp_sdk::tool;
use mcp_sdk::transport::http::server::auth::{AuthConfig, JwtVerifier, StaticJwks};
use mcp_sdk::transport::http::server::{HttpServerConfig, serve_listener};

static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Who is calling, as the access token says.
#[tool(read_only)]
fn whoami(ctx: Context) -> String {
    let principal = ctx.principal();
    let subject = principal.and_then(|p| p.subject.as_deref()).unwrap_or("nobody");
    format!("{subject}, with scopes {:?}", principal.map(|p| p.scopes.clone()).unwrap_or_default())
}

/// The notes so far.
#[tool(read_only)]
fn list_notes() -> Vec<String> {
    NOTES.lock().unwrap().clone()
}

/// Adds a note.
///
/// # Arguments
///
/// * `text` - the note
#[tool(scopes = ["notes:write"])]
fn add_note(text: String) -> String {
    NOTES.lock().unwrap().push(text);
    "added".to_owned()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(tracing::Level::INFO).init();
    let mut args = std::env::args().skip(1);
    let jwks_file = args.next().ok_or_else(|| anyhow::anyhow!("usage: http_server_auth JWKS_FILE [ADDR]"))?;
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let issuer = std::env::var("MCP_ISSUER").unwrap_or_else(|_| "http://localhost:9000".to_owned());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let resource = format!("http://{}/mcp", listener.local_addr()?);

    let jwks = StaticJwks::from_json(&std::fs::read_to_string(jwks_file)?)?;
    let auth = AuthConfig::new(resource.clone(), JwtVerifier::new(issuer.clone(), resource.clone(), jwks))?
        .authorization_server(issuer)
        .scopes_supported(["notes:read", "notes:write"])
        .required_scopes(["notes:read"])
        .resource_name("notes");
    let server = Server::builder("notes", "1.0.0")
        .tool(whoami::tool())
        .tool(list_notes::tool())
        .tool(add_note::tool())
        .build()?;
    eprintln!("listening on {resource}");
    serve_listener(std::sync::Arc::new(server), HttpServerConfig::new().auth(auth), listener).await?;
    Ok(())
}
