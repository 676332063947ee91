//! Workload identity federation (SEP-1933) and enterprise-managed authorization (SEP-990,
//! ID-JAG) over real sockets, with an honest authorization server, a hostile one and, for
//! the second, an enterprise IdP; every request each server receives is recorded, headers and
//! body, and searched for the secrets that must not reach it. The workload's token file is
//! read anew at each grant, and its JWT goes to the bound authorization server only; the ID
//! token goes to the IdP only, never to the authorization server or the resource.
#![cfg(all(feature = "wif", feature = "enterprise-managed"))]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mcp_client::http::HttpClientConfig;
use mcp_client::http::oauth::{ClientCredentials, EnterpriseIdp, OAuthClient, OAuthConfig};
use mcp_client::http::reqwest::Url;
use mcp_client::{Client, ClientBuilder};
use mcp_server::mcp_transport_http::server::HttpServerConfig;
use mcp_server::{Server, ToolDef};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tokio::net::TcpListener;

const STEP: Duration = Duration::from_secs(30);

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// Everything one server received: the path, the headers and the body of each request.
#[derive(Default, Clone)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn record(&self, path: &str, headers: &HeaderMap, body: &[u8]) {
        let headers: Vec<String> = headers.iter().map(|(k, v)| format!("{k}: {}", v.to_str().unwrap_or("?"))).collect();
        self.0.lock().unwrap().push(format!("{path}\n{}\n{}", headers.join("\n"), String::from_utf8_lossy(body)));
    }

    /// Whether any request carried `secret`, in its headers or body (URL-encoded or not).
    fn saw(&self, secret: &str) -> bool {
        self.0.lock().unwrap().iter().any(|r| r.contains(secret))
    }

    fn paths(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().map(|r| r.lines().next().unwrap_or_default().to_owned()).collect()
    }
}

fn json_body(status: StatusCode, value: Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

fn form(body: &[u8]) -> HashMap<String, String> {
    Url::parse(&format!("http://x/?{}", String::from_utf8_lossy(body))).unwrap().query_pairs().into_owned().collect()
}

/// The access tokens the resource accepts, with the issuer of each.
type Tokens = Arc<Mutex<HashMap<String, String>>>;

/// An authorization server that grants tokens for the assertions it takes (JWT bearer grant).
#[derive(Clone)]
struct AuthServer {
    base: String,
    log: Log,
    /// The assertions it takes, and the forms of the JWT bearer grants it received.
    accepts: Arc<Mutex<Vec<String>>>,
    grants: Arc<Mutex<Vec<HashMap<String, String>>>>,
    tokens: Tokens,
}

impl AuthServer {
    async fn start(tokens: Tokens) -> AuthServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let s = AuthServer {
            base: format!("http://{}", listener.local_addr().unwrap()),
            log: Log::default(),
            accepts: Arc::default(),
            grants: Arc::default(),
            tokens,
        };
        let app = Router::new().fallback(as_any).with_state(s.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        s
    }

    fn grants(&self) -> Vec<HashMap<String, String>> {
        self.grants.lock().unwrap().clone()
    }
}

async fn as_any(State(s): State<AuthServer>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    s.log.record(uri.path(), &headers, &body);
    let base = &s.base;
    match uri.path() {
        "/.well-known/oauth-authorization-server" => json_body(
            StatusCode::OK,
            json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "grant_types_supported": [JWT_BEARER],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
            }),
        ),
        "/token" => {
            let form = form(&body);
            if form.get("grant_type").map(String::as_str) != Some(JWT_BEARER) {
                return json_body(StatusCode::BAD_REQUEST, json!({"error": "unsupported_grant_type"}));
            }
            s.grants.lock().unwrap().push(form.clone());
            let assertion = form.get("assertion").cloned().unwrap_or_default();
            if !s.accepts.lock().unwrap().contains(&assertion) {
                return json_body(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
            }
            let mut tokens = s.tokens.lock().unwrap();
            let access = format!("at-{}-{}", base.rsplit(':').next().unwrap(), tokens.len());
            tokens.insert(access.clone(), base.clone());
            json_body(StatusCode::OK, json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600}))
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The MCP server behind a bearer-token gate: tokens of the issuer its metadata names.
#[derive(Clone)]
struct Resource {
    addr: SocketAddr,
    issuer: Arc<Mutex<String>>,
    tokens: Tokens,
    log: Log,
}

impl Resource {
    async fn start(tokens: Tokens, issuer: &str) -> Resource {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let r = Resource {
            addr: listener.local_addr().unwrap(),
            issuer: Arc::new(Mutex::new(issuer.to_owned())),
            tokens,
            log: Log::default(),
        };
        let echo = ToolDef::new("echo", json!({"type": "object"}), |_, _| async {
            Ok(CallToolResult::success(vec![ContentBlock::text("echoed")]))
        })
        .unwrap();
        let server = Server::builder("protected", "1.0.0").tool(echo).build().unwrap();
        let mcp = server
            .http_router(HttpServerConfig::new().json_response(true))
            .layer(axum::middleware::from_fn_with_state(r.clone(), gate));
        let app = Router::new()
            .route("/.well-known/oauth-protected-resource/mcp", get(resource_metadata))
            .with_state(r.clone())
            .merge(mcp)
            .layer(axum::middleware::from_fn_with_state(r.clone(), record_resource));
        tokio::spawn(async move { axum::serve(listener, app).await });
        r
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Names another authorization server, and forgets every token (the client must get new
    /// ones, from the server named now).
    fn name(&self, issuer: &str) {
        *self.issuer.lock().unwrap() = issuer.to_owned();
        self.revoke();
    }

    fn revoke(&self) {
        self.tokens.lock().unwrap().clear();
    }
}

/// Records the headers of every request of the resource (bodies are the MCP messages).
async fn record_resource(State(r): State<Resource>, request: Request, next: Next) -> Response {
    r.log.record(request.uri().path(), request.headers(), b"");
    next.run(request).await
}

async fn gate(State(r): State<Resource>, request: Request, next: Next) -> Response {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let issuer = r.issuer.lock().unwrap().clone();
    if token.is_some_and(|t| r.tokens.lock().unwrap().get(&t) == Some(&issuer)) {
        return next.run(request).await;
    }
    let challenge = format!("Bearer resource_metadata=\"http://{}/.well-known/oauth-protected-resource/mcp\"", r.addr);
    (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response()
}

async fn resource_metadata(State(r): State<Resource>) -> Response {
    let issuer = r.issuer.lock().unwrap().clone();
    json_body(StatusCode::OK, json!({"resource": r.url(), "authorization_servers": [issuer]}))
}

async fn connect(url: &str, oauth: OAuthClient) -> Client {
    let config = HttpClientConfig::parse(url).unwrap().auth(oauth);
    tokio::time::timeout(STEP, ClientBuilder::new("grants", "1").session_revisions_only().connect_http_with(config))
        .await
        .expect("connecting ends")
        .expect("connected")
}

async fn echo(client: &Client) -> Result<CallToolResult, mcp_client::ClientError> {
    tokio::time::timeout(STEP, client.call_tool("echo", json!({}))).await.expect("the call ends")
}

/// A file of this test's own, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str) -> TempFile {
        TempFile(std::env::temp_dir().join(format!("mcp-oauth-grants-{}-{name}", std::process::id())))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[tokio::test]
async fn the_workload_token_file_is_read_at_each_grant_and_goes_to_the_bound_issuer_only() {
    let tokens = Tokens::default();
    let honest = AuthServer::start(tokens.clone()).await;
    let hostile = AuthServer::start(tokens.clone()).await;
    let resource = Resource::start(tokens.clone(), &honest.base).await;
    honest.accepts.lock().unwrap().extend(["platform-jwt-1".to_owned(), "platform-jwt-2".to_owned()]);
    // The hostile server would take them too: nothing but the client stands in the way.
    hostile.accepts.lock().unwrap().extend(["platform-jwt-1".to_owned(), "platform-jwt-2".to_owned()]);
    let file = TempFile::new("wif");
    std::fs::write(&file.0, "platform-jwt-1\n").unwrap();

    let config = OAuthConfig::workload_identity("workload", &file.0).issuer(&honest.base);
    let oauth = OAuthClient::new(Url::parse(&resource.url()).unwrap(), config);
    let client = connect(&resource.url(), oauth.clone()).await;
    echo(&client).await.unwrap();
    let grants = honest.grants();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0]["assertion"], "platform-jwt-1", "read trimmed");
    assert_eq!(grants[0]["client_id"], "workload");
    assert_eq!(grants[0]["resource"], resource.url());

    // The platform rotates the file; the next grant (the tokens revoked) reads it again.
    std::fs::write(&file.0, "platform-jwt-2").unwrap();
    resource.revoke();
    echo(&client).await.unwrap();
    let grants = honest.grants();
    assert_eq!(grants.len(), 2);
    assert_eq!(grants[1]["assertion"], "platform-jwt-2");

    // The resource now names the hostile server: the client refuses to take its JWT there.
    resource.name(&hostile.base);
    assert!(echo(&client).await.is_err());
    let why = oauth.last_error().await.unwrap();
    assert!(why.contains("is for the authorization server"), "{why}");
    assert!(hostile.grants().is_empty(), "the hostile server got grants: {:?}", hostile.grants());
    for secret in ["platform-jwt-1", "platform-jwt-2"] {
        assert!(!hostile.log.saw(secret), "the hostile server saw {secret}: {:?}", hostile.log.paths());
        assert!(!resource.log.saw(secret), "the resource saw {secret}");
    }
}

/// An enterprise IdP: exchanges the ID token it issued for an ID-JAG (RFC 8693).
#[derive(Clone)]
struct Idp {
    base: String,
    log: Log,
    exchanges: Arc<Mutex<Vec<HashMap<String, String>>>>,
}

impl Idp {
    async fn start() -> Idp {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let idp = Idp {
            base: format!("http://{}", listener.local_addr().unwrap()),
            log: Log::default(),
            exchanges: Arc::default(),
        };
        let app = Router::new().route("/token", post(idp_token)).with_state(idp.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        idp
    }
}

async fn idp_token(State(idp): State<Idp>, headers: HeaderMap, body: Bytes) -> Response {
    idp.log.record("/token", &headers, &body);
    let form = form(&body);
    idp.exchanges.lock().unwrap().push(form.clone());
    let good = form.get("grant_type").map(String::as_str) == Some("urn:ietf:params:oauth:grant-type:token-exchange")
        && form.get("subject_token").map(String::as_str) == Some("user-id-token")
        && form.get("requested_token_type").map(String::as_str) == Some(ID_JAG);
    if !good {
        return json_body(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
    }
    // The ID-JAG names the audience it is for; the honest server takes only its own.
    let jag = format!("jag-for-{}", form.get("audience").cloned().unwrap_or_default());
    json_body(StatusCode::OK, json!({"access_token": jag, "issued_token_type": ID_JAG, "token_type": "N_A"}))
}

#[tokio::test]
async fn the_id_token_goes_to_the_idp_only_and_the_id_jag_to_the_bound_authorization_server() {
    let tokens = Tokens::default();
    let honest = AuthServer::start(tokens.clone()).await;
    let hostile = AuthServer::start(tokens.clone()).await;
    let idp = Idp::start().await;
    let resource = Resource::start(tokens.clone(), &honest.base).await;
    honest.accepts.lock().unwrap().push(format!("jag-for-{}", honest.base));
    hostile.accepts.lock().unwrap().push(format!("jag-for-{}", hostile.base));

    let credentials = ClientCredentials::new("mcp-app", Some("app-secret".to_owned())).issuer(&honest.base);
    let enterprise = EnterpriseIdp::new(format!("{}/token", idp.base), "idp-client", "user-id-token");
    let oauth = OAuthClient::new(
        Url::parse(&resource.url()).unwrap(),
        OAuthConfig::enterprise_managed(credentials, enterprise),
    );
    let client = connect(&resource.url(), oauth.clone()).await;
    echo(&client).await.unwrap();

    // The IdP exchanged the ID token for an ID-JAG for the honest server and this resource.
    let exchanges = idp.exchanges.lock().unwrap().clone();
    assert_eq!(exchanges.len(), 1);
    assert_eq!(exchanges[0]["audience"], honest.base);
    assert_eq!(exchanges[0]["resource"], resource.url());
    assert_eq!(exchanges[0]["subject_token_type"], "urn:ietf:params:oauth:token-type:id_token");
    // The authorization server got the ID-JAG with the JWT bearer grant, never the ID token.
    let grants = honest.grants();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0]["assertion"], format!("jag-for-{}", honest.base));
    assert!(!honest.log.saw("user-id-token"));
    assert!(!resource.log.saw("user-id-token"));
    assert!(!resource.log.saw("jag-for-"), "the ID-JAG is for the authorization server only");

    // The resource names the hostile server: no ID-JAG is asked for it, nothing reaches it.
    resource.name(&hostile.base);
    assert!(echo(&client).await.is_err());
    assert_eq!(idp.exchanges.lock().unwrap().len(), 1, "no exchange for another audience");
    assert!(hostile.grants().is_empty());
    for secret in ["user-id-token", "jag-for-", "app-secret"] {
        assert!(!hostile.log.saw(secret), "the hostile server saw {secret}");
    }
    assert!(!resource.log.saw("app-secret"));
}
