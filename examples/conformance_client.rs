//! `conformance_client`: the client under test for the official MCP conformance suite's client
//! scenarios (`@modelcontextprotocol/conformance`).
//!
//! ```sh
//! MCP_CONFORMANCE_SCENARIO=initialize conformance_client http://localhost:3000/mcp
//! npx @modelcontextprotocol/conformance client --command target/debug/examples/conformance_client --scenario sse-retry
//! ```
//!
//! The server URL is the last argument; the scenario comes from `MCP_CONFORMANCE_SCENARIO`:
//! - `initialize`: initialize, list the tools, close;
//! - `tools_call`: call `add_numbers` with `{a, b}`;
//! - `elicitation-sep1034-client-defaults`: call `test_client_elicitation_defaults`, answering
//!   its elicitation with an accepted empty form that the client's SEP-1034 defaults fill in;
//! - `sse-retry`: call `test_reconnection`, whose SSE stream the server closes; the transport
//!   resumes it with GET and `Last-Event-ID` after the server's `retry`;
//! - `json-schema-2020-12-preservation`: as below;
//! - `sep-2640-client-*` (the Skills extension): list the skills; but for `no-prefetch`, load
//!   each (verified against its entry) and read a verified skill's files.
//!
//! Protocol revision 2026-07-28 (stateless; `MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28` pins
//! it, an earlier revision pins that one, none means the session revisions only):
//! - `request-metadata`: connect (the server rejects the first request with
//!   `UnsupportedProtocolVersion`; the client asks again), list the tools;
//! - `sep-2322-client-request-state`: call the `test_mrtr_*` tools, answering their
//!   elicitations (multi round-trip requests);
//! - `http-standard-headers`: list and call every tool, read every resource, get every prompt;
//! - `http-custom-headers`: the tool calls of `MCP_CONFORMANCE_CONTEXT` (`toolCalls`);
//! - `http-invalid-tool-headers`: list the tools (those with invalid `x-mcp-header` are left
//!   out) and call the others;
//! - `json-schema-2020-12-preservation`: send the focal tool's input schema back, as it came;
//! - `json-schema-ref-no-deref` (and any other): list the tools.
//!
//! Exits with 0 on success; otherwise with 1 and the reason on stderr. Logs go to stderr.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};
use mcp_sdk::client::http::oauth::{
    AuthorizationAgent, BearerChallenge, ClientCredentials, EnterpriseIdp, OAuthConfig, OAuthError,
};
use mcp_sdk::client::http::{HttpClientConfig, reqwest};
use mcp_sdk::client::skills::SkillError;
use mcp_sdk::client::{CallOptions, Client, ClientBuilder};
use mcp_sdk::types::skills::SkillResources;
use mcp_sdk::types::{
    ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult,
    ElicitResultContentValue, ErrorObject, ListToolsRequest, ProtocolVersion, Role, Root, SamplingContent, TextContent,
};
use reqwest::Url;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;

/// What [`AuthorizationAgent::authorize`] returns.
type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The longest the whole scenario may take.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let result = tokio::time::timeout(SCENARIO_TIMEOUT, run()).await;
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("conformance_client: {e:#}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("conformance_client: the scenario did not finish within {SCENARIO_TIMEOUT:?}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    // The SDK's warnings (a failed authorization says why there) go to stderr, which the
    // suite saves with the scenario's results.
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(tracing::Level::WARN).init();
    let url = std::env::args().skip(1).last().context("usage: conformance_client <server URL>")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").context("MCP_CONFORMANCE_SCENARIO is not set")?;
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok();
    log(&format!("scenario {scenario} against {url} (revision {})", version.as_deref().unwrap_or("unspecified")));
    let builder = ClientBuilder::new("mcp-rust-sdk-conformance", env!("CARGO_PKG_VERSION"));
    let builder = match version.as_deref().map(str::parse::<ProtocolVersion>) {
        Some(Ok(v)) => builder.protocol_version(v),
        Some(Err(e)) => bail!("MCP_CONFORMANCE_PROTOCOL_VERSION: {e}"),
        None => builder.session_revisions_only(),
    };
    if scenario.starts_with("auth/") {
        return auth(&scenario, &url, builder).await;
    }
    if scenario.starts_with("sep-2640-client-") {
        return skills(&scenario, &url, builder).await;
    }
    if builder_is_stateless(version.as_deref()) {
        return stateless(&scenario, &url, builder).await;
    }
    match scenario.as_str() {
        "initialize" => {
            let client = builder.connect_http(&url).await.context("initialize")?;
            log(&format!("connected to {} ({})", client.server_info().name, client.protocol_version()));
            // The server declares no capabilities: ask the way a lenient client would.
            let tools =
                client.peer().request::<ListToolsRequest>(Default::default(), CallOptions::default()).await?.tools;
            log(&format!("{} tools", tools.len()));
            close(client).await
        }
        "tools_call" => {
            let client = builder.connect_http(&url).await.context("initialize")?;
            let tools = client.list_all_tools().await?;
            ensure!(tools.iter().any(|t| t.name == "add_numbers"), "no add_numbers tool in {tools:?}");
            let result = client.call_tool("add_numbers", json!({"a": 5, "b": 3})).await?;
            let text = text_of(&result.content);
            ensure!(!result.is_error() && text.contains('8'), "add_numbers answered {text:?}");
            log(&format!("add_numbers: {text}"));
            close(client).await
        }
        "elicitation-sep1034-client-defaults" => {
            let client = builder
                .on_elicitation(|params: ElicitRequestParams| async move {
                    log(&format!("elicitation: {}", params_message(&params)));
                    // The user accepts without filling anything in: the defaults apply.
                    let mut result = ElicitResult::new(ElicitAction::Accept);
                    result.content = Some(Default::default());
                    Ok::<_, ErrorObject>(result)
                })
                .apply_elicitation_defaults()
                .connect_http(&url)
                .await
                .context("initialize")?;
            let result = client.call_tool("test_client_elicitation_defaults", json!({})).await?;
            let text = text_of(&result.content);
            ensure!(!result.is_error(), "the tool failed: {text}");
            log(&format!("test_client_elicitation_defaults: {text}"));
            close(client).await
        }
        "sse-retry" => {
            let client = builder.connect_http(&url).await.context("initialize")?;
            let result = client.call_tool("test_reconnection", json!({})).await?;
            let text = text_of(&result.content);
            ensure!(!result.is_error(), "the tool failed: {text}");
            log(&format!("test_reconnection: {text}"));
            close(client).await
        }
        "json-schema-2020-12-preservation" => {
            let client = builder.connect_http(&url).await.context("initialize")?;
            echo_focal_schema(&client).await?;
            close(client).await
        }
        other => bail!("unknown scenario {other:?}"),
    }
}

/// `json-schema-2020-12-preservation` (at every revision the suite runs it for): the focal
/// tool's input schema goes back to the server as it came.
async fn echo_focal_schema(client: &Client) -> anyhow::Result<()> {
    let tools = client.list_all_tools().await?;
    let focal = tools.iter().find(|t| t.name == "json_schema_2020_12_tool").context("no focal tool")?;
    let schema = Value::Object(focal.input_schema.clone());
    let result = client.call_tool("json_schema_echo", json!({"schema": schema})).await?;
    ensure!(!result.is_error(), "json_schema_echo failed: {}", text_of(&result.content));
    Ok(())
}

/// The Client ID Metadata Document URL the `auth/basic-cimd` scenario expects as client id.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The `auth/` scenarios: connect through OAuth, list the tools, call `test-tool`. The
/// `client-credentials-*` ones take the client's secret or private key from
/// `MCP_CONFORMANCE_CONTEXT`, `auth/wif-jwt-bearer` its workload JWT (written to a file, read
/// by the JWT bearer grant), `auth/enterprise-managed-authorization` and
/// `auth/cross-app-access-complete-flow` the user's ID token and the IdP to exchange it at
/// for an ID-JAG; the others run the authorization code flow (with the
/// pre-registered credentials of the context, when it has them; with DPoP-bound tokens for
/// `auth/dpop` and `auth/dpop-nonce`). Pre-registered credentials
/// are bound to the authorization server that issued them; the context does not name it, so
/// the harness, as the administrator who registered the client would, looks up the one the
/// scenario's server names and binds them to it.
async fn auth(scenario: &str, url: &str, builder: ClientBuilder) -> anyhow::Result<()> {
    let context: Value = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => serde_json::from_str(&text).context("MCP_CONFORMANCE_CONTEXT is not JSON")?,
        Err(_) => Value::Null,
    };
    let id = context["client_id"].as_str();
    let oauth = match (scenario, id) {
        ("auth/client-credentials-basic", Some(id)) => {
            OAuthConfig::client_credentials(id, context["client_secret"].as_str().unwrap_or_default())
                .issuer(issuer_of(url).await?)
        }
        ("auth/client-credentials-jwt", Some(id)) => {
            let pem = context["private_key_pem"].as_str().context("no private_key_pem in the context")?;
            let algorithm = context["signing_algorithm"].as_str().unwrap_or("ES256");
            OAuthConfig::client_credentials_jwt(id, pem, algorithm)?.issuer(issuer_of(url).await?)
        }
        ("auth/enterprise-managed-authorization" | "auth/cross-app-access-complete-flow", Some(id)) => {
            // The user's single sign-on gave the ID token; the IdP exchanges it for an ID-JAG.
            let text = |name: &str| context[name].as_str().with_context(|| format!("no {name} in the context"));
            let idp = EnterpriseIdp::new(text("idp_token_endpoint")?, text("idp_client_id")?, text("idp_id_token")?);
            let secret = context["client_secret"].as_str().map(str::to_owned);
            OAuthConfig::enterprise_managed(ClientCredentials::new(id, secret), idp).issuer(issuer_of(url).await?)
        }
        ("auth/wif-jwt-bearer", Some(id)) => {
            // The platform's workload token, as a platform writes it: to a file.
            let jwt = context["valid_jwt"].as_str().context("no valid_jwt in the context")?;
            let file = std::env::temp_dir().join(format!("mcp-conformance-wif-{}.jwt", std::process::id()));
            std::fs::write(&file, jwt).context("writing the workload token file")?;
            OAuthConfig::workload_identity(id, file).issuer(issuer_of(url).await?)
        }
        (_, id) => {
            let mut oauth = OAuthConfig::new("mcp-rust-sdk-conformance", FollowRedirect::new()?)
                .client_metadata_url(CLIENT_METADATA_URL);
            if let Some(id) = id {
                let secret = context["client_secret"].as_str().map(str::to_owned);
                oauth = oauth.credentials(ClientCredentials::new(id, secret).issuer(issuer_of(url).await?));
            }
            // DPoP-bound tokens (RFC 9449), with the nonce round trips of `auth/dpop-nonce`.
            if matches!(scenario, "auth/dpop" | "auth/dpop-nonce") {
                oauth = oauth.dpop();
            }
            oauth
        }
    };
    let config = HttpClientConfig::parse(url)?.oauth(oauth);
    let client = builder.connect_http_with(config).await.context("connect")?;
    let tools = client.list_all_tools().await.context("tools/list")?;
    log(&format!("{} tools", tools.len()));
    if tools.iter().any(|t| t.name == "test-tool") {
        let result = client.call_tool("test-tool", json!({})).await.context("tools/call")?;
        log(&format!("test-tool: {}", text_of(&result.content)));
    }
    close(client).await
}

/// The authorization server the scenario's MCP server names (the first of its protected
/// resource metadata, found from its 401's challenge or at the well-known path).
async fn issuer_of(url: &str) -> anyhow::Result<String> {
    let http = reqwest::Client::new();
    let refused = http.post(url).header("content-type", "application/json").body("{}").send().await?;
    let challenge = refused
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .and_then(BearerChallenge::parse)
        .and_then(|c| c.resource_metadata);
    let metadata_url = match challenge {
        Some(u) => u,
        None => {
            let mut u = Url::parse(url)?;
            let path = u.path().trim_end_matches('/').to_owned();
            u.set_path(&format!("/.well-known/oauth-protected-resource{path}"));
            u.to_string()
        }
    };
    let metadata: Value = http.get(&metadata_url).send().await?.json().await?;
    let issuer = metadata["authorization_servers"][0].as_str().context("no authorization server named")?;
    Ok(issuer.to_owned())
}

/// The user agent of the `auth/` scenarios: the suite's authorization server consents at
/// once, so following its redirect (without going there) is the whole of the user's part.
struct FollowRedirect {
    http: reqwest::Client,
    redirect_uri: Url,
}

impl FollowRedirect {
    fn new() -> anyhow::Result<Self> {
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()?;
        Ok(FollowRedirect { http, redirect_uri: Url::parse("http://127.0.0.1:9/callback")? })
    }
}

impl AuthorizationAgent for FollowRedirect {
    fn redirect_uri(&self) -> &Url {
        &self.redirect_uri
    }

    fn authorize(&self, url: Url) -> BoxFuture<'_, Result<Url, OAuthError>> {
        Box::pin(async move {
            log(&format!("authorizing at {url}"));
            let response = self
                .http
                .get(url.clone())
                .send()
                .await
                .map_err(|e| OAuthError::Http { url: url.to_string(), source: e })?;
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or(OAuthError::InvalidResponse("the authorization endpoint did not redirect"))?;
            url.join(location).map_err(|_| OAuthError::InvalidUrl(location.to_owned()))
        })
    }
}

fn builder_is_stateless(version: Option<&str>) -> bool {
    version.and_then(ProtocolVersion::from_wire).is_some_and(ProtocolVersion::is_stateless)
}

/// The Skills extension's scenarios (SEP-2640): list the skills, reading no file; for
/// `sep-2640-client-no-prefetch` that is all (a host reads a skill when it loads it). The
/// others then load each skill (its `SKILL.md` checked against the entry: size, digest,
/// frontmatter) and read its other files only if it passed; one that fails is refused, which
/// is the scenario's point, and the client still exits with 0.
async fn skills(scenario: &str, url: &str, builder: ClientBuilder) -> anyhow::Result<()> {
    let client = builder.connect_http(url).await.context("connect")?;
    let skills = client.list_skills().await.context("skills/list")?;
    log(&format!("skills: {:?}", skills.iter().map(|s| &s.uri).collect::<Vec<_>>()));
    if scenario == "sep-2640-client-no-prefetch" {
        return Ok(());
    }
    for skill in &skills {
        match client.load_skill(skill).await {
            Ok(loaded) => {
                let SkillResources::Files(files) = &loaded.entry.resources else { continue };
                for file in files.iter().filter(|f| f.uri != skill.uri) {
                    client.read_skill_file(skill, &file.uri).await.with_context(|| file.uri.clone())?;
                }
                log(&format!("loaded {} and its {} files", skill.uri, files.len()));
            }
            Err(e @ SkillError::Verification { .. }) => log(&format!("refused {}: {e}", skill.uri)),
            Err(e) => return Err(e).with_context(|| skill.uri.clone()),
        }
    }
    Ok(())
}

/// The scenarios of revision 2026-07-28.
async fn stateless(scenario: &str, url: &str, builder: ClientBuilder) -> anyhow::Result<()> {
    // Elicitations are accepted with `true` for booleans and "Alice" for the rest.
    let builder = builder.on_elicitation(|params: ElicitRequestParams| async move {
        log(&format!("elicitation: {}", params_message(&params)));
        let mut result = ElicitResult::new(ElicitAction::Accept);
        let schema = match &params {
            ElicitRequestParams::ElicitRequestForm(f) => serde_json::to_value(&f.requested_schema).unwrap_or_default(),
            ElicitRequestParams::ElicitRequestURL(_) => Value::Null,
        };
        let fields = schema["properties"].as_object().cloned().unwrap_or_default();
        let content = fields
            .iter()
            .map(|(name, p)| {
                let value = match p["type"].as_str() {
                    Some("boolean") => ElicitResultContentValue::Boolean(true),
                    _ => ElicitResultContentValue::String("Alice".into()),
                };
                (name.clone(), value)
            })
            .collect();
        result.content = Some(content);
        Ok::<_, ErrorObject>(result)
    });
    let builder = builder
        .elicitation_url_mode()
        .on_sampling(|_params: CreateMessageRequestParams| async move {
            let answer = SamplingContent::Text(TextContent::new("Paris"));
            Ok::<_, ErrorObject>(CreateMessageResult::new(Role::Assistant, answer, "conformance-model"))
        })
        .on_roots(|| async { Ok::<_, ErrorObject>(vec![Root::new("file:///tmp/conformance")]) });
    let client = builder.connect_http(url).await.context("connect")?;
    log(&format!("connected to {} ({})", client.server_info().name, client.protocol_version()));
    // Some scenario servers declare no capabilities: list the way a lenient client would.
    let tools = client
        .send_request::<ListToolsRequest>(Default::default(), CallOptions::default())
        .await
        .context("tools/list")?
        .tools;
    log(&format!("tools: {:?}", tools.iter().map(|t| &t.name).collect::<Vec<_>>()));
    match scenario {
        "tools_call" => {
            let result = client.call_tool("add_numbers", json!({"a": 5, "b": 3})).await?;
            let text = text_of(&result.content);
            ensure!(!result.is_error() && text.contains('8'), "add_numbers answered {text:?}");
        }
        "sep-2322-client-request-state" => {
            for name in
                ["test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"]
            {
                let result = client.call_tool(name, json!({})).await.with_context(|| name.to_owned())?;
                log(&format!("{name}: {}", text_of(&result.content)));
            }
        }
        "http-standard-headers" => {
            // Through the typed API, which checks capabilities: list what the server offers.
            let tools = client.list_all_tools().await?;
            for tool in &tools {
                client.call_tool(&tool.name, json!({})).await?;
            }
            for resource in client.list_all_resources().await? {
                client.read_resource(&resource.uri).await?;
            }
            for prompt in client.list_all_prompts().await? {
                client.get_prompt(&prompt.name, Default::default()).await?;
            }
        }
        "http-custom-headers" => {
            let context: Value = serde_json::from_str(&std::env::var("MCP_CONFORMANCE_CONTEXT").unwrap_or_default())
                .context("MCP_CONFORMANCE_CONTEXT")?;
            client.list_all_tools().await?;
            for call in context["toolCalls"].as_array().cloned().unwrap_or_default() {
                let name = call["name"].as_str().unwrap_or_default();
                let result = client.call_tool(name, call["arguments"].clone()).await?;
                log(&format!("{name}: {}", text_of(&result.content)));
            }
        }
        "http-invalid-tool-headers" => {
            // The typed listing leaves out the tools with invalid `x-mcp-header`s.
            for tool in client.list_all_tools().await? {
                let args = if tool.name == "valid_tool" { json!({"region": "us-west1"}) } else { json!({}) };
                client.call_tool(&tool.name, args).await?;
                log(&format!("called {}", tool.name));
            }
        }
        "json-schema-2020-12-preservation" => echo_focal_schema(&client).await?,
        _ => {}
    }
    close(client).await
}

async fn close(client: Client) -> anyhow::Result<()> {
    client.close().await.context("close")?;
    Ok(())
}

fn text_of(content: &[ContentBlock]) -> String {
    content.iter().filter_map(ContentBlock::as_text).collect::<Vec<_>>().join(" ")
}

fn params_message(params: &ElicitRequestParams) -> &str {
    match params {
        ElicitRequestParams::ElicitRequestForm(f) => &f.message,
        ElicitRequestParams::ElicitRequestURL(u) => &u.message,
    }
}

fn log(line: &str) {
    eprintln!("conformance_client: {line}");
}
