//! `mcp proxy --serve ADDR -- COMMAND ARGS`: a stdio server served over Streamable HTTP.
//!
//! Each HTTP session gets its own child process, started when its `initialize` arrives and
//! stopped when the session ends (DELETE, expiry) or the proxy stops. The endpoint is the
//! Streamable HTTP server of `mcp-transport-http`, whose sessions are [`Peer::driven`]
//! connections: the client's requests reach the child with their own ids and params, and the
//! child's answers go back as it wrote them; its notifications go as they are to the
//! session's stream. A request of the child (sampling, elicitation, roots) is made by the
//! session to the client, and its answer is written back to the child under the child's id.
//! Requests outside a session (2026-07-28) share one child (started by the first, and again
//! if it ends), each sent under a number of the proxy's (the ids of different clients may be
//! the same) and answered with its own id.

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
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cli::{Global, exit};
use crate::target::{self, Target};

/// Answers awaited from one child at most (beyond: refused).
const MAX_PENDING: usize = 1024;

/// Serves the command after `--` at `addr` until Ctrl-C.
pub async fn run(addr: &str, server: &[String], global: &Global) -> ExitCode {
    let command = match target::resolve(global, server) {
        Ok(Target::Command { program, args, env }) => {
            // In a process group of its own: Ctrl-C at the terminal reaches the proxy, which
            // stops each child through its stdin, not the children in the middle of a request.
            let mut command = ChildCommand::new(program).args(args).stderr(StderrMode::Inherit).process_group(true);
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
    let factory = Arc::new(ChildFactory {
        command,
        shared: Mutex::new(None),
        stopping: CancellationToken::new(),
        children: TaskTracker::new(),
    });
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let served =
        server::serve_listener_with_shutdown(factory.clone(), HttpServerConfig::default(), listener, stop).await;
    // Every child is stopped (stdin closed, then SIGTERM, then SIGKILL, each after the grace)
    // before the proxy exits.
    factory.stopping.cancel();
    factory.children.close();
    factory.children.wait().await;
    match served {
        Ok(()) => ExitCode::from(exit::OK),
        Err(e) => {
            eprintln!("mcp proxy --serve: {e}");
            ExitCode::from(exit::CONNECTION)
        }
    }
}

/// Starts a child per session, and one shared by the requests without a session.
struct ChildFactory {
    command: ChildCommand,
    /// The child of the requests without a session (2026-07-28), started by the first.
    shared: Mutex<Option<Arc<Link>>>,
    /// Cancelled when the proxy stops: every child is then stopped.
    stopping: CancellationToken,
    /// The tasks that stop the children, awaited before the proxy exits.
    children: TaskTracker,
}

/// The reading half of a child's stdout.
type ChildRead = <mcp_sdk::transport::stdio::ChildTransport as Transport>::Read;

impl ChildFactory {
    /// Starts a child: its link (`renumber`: requests go under the proxy's numbers), the
    /// process (to stop), and its stdout (for [`from_child`]).
    fn start(&self, renumber: bool) -> Result<(Arc<Link>, ChildProcess, ChildRead), String> {
        let (transport, process) = ChildProcess::spawn(self.command.clone()).map_err(|e| e.to_string())?;
        let (read, write) = transport.split();
        let link = Arc::new(Link {
            stdin: tokio::sync::Mutex::new(write),
            pending: Mutex::new(HashMap::new()),
            renumber,
            next: std::sync::atomic::AtomicI64::new(1),
            ended: flag::Flag::default(),
        });
        Ok((link, process, read))
    }

    /// The shared child, started (or restarted, if it ended) now if need be.
    fn shared(&self) -> Result<Arc<Link>, String> {
        let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(link) = shared.as_ref().filter(|l| !l.ended.is_set()) {
            return Ok(link.clone());
        }
        let (link, process, read) = self.start(true)?;
        tokio::spawn(from_child(read, link.clone(), None));
        let ended = link.clone();
        let stopping = self.stopping.clone();
        // Reaped when it ends; stopped with the proxy.
        self.children.spawn(async move {
            tokio::select! {
                () = ended.ended.wait() => {}
                () = stopping.cancelled() => {}
            }
            let _ = process.shutdown().await;
        });
        *shared = Some(link.clone());
        Ok(link)
    }
}

impl SessionFactory for ChildFactory {
    fn connect(&self, sink: Arc<dyn FrameSink>) -> Dispatcher {
        let (link, process, read) = match self.start(false) {
            Ok(started) => started,
            Err(e) => {
                tracing::error!("cannot start the server: {e}");
                let refusal = Refuse(format!("the proxy could not start the server: {e}"));
                return Peer::driven(sink, Arc::new(refusal), PeerConfig::default());
            }
        };
        let dispatcher = Peer::driven(sink, Arc::new(Forward { link: link.clone() }), PeerConfig::default());
        let peer = dispatcher.peer().clone();
        tokio::spawn(from_child(read, link, Some(peer.clone())));
        // The session's end (DELETE, expiry, the proxy stopping) stops the child.
        let stopping = self.stopping.clone();
        self.children.spawn(async move {
            tokio::select! {
                () = peer.closed() => {}
                () = stopping.cancelled() => {}
            }
            match process.shutdown().await {
                Ok(how) => tracing::debug!(?how, "the session ended; its server stopped"),
                Err(e) => tracing::warn!("stopping a server: {e}"),
            }
        });
        dispatcher
    }

    /// A request without a session goes to the shared child, under a number of the proxy's
    /// (the ids of different clients may be the same); its answer gets its id back.
    fn connect_stateless(&self, sink: Arc<dyn FrameSink>, version: ProtocolVersion) -> Dispatcher {
        let service: Arc<dyn Service> = match self.shared() {
            Ok(link) => Arc::new(Forward { link }),
            Err(e) => Arc::new(Refuse(format!("the proxy could not start the server: {e}"))),
        };
        let dispatcher = Peer::driven(sink, service, PeerConfig::default());
        dispatcher.peer().set_protocol_version(version);
        dispatcher
    }
}

/// The way to one child: its stdin, and the answers awaited from it.
struct Link {
    stdin: tokio::sync::Mutex<ChildStdinWrite>,
    /// By the id the child was sent.
    pending: Mutex<HashMap<RequestId, Pending>>,
    /// Whether requests go under numbers of the proxy (the shared child), not their own ids.
    renumber: bool,
    next: std::sync::atomic::AtomicI64,
    /// Set when the child's stdout ended.
    ended: flag::Flag,
}

/// A request of the client the child has yet to answer.
struct Pending {
    answer: tokio::sync::oneshot::Sender<Bytes>,
    /// Its progress token (as JSON text), if it asked for progress.
    progress_token: Option<String>,
    /// The connection of the request, related to it: its stream carries what belongs to it.
    peer: Peer,
    /// The id the client gave it.
    original: RequestId,
    /// Whether it is `subscriptions/listen` (2026-07-28), which lasts as long as the client
    /// listens: the stream of notifications that belong to no call.
    listen: bool,
}

/// A flag to wait for.
mod flag {
    /// Set once; waited for.
    #[derive(Default)]
    pub(super) struct Flag {
        set: std::sync::atomic::AtomicBool,
        notify: tokio::sync::Notify,
    }

    impl Flag {
        pub(super) fn set(&self) {
            self.set.store(true, std::sync::atomic::Ordering::Release);
            self.notify.notify_waiters();
        }

        pub(super) fn is_set(&self) -> bool {
            self.set.load(std::sync::atomic::Ordering::Acquire)
        }

        pub(super) async fn wait(&self) {
            loop {
                let notified = self.notify.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if self.is_set() {
                    return;
                }
                notified.await;
            }
        }
    }
}

impl Link {
    async fn send(&self, frame: Bytes) -> bool {
        self.stdin.lock().await.write(&[Outbound::from(frame)]).await.is_ok()
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Pending>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The connection a message of the child belongs to, as far as the proxy can tell: a
    /// progress notification's request by its token; anything else's when only one call is
    /// running, else the one `subscriptions/listen` (2026-07-28).
    fn related(&self, method: &str, params: Option<&RawValue>) -> Option<Peer> {
        let pending = self.pending();
        if method == "notifications/progress" {
            let token = progress_token(params?)?;
            return pending.values().find(|p| p.progress_token.as_deref() == Some(&token)).map(|p| p.peer.clone());
        }
        let only = |listen: bool| {
            let mut matching = pending.values().filter(|p| p.listen == listen);
            match (matching.next(), matching.next()) {
                (Some(one), None) => Some(one.peer.clone()),
                _ => None,
            }
        };
        only(false).or_else(|| only(true))
    }
}

impl Link {
    /// A notification of a subscription (2026-07-28: its `_meta` names the `subscriptions/listen`
    /// request): the connection of that request, and the frame (for the shared child, with the
    /// client's id of the request in place of the proxy's number).
    fn subscription(&self, frame: &Bytes, params: Option<&RawValue>) -> Option<(Peer, Bytes)> {
        let params = params?;
        if !params.get().contains(mcp_types::meta::SUBSCRIPTION_ID) {
            return None;
        }
        let mut value: serde_json::Value = serde_json::from_slice(frame).ok()?;
        let slot = value.get_mut("params")?.get_mut("_meta")?.get_mut(mcp_types::meta::SUBSCRIPTION_ID)?;
        let sent: RequestId = serde_json::from_value(slot.clone()).ok()?;
        let (peer, original) = {
            let pending = self.pending();
            let p = pending.get(&sent)?;
            (p.peer.clone(), p.original.clone())
        };
        if !self.renumber {
            return Some((peer, frame.clone()));
        }
        *slot = serde_json::to_value(&original).ok()?;
        Some((peer, serde_json::to_vec(&value).ok()?.into()))
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
            let sent = match link.renumber {
                true => RequestId::Integer(link.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
                false => request.id.clone(),
            };
            let raw = request.params.as_deref();
            let params = raw.as_ref().map(|p| p as &dyn message::Body);
            let frame = message::encode_request(&sent, &request.method, params)
                .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
            let (tx, rx) = tokio::sync::oneshot::channel();
            {
                let mut pending = link.pending();
                if pending.len() >= MAX_PENDING {
                    return Err(ErrorObject::internal_error("too many requests in flight"));
                }
                let progress_token = raw.and_then(progress_token);
                let listen = request.method == "subscriptions/listen";
                let peer = ctx.peer().clone();
                let original = request.id.clone();
                pending.insert(sent.clone(), Pending { answer: tx, progress_token, peer, original, listen });
            }
            if !link.send(frame).await {
                link.pending().remove(&sent);
                return Err(ErrorObject::internal_error("the server process is gone"));
            }
            tokio::select! {
                answer = rx => {
                    let answer = answer.map_err(|_| ErrorObject::internal_error("the server process is gone"))?;
                    if request.method == "initialize" {
                        negotiated(&answer, ctx.peer());
                    }
                    Ok(if link.renumber { with_id(answer, &request.id) } else { answer })
                }
                () = ctx.cancellation().cancelled() => {
                    link.pending().remove(&sent);
                    let params = serde_json::json!({"requestId": sent, "reason": "cancelled by the client"});
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

/// An answer of the shared child, given the id the client sent (re-encoded).
fn with_id(answer: Bytes, id: &RequestId) -> Bytes {
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&answer) else { return answer };
    value["id"] = serde_json::to_value(id).unwrap_or_default();
    serde_json::to_vec(&value).map(Bytes::from).unwrap_or(answer)
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

/// Copies what the child writes to the clients until its stdout ends; then ends the session
/// (`session`: the connection of a session's own child; `None` for the shared child).
async fn from_child(mut read: impl TransportRead, link: Arc<Link>, session: Option<Peer>) {
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
            // A notification: to its request's stream, else the session's, as it is.
            (Some(method), None) => match link.subscription(&frame, probe.params) {
                Some((to, frame)) => {
                    let _ = to.send_frame(frame).await;
                }
                None => match link.related(method, probe.params).or_else(|| session.clone()) {
                    Some(to) => {
                        if to.send_frame(frame.clone()).await.is_err() && session.is_some() {
                            break;
                        }
                    }
                    None => tracing::debug!(method, "a notification of the shared server for no request; dropped"),
                },
            },
            // A request of the child: made to the client, answered under the child's id.
            (Some(method), Some(id)) => {
                let to = link.related(method, None).or_else(|| session.clone());
                tokio::spawn(ask_client(to, method.to_owned(), probe.params.map(|p| p.to_owned()), id, link.clone()));
            }
        }
    }
    tracing::debug!("the server's stdout ended");
    link.ended.set();
    link.pending().clear();
    if let Some(session) = session {
        session.close();
    }
}

/// Makes a request of the child to the client (through `to`, the connection it belongs to),
/// and writes the answer back to the child under the child's `id`.
async fn ask_client(to: Option<Peer>, method: String, params: Option<Box<RawValue>>, id: RequestId, link: Arc<Link>) {
    let answer = match &to {
        Some(peer) => {
            let raw = params.as_deref();
            let params = raw.as_ref().map(|p| p as &dyn message::Body);
            peer.request_raw(&method, params, CallOptions::default()).await
        }
        None => Err(CallError::Remote(ErrorObject::internal_error("no client to ask: no request is running"))),
    };
    let frame = match answer {
        Ok(result) => message::encode_result(&id, &&*result).ok(),
        Err(CallError::Remote(error)) => Some(message::encode_error(Some(&id), &error)),
        Err(e) => Some(message::encode_error(Some(&id), &ErrorObject::internal_error(e.to_string()))),
    };
    if let Some(frame) = frame {
        link.send(frame).await;
    }
}
