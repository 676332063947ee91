//! `mcp proxy --serve ADDR -- COMMAND ARGS`: a stdio server served over Streamable HTTP.
//!
//! Each HTTP session gets its own child process, started when its `initialize` arrives and
//! stopped when the session ends (DELETE, expiry) or the proxy stops. The endpoint is the
//! Streamable HTTP server of `mcp-transport-http`, whose sessions are [`Peer::driven`]
//! connections: the client's requests reach the child with their own ids and params, and the
//! child's answers go back as it wrote them; its notifications go as they are to the
//! session's stream. A request of the child (sampling, elicitation, roots) is made by the
//! session to the client, and its answer is written back to the child under the child's id.
//! Requests outside a session (2026-07-28) are refused: every child needs its `initialize`.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use mcp_jsonrpc::transport::{Inbound, Outbound, Transport, TransportRead, TransportWrite};
use mcp_jsonrpc::{
    CallError, CallOptions, Dispatcher, ErrorObject, FrameSink, Peer, PeerConfig, Reply, RequestContext, Service,
    message,
};
use mcp_sdk::transport::http::server::{self, HttpServerConfig, SessionFactory};
use mcp_sdk::transport::stdio::{ChildCommand, ChildProcess, ChildStdinWrite, StderrMode};
use mcp_types::{ProtocolVersion, RequestId};
use serde_json::value::RawValue;

use crate::cli::{Global, exit};
use crate::target::{self, Target};

/// Answers awaited from one child at most (beyond: refused).
const MAX_PENDING: usize = 1024;

/// Serves the command after `--` at `addr` until Ctrl-C.
pub async fn run(addr: &str, server: &[String], global: &Global) -> ExitCode {
    let command = match target::resolve(global, server) {
        Ok(Target::Command { program, args, env }) => {
            let mut command = ChildCommand::new(program).args(args).stderr(StderrMode::Inherit);
            for (key, value) in env {
                command = command.env(key, value);
            }
            command
        }
        Ok(Target::Url { .. }) => {
            eprintln!("mcp proxy --serve: give the stdio server's command after `--`");
            return ExitCode::from(exit::USAGE);
        }
        Err(e) => {
            eprintln!("mcp proxy --serve: {e:#}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("mcp proxy --serve: cannot listen on {addr}: {e}");
            return ExitCode::from(exit::CONNECTION);
        }
    };
    if let Ok(local) = listener.local_addr() {
        eprintln!("mcp proxy: serving http://{local}/mcp");
    }
    let factory = Arc::new(ChildFactory { command });
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    match server::serve_listener_with_shutdown(factory, HttpServerConfig::default(), listener, stop).await {
        Ok(()) => ExitCode::from(exit::OK),
        Err(e) => {
            eprintln!("mcp proxy --serve: {e}");
            ExitCode::from(exit::CONNECTION)
        }
    }
}

/// Starts a child per session.
struct ChildFactory {
    command: ChildCommand,
}

impl SessionFactory for ChildFactory {
    fn connect(&self, sink: Arc<dyn FrameSink>) -> Dispatcher {
        let (transport, process) = match ChildProcess::spawn(self.command.clone()) {
            Ok(spawned) => spawned,
            Err(e) => {
                tracing::error!("cannot start the server: {e}");
                let refusal = Refuse(format!("the proxy could not start the server: {e}"));
                return Peer::driven(sink, Arc::new(refusal), PeerConfig::default());
            }
        };
        let (read, write) = transport.split();
        let link = Arc::new(Link { stdin: tokio::sync::Mutex::new(write), pending: Mutex::new(HashMap::new()) });
        let dispatcher = Peer::driven(sink, Arc::new(Forward { link: link.clone() }), PeerConfig::default());
        let peer = dispatcher.peer().clone();
        tokio::spawn(from_child(read, link, peer.clone()));
        // The session's end (DELETE, expiry, the proxy stopping) stops the child.
        tokio::spawn(async move {
            peer.closed().await;
            match process.shutdown().await {
                Ok(how) => tracing::debug!(?how, "the session ended; its server stopped"),
                Err(e) => tracing::warn!("stopping a server: {e}"),
            }
        });
        dispatcher
    }

    fn connect_stateless(&self, sink: Arc<dyn FrameSink>, version: ProtocolVersion) -> Dispatcher {
        let refusal = Refuse(format!(
            "this proxy serves sessions only (each starts a server process): initialize first, not {version} \
             requests without a session"
        ));
        Peer::driven(sink, Arc::new(refusal), PeerConfig::default())
    }
}

/// The way to one child: its stdin, and the answers awaited from it.
struct Link {
    stdin: tokio::sync::Mutex<ChildStdinWrite>,
    pending: Mutex<HashMap<RequestId, Pending>>,
}

/// A request of the client the child has yet to answer.
struct Pending {
    answer: tokio::sync::oneshot::Sender<Bytes>,
    /// Its progress token (as JSON text), if it asked for progress.
    progress_token: Option<String>,
}

impl Link {
    async fn send(&self, frame: Bytes) -> bool {
        self.stdin.lock().await.write(&[Outbound::from(frame)]).await.is_ok()
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Pending>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The request of the client a message of the child belongs to, as far as the proxy can
    /// tell: a progress notification's by its token; anything else's when only one request
    /// is running. Its stream carries the message (else the session's GET stream does).
    fn related(&self, method: &str, params: Option<&RawValue>) -> Option<RequestId> {
        let pending = self.pending();
        if method == "notifications/progress" {
            let token = progress_token(params?)?;
            return pending.iter().find(|(_, p)| p.progress_token.as_deref() == Some(&token)).map(|(id, _)| id.clone());
        }
        match pending.len() {
            1 => pending.keys().next().cloned(),
            _ => None,
        }
    }
}

/// The progress token of params (`progressToken`, or `_meta.progressToken`), as JSON text.
fn progress_token(params: &RawValue) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(default, rename = "progressToken", borrow)]
        token: Option<&'a RawValue>,
        #[serde(default, rename = "_meta", borrow)]
        meta: Option<Meta<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Meta<'a> {
        #[serde(default, rename = "progressToken", borrow)]
        token: Option<&'a RawValue>,
    }
    if !params.get().contains("progressToken") {
        return None;
    }
    let params: Params<'_> = serde_json::from_str(params.get()).ok()?;
    params.token.or(params.meta.and_then(|m| m.token)).map(|t| t.get().to_owned())
}

/// The session's service: what the client sends goes to the child.
struct Forward {
    link: Arc<Link>,
}

impl Service for Forward {
    fn request(&self, request: message::Request, ctx: RequestContext) -> BoxFuture<'static, Reply> {
        let link = self.link.clone();
        Box::pin(async move {
            let raw = request.params.as_deref();
            let params = raw.as_ref().map(|p| p as &dyn message::Body);
            let frame = message::encode_request(&request.id, &request.method, params)
                .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
            let (tx, rx) = tokio::sync::oneshot::channel();
            {
                let mut pending = link.pending();
                if pending.len() >= MAX_PENDING {
                    return Err(ErrorObject::internal_error("too many requests in flight"));
                }
                let progress_token = request.params.as_deref().and_then(progress_token);
                pending.insert(request.id.clone(), Pending { answer: tx, progress_token });
            }
            if !link.send(frame).await {
                link.pending().remove(&request.id);
                return Err(ErrorObject::internal_error("the server process is gone"));
            }
            tokio::select! {
                answer = rx => {
                    let answer = answer.map_err(|_| ErrorObject::internal_error("the server process is gone"))?;
                    if request.method == "initialize" {
                        negotiated(&answer, ctx.peer());
                    }
                    Ok(answer)
                }
                () = ctx.cancellation().cancelled() => {
                    link.pending().remove(&request.id);
                    let params = serde_json::json!({"requestId": request.id, "reason": "cancelled by the client"});
                    if let Ok(frame) = message::encode_notification("notifications/cancelled", Some(&params)) {
                        link.send(frame).await;
                    }
                    Err(ErrorObject::internal_error("cancelled"))
                }
            }
        })
    }

    fn notification(&self, notification: message::Notification, _peer: &Peer) {
        let raw = notification.params.as_deref();
        let params = raw.as_ref().map(|p| p as &dyn message::Body);
        let Ok(frame) = message::encode_notification(&notification.method, params) else { return };
        let link = self.link.clone();
        tokio::spawn(async move { link.send(frame).await });
    }
}

/// The session speaks the revision the child answered `initialize` with.
fn negotiated(answer: &[u8], peer: &Peer) {
    #[derive(serde::Deserialize)]
    struct Answer {
        result: Init,
    }
    #[derive(serde::Deserialize)]
    struct Init {
        #[serde(rename = "protocolVersion")]
        protocol_version: String,
    }
    let version = serde_json::from_slice::<Answer>(answer).ok().map(|a| a.result.protocol_version);
    if let Some(version) = version.as_deref().and_then(ProtocolVersion::from_wire) {
        peer.set_protocol_version(version);
    }
}

/// Refuses every request (a child that could not start, a request without a session).
struct Refuse(String);

impl Service for Refuse {
    fn request(&self, _request: message::Request, _ctx: RequestContext) -> BoxFuture<'static, Reply> {
        let error = ErrorObject::invalid_request(self.0.clone());
        Box::pin(std::future::ready(Err(error)))
    }
}

/// What the proxy reads of a frame of the child.
#[derive(serde::Deserialize)]
struct Probe<'a> {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default, borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
}

/// Copies what the child writes to the session until its stdout ends; then ends the session.
async fn from_child(mut read: impl TransportRead, link: Arc<Link>, peer: Peer) {
    while let Some(item) = read.read().await {
        let frame = match item {
            Ok(Inbound { frame, .. }) => frame,
            Err(e) if e.is_recoverable() => {
                tracing::warn!("from the server: {e}");
                continue;
            }
            Err(_) => break,
        };
        let Ok(probe) = serde_json::from_slice::<Probe<'_>>(&frame) else {
            tracing::warn!("the server wrote something that is not JSON-RPC; skipped");
            continue;
        };
        match (probe.method.as_deref(), probe.id) {
            // An answer to the client's request: as the child wrote it.
            (None, Some(id)) => match link.pending().remove(&id) {
                Some(pending) => {
                    let _ = pending.answer.send(frame);
                }
                None => tracing::debug!(%id, "an answer of the server to no request"),
            },
            (None, None) => tracing::debug!("an error of the server without an id"),
            // A notification: to the session's stream, as it is.
            (Some(method), None) => {
                let to = match link.related(method, probe.params) {
                    Some(id) => peer.related_to(id),
                    None => peer.clone(),
                };
                if to.send_frame(frame.clone()).await.is_err() {
                    break;
                }
            }
            // A request of the child: made to the client, answered under the child's id.
            (Some(method), Some(id)) => {
                let peer = match link.related(method, None) {
                    Some(related) => peer.related_to(related),
                    None => peer.clone(),
                };
                let (method, params) = (method.to_owned(), probe.params.map(|p| p.to_owned()));
                let link = link.clone();
                tokio::spawn(async move {
                    let raw = params.as_deref();
                    let params = raw.as_ref().map(|p| p as &dyn message::Body);
                    let answer = peer.request_raw(&method, params, CallOptions::default()).await;
                    let frame = match answer {
                        Ok(result) => message::encode_result(&id, &&*result).ok(),
                        Err(CallError::Remote(error)) => Some(message::encode_error(Some(&id), &error)),
                        Err(e) => Some(message::encode_error(Some(&id), &ErrorObject::internal_error(e.to_string()))),
                    };
                    if let Some(frame) = frame {
                        link.send(frame).await;
                    }
                });
            }
        }
    }
    tracing::debug!("the server's stdout ended; ending its session");
    peer.close();
}
