//! `mcp auth login`, the real binary, against a stand-in authorization server and a protected
//! MCP server on local ports, while a hostile local web page plays with the loopback
//! redirect listener: it holds a connection open and sends forged redirects (an error with
//! its own text) before the browser's real one arrives. The login completes with the real
//! one; the page's text reaches neither the page it gets back nor the user.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use mcp_sdk::transport::http::server::auth::{AuthConfig, Principal, TokenError, TokenVerifier};
use mcp_sdk::transport::http::server::{HttpServerConfig, serve_listener};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// The access token the stand-in authorization server issues and the MCP server accepts.
const ACCESS_TOKEN: &str = "access-for-the-cli";

/// The text the hostile page tries to show the user.
const INJECTED: &str = "Your account is locked: call 555-0100";

/// Accepts the one token, for the resource.
struct OneToken(String);

impl TokenVerifier for OneToken {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
        Box::pin(async move {
            if token != ACCESS_TOKEN {
                return Err(TokenError::Invalid("unknown token".into()));
            }
            Ok(Principal {
                subject: Some("alice".into()),
                client_id: Some("cli-client".into()),
                audience: vec![self.0.clone()],
                expires_at: Some(SystemTime::now() + Duration::from_secs(3600)),
                ..Principal::default()
            })
        })
    }
}

/// One HTTP/1.1 request read off `stream`: its request line and body.
async fn request(stream: &mut TcpStream) -> Option<(String, String)> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        if data.len() > 64 * 1024 {
            return None;
        }
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-length")))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    while data.len() < head_end + length.min(64 * 1024) {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        data.extend_from_slice(&buf[..n]);
    }
    let line = head.lines().next().unwrap_or_default().to_owned();
    Some((line, String::from_utf8_lossy(&data[head_end..]).into_owned()))
}

async fn respond(stream: &mut TcpStream, status: &str, body: &str) {
    let answer = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes()).await;
}

/// A stand-in authorization server on a local port: RFC 8414 metadata (S256, `iss` in
/// redirects), dynamic registration, and a token endpoint that gives [`ACCESS_TOKEN`] for the
/// code `real`. Its issuer URL.
async fn authorization_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let base = issuer.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let base = base.clone();
            tokio::spawn(async move {
                let Some((line, body)) = request(&mut stream).await else { return };
                let target = line.split_whitespace().nth(1).unwrap_or_default();
                if line.starts_with("GET ") && target == "/.well-known/oauth-authorization-server" {
                    let metadata = serde_json::json!({
                        "issuer": base,
                        "authorization_endpoint": format!("{base}/authorize"),
                        "token_endpoint": format!("{base}/token"),
                        "registration_endpoint": format!("{base}/register"),
                        "response_types_supported": ["code"],
                        "grant_types_supported": ["authorization_code", "refresh_token"],
                        "code_challenge_methods_supported": ["S256"],
                        "token_endpoint_auth_methods_supported": ["none"],
                        "authorization_response_iss_parameter_supported": true,
                    });
                    respond(&mut stream, "200 OK", &metadata.to_string()).await;
                } else if line.starts_with("POST ") && target == "/register" {
                    let asked: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                    let registered = serde_json::json!({
                        "client_id": "cli-client",
                        "redirect_uris": asked["redirect_uris"],
                        "token_endpoint_auth_method": "none",
                    });
                    respond(&mut stream, "201 Created", &registered.to_string()).await;
                } else if line.starts_with("POST ") && target == "/token" && body.contains("code=real") {
                    let tokens = serde_json::json!({
                        "access_token": ACCESS_TOKEN, "token_type": "Bearer", "expires_in": 3600,
                        "refresh_token": "refresh-for-the-cli",
                    });
                    respond(&mut stream, "200 OK", &tokens.to_string()).await;
                } else if line.starts_with("POST ") && target == "/token" {
                    respond(&mut stream, "400 Bad Request", r#"{"error":"invalid_grant"}"#).await;
                } else {
                    respond(&mut stream, "404 Not Found", "").await;
                }
            });
        }
    });
    issuer
}

/// The `showcase` server over Streamable HTTP, protected: tokens from `issuer`. Its URL.
async fn protected_server(issuer: &str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    let auth = AuthConfig::new(resource.clone(), OneToken(resource.clone())).unwrap().authorization_server(issuer);
    let server = mcp_examples::showcase::server().unwrap();
    tokio::spawn(serve_listener(Arc::new(server), HttpServerConfig::new().auth(auth), listener));
    resource
}

/// What the page gets back for `request` sent to the loopback listener (bounded in time: a
/// listener that does not answer fails the test).
async fn page_sends(port: u16, target: &str) -> String {
    let exchange = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let request = format!("GET {target} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer).await;
        answer
    };
    tokio::time::timeout(Duration::from_secs(10), exchange).await.expect("the redirect listener did not answer")
}

fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The `mcp` process, killed if the test fails before it ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A fresh `$XDG_CONFIG_HOME`.
fn config_home(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn token_file(home: &Path) -> PathBuf {
    home.join("mcp/tokens.json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_completes_while_a_local_page_attacks_the_redirect_listener() {
    let home = config_home("login-hostile-page");
    let issuer = authorization_server().await;
    let resource = protected_server(&issuer).await;
    let mut child = KillOnDrop(
        Command::new(MCP)
            .args(["auth", "login", &resource])
            .env("XDG_CONFIG_HOME", &home)
            .env_remove("BROWSER")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // The authorization URL, from the lines `login` prints for the user.
    let (lines_tx, lines) = mpsc::channel::<String>();
    let stderr = child.0.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let prefix = format!("{issuer}/authorize?");
    let (authorize, lines) = tokio::task::spawn_blocking(move || {
        loop {
            let line = lines.recv_timeout(Duration::from_secs(60)).expect("no authorization URL printed");
            if let Some(url) = line.trim().strip_prefix(&prefix) {
                return (url.to_owned(), lines);
            }
        }
    })
    .await
    .unwrap();
    let params: std::collections::HashMap<String, String> = url_params(&authorize);
    let (state, redirect_uri) = (&params["state"], &params["redirect_uri"]);
    let port: u16 = redirect_uri.rsplit(':').next().unwrap().split('/').next().unwrap().parse().unwrap();

    // The page opens a connection and sends nothing...
    let _idle = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    // ...then redirects without a state, and with a guessed one, carrying its own text.
    for forged in [
        format!("/callback?error=access_denied&error_description={}", percent(INJECTED)),
        format!("/callback?error=access_denied&error_description={}&state=guessed", percent(INJECTED)),
    ] {
        let page = page_sends(port, &forged).await;
        assert!(page.starts_with("HTTP/1.1 4"), "{forged}: {page}");
        assert!(!page.contains("555-0100") && !page.contains("access_denied"), "{page}");
    }
    // The browser's redirect, with the state and issuer.
    let real = format!("/callback?code=real&state={}&iss={}", percent(state), percent(&issuer));
    let page = page_sends(port, &real).await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");

    let out = tokio::task::spawn_blocking(move || {
        let mut stdout = String::new();
        std::io::Read::read_to_string(&mut child.0.stdout.take().unwrap(), &mut stdout).unwrap();
        // The lines end with stderr, when the process exits.
        (child.0.wait().unwrap(), stdout, lines.iter().collect::<Vec<_>>().join("\n"))
    });
    let (status, stdout, stderr) =
        tokio::time::timeout(Duration::from_secs(60), out).await.expect("login did not end").unwrap();
    assert!(status.success(), "{status}: {stdout}\n{stderr}");
    assert!(stdout.contains(&format!("Logged in to {resource}")), "{stdout}");
    assert!(!stderr.contains("555-0100"), "{stderr}");
    let kept: serde_json::Value = serde_json::from_slice(&std::fs::read(token_file(&home)).unwrap()).unwrap();
    assert_eq!(kept[0]["tokens"]["access_token"], ACCESS_TOKEN);
    assert_eq!(kept[0]["key"]["resource"], resource.as_str());
    let _ = std::fs::remove_dir_all(home);
}

/// The query parameters of `query` (decoded).
fn url_params(query: &str) -> std::collections::HashMap<String, String> {
    mcp_sdk::client::http::reqwest::Url::parse(&format!("http://x/?{query}"))
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// A token file `login` could not keep its tokens in is found before the user is sent to
/// authorize, and left as it is.
#[test]
fn login_with_a_broken_token_file_stops_before_authorizing() {
    let home = config_home("login-broken-file");
    std::fs::create_dir_all(home.join("mcp")).unwrap();
    std::fs::write(token_file(&home), "{ not a token file").unwrap();
    let out = Command::new(MCP)
        .args(["auth", "login", "http://127.0.0.1:9/mcp"])
        .env("XDG_CONFIG_HOME", &home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("not a token file"), "{stderr}");
    assert_eq!(std::fs::read_to_string(token_file(&home)).unwrap(), "{ not a token file");
    let _ = std::fs::remove_dir_all(home);
}
