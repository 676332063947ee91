//! `mcp auth status` and `logout` over a token file (the login itself runs in `auth_login.rs`
//! against stand-in servers, and in `cargo xtask auth-e2e` against a real OpenID provider),
//! and `mcp proxy` refusing a server that wants authorization when there are no tokens.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// A fresh `$XDG_CONFIG_HOME` for one test.
fn config_home(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cli-auth-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("mcp")).unwrap();
    dir
}

fn mcp(home: &PathBuf, args: &[&str]) -> std::process::Output {
    Command::new(MCP).args(args).env("XDG_CONFIG_HOME", home).output().unwrap()
}

#[test]
fn status_lists_the_tokens_and_logout_forgets_one_server() {
    let home = config_home("status");
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let entry = |resource: &str, expires_at: u64| {
        serde_json::json!({
            "key": {"issuer": "https://as.example", "resource": resource},
            "tokens": {"client": {"client_id": "c"}, "access_token": "a", "refresh_token": "r",
                       "expires_at": expires_at, "scopes": ["mcp:read"]}
        })
    };
    let file = home.join("mcp/tokens.json");
    let entries = serde_json::json!([entry("https://a.example/mcp", now + 3600), entry("https://b.example", now - 60)]);
    std::fs::write(&file, entries.to_string()).unwrap();

    let out = mcp(&home, &["auth", "status"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert!(text.contains("https://a.example/mcp") && text.contains("expires in 60m"), "{text}");
    assert!(text.contains("https://b.example") && text.contains("expired 60s ago"), "{text}");

    let out = mcp(&home, &["auth", "status", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert_eq!((list[0]["expired"].as_bool(), list[1]["expired"].as_bool()), (Some(false), Some(true)));

    // The resource of b is its origin: a URL on it names it.
    let out = mcp(&home, &["auth", "logout", "https://b.example/mcp"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Logged out"), "{out:?}");
    let left: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(left.as_array().unwrap().len(), 1);
    assert_eq!(left[0]["key"]["resource"], "https://a.example/mcp");
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);

    let out = mcp(&home, &["auth", "logout", "https://c.example/mcp"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("No tokens"), "{out:?}");
    std::fs::write(&file, "not json").unwrap();
    let out = mcp(&home, &["auth", "status"]);
    assert_eq!(out.status.code(), Some(3), "a broken token file is an error, not an empty list");
    let _ = std::fs::remove_dir_all(home);
}

/// A bare HTTP/1.1 server answering 401 with a Bearer challenge to everything, as one that
/// wants OAuth does (with no metadata to find: no flow could succeed).
async fn unauthorized_server() -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    let _ = stream.read(&mut buf).await;
                    let answer = "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
                    let _ = stream.write_all(answer.as_bytes()).await;
                });
            }
        });
        url
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_without_tokens_says_to_log_in_and_exits_3() {
    let home = config_home("proxy");
    let url = unauthorized_server().await;
    let home2 = home.clone();
    let out = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(MCP)
            .args(["proxy", &url])
            .env("XDG_CONFIG_HOME", &home2)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        child.stdin.take().unwrap().write_all(format!("{init}\n").as_bytes()).unwrap();
        (child.wait_with_output().unwrap(), url)
    })
    .await
    .unwrap();
    let (out, url) = out;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("mcp auth login {url}")), "{stderr}");
    assert!(out.stdout.is_empty(), "stdout carries protocol only: {:?}", String::from_utf8_lossy(&out.stdout));
    let _ = std::fs::remove_dir_all(home);
}
