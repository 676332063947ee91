//! `oauth_e2e`: our OAuth client end to end against a real OpenID provider (the npm package
//! `oidc-provider`, `interop/oidc/provider.mjs`) and a resource server, our `auth_server`
//! example or the official TypeScript SDK's `interop/ts/protected_server.mjs` (the same tools
//! `add` and `count_down`, the same scopes), all run by `cargo xtask auth-e2e`:
//!
//! ```sh
//! oauth_e2e --server http://127.0.0.1:PORT/mcp --other http://127.0.0.1:PORT2/mcp --store FILE
//! ```
//!
//! `--server` requires the scope `mcp:read` of every request and `mcp:write` of its tools that
//! are not read-only; `--other` is a second resource of the same provider. The provider's
//! access tokens live 20 s, less than the client's refresh margin, so every request refreshes
//! first. Nobody is at the browser: the [`LoopbackRedirect`] agent hands the authorization URL
//! to a cookie-keeping HTTP client that follows the provider's redirects (its interaction pages
//! sign `alice` in and grant what was asked) back to the loopback redirect URI.
//!
//! The checks: the first request's 401 leads to discovery (RFC 9728, then OpenID Connect
//! discovery), Dynamic Client Registration, the PKCE code flow with `resource` and a refresh
//! token; calls work; the token is refreshed before it expires; a 403 `insufficient_scope`
//! steps up through a second authorization; a new client reuses the tokens of the file store
//! without authorizing; a stored token the server refuses (401) is refreshed, not authorized
//! anew; the token is refused by the other resource (its audience) and refused once tampered
//! with; logout forgets it. Prints `ok - ..`/`not ok - ..` per check and
//! `N passed, M failed`; exits with 0 only if none failed.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};
use mcp_examples::checks::Report;
use mcp_sdk::client::http::oauth::{FileTokenStore, LoopbackRedirect, OAuthClient, OAuthConfig, StoredTokens};
use mcp_sdk::client::http::{HttpClientConfig, reqwest};
use mcp_sdk::client::{Client, ClientBuilder};
use mcp_sdk::types::{ContentBlock, ProtocolVersion};
use reqwest::Url;
use serde_json::json;

/// The longest one check may take (an authorization included).
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);

struct Args {
    server: Url,
    other: Url,
    store: String,
}

fn args() -> anyhow::Result<Args> {
    let (mut server, mut other, mut store) = (None, None, None);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--server" => server = Some(Url::parse(&value)?),
            "--other" => other = Some(Url::parse(&value)?),
            "--store" => store = Some(value),
            _ => bail!("unknown argument {flag}"),
        }
    }
    match (server, other, store) {
        (Some(server), Some(other), Some(store)) => Ok(Args { server, other, store }),
        _ => bail!("usage: oauth_e2e --server URL --other URL --store FILE"),
    }
}

/// The user's browser, without the user: follows every redirect of the authorization server,
/// keeping its cookies (its session) between authorizations, as a browser does.
#[derive(Clone)]
struct Browser {
    http: reqwest::Client,
    /// How many authorizations it was sent to.
    visits: Arc<AtomicUsize>,
}

impl Browser {
    fn new() -> anyhow::Result<Self> {
        let http = reqwest::Client::builder().cookie_store(true).timeout(CHECK_TIMEOUT).build()?;
        Ok(Browser { http, visits: Arc::default() })
    }

    /// An agent that opens its URLs in this browser.
    async fn agent(&self) -> anyhow::Result<LoopbackRedirect> {
        let browser = self.clone();
        Ok(LoopbackRedirect::bind(0).await?.timeout(CHECK_TIMEOUT).open_with(move |url| {
            browser.visits.fetch_add(1, Ordering::SeqCst);
            let http = browser.http.clone();
            // The agent waits for the redirect on its socket meanwhile.
            tokio::spawn(async move {
                match http.get(url).send().await {
                    Ok(page) if page.status().is_success() => {}
                    Ok(page) => eprintln!("oauth_e2e: the browser ended on {} ({})", page.url(), page.status()),
                    Err(e) => eprintln!("oauth_e2e: the browser failed: {e}"),
                }
            });
        }))
    }

    fn visits(&self) -> usize {
        self.visits.load(Ordering::SeqCst)
    }
}

/// What the checks share.
struct Run {
    args: Args,
    browser: Browser,
    oauth: OAuthClient,
    client: Option<Client>,
}

impl Run {
    fn client(&self) -> anyhow::Result<&Client> {
        self.client.as_ref().context("not connected")
    }

    fn tokens(&self) -> anyhow::Result<StoredTokens> {
        self.oauth.tokens().context("the OAuth client holds no tokens")
    }

    /// Calls `add` and checks its answer.
    async fn add(&self, client: &Client) -> anyhow::Result<()> {
        let result = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
        let text: String = result.content.iter().filter_map(ContentBlock::as_text).collect();
        let value: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("add answered {text:?}"))?;
        ensure!(value["result"].as_f64() == Some(5.0), "add answered {text:?}");
        Ok(())
    }

    /// A new OAuth client of the server over the same file store, and its browser.
    async fn oauth_client(&self, browser: &Browser) -> anyhow::Result<OAuthClient> {
        let config =
            OAuthConfig::new("mcp-rust-sdk-e2e", browser.agent().await?).store(FileTokenStore::new(&self.args.store));
        Ok(OAuthClient::new(self.args.server.clone(), config))
    }
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("mcp-rust-sdk-oauth-e2e", env!("CARGO_PKG_VERSION"))
}

/// The status and `WWW-Authenticate` of an `initialize` POSTed to `url` with `token`.
async fn post_with(url: &Url, token: &str) -> anyhow::Result<(u16, String)> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "oauth_e2e", "version": "0"}}});
    let response = reqwest::Client::new()
        .post(url.clone())
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await?;
    let challenge =
        response.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    Ok((response.status().as_u16(), challenge))
}

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(tracing::Level::WARN).init();
    let args = args()?;
    let browser = Browser::new()?;
    let config = OAuthConfig::new("mcp-rust-sdk-e2e", browser.agent().await?).store(FileTokenStore::new(&args.store));
    let oauth = OAuthClient::new(args.server.clone(), config);
    let mut run = Run { args, browser, oauth, client: None };
    let mut report = Report::new(CHECK_TIMEOUT);

    report
        .check("connect: discovery, registration, PKCE code flow with resource, a refresh token", async {
            let config = HttpClientConfig::parse(run.args.server.as_str())?.auth(run.oauth.clone());
            run.client = Some(builder().connect_http_with(config).await?);
            ensure!(run.browser.visits() == 1, "{} authorizations", run.browser.visits());
            let tokens = run.tokens()?;
            ensure!(tokens.refresh_token.is_some(), "no refresh token (offline_access not granted)");
            ensure!(tokens.scopes.iter().any(|s| s == "mcp:read"), "scopes {:?}", tokens.scopes);
            Ok(format!("client {}, scopes {:?}", tokens.client.client_id, tokens.scopes))
        })
        .await;

    report
        .check("tools/list and tools/call with the token", async {
            let client = run.client()?;
            let tools = client.list_all_tools().await?;
            ensure!(tools.iter().any(|t| t.name == "add"), "no add tool in {} tools", tools.len());
            run.add(client).await?;
            Ok(format!("{} tools, over {}", tools.len(), client.protocol_version().as_str()))
        })
        .await;

    report
        .check("the token is refreshed before it expires (no new authorization)", async {
            let before = run.tokens()?;
            run.add(run.client()?).await?;
            let after = run.tokens()?;
            ensure!(after.access_token != before.access_token, "the same access token was sent again");
            ensure!(after.refresh_token != before.refresh_token, "the refresh token was not rotated");
            ensure!(run.browser.visits() == 1, "{} authorizations", run.browser.visits());
            Ok(String::new())
        })
        .await;

    report
        .check("403 insufficient_scope: step-up to mcp:write through a second authorization", async {
            let client = run.client()?;
            let result = client.call_tool("count_down", json!({"from": 2})).await?;
            ensure!(result.is_error != Some(true), "count_down failed: {result:?}");
            let tokens = run.tokens()?;
            ensure!(tokens.scopes.iter().any(|s| s == "mcp:write"), "scopes after the step-up: {:?}", tokens.scopes);
            ensure!(run.browser.visits() == 2, "{} authorizations", run.browser.visits());
            Ok(format!("scopes {:?}", tokens.scopes))
        })
        .await;

    report
        .check("a new client (session revision 2025-06-18) uses the stored tokens without authorizing", async {
            let browser = Browser::new()?;
            let oauth = run.oauth_client(&browser).await?;
            let config = HttpClientConfig::parse(run.args.server.as_str())?.auth(oauth.clone());
            let client = builder().protocol_version(ProtocolVersion::V2025_06_18).connect_http_with(config).await?;
            run.add(&client).await?;
            client.close().await?;
            ensure!(browser.visits() == 0, "it authorized {} times", browser.visits());
            ensure!(oauth.tokens().is_some(), "it holds no tokens");
            Ok(client.protocol_version().as_str().to_owned())
        })
        .await;

    report
        .check("a token the server refuses (401) is refreshed, not authorized anew", async {
            // A copy of the store whose access token is tampered with and said to live long:
            // only the server can tell it is bad.
            let mut entries: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&run.args.store)?)?;
            let tokens = &mut entries[0]["tokens"];
            let bad = tampered(tokens["access_token"].as_str().context("no access_token in the store")?)?;
            tokens["access_token"] = json!(bad);
            tokens["expires_at"] = json!(u64::MAX / 2);
            let copy = format!("{}.tampered", run.args.store);
            std::fs::write(&copy, entries.to_string())?;
            let browser = Browser::new()?;
            let config = OAuthConfig::new("mcp-rust-sdk-e2e", browser.agent().await?).store(FileTokenStore::new(&copy));
            let oauth = OAuthClient::new(run.args.server.clone(), config);
            let client = builder()
                .connect_http_with(HttpClientConfig::parse(run.args.server.as_str())?.auth(oauth.clone()))
                .await?;
            run.add(&client).await?;
            client.close().await?;
            std::fs::remove_file(&copy)?;
            ensure!(browser.visits() == 0, "it authorized {} times", browser.visits());
            let now = oauth.tokens().context("no tokens")?;
            ensure!(now.access_token != bad, "the refused token is still in use");
            Ok(String::new())
        })
        .await;

    report
        .check("the token is refused by another resource of the same provider (audience)", async {
            let token = run.tokens()?.access_token;
            let (status, _) = post_with(&run.args.server, &token).await?;
            ensure!(status == 200, "its own resource answered {status}");
            let (status, challenge) = post_with(&run.args.other, &token).await?;
            ensure!(status == 401 && challenge.contains("invalid_token"), "the other answered {status} {challenge:?}");
            Ok(challenge)
        })
        .await;

    report
        .check("a tampered token is refused", async {
            let forged = tampered(&run.tokens()?.access_token)?;
            let (status, challenge) = post_with(&run.args.server, &forged).await?;
            ensure!(status == 401 && challenge.contains("invalid_token"), "answered {status} {challenge:?}");
            Ok(String::new())
        })
        .await;

    report
        .check("logout forgets the tokens, in the store too", async {
            // The store holds one entry (the second client shared it).
            let entries = |text: String| -> anyhow::Result<usize> {
                let value: serde_json::Value = serde_json::from_str(&text)?;
                value.as_array().map(Vec::len).context("the store is not a JSON array")
            };
            let before = entries(std::fs::read_to_string(&run.args.store)?)?;
            ensure!(before == 1, "{before} entries in the store before logout");
            run.oauth.logout().await;
            ensure!(run.oauth.tokens().is_none(), "tokens still held");
            let after = entries(std::fs::read_to_string(&run.args.store)?)?;
            ensure!(after == 0, "{after} entries in the store after logout");
            Ok(String::new())
        })
        .await;

    report
        .check("closing after the logout authorizes nobody again", async {
            let visits = run.browser.visits();
            if let Some(client) = run.client.take() {
                let _ = client.close().await;
            }
            ensure!(run.browser.visits() == visits, "{} authorizations after closing", run.browser.visits());
            ensure!(run.oauth.tokens().is_none(), "tokens held again");
            let text = std::fs::read_to_string(&run.args.store)?;
            let entries: serde_json::Value = serde_json::from_str(&text)?;
            ensure!(entries.as_array().is_some_and(Vec::is_empty), "the store holds {entries}");
            Ok(String::new())
        })
        .await;
    Ok(report.finish())
}

/// A JWT whose signature is changed (its first character).
fn tampered(token: &str) -> anyhow::Result<String> {
    let (head, signature) = token.rsplit_once('.').context("not a JWT")?;
    let flipped = if signature.starts_with('A') { "B" } else { "A" };
    Ok(format!("{head}.{flipped}{}", &signature[1..]))
}
