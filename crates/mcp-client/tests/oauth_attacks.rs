//! The OAuth client against authorization servers that want its credentials, over real
//! sockets: each test runs an MCP server behind a bearer-token gate, an honest authorization
//! server, and a hostile one (or a hostile endpoint), and checks what reached the hostile
//! side. A refresh token goes only to the server that issued it; pre-registered credentials
//! only to their issuer; no form follows a redirect to another origin; a stalled endpoint
//! does not hold the flow; authorization servers must be HTTPS (loopback aside); resource
//! metadata is not fetched from another origin, nor from private addresses when refused; a
//! registration the server deleted is made again; and a flow can be begun and finished apart.
#![cfg(feature = "oauth")]

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::future::BoxFuture;
use mcp_client::http::HttpClientConfig;
use mcp_client::http::oauth::{
    AuthorizationAgent, ClientCredentials, ExternalRedirect, FileTokenStore, OAuthClient, OAuthConfig, OAuthError,
    PendingAuthorization,
};
use mcp_client::http::reqwest::{self, Url};
use mcp_client::{Client, ClientBuilder};
use mcp_server::mcp_transport_http::server::HttpServerConfig;
use mcp_server::{Server, ToolDef};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// The longest any one step may take before the test fails (nothing here waits for it).
const STEP: Duration = Duration::from_secs(30);

/// Serves `app` on a free loopback port.
async fn serve(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

fn json_body(status: StatusCode, value: Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

/// The pairs of a query or form body.
fn pairs(text: &str) -> HashMap<String, String> {
    Url::parse(&format!("http://x/?{text}")).unwrap().query_pairs().into_owned().collect()
}

/// One request a server received.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    authorization: Option<String>,
    form: HashMap<String, String>,
}

/// The access tokens the resource accepts, with the issuer of each.
#[derive(Default)]
struct Tokens(Mutex<HashMap<String, String>>);

// ---------------------------------------------------------------------------------------
// The authorization server

/// How an authorization server behaves.
#[derive(Clone)]
struct Behaviour {
    /// Lists S256 (without it, a flow stops before the user is asked).
    pkce: bool,
    /// Lifetime of its access tokens (1 s: every use refreshes first).
    expires_in: u64,
    /// Where its token endpoint sends a 307, if anywhere.
    token_redirect: Option<String>,
    /// Its `token_type`.
    token_type: &'static str,
    /// The authorization server's metadata names this token endpoint instead of its own.
    token_endpoint: Option<String>,
    /// A refresh waits this long for a second one to arrive, so that two clients refreshing
    /// at once overlap at the server whatever the scheduling (the window only makes a race
    /// visible: nothing waits for it to pass).
    refresh_window: Option<Duration>,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            pkce: true,
            expires_in: 3600,
            token_redirect: None,
            token_type: "Bearer",
            token_endpoint: None,
            refresh_window: None,
        }
    }
}

#[derive(Default)]
struct AsState {
    /// Registered and pre-registered clients and their secrets.
    clients: HashMap<String, Option<String>>,
    /// Codes: their PKCE challenge and client.
    codes: HashMap<String, (String, String)>,
    /// Refresh tokens in force, and their client.
    refresh: HashMap<String, String>,
    /// Refresh tokens used once already (rotation).
    spent: HashSet<String>,
    /// A spent refresh token presented again.
    reused: usize,
    registrations: usize,
    /// Refreshes waiting in their window.
    refreshing: usize,
    seen: Vec<Seen>,
    next: u64,
}

/// An authorization server on a loopback port.
#[derive(Clone)]
struct AuthServer {
    base: String,
    /// Refreshes in progress meet here (see [`Behaviour::refresh_window`]).
    rendezvous: Arc<tokio::sync::Notify>,
    behaviour: Arc<Mutex<Behaviour>>,
    state: Arc<Mutex<AsState>>,
    tokens: Arc<Tokens>,
}

impl AuthServer {
    async fn start(tokens: Arc<Tokens>, behaviour: Behaviour) -> AuthServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let s = AuthServer {
            base,
            rendezvous: Arc::default(),
            behaviour: Arc::new(Mutex::new(behaviour)),
            state: Arc::default(),
            tokens,
        };
        let app = Router::new()
            .route("/.well-known/oauth-authorization-server", get(as_metadata))
            .route("/register", post(as_register))
            .route("/authorize", get(as_authorize))
            .route("/token", post(as_token))
            .with_state(s.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        s
    }

    fn pre_register(&self, id: &str, secret: Option<&str>) {
        self.state.lock().unwrap().clients.insert(id.to_owned(), secret.map(str::to_owned));
    }

    /// Forgets every registered client, as an administrator deleting them would, and revokes
    /// the access tokens issued to them.
    fn delete_clients(&self) {
        self.state.lock().unwrap().clients.clear();
        self.tokens.0.lock().unwrap().retain(|_, issuer| *issuer != self.base);
    }

    fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    fn token_requests(&self) -> Vec<Seen> {
        self.seen().into_iter().filter(|s| s.path == "/token").collect()
    }
}

fn record(s: &AuthServer, path: &str, headers: &HeaderMap, form: &HashMap<String, String>) {
    let authorization = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    s.state.lock().unwrap().seen.push(Seen { path: path.to_owned(), authorization, form: form.clone() });
}

async fn as_metadata(State(s): State<AuthServer>, headers: HeaderMap) -> Response {
    record(&s, "/metadata", &headers, &HashMap::new());
    let b = s.behaviour.lock().unwrap().clone();
    let base = &s.base;
    json_body(
        StatusCode::OK,
        json!({
            "issuer": base,
            "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": b.token_endpoint.unwrap_or_else(|| format!("{base}/token")),
            "registration_endpoint": format!("{base}/register"),
            "code_challenge_methods_supported": if b.pkce { json!(["S256"]) } else { json!(["plain"]) },
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        }),
    )
}

async fn as_register(State(s): State<AuthServer>, headers: HeaderMap) -> Response {
    record(&s, "/register", &headers, &HashMap::new());
    let mut st = s.state.lock().unwrap();
    st.registrations += 1;
    st.next += 1;
    let id = format!("dyn-{}", st.next);
    st.clients.insert(id.clone(), None);
    json_body(StatusCode::CREATED, json!({"client_id": id, "token_endpoint_auth_method": "none"}))
}

/// Consents at once: redirects with a code, or shows an error page (no redirect) for a
/// client it does not know, as real servers do.
async fn as_authorize(State(s): State<AuthServer>, headers: HeaderMap, uri: Uri) -> Response {
    let q = pairs(uri.query().unwrap_or_default());
    record(&s, "/authorize", &headers, &q);
    let mut st = s.state.lock().unwrap();
    let client = q.get("client_id").cloned().unwrap_or_default();
    if !st.clients.contains_key(&client) {
        return (StatusCode::BAD_REQUEST, "unknown client").into_response();
    }
    st.next += 1;
    let code = format!("code-{}", st.next);
    st.codes.insert(code.clone(), (q["code_challenge"].clone(), client));
    let mut redirect = Url::parse(&q["redirect_uri"]).unwrap();
    redirect.query_pairs_mut().append_pair("code", &code).append_pair("state", &q["state"]).append_pair("iss", &s.base);
    (StatusCode::FOUND, [(header::LOCATION, redirect.to_string())]).into_response()
}

/// The client of a token request: Basic credentials, or `client_id` in the form.
fn client_of(headers: &HeaderMap, form: &HashMap<String, String>) -> Option<(String, Option<String>)> {
    use base64::Engine as _;
    if let Some(basic) = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()?.strip_prefix("Basic ")) {
        let decoded = base64::engine::general_purpose::STANDARD.decode(basic).ok()?;
        let (id, secret) =
            String::from_utf8(decoded).ok()?.split_once(':').map(|(a, b)| (a.to_owned(), b.to_owned()))?;
        return Some((id, Some(secret)));
    }
    Some((form.get("client_id")?.clone(), form.get("client_secret").cloned()))
}

async fn as_token(State(s): State<AuthServer>, headers: HeaderMap, body: Bytes) -> Response {
    let form = pairs(&String::from_utf8_lossy(&body));
    record(&s, "/token", &headers, &form);
    let b = s.behaviour.lock().unwrap().clone();
    if let Some(to) = b.token_redirect {
        return (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, to)]).into_response();
    }
    if let (Some(window), Some("refresh_token")) = (b.refresh_window, form.get("grant_type").map(String::as_str)) {
        let arrived = {
            let mut st = s.state.lock().unwrap();
            st.refreshing += 1;
            st.refreshing
        };
        if arrived >= 2 {
            s.rendezvous.notify_one();
        } else {
            let _ = tokio::time::timeout(window, s.rendezvous.notified()).await;
        }
        s.state.lock().unwrap().refreshing -= 1;
    }
    let refuse = |error: &str| json_body(StatusCode::BAD_REQUEST, json!({"error": error}));
    let mut st = s.state.lock().unwrap();
    let Some((client, secret)) = client_of(&headers, &form) else { return refuse("invalid_client") };
    if st.clients.get(&client) != Some(&secret) {
        return json_body(StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}));
    }
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let Some((challenge, owner)) = st.codes.remove(&form["code"]) else { return refuse("invalid_grant") };
            use base64::Engine as _;
            use sha2::Digest as _;
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let computed =
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()));
            if computed != challenge || owner != client {
                return refuse("invalid_grant");
            }
        }
        Some("refresh_token") => {
            let presented = form.get("refresh_token").cloned().unwrap_or_default();
            if st.spent.contains(&presented) {
                st.reused += 1;
                return refuse("invalid_grant");
            }
            if st.refresh.remove(&presented) != Some(client.clone()) {
                return refuse("invalid_grant");
            }
            st.spent.insert(presented);
        }
        Some("client_credentials") => {}
        _ => return refuse("unsupported_grant_type"),
    }
    st.next += 1;
    let access = format!("at-{}-{}", s.base.rsplit(':').next().unwrap(), st.next);
    let refresh = format!("rt-{}-{}", s.base.rsplit(':').next().unwrap(), st.next);
    st.refresh.insert(refresh.clone(), client);
    s.tokens.0.lock().unwrap().insert(access.clone(), s.base.clone());
    json_body(
        StatusCode::OK,
        json!({
            "access_token": access,
            "token_type": b.token_type,
            "expires_in": b.expires_in,
            "refresh_token": refresh,
        }),
    )
}

/// The user's browser: follows the authorization URL to the redirect without going there.
struct Browser {
    http: reqwest::Client,
    redirect_uri: Url,
}

impl Browser {
    fn new() -> Browser {
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Browser { http, redirect_uri: Url::parse("http://127.0.0.1:9/callback").unwrap() }
    }
}

impl AuthorizationAgent for Browser {
    fn redirect_uri(&self) -> &Url {
        &self.redirect_uri
    }

    fn authorize(&self, url: Url) -> BoxFuture<'_, Result<Url, OAuthError>> {
        Box::pin(async move {
            let response = self.http.get(url).send().await.expect("the authorization endpoint answers");
            let location = response.headers().get(header::LOCATION).and_then(|v| v.to_str().ok());
            match location {
                Some(location) => Ok(Url::parse(location).unwrap()),
                None => Err(OAuthError::InvalidResponse("the authorization server showed an error page")),
            }
        })
    }
}

// ---------------------------------------------------------------------------------------
// The protected MCP server

/// The MCP server's side: which authorization server its metadata names, and a hook on its
/// metadata endpoint.
#[derive(Clone)]
struct Resource {
    addr: SocketAddr,
    /// The issuer its metadata names (and whose tokens it accepts).
    issuer: Arc<Mutex<String>>,
    /// The `resource_metadata` of its challenges, when not its own.
    challenge_metadata: Arc<Mutex<Option<String>>>,
    /// While set, requests for its metadata hang.
    stall_metadata: Arc<Mutex<bool>>,
    metadata_requests: Arc<Mutex<usize>>,
    tokens: Arc<Tokens>,
}

impl Resource {
    async fn start(tokens: Arc<Tokens>, issuer: &str) -> Resource {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let r = Resource {
            addr,
            issuer: Arc::new(Mutex::new(issuer.to_owned())),
            challenge_metadata: Arc::default(),
            stall_metadata: Arc::default(),
            metadata_requests: Arc::default(),
            tokens,
        };
        let echo = ToolDef::new("echo", json!({"type": "object"}), |_, _| async {
            Ok(CallToolResult::success(vec![ContentBlock::text("echoed")]))
        })
        .unwrap();
        let server = Server::builder("protected", "1.0.0").tool(echo).build().unwrap();
        let mcp =
            server.http_router(HttpServerConfig::new()).layer(axum::middleware::from_fn_with_state(r.clone(), gate));
        let app = Router::new()
            .route("/.well-known/oauth-protected-resource/mcp", get(resource_metadata))
            .with_state(r.clone())
            .merge(mcp);
        tokio::spawn(async move { axum::serve(listener, app).await });
        r
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    fn name(&self, issuer: &str) {
        *self.issuer.lock().unwrap() = issuer.to_owned();
    }
}

/// Lets through requests with a token of the named issuer; a 401 challenge otherwise.
async fn gate(State(r): State<Resource>, request: Request, next: Next) -> Response {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let issuer = r.issuer.lock().unwrap().clone();
    let valid = token.is_some_and(|t| r.tokens.0.lock().unwrap().get(&t) == Some(&issuer));
    if valid {
        return next.run(request).await;
    }
    let metadata = r
        .challenge_metadata
        .lock()
        .unwrap()
        .clone()
        .unwrap_or_else(|| format!("http://{}/.well-known/oauth-protected-resource/mcp", r.addr));
    let challenge = format!("Bearer resource_metadata=\"{metadata}\"");
    (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response()
}

async fn resource_metadata(State(r): State<Resource>) -> Response {
    *r.metadata_requests.lock().unwrap() += 1;
    if *r.stall_metadata.lock().unwrap() {
        std::future::pending::<()>().await;
    }
    let issuer = r.issuer.lock().unwrap().clone();
    json_body(StatusCode::OK, json!({"resource": r.url(), "authorization_servers": [issuer]}))
}

/// A listener that records every request and answers 200 with a token-like body: where a
/// leak would land.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<String>>>);

impl Sink {
    async fn start() -> (Sink, String) {
        let sink = Sink::default();
        let s = sink.clone();
        let app = Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
            let s = s.clone();
            async move {
                let auth = headers.get(header::AUTHORIZATION).map(|v| format!(" {v:?}")).unwrap_or_default();
                s.0.lock().unwrap().push(format!("{uri}{auth} {}", String::from_utf8_lossy(&body)));
                json_body(StatusCode::OK, json!({"access_token": "stolen", "token_type": "Bearer"}))
            }
        });
        let addr = serve(app).await;
        (sink, format!("http://{addr}"))
    }

    fn requests(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

// ---------------------------------------------------------------------------------------
// Helpers

async fn connect(url: &str, oauth: OAuthClient) -> Result<Client, mcp_client::ClientError> {
    let config = HttpClientConfig::parse(url).unwrap().auth(oauth);
    tokio::time::timeout(STEP, ClientBuilder::new("attacked", "1").session_revisions_only().connect_http_with(config))
        .await
        .expect("connecting ends")
}

async fn echo(client: &Client) -> Result<CallToolResult, mcp_client::ClientError> {
    tokio::time::timeout(STEP, client.call_tool("echo", json!({}))).await.expect("the call ends")
}

fn oauth_client(resource: &Resource, config: OAuthConfig) -> OAuthClient {
    OAuthClient::new(Url::parse(&resource.url()).unwrap(), config)
}

// ---------------------------------------------------------------------------------------
// Finding 1: a refresh token goes only to the server that issued it

#[tokio::test]
async fn a_refresh_token_goes_only_to_the_authorization_server_that_issued_it() {
    let tokens = Arc::new(Tokens::default());
    // Its tokens expire at once, so that every use refreshes first.
    let honest = AuthServer::start(tokens.clone(), Behaviour { expires_in: 1, ..Behaviour::default() }).await;
    // The server the resource names next: it lists no S256, so the flow with it stops
    // before the user is asked, and the client still holds the honest server's tokens.
    let hostile = AuthServer::start(tokens.clone(), Behaviour { pkce: false, ..Behaviour::default() }).await;
    let resource = Resource::start(tokens.clone(), &honest.base).await;
    let oauth = oauth_client(&resource, OAuthConfig::new("victim", Browser::new()));
    let client = connect(&resource.url(), oauth.clone()).await.unwrap();
    echo(&client).await.unwrap();
    assert!(honest.token_requests().iter().any(|s| s.form.get("grant_type").is_some_and(|g| g == "refresh_token")));

    resource.name(&hostile.base);
    let refused = echo(&client).await;
    assert!(refused.is_err(), "the hostile server's flow cannot succeed");
    assert!(oauth.last_error().await.unwrap().contains("S256"), "{:?}", oauth.last_error().await);
    // More requests: whatever the client does with the tokens it holds, the refresh token
    // and the client's authentication go nowhere but to the honest server.
    for _ in 0..3 {
        let _ = echo(&client).await;
    }
    let leaked: Vec<Seen> = hostile.token_requests();
    assert!(leaked.is_empty(), "the hostile server received token requests: {leaked:?}");
    let honest_refresh = honest.state.lock().unwrap().refresh.keys().cloned().collect::<Vec<_>>();
    assert!(!honest_refresh.is_empty());
}

// ---------------------------------------------------------------------------------------
// Finding 2: pre-registered credentials go only to their issuer

#[tokio::test]
async fn client_credentials_go_only_to_the_authorization_server_they_are_bound_to() {
    let tokens = Arc::new(Tokens::default());
    let honest = AuthServer::start(tokens.clone(), Behaviour::default()).await;
    honest.pre_register("svc", Some("s3cret"));
    let hostile = AuthServer::start(tokens.clone(), Behaviour::default()).await;
    let resource = Resource::start(tokens.clone(), &hostile.base).await;

    // Bound to the honest server, while the resource names the hostile one: refused, with
    // nothing sent.
    let bound = OAuthConfig::client_credentials("svc", "s3cret").issuer(&honest.base);
    let oauth = oauth_client(&resource, bound.clone());
    assert!(connect(&resource.url(), oauth.clone()).await.is_err());
    let why = oauth.last_error().await.unwrap();
    assert!(why.contains("pre-registered client is for the authorization server"), "{why}");
    assert!(hostile.token_requests().is_empty(), "{:?}", hostile.token_requests());

    // Bound to no server: refused too, before anything is sent anywhere.
    let unbound = oauth_client(&resource, OAuthConfig::client_credentials("svc", "s3cret"));
    assert!(connect(&resource.url(), unbound.clone()).await.is_err());
    assert!(unbound.last_error().await.unwrap().contains("not bound"), "{:?}", unbound.last_error().await);
    assert!(hostile.token_requests().is_empty() && honest.token_requests().is_empty());

    // Named by the resource, the honest server gets them, and the call goes through.
    resource.name(&honest.base);
    let oauth = oauth_client(&resource, bound);
    let client = connect(&resource.url(), oauth).await.unwrap();
    echo(&client).await.unwrap();
    let sent = honest.token_requests();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].authorization.as_deref().is_some_and(|a| a.starts_with("Basic ")));
}

#[tokio::test]
async fn pre_registered_credentials_of_the_code_flow_are_bound_too() {
    let tokens = Arc::new(Tokens::default());
    let honest = AuthServer::start(tokens.clone(), Behaviour::default()).await;
    honest.pre_register("app", Some("app-secret"));
    let hostile = AuthServer::start(tokens.clone(), Behaviour::default()).await;
    let resource = Resource::start(tokens.clone(), &hostile.base).await;
    let credentials = ClientCredentials::new("app", Some("app-secret".into())).issuer(&honest.base);
    let oauth = oauth_client(&resource, OAuthConfig::new("app", Browser::new()).credentials(credentials));
    assert!(connect(&resource.url(), oauth.clone()).await.is_err());
    assert!(oauth.last_error().await.unwrap().contains("pre-registered"), "{:?}", oauth.last_error().await);
    // Neither the user nor the secret went to the hostile server (it served its metadata).
    let seen: Vec<String> = hostile.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(seen, ["/metadata"]);
}

// ---------------------------------------------------------------------------------------
// Finding 3: the OAuth client's own HTTP: origins, time limits, HTTPS, private addresses

#[tokio::test]
async fn a_token_request_does_not_follow_a_redirect_to_another_origin() {
    let tokens = Arc::new(Tokens::default());
    let (sink, sink_url) = Sink::start().await;
    let honest = AuthServer::start(tokens.clone(), Behaviour::default()).await;
    // The token endpoint answers 307 to another origin: the form (code, verifier) would be
    // posted there again.
    honest.behaviour.lock().unwrap().token_redirect = Some(format!("{sink_url}/steal"));
    let resource = Resource::start(tokens.clone(), &honest.base).await;
    let oauth = oauth_client(&resource, OAuthConfig::new("victim", Browser::new()));
    assert!(connect(&resource.url(), oauth.clone()).await.is_err());
    assert!(sink.requests().is_empty(), "the form followed the redirect: {:?}", sink.requests());
    assert!(oauth.last_error().await.unwrap().contains("307"), "{:?}", oauth.last_error().await);
}

#[tokio::test]
async fn a_stalled_metadata_endpoint_does_not_hold_the_flow() {
    let tokens = Arc::new(Tokens::default());
    let honest = AuthServer::start(tokens.clone(), Behaviour::default()).await;
    let resource = Resource::start(tokens.clone(), &honest.base).await;
    *resource.stall_metadata.lock().unwrap() = true;
    let config = OAuthConfig::new("victim", Browser::new()).http_timeout(Duration::from_millis(300));
    let oauth = oauth_client(&resource, config);
    // The flow gives up on the metadata after its time limit (the test's own limit is far
    // longer: without one, connecting never ends).
    assert!(connect(&resource.url(), oauth.clone()).await.is_err());
    assert!(oauth.last_error().await.unwrap().contains("oauth-protected-resource"));
    // The flow's lock was let go: once the metadata answers, the same client authorizes.
    *resource.stall_metadata.lock().unwrap() = false;
    let client = connect(&resource.url(), oauth).await.unwrap();
    echo(&client).await.unwrap();
}

#[tokio::test]
async fn authorization_servers_must_be_https_but_on_loopback() {
    let tokens = Arc::new(Tokens::default());
    // An issuer over plain HTTP on a public name: refused before it is asked.
    let resource = Resource::start(tokens.clone(), "http://as.example.com").await;
    let oauth = oauth_client(&resource, OAuthConfig::new("victim", Browser::new()));
    assert!(connect(&resource.url(), oauth.clone()).await.is_err());
    let why = oauth.last_error().await.unwrap();
    assert!(why.contains("must use https"), "{why}");

    // A loopback authorization server whose metadata names a plain-HTTP token endpoint
    // elsewhere: refused when discovered, before the user is asked.
    let honest = AuthServer::start(tokens.clone(), Behaviour::default()).await;
    honest.behaviour.lock().unwrap().token_endpoint = Some("http://as.example.com/token".into());
    resource.name(&honest.base);
    let oauth = oauth_client(&resource, OAuthConfig::new("victim", Browser::new()));
    assert!(connect(&resource.url(), oauth.clone()).await.is_err());
    let why = oauth.last_error().await.unwrap();
    assert!(why.contains("http://as.example.com/token") && why.contains("must use https"), "{why}");
    assert!(!honest.seen().iter().any(|s| s.path == "/authorize"));
}

#[tokio::test]
async fn resource_metadata_on_another_origin_is_not_fetched() {
    let tokens = Arc::new(Tokens::default());
    let (sink, sink_url) = Sink::start().await;
    let honest = AuthServer::start(tokens.clone(), Behaviour::default()).await;
    let resource = Resource::start(tokens.clone(), &honest.base).await;
    *resource.challenge_metadata.lock().unwrap() = Some(format!("{sink_url}/.well-known/oauth-protected-resource"));
    let oauth = oauth_client(&resource, OAuthConfig::new("victim", Browser::new()));
    // The challenge's URL is passed over for the resource's own well-known metadata.
    let client = connect(&resource.url(), oauth).await.unwrap();
    echo(&client).await.unwrap();
    assert!(sink.requests().is_empty(), "{:?}", sink.requests());
}

#[tokio::test]
async fn private_addresses_are_refused_when_the_client_is_told_to() {
    let tokens = Arc::new(Tokens::default());
    let honest = AuthServer::start(tokens.clone(), Behaviour::default()).await;
    let resource = Resource::start(tokens.clone(), &honest.base).await;
    let config = OAuthConfig::new("hosted", Browser::new()).deny_private_addresses(true);
    let oauth = oauth_client(&resource, config);
    assert!(connect(&resource.url(), oauth.clone()).await.is_err());
    let why = oauth.last_error().await.unwrap();
    assert!(why.contains("private, loopback or link-local"), "{why}");
    assert_eq!(*resource.metadata_requests.lock().unwrap(), 0);
    assert!(honest.seen().is_empty());
    // By name too: `localhost` is refused before it resolves.
    let by_name = resource.url().replace("127.0.0.1", "localhost");
    let oauth = OAuthClient::new(
        Url::parse(&by_name).unwrap(),
        OAuthConfig::new("hosted", Browser::new()).deny_private_addresses(true),
    );
    assert!(connect(&by_name, oauth.clone()).await.is_err());
    assert!(oauth.last_error().await.unwrap().contains("private, loopback or link-local"));
    assert_eq!(*resource.metadata_requests.lock().unwrap(), 0);
}

#[tokio::test]
async fn a_token_of_another_type_than_bearer_is_refused() {
    let tokens = Arc::new(Tokens::default());
    let honest = AuthServer::start(tokens.clone(), Behaviour { token_type: "DPoP", ..Behaviour::default() }).await;
    let resource = Resource::start(tokens.clone(), &honest.base).await;
    let oauth = oauth_client(&resource, OAuthConfig::new("victim", Browser::new()));
    assert!(connect(&resource.url(), oauth.clone()).await.is_err());
    assert!(oauth.last_error().await.unwrap().contains("`DPoP`"), "{:?}", oauth.last_error().await);
    assert!(oauth.tokens().is_none());
}

// ---------------------------------------------------------------------------------------
// Finding 6: a deleted registration

#[tokio::test]
async fn a_registration_the_server_deleted_is_made_again() {
    let tokens = Arc::new(Tokens::default());
    let honest = AuthServer::start(tokens.clone(), Behaviour { expires_in: 1, ..Behaviour::default() }).await;
    let resource = Resource::start(tokens.clone(), &honest.base).await;
    let oauth = oauth_client(&resource, OAuthConfig::new("victim", Browser::new()));
    let client = connect(&resource.url(), oauth.clone()).await.unwrap();
    echo(&client).await.unwrap();
    assert_eq!(honest.state.lock().unwrap().registrations, 1);
    honest.delete_clients();
    // The refresh answers `invalid_client`; the client registers again and the user
    // authorizes the new registration.
    echo(&client).await.unwrap();
    assert_eq!(honest.state.lock().unwrap().registrations, 2);
    let dynamic = oauth.tokens().unwrap().client.client_id;
    assert!(honest.state.lock().unwrap().clients.contains_key(&dynamic));
}

#[tokio::test]
async fn closing_after_a_logout_does_not_authorize_again() {
    let tokens = Arc::new(Tokens::default());
    let honest = AuthServer::start(tokens.clone(), Behaviour::default()).await;
    let resource = Resource::start(tokens.clone(), &honest.base).await;
    let oauth = oauth_client(&resource, OAuthConfig::new("victim", Browser::new()));
    let client = connect(&resource.url(), oauth.clone()).await.unwrap();
    echo(&client).await.unwrap();
    let authorizations = || honest.seen().iter().filter(|s| s.path == "/authorize").count();
    assert_eq!(authorizations(), 1);
    oauth.logout().await;
    // The session's DELETE goes without a token and gets 401: that ends the session, it does
    // not send the user to authorize again (nor put tokens back in the store).
    let _ = tokio::time::timeout(STEP, client.close()).await.expect("closing ends");
    assert_eq!(authorizations(), 1);
    assert!(oauth.tokens().is_none());
}

// ---------------------------------------------------------------------------------------
// Finding 6: clients sharing a token file

#[tokio::test]
async fn clients_sharing_a_token_file_never_present_a_refresh_token_twice() {
    let tokens = Arc::new(Tokens::default());
    // Rotating refresh tokens, a reuse refused (and counted); tokens that expire at once, so
    // that every call refreshes; refreshes that meet at the server.
    let behaviour =
        Behaviour { expires_in: 1, refresh_window: Some(Duration::from_millis(200)), ..Behaviour::default() };
    let honest = AuthServer::start(tokens.clone(), behaviour).await;
    let resource = Resource::start(tokens.clone(), &honest.base).await;
    let dir = std::env::temp_dir().join(format!("mcp-shared-file-{}", std::process::id()));
    let file = dir.join("tokens.json");
    // Two clients, each with a store of its own on the one file: two `mcp` processes.
    let config = || OAuthConfig::new("cli", Browser::new()).store(FileTokenStore::new(&file));
    let a = connect(&resource.url(), oauth_client(&resource, config())).await.unwrap();
    echo(&a).await.unwrap();
    let b = connect(&resource.url(), oauth_client(&resource, config())).await.unwrap();
    for _ in 0..4 {
        let (x, y) = tokio::join!(echo(&a), echo(&b));
        x.unwrap();
        y.unwrap();
    }
    let st = honest.state.lock().unwrap();
    assert_eq!(st.reused, 0, "a rotated refresh token was presented again");
    assert!(st.spent.len() >= 8, "every call refreshed: {}", st.spent.len());
    // One authorization in all: the second client found the first's tokens in the file.
    assert_eq!(st.seen.iter().filter(|s| s.path == "/authorize").count(), 1);
    drop(st);
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------------------------------
// Begun here, finished elsewhere

#[tokio::test]
async fn an_authorization_begun_in_one_process_is_finished_in_another() {
    let tokens = Arc::new(Tokens::default());
    let honest = AuthServer::start(tokens.clone(), Behaviour::default()).await;
    let resource = Resource::start(tokens.clone(), &honest.base).await;
    let dir = std::env::temp_dir().join(format!("mcp-begin-finish-{}", std::process::id()));
    let file = dir.join("tokens.json");
    let redirect = Url::parse("https://app.example.com/oauth/callback").unwrap();
    let config =
        || OAuthConfig::new("web-app", ExternalRedirect::new(redirect.clone())).store(FileTokenStore::new(&file));

    // Without tokens the call fails: the agent takes no part in the flow.
    let first = oauth_client(&resource, config());
    assert!(connect(&resource.url(), first.clone()).await.is_err());
    assert!(first.last_error().await.unwrap().contains("the user must authorize"));

    // The application begins, keeps the pending authorization as text, and sends the user.
    let pending = first.begin_authorization().await.unwrap();
    assert!(pending.url().as_str().starts_with(&format!("{}/authorize?", honest.base)));
    assert!(!format!("{pending:?}").contains(&json_field(&pending, "code_verifier")));
    let kept = serde_json::to_string(&pending).unwrap();
    let browser = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let answer = browser.get(pending.url().clone()).send().await.unwrap();
    let back = Url::parse(answer.headers()[header::LOCATION].to_str().unwrap()).unwrap();
    assert!(back.as_str().starts_with(redirect.as_str()));
    drop(first);

    // Another process (another client, the same store) finishes; a forged redirect first.
    let second = oauth_client(&resource, config());
    let pending: PendingAuthorization = serde_json::from_str(&kept).unwrap();
    let mut forged = back.clone();
    forged.set_query(Some("error=access_denied&error_description=pwned"));
    assert!(matches!(second.finish_authorization(&pending, &forged).await, Err(OAuthError::InvalidResponse(_))));
    second.finish_authorization(&pending, &back).await.unwrap();
    let client = connect(&resource.url(), second).await.unwrap();
    echo(&client).await.unwrap();

    // A third, later: the tokens are in the store.
    let third = oauth_client(&resource, config());
    let client = connect(&resource.url(), third).await.unwrap();
    echo(&client).await.unwrap();
    let _ = std::fs::remove_dir_all(dir);
}

fn json_field(pending: &PendingAuthorization, field: &str) -> String {
    serde_json::to_value(pending).unwrap()[field].as_str().unwrap().to_owned()
}
