//! `mcp auth login|logout|status`: OAuth tokens for servers at URLs, in a file.
//!
//! The tokens live in `$XDG_CONFIG_HOME/mcp/tokens.json` (else `~/.config/mcp/tokens.json`),
//! mode 0600, in the format of `mcp-transport-http`'s `FileTokenStore`: a list of entries,
//! each the authorization server and resource the tokens are for, and the tokens (with the
//! client they were issued to, for refreshing). `login` runs the authorization code flow
//! (PKCE, loopback redirect) of the transport's OAuth client; the other commands (and
//! `mcp proxy`) use the tokens it kept, refreshing them, and never start a flow.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result, bail};
use futures_util::future::BoxFuture;
use mcp_sdk::client::ClientBuilder;
use mcp_sdk::transport::http::client::oauth::{
    AuthorizationAgent, FileTokenStore, LoopbackRedirect, OAuthConfig, OAuthError, StoredTokens, TokenKey, TokenStore,
};
use mcp_sdk::transport::http::client::{HttpClientConfig, Url};

use crate::cli::{AuthCommand, Global, exit};

/// The client name `mcp` registers under.
const CLIENT_NAME: &str = "mcp (command line)";

/// The token file: `$XDG_CONFIG_HOME/mcp/tokens.json`, else `~/.config/mcp/tokens.json`.
pub fn token_file() -> PathBuf {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("mcp").join("tokens.json")
}

/// OAuth with the tokens of the file only: a server that wants a login is refused (the
/// caller says to run `mcp auth login`).
pub fn stored_tokens_only() -> OAuthConfig {
    OAuthConfig::new(CLIENT_NAME, NoLogin::default()).store(FileTokenStore::new(token_file()))
}

/// An agent that lets no one log in.
struct NoLogin(Url);

impl Default for NoLogin {
    fn default() -> Self {
        NoLogin(Url::parse("http://127.0.0.1/callback").expect("a valid URL"))
    }
}

impl AuthorizationAgent for NoLogin {
    fn redirect_uri(&self) -> &Url {
        &self.0
    }

    fn authorize(&self, _url: Url) -> BoxFuture<'_, Result<Url, OAuthError>> {
        Box::pin(std::future::ready(Err(OAuthError::Configuration("no login here: run `mcp auth login URL`"))))
    }
}

/// Runs an `auth` command.
pub async fn run(command: AuthCommand, global: &Global) -> ExitCode {
    let outcome = match command {
        AuthCommand::Login { url } => login(&url, global).await,
        AuthCommand::Logout { url } => logout(&url).await,
        AuthCommand::Status => status(global.json).await,
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("mcp auth: {e:#}");
            ExitCode::from(exit::CONNECTION)
        }
    }
}

/// The authorization code flow with a loopback redirect: prints the URL to open (and opens
/// `$BROWSER` when set), waits for the redirect, keeps the tokens.
async fn login(url: &str, global: &Global) -> Result<u8> {
    let config = HttpClientConfig::parse(url).with_context(|| format!("{url}: not a URL"))?;
    // The store never replaces a file it cannot read: say so before the user authorizes.
    read_entries(&token_file())?;
    let agent = LoopbackRedirect::bind(0).await.context("cannot listen for the redirect")?;
    let agent = agent.timeout(Duration::from_secs(300)).open_with(|authorize: Url| {
        eprintln!("Open this URL in a browser to log in:\n\n    {authorize}\n");
        if let Some(browser) = std::env::var_os("BROWSER").filter(|b| !b.is_empty()) {
            let spawned = std::process::Command::new(&browser)
                .arg(authorize.as_str())
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .spawn();
            if let Err(e) = spawned {
                eprintln!("mcp auth: cannot run $BROWSER ({}): {e}", browser.to_string_lossy());
            }
        }
    });
    let oauth = OAuthConfig::new(CLIENT_NAME, agent).store(FileTokenStore::new(token_file()));
    let config = config.oauth(oauth);
    let timeout = Duration::from_secs(300).max(Duration::from_secs_f64(global.timeout.max(0.001)));
    let connecting = ClientBuilder::new("mcp", env!("CARGO_PKG_VERSION")).connect_http_with(config);
    let client = tokio::time::timeout(timeout, connecting).await.context("the login did not complete in time")??;
    let _ = client.close().await;
    let entries = read_entries(&token_file())?;
    match entries.iter().find(|e| matches(&e.key.resource, url)) {
        Some(entry) => println!("Logged in to {url} ({}).", expiry(&entry.tokens)),
        None => println!("Connected to {url}: it asked for no authorization, so there are no tokens to keep."),
    }
    Ok(exit::OK)
}

/// Forgets the tokens of the server at `url`.
async fn logout(url: &str) -> Result<u8> {
    let file = token_file();
    let entries = read_entries(&file)?;
    let store = FileTokenStore::new(&file);
    let mut removed = 0;
    for entry in entries.iter().filter(|e| matches(&e.key.resource, url)) {
        store.save(&entry.key, None).await;
        removed += 1;
    }
    if removed == 0 {
        println!("No tokens for {url}.");
    } else {
        println!("Logged out of {url}.");
    }
    Ok(exit::OK)
}

/// Lists the servers with tokens and when their access tokens expire.
async fn status(json: bool) -> Result<u8> {
    let file = token_file();
    let entries = read_entries(&file)?;
    if json {
        let list: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| {
                serde_json::json!({
                    "resource": e.key.resource,
                    "issuer": e.key.issuer,
                    "expiresAt": e.tokens.expires_at,
                    "expired": e.tokens.expires_within(Duration::ZERO),
                    "refreshable": e.tokens.refresh_token.is_some(),
                    "scopes": e.tokens.scopes,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(exit::OK);
    }
    if entries.is_empty() {
        println!("No tokens ({}).", file.display());
        return Ok(exit::OK);
    }
    for e in &entries {
        println!("{}  (issuer {}): {}", e.key.resource, e.key.issuer, expiry(&e.tokens));
    }
    Ok(exit::OK)
}

/// One entry of the token file (the format of `FileTokenStore`).
#[derive(serde::Deserialize)]
struct Entry {
    key: TokenKey,
    tokens: StoredTokens,
}

/// The entries of the token file (none if it does not exist).
fn read_entries(file: &std::path::Path) -> Result<Vec<Entry>> {
    match std::fs::read(file) {
        Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| format!("{}: not a token file", file.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => bail!("cannot read {}: {e}", file.display()),
    }
}

/// Whether tokens for `resource` are for the server at `url` (the resource is the URL, or the
/// part of it the server names, such as its origin).
fn matches(resource: &str, url: &str) -> bool {
    let (resource, url) = (resource.trim_end_matches('/'), url.trim_end_matches('/'));
    resource == url || url.strip_prefix(resource).is_some_and(|rest| rest.starts_with('/') || rest.starts_with('?'))
}

/// When the access token expires, in words.
fn expiry(tokens: &StoredTokens) -> String {
    let refresh = if tokens.refresh_token.is_some() { ", refreshable" } else { "" };
    let Some(at) = tokens.expires_at else { return format!("no expiry given{refresh}") };
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    if at <= now {
        format!("expired {} ago{refresh}", human(now - at))
    } else {
        format!("expires in {}{refresh}", human(at - now))
    }
}

fn human(seconds: u64) -> String {
    match seconds {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_match_their_servers() {
        assert!(matches("https://h/mcp", "https://h/mcp/"));
        assert!(matches("https://h", "https://h/mcp"));
        assert!(!matches("https://h/mc", "https://h/mcp"));
        assert!(!matches("https://other", "https://h/mcp"));
        assert_eq!(human(90), "90s");
        assert_eq!(human(3 * 86_400), "3d");
    }
}
