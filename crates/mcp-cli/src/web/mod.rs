//! `mcp web`: a browser inspector. One client connection to the server, kept for the life of
//! the command; a page (embedded in the binary, framework-free) and its small JSON API served
//! on 127.0.0.1 only, behind a random token; the session's traffic, the calls' progress, the
//! server's log messages and its questions (elicitation, sampling) streamed to the page with
//! server-sent events.
//!
//! Safety: every request must carry the token (`?token=` or the `x-mcp-web-token` header),
//! compared in constant time; the `Host` header must name the loopback (no DNS rebinding);
//! no CORS headers are ever sent, and a request whose `Origin` is not the page's is refused;
//! the page renders every value of the server as text (its Content-Security-Policy allows
//! only its own script, by nonce).

mod hub;
mod tap;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mcp_sdk::client::{CallOptions, Client, ClientBuilder, ServerEvent};
use mcp_sdk::transport::stdio::{ChildCommand, ChildProcess, StderrMode};
use mcp_types::{
    CallToolRequestParams, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ErrorObject,
};
use serde_json::{Value, json};

use crate::cli::{Global, WebArgs, exit};
use crate::session::{self, Failure, chain};
use crate::target::{self, Target};
use hub::Hub;
use tap::Tap;

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/style.css");

/// What every request handler shares.
struct App {
    token: String,
    /// The page's script and style carry it (its Content-Security-Policy allows them only).
    nonce: String,
    port: u16,
    client: Client,
    hub: Arc<Hub>,
    /// Fired by Ctrl-C: the event streams end, so that the server can stop.
    stop: mcp_sdk::jsonrpc::CancellationToken,
}

/// Runs `mcp web`: connects, serves the page until Ctrl-C, closes.
pub async fn run(args: WebArgs, global: &Global) -> ExitCode {
    match serve(args, global).await {
        Ok(()) => ExitCode::from(exit::OK),
        Err(failure) => {
            eprintln!("mcp: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

async fn serve(args: WebArgs, global: &Global) -> Result<(), Failure> {
    let interrupt = session::interrupt_on_ctrl_c();
    let hub = Arc::new(Hub::new());
    let target = target::resolve(global, &args.server.server).map_err(|e| Failure::usage(format!("{e:#}")))?;
    let (client, child) = session::interruptible(&interrupt, connect(global, &target, &hub)).await?;
    session::set_log_level(&client, global).await?;
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], args.port)))
        .await
        .map_err(|e| Failure::usage(format!("cannot listen on 127.0.0.1:{}: {e}", args.port)))?;
    let port = listener.local_addr().map_err(|e| Failure::usage(e.to_string()))?.port();
    let app =
        Arc::new(App { token: random_hex(32), nonce: random_hex(16), port, client, hub, stop: interrupt.clone() });
    let url = format!("http://127.0.0.1:{port}/?token={}", app.token);
    eprintln!("mcp web: {url}");
    eprintln!("mcp web: Ctrl-C to stop");
    if !args.no_open {
        open_browser(&url);
    }
    let router = Router::new()
        .route("/", get(page))
        .route("/api/info", get(info))
        .route("/api/tools", get(tools))
        .route("/api/call", post(call))
        .route("/api/answer", post(answer))
        .route("/api/events", get(events))
        .layer(axum::middleware::from_fn_with_state(app.clone(), guard))
        .with_state(app.clone());
    let stop = interrupt.clone();
    let served = axum::serve(listener, router).with_graceful_shutdown(async move { stop.cancelled().await }).await;
    if let Err(e) = served {
        eprintln!("mcp web: {e}");
    }
    let Ok(app) = Arc::try_unwrap(app) else {
        // A connection still holds it: the process ends anyway (the child is killed on drop).
        return Ok(());
    };
    session::close(app.client).await;
    drop(child);
    Ok(())
}

/// Connects to `target` over a [`Tap`] (the page sees every frame), with the handlers that
/// put the server's questions to the person at the page. A child server is returned beside
/// the client: it is stopped when dropped.
async fn connect(global: &Global, target: &Target, hub: &Arc<Hub>) -> Result<(Client, Option<ChildProcess>), Failure> {
    let failed = |message: String| Failure { code: exit::CONNECTION, message: format!("cannot connect: {message}") };
    target::protocol(global).map_err(|e| Failure::usage(format!("{e:#}")))?;
    target::timeout(global).map_err(|e| Failure::usage(format!("{e:#}")))?;
    let builder = builder(global, hub).map_err(|e| Failure::usage(format!("{e:#}")))?;
    match target {
        Target::Url { url, headers } => {
            let url = url.parse().map_err(|e| Failure::usage(format!("{url}: not a URL: {e}")))?;
            let mut config = mcp_sdk::client::http::HttpClientConfig::new(url);
            for (name, value) in headers {
                let name = name.parse().map_err(|e| Failure::usage(format!("header name {name:?}: {e}")))?;
                let value = value.parse().map_err(|e| Failure::usage(format!("header value of {name}: {e}")))?;
                config = config.header(name, value);
            }
            let transport =
                mcp_sdk::client::http::StreamableHttpTransport::new(config).map_err(|e| failed(chain(&e)))?;
            let client =
                builder.connect(Tap { inner: transport, hub: hub.clone() }).await.map_err(|e| failed(chain(&e)))?;
            Ok((client, None))
        }
        Target::Command { program, args, env } => {
            let stderr = if global.verbose > 0 { StderrMode::Forward } else { StderrMode::Capture };
            let mut command = ChildCommand::new(program)
                .args(args)
                .stderr(stderr)
                .grace(std::time::Duration::from_secs(1))
                .process_group(true);
            for (key, value) in env {
                command = command.env(key, value);
            }
            let (transport, child) = ChildProcess::spawn(command).map_err(|e| failed(chain(&e)))?;
            match builder.connect(Tap { inner: transport, hub: hub.clone() }).await {
                Ok(client) => Ok((client, Some(child))),
                Err(e) => {
                    let tail = child.stderr_tail().join("\n");
                    let more = if tail.is_empty() { String::new() } else { format!("\n{tail}") };
                    Err(failed(format!("{}{more}", chain(&e))))
                }
            }
        }
    }
}

/// The client: its events and the server's questions go to the page.
fn builder(global: &Global, hub: &Arc<Hub>) -> anyhow::Result<ClientBuilder> {
    let mut builder = ClientBuilder::new("mcp", env!("CARGO_PKG_VERSION")).title("mcp web (browser inspector)");
    if let Some(version) = target::protocol(global)? {
        builder = builder.protocol_version(version);
    }
    let timeout = target::timeout(global)?;
    builder = builder.peer_config(mcp_sdk::jsonrpc::PeerConfig {
        request_timeout: Some(timeout),
        ..mcp_sdk::jsonrpc::PeerConfig::default()
    });
    let events = hub.clone();
    let elicit = hub.clone();
    let sample = hub.clone();
    Ok(builder
        .on_event(move |event| {
            let event = match event {
                ServerEvent::Log(params) => json!({"type": "log", "params": params}),
                ServerEvent::ToolListChanged => json!({"type": "list_changed", "list": "tools"}),
                ServerEvent::PromptListChanged => json!({"type": "list_changed", "list": "prompts"}),
                ServerEvent::ResourceListChanged => json!({"type": "list_changed", "list": "resources"}),
                ServerEvent::ResourceUpdated { uri } => json!({"type": "resource_updated", "uri": uri}),
                _ => return,
            };
            events.emit(&event);
        })
        .on_elicitation(move |params: ElicitRequestParams| {
            let hub = elicit.clone();
            async move {
                let params = serde_json::to_value(&params).map_err(ErrorObject::internal_error)?;
                let answer = hub.ask("elicitation", params).await?;
                serde_json::from_value::<ElicitResult>(answer).map_err(ErrorObject::invalid_params)
            }
        })
        .on_sampling(move |params: CreateMessageRequestParams| {
            let hub = sample.clone();
            async move {
                let params = serde_json::to_value(&params).map_err(ErrorObject::internal_error)?;
                let answer = hub.ask("sampling", params).await?;
                serde_json::from_value::<CreateMessageResult>(answer).map_err(ErrorObject::invalid_params)
            }
        }))
}

/// Refuses a request without the token (401), for another host than the loopback (DNS
/// rebinding, 403), or from another origin (403).
async fn guard(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if !loopback_host(host, app.port) {
        return (StatusCode::FORBIDDEN, "mcp web answers only at 127.0.0.1, localhost or [::1]\n").into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let own =
            origin.to_str().ok().and_then(|o| o.strip_prefix("http://")).is_some_and(|o| loopback_host(o, app.port));
        if !own {
            return (StatusCode::FORBIDDEN, "another origin\n").into_response();
        }
    }
    let given = headers
        .get("x-mcp-web-token")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| query_token(request.uri().query().unwrap_or("")));
    if !given.is_some_and(|t| same(t.as_bytes(), app.token.as_bytes())) {
        return (StatusCode::UNAUTHORIZED, "the token of the URL mcp web printed is needed\n").into_response();
    }
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// `token=...` of a query string.
fn query_token(query: &str) -> Option<String> {
    query.split('&').find_map(|pair| pair.strip_prefix("token=")).map(str::to_owned)
}

/// Whether `host` (a `Host` header, or an origin without its scheme) is the loopback at `port`.
fn loopback_host(host: &str, port: u16) -> bool {
    let Some((name, given)) = host.rsplit_once(':') else {
        return false;
    };
    given == port.to_string() && matches!(name, "127.0.0.1" | "localhost" | "[::1]")
}

/// Compares in constant time (for equal lengths).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `bytes` random bytes, in hex.
fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the system's random source");
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// Opens `url` with `$BROWSER`, else `xdg-open` (`open` on macOS); a failure is only told.
fn open_browser(url: &str) {
    let program = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| if cfg!(target_os = "macos") { "open".to_owned() } else { "xdg-open".to_owned() });
    let spawned = std::process::Command::new(&program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        eprintln!("mcp web: cannot run {program}: {e}; open the URL above yourself");
    }
}

/// The page: its script and style inlined, allowed by nonce.
async fn page(State(app): State<Arc<App>>) -> Response {
    let html = INDEX.replace("{{NONCE}}", &app.nonce).replace("/*{{STYLE}}*/", STYLE).replace("/*{{SCRIPT}}*/", SCRIPT);
    let csp = format!(
        "default-src 'none'; script-src 'nonce-{n}'; style-src 'nonce-{n}'; img-src data:; media-src data:; \
         connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        n = app.nonce
    );
    let mut response = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response();
    if let Ok(value) = HeaderValue::from_str(&csp) {
        response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// A JSON answer.
fn json_response(status: StatusCode, value: &Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

/// The server's identity, revision, capabilities and instructions.
async fn info(State(app): State<Arc<App>>) -> Response {
    let client = &app.client;
    json_response(
        StatusCode::OK,
        &json!({
            "serverInfo": client.server_info(),
            "protocolVersion": client.protocol_version().to_string(),
            "capabilities": client.server_capabilities(),
            "instructions": client.instructions(),
        }),
    )
}

/// Every tool (all pages).
async fn tools(State(app): State<Arc<App>>) -> Response {
    if app.client.server_capabilities().tools.is_none() {
        return json_response(StatusCode::OK, &json!({"tools": []}));
    }
    match app.client.list_all_tools().await {
        Ok(tools) => json_response(StatusCode::OK, &json!({"tools": tools})),
        Err(e) => json_response(StatusCode::BAD_GATEWAY, &json!({"error": chain(&e)})),
    }
}

/// Calls a tool: `{"name", "arguments", "call"}`; its progress goes to the page as
/// `{"type": "progress", "call"}` events.
async fn call(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let request: Value = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(e) => return json_response(StatusCode::BAD_REQUEST, &json!({"error": e.to_string()})),
    };
    let Some(name) = request["name"].as_str() else {
        return json_response(StatusCode::BAD_REQUEST, &json!({"error": "no tool name"}));
    };
    let mut params = CallToolRequestParams::new(name);
    params.arguments = request["arguments"].as_object().cloned();
    let hub = app.hub.clone();
    let id = request["call"].clone();
    let options = CallOptions::default()
        .on_progress(move |progress| hub.emit(&json!({"type": "progress", "call": id, "params": progress})));
    match app.client.call_tool_with(params, options).await {
        Ok(result) => json_response(StatusCode::OK, &json!({"result": result})),
        Err(e) => json_response(StatusCode::OK, &json!({"error": chain(&e)})),
    }
}

/// The person's answer to a question of the server: `{"id", "result"}` or `{"id", "error"}`.
async fn answer(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let request: Value = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(e) => return json_response(StatusCode::BAD_REQUEST, &json!({"error": e.to_string()})),
    };
    let Some(id) = request["id"].as_u64() else {
        return json_response(StatusCode::BAD_REQUEST, &json!({"error": "no question id"}));
    };
    let answer = match request.get("error").and_then(Value::as_str) {
        Some(refused) => Err(refused.to_owned()),
        None => Ok(request.get("result").cloned().unwrap_or(Value::Null)),
    };
    if app.hub.answer(id, answer) {
        json_response(StatusCode::OK, &json!({"ok": true}))
    } else {
        json_response(StatusCode::NOT_FOUND, &json!({"error": "no such question (answered, or cancelled)"}))
    }
}

/// The page's events (server-sent events): the traffic so far, the questions waiting, then
/// everything live.
async fn events(State(app): State<Arc<App>>) -> impl IntoResponse {
    let (first, receiver) = app.hub.subscribe();
    let stream = futures_util::stream::unfold((first.into_iter(), receiver), |(mut first, mut receiver)| async move {
        if let Some(event) = first.next() {
            return Some((Ok::<_, Infallible>(Event::default().data(event)), (first, receiver)));
        }
        loop {
            match receiver.recv().await {
                Ok(event) => return Some((Ok(Event::default().data(event)), (first, receiver))),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    let stop = app.stop.clone();
    let stream = futures_util::StreamExt::take_until(stream, async move { stop.cancelled().await });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_loopback_at_our_port_is_a_host() {
        assert!(loopback_host("127.0.0.1:8080", 8080));
        assert!(loopback_host("localhost:8080", 8080));
        assert!(loopback_host("[::1]:8080", 8080));
        assert!(!loopback_host("127.0.0.1:8081", 8080));
        assert!(!loopback_host("evil.example:8080", 8080));
        assert!(!loopback_host("127.0.0.1.evil.example:8080", 8080));
        assert!(!loopback_host("127.0.0.1", 8080));
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
        assert_eq!(query_token("a=1&token=xyz"), Some("xyz".to_owned()));
        assert_eq!(random_hex(32).len(), 64);
    }
}
