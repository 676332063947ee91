//! `mcp proxy`: stdio <-> Streamable HTTP, both ways.
//!
//! - `mcp proxy URL`: a stdio client (a desktop host) on our stdin and stdout gets the server
//!   at `URL`. Each line read is one JSON-RPC frame, POSTed as it is through the HTTP client
//!   transport (with the hints it needs: which message begins the session, which one ends
//!   its handshake, a 2026-07-28 request's headers); every message that comes back (answers,
//!   the server's requests and notifications, the GET stream) is written as it came, one per
//!   line. Only a request with a string id is re-encoded (the transport numbers requests with
//!   integers), and its answer gets the string back.
//! - In the stateless revision (2026-07-28), the `x-mcp-header` declarations of the tools the
//!   server lists are learnt from the answers to `tools/list` ([`tools`]): a `tools/call` goes
//!   with the `Mcp-Param-{Name}` headers they ask for, and a tool whose declarations are
//!   invalid is left out of the listing the client gets.
//! - `mcp proxy --serve ADDR -- COMMAND`: see [`serve`].
//! - `mcp proxy [--serve ADDR] --named-server NAME TARGET...`: see [`named`].

mod named;
mod serve;
mod tools;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use bytes::Bytes;
use mcp_jsonrpc::transport::{
    FrameHints, FrameKind, Inbound, Outbound, ReadError, Route, Transport, TransportRead, TransportWrite,
};
use mcp_jsonrpc::{ErrorObject, message};
use mcp_sdk::transport::http::client::{
    HttpClientConfig, HttpErrorKind, HttpRequestError, RequestHeaders, StreamableHttpTransport,
};
use mcp_sdk::transport::stdio::{DEFAULT_MAX_LINE, LineRead, LineWrite, Stdin, Stdout};
use mcp_types::{ErrorCode, RequestId};
use serde_json::value::RawValue;

use crate::cli::{Global, ProxyArgs, exit};
use crate::target::{self, Target};

/// JSON-RPC errors only a server of the stateless revision sends: in the refusal of
/// `initialize`, they are the server's answer, not a reason to fall back to HTTP+SSE.
const STATELESS_ERROR_CODES: [i64; 3] = [
    ErrorCode::HEADER_MISMATCH.code(),
    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY.code(),
    ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.code(),
];

/// The first id given to a request whose own id is a string (far from the small integers
/// clients count with).
const FIRST_MAPPED_ID: i64 = 1 << 52;

/// Requests with string ids waiting for their answer, at most (beyond: refused).
const MAX_MAPPED: usize = 4096;

/// Runs the proxy until either side ends.
pub async fn run(args: ProxyArgs, global: &Global) -> ExitCode {
    if !args.named_server.is_empty() {
        return named::run(&args, global).await;
    }
    if let Some(addr) = &args.serve {
        return serve::run(addr, &args.server.server, global).await;
    }
    let target = match target::resolve(global, &args.server.server) {
        Ok(Target::Url { url, headers }) => (url, headers),
        Ok(Target::Command { .. }) => {
            eprintln!("mcp proxy: give a URL (or a config entry with `url`); to serve a command, use --serve ADDR");
            return ExitCode::from(exit::USAGE);
        }
        Err(e) => {
            eprintln!("mcp proxy: {e:#}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let config = match http_config(&target.0, &target.1) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("mcp proxy: {e:#}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let timeout = std::time::Duration::from_secs_f64(global.timeout.max(0.001));
    match to_url(config, &target.0, timeout).await {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("mcp proxy: {e:#}");
            ExitCode::from(exit::CONNECTION)
        }
    }
}

/// The HTTP client's configuration: the URL, the headers, and OAuth with the tokens of
/// `mcp auth login` (never a flow of its own: stdin and stdout belong to the client).
fn http_config(url: &str, headers: &std::collections::BTreeMap<String, String>) -> Result<HttpClientConfig> {
    let parsed = url.parse().with_context(|| format!("{url}: not a URL"))?;
    let mut config = HttpClientConfig::new(parsed);
    for (name, value) in headers {
        let name = name.parse().with_context(|| format!("header name {name:?}"))?;
        let value = value.parse().with_context(|| format!("header value of {name}"))?;
        config = config.header(name, value);
    }
    if !headers.keys().any(|h| h.eq_ignore_ascii_case("authorization")) {
        config = config.oauth(crate::auth::stored_tokens_only());
    }
    Ok(config)
}

/// Ids of requests re-numbered because theirs were strings: the number sent, and back.
#[derive(Default)]
struct IdMap {
    next: i64,
    sent: HashMap<i64, RequestId>,
}

impl IdMap {
    /// The number to send a string-id request under; `None` when too many wait.
    fn map(&mut self, original: RequestId) -> Option<i64> {
        if self.sent.len() >= MAX_MAPPED {
            return None;
        }
        let n = FIRST_MAPPED_ID + self.next;
        self.next = (self.next + 1) % FIRST_MAPPED_ID;
        self.sent.insert(n, original);
        Some(n)
    }
}

/// What the proxy needs to know of a frame from the client.
#[derive(serde::Deserialize)]
struct Probe<'a> {
    #[serde(default, borrow, deserialize_with = "mcp_jsonrpc::raw::present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
}

/// `params` members the hints read.
#[derive(serde::Deserialize, Default)]
struct Params<'a> {
    #[serde(default, rename = "requestId")]
    request_id: Option<RequestId>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    uri: Option<String>,
    /// A call's arguments, read only for a tool that mirrors some in headers.
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
    /// A list's cursor (none: the first page).
    #[serde(default, borrow)]
    cursor: Option<&'a RawValue>,
    #[serde(default, rename = "_meta")]
    meta: Option<serde_json::Map<String, serde_json::Value>>,
}

/// What both directions share: the renumbered ids, the requests awaiting their answer, and
/// the tools' `x-mcp-header` declarations.
#[derive(Default)]
struct Flight {
    declared: tools::Declarations,
    ids: std::sync::Mutex<IdMap>,
    /// The numbers of the requests sent and not answered yet.
    outstanding: std::sync::Mutex<std::collections::HashSet<i64>>,
    /// Told of every answer.
    answered: tokio::sync::Notify,
}

impl Flight {
    fn ids(&self) -> std::sync::MutexGuard<'_, IdMap> {
        self.ids.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn outstanding(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<i64>> {
        self.outstanding.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Request `number` was answered (or failed).
    fn answer(&self, number: i64) {
        if self.outstanding().remove(&number) {
            self.answered.notify_waiters();
        }
    }

    /// Waits until `done` holds of the outstanding requests, at most `limit`.
    async fn wait(&self, limit: std::time::Duration, done: impl Fn(&std::collections::HashSet<i64>) -> bool) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.answered.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if done(&self.outstanding()) {
                return;
            }
            tokio::select! {
                () = notified => {}
                () = tokio::time::sleep_until(deadline) => return,
            }
        }
    }
}

/// stdio on our side, Streamable HTTP at `config`'s URL on the other: frames both ways
/// until stdin ends (exit 0) or the server is gone (exit 3). After an `initialize`, nothing
/// more is sent before its answer (the session id comes with it); when stdin ends, the
/// answers still awaited are waited for (at most `timeout`).
async fn to_url(config: HttpClientConfig, url: &str, timeout: std::time::Duration) -> Result<u8> {
    let transport = StreamableHttpTransport::new(config).context("cannot set up the HTTP client")?;
    let (mut http_read, mut http_write) = transport.split();
    let mut stdin = LineRead::new(Stdin::open(), DEFAULT_MAX_LINE);
    let (out_tx, mut out_rx) = tokio::sync::mpsc::channel::<Bytes>(256);
    let flight = Arc::new(Flight::default());
    // stdout: one writer, fed by both directions (answers of the server, errors of ours).
    let writer = tokio::spawn(async move {
        let mut stdout = LineWrite::new(Stdout::open());
        while let Some(frame) = out_rx.recv().await {
            let mut frames = vec![Outbound::from(frame)];
            while let Ok(more) = out_rx.try_recv() {
                frames.push(Outbound::from(more));
            }
            if stdout.write(&frames).await.is_err() {
                break;
            }
        }
        let _ = stdout.close().await;
    });
    let mut inbound = {
        let (flight, out_tx, url) = (flight.clone(), out_tx.clone(), url.to_owned());
        tokio::spawn(async move { from_server(&mut http_read, &flight, &out_tx, &url).await })
    };
    let outcome = tokio::select! {
        biased;
        code = &mut inbound => code.unwrap_or(exit::INTERNAL),
        () = async {
            while let Some(item) = stdin.read().await {
                match item {
                    Ok(Inbound { frame, .. }) => {
                        for message in to_server(frame, &flight) {
                            if !forward(message, &flight, &mut http_write, &out_tx, timeout).await {
                                return;
                            }
                        }
                    }
                    Err(e) if e.is_recoverable() => tracing::warn!("from the client: {e}"),
                    Err(e) => {
                        tracing::warn!("reading stdin: {e}");
                        return;
                    }
                }
            }
            // The client is done: its answers still come.
            flight.wait(timeout, |o| o.is_empty()).await;
        } => exit::OK,
    };
    let _ = http_write.close().await;
    inbound.abort();
    drop(out_tx);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
    Ok(outcome)
}

/// One message of the client to the server (or its refusal back to the client); `false`
/// when the HTTP side is closed.
async fn forward(
    message: ToServer,
    flight: &Flight,
    http: &mut impl TransportWrite,
    out: &tokio::sync::mpsc::Sender<Bytes>,
    timeout: std::time::Duration,
) -> bool {
    if let Some(refusal) = message.refusal {
        let _ = out.send(refusal).await;
        return true;
    }
    let number = match message.out.kind {
        FrameKind::Request(n) => Some(n),
        _ => None,
    };
    if let Some(n) = number.filter(|_| message.awaited) {
        flight.outstanding().insert(n);
    }
    if http.write(&[message.out]).await.is_err() {
        return false;
    }
    if let (Some(n), true) = (number, message.initialize) {
        flight.wait(timeout, |o| !o.contains(&n)).await;
    }
    true
}

/// A message of the client, ready for the HTTP transport.
struct ToServer {
    out: Outbound,
    /// The answer to send back instead, when the message cannot go.
    refusal: Option<Bytes>,
    /// Whether it is `initialize`.
    initialize: bool,
    /// Whether its answer is waited for when stdin ends (not `subscriptions/listen`, which
    /// lasts as long as the client listens).
    awaited: bool,
}

/// The frames to POST for one line of the client (a batch goes message by message), each
/// with what the transport must know of it; or the error answer to send the client back.
fn to_server(frame: Bytes, flight: &Flight) -> Vec<ToServer> {
    let trimmed = frame.trim_ascii_start();
    if trimmed.first() == Some(&b'[') {
        let Ok(items) = serde_json::from_slice::<Vec<&RawValue>>(trimmed) else {
            return vec![ToServer::plain(Outbound::from(frame))];
        };
        return items
            .into_iter()
            .map(|item| one_to_server(Bytes::copy_from_slice(item.get().as_bytes()), flight))
            .collect();
    }
    vec![one_to_server(frame, flight)]
}

impl ToServer {
    fn plain(out: Outbound) -> Self {
        ToServer { out, refusal: None, initialize: false, awaited: false }
    }
}

/// One message of the client: its kind and hints (and, for a string id, its new number).
fn one_to_server(frame: Bytes, flight: &Flight) -> ToServer {
    let ids = &flight.ids;
    let Ok(probe) = serde_json::from_slice::<Probe<'_>>(&frame) else {
        // Not JSON-RPC: the server answers it as it sees fit.
        return ToServer::plain(Outbound::from(frame));
    };
    let id = probe.id.and_then(|raw| serde_json::from_str::<RequestId>(raw.get()).ok());
    let params: Params<'_> = probe.params.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_default();
    let Some(method) = probe.method.as_deref() else {
        // A response to a request of the server.
        return ToServer::plain(Outbound::from(frame.clone()).with_kind(FrameKind::Response));
    };
    let hints = hints(method, &params, &flight.declared);
    let Some(id) = id else {
        let kind = match (method, params.request_id) {
            ("notifications/cancelled", Some(RequestId::Integer(n))) => FrameKind::Cancellation(n),
            ("notifications/cancelled", Some(original)) => {
                let map = ids.lock().unwrap_or_else(|e| e.into_inner());
                match map.sent.iter().find(|(_, o)| **o == original) {
                    Some((n, _)) => FrameKind::Cancellation(*n),
                    None => FrameKind::Notification,
                }
            }
            _ => FrameKind::Notification,
        };
        return ToServer::plain(Outbound::from(frame.clone()).with_kind(kind).with_hints(hints));
    };
    let (number, frame) = match &id {
        RequestId::Integer(n) => (*n, frame.clone()),
        original => {
            let Some(n) = ids.lock().unwrap_or_else(|e| e.into_inner()).map(original.clone()) else {
                let error = ErrorObject::internal_error("too many requests with string ids in flight");
                let refusal = Some(message::encode_error(Some(original), &error));
                return ToServer { out: Outbound::from(Bytes::new()), refusal, initialize: false, awaited: false };
            };
            let params = probe.params.as_ref().map(|p| p as &dyn message::Body);
            match message::encode_request(&RequestId::Integer(n), method, params) {
                Ok(frame) => (n, frame),
                Err(_) => return ToServer::plain(Outbound::from(frame.clone())),
            }
        }
    };
    if method == "tools/list" && stateless(&params).is_some() {
        flight.declared.listing(number, params.cursor.is_none());
    }
    let out = Outbound::new(frame, Route::Unrelated).with_kind(FrameKind::Request(number)).with_hints(hints);
    ToServer { out, refusal: None, initialize: method == "initialize", awaited: method != "subscriptions/listen" }
}

/// The revision of a request of the stateless revision (in its `_meta`).
fn stateless<'p>(params: &'p Params<'_>) -> Option<&'p str> {
    params.meta.as_ref()?.get(mcp_jsonrpc::raw::PROTOCOL_VERSION_KEY)?.as_str()
}

/// What the HTTP transport must be told of a message: `initialize` begins a session,
/// `notifications/initialized` ends its handshake, a request of the stateless revision
/// (2026-07-28, its revision in `_meta`) gets its own headers: `Mcp-Method`, `Mcp-Name`, and
/// for a call of a tool that mirrors arguments, their `Mcp-Param-{Name}`.
fn hints(method: &str, params: &Params<'_>, declared: &tools::Declarations) -> Option<FrameHints> {
    match method {
        "initialize" => {
            return Some(RequestHeaders::initialize().final_errors(&STATELESS_ERROR_CODES).into_hints());
        }
        "notifications/initialized" => return Some(RequestHeaders::initialized().into_hints()),
        _ => {}
    }
    let version = stateless(params)?;
    let mut headers = RequestHeaders::stateless(version, method);
    let name = match method {
        "tools/call" | "prompts/get" => params.name.as_deref(),
        "resources/read" => params.uri.as_deref(),
        _ => None,
    };
    if let Some(name) = name {
        headers = headers.name(name);
        if method == "tools/call" {
            for (param, value) in declared.headers(name, params.arguments) {
                headers = headers.param(&param, &value);
            }
        }
    }
    Some(headers.into_hints())
}

/// Copies what the server sends to the client until the connection ends; the exit code.
async fn from_server(
    read: &mut impl TransportRead,
    flight: &Flight,
    out: &tokio::sync::mpsc::Sender<Bytes>,
    url: &str,
) -> u8 {
    while let Some(item) = read.read().await {
        let frame = match item {
            Ok(Inbound { frame, .. }) => {
                let frame = match answered(&frame) {
                    Some(number) => {
                        flight.answer(number);
                        flight.declared.answer(number, frame)
                    }
                    None => frame,
                };
                restore_id(frame, &flight.ids)
            }
            Err(ReadError::RequestFailed { id, source }) => {
                let http = source.downcast_ref::<HttpRequestError>();
                if http.is_some_and(|e| e.kind() == HttpErrorKind::Unauthorized) {
                    eprintln!(
                        "mcp proxy: {url} needs authorization, and there are no valid tokens for it: run \
                         `mcp auth login {url}` first"
                    );
                    return exit::CONNECTION;
                }
                flight.answer(int(&id));
                flight.declared.forget(int(&id));
                let original = flight.ids().sent.remove(&int(&id)).unwrap_or(id);
                let error = ErrorObject::internal_error(format!("the proxy could not reach the server: {source}"));
                message::encode_error(Some(&original), &error)
            }
            Err(e) if e.is_recoverable() => {
                tracing::warn!("from the server: {e}");
                continue;
            }
            Err(e) => {
                eprintln!("mcp proxy: the connection to {url} broke: {e}");
                return exit::CONNECTION;
            }
        };
        if out.send(frame).await.is_err() {
            break;
        }
    }
    exit::CONNECTION
}

/// The number of the request a frame answers, if it is an answer.
fn answered(frame: &[u8]) -> Option<i64> {
    let probe = serde_json::from_slice::<Probe<'_>>(frame).ok()?;
    if probe.method.is_some() {
        return None;
    }
    serde_json::from_str::<i64>(probe.id?.get()).ok()
}

fn int(id: &RequestId) -> i64 {
    match id {
        RequestId::Integer(n) => *n,
        _ => -1,
    }
}

/// A response to a re-numbered request gets its string id back (re-encoded); any other frame
/// goes as it came.
fn restore_id(frame: Bytes, ids: &std::sync::Mutex<IdMap>) -> Bytes {
    if ids.lock().unwrap_or_else(|e| e.into_inner()).sent.is_empty() {
        return frame;
    }
    let Ok(probe) = serde_json::from_slice::<Probe<'_>>(&frame) else { return frame };
    if probe.method.is_some() {
        return frame;
    }
    let Some(id) = probe.id.and_then(|raw| serde_json::from_str::<RequestId>(raw.get()).ok()) else { return frame };
    let Some(original) = ids.lock().unwrap_or_else(|e| e.into_inner()).sent.remove(&int(&id)) else { return frame };
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&frame) else { return frame };
    value["id"] = serde_json::to_value(&original).unwrap_or_default();
    serde_json::to_vec(&value).map(Bytes::from).unwrap_or(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_ids_are_renumbered_and_restored() {
        let flight = Flight::default();
        let ids = &flight.ids;
        let frame = Bytes::from_static(br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#);
        let ToServer { out, refusal, initialize, .. } = one_to_server(frame, &flight);
        assert!(refusal.is_none() && !initialize);
        let FrameKind::Request(n) = out.kind else { panic!("{:?}", out.kind) };
        assert!(std::str::from_utf8(&out.frame).unwrap().contains(&n.to_string()));
        let answer = Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{}}}}"#));
        let restored: serde_json::Value = serde_json::from_slice(&restore_id(answer, ids)).unwrap();
        assert_eq!(restored["id"], "a");
        assert!(ids.lock().unwrap().sent.is_empty());
    }

    #[test]
    fn integer_ids_pass_unchanged_with_their_hints() {
        let ids = Flight::default();
        let frame = Bytes::from_static(br#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#);
        let ToServer { out, initialize, .. } = one_to_server(frame.clone(), &ids);
        assert_eq!((out.frame, out.kind, initialize), (frame, FrameKind::Request(7), true));
        assert!(out.hints.is_some());
        let cancel =
            Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#);
        assert_eq!(one_to_server(cancel, &ids).out.kind, FrameKind::Cancellation(7));
        let answer = Bytes::from_static(br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#);
        assert_eq!(one_to_server(answer, &ids).out.kind, FrameKind::Response);
        let batch = Bytes::from_static(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]"#);
        let kinds: Vec<FrameKind> = to_server(batch, &ids).into_iter().map(|m| m.out.kind).collect();
        assert_eq!(kinds, [FrameKind::Request(1), FrameKind::Notification]);
    }
}
