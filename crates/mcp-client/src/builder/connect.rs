//! Connecting: `ClientBuilder::connect`, `connect_http` and `spawn`; the service of the
//! server's requests, the negotiation of the era (`server/discover`, `initialize`, or both), and
//! the [`Client`] it ends in.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_jsonrpc::{Peer, Transport, TransportKind};
use mcp_transport_stdio::{ChildCommand, ChildProcess};
use mcp_types::{InitializeRequestParams, InitializeResult};
use tokio::sync::broadcast;

use crate::builder::{ClientBuilder, EraChoice};
use crate::cache::ListCache;
use crate::client::Client;
use crate::connection::discover::{self, DiscoverOutcome, Discovered};
use crate::connection::session::{SessionConnection, handshake};
use crate::connection::stateless::StatelessConnection;
use crate::connection::{Connection, ServerDescription};
use crate::error::ClientError;
use crate::listen::Registry;
use crate::serve::service::{self, ClientService, emitter};
use crate::validate::SchemaChecks;
use crate::wire::event::ServerEvent;
use crate::wire::stateless::{RequestMeta, STATELESS};
use crate::wire::tool_headers::HeaderRules;

/// How connecting failed.
pub(crate) enum ConnectError {
    Error(ClientError),
    /// The server closed the connection on the `server/discover` probe (a child server may be
    /// started again for `initialize`).
    ProbeClosed,
}

impl ConnectError {
    pub(crate) fn into_error(self) -> ClientError {
        match self {
            ConnectError::Error(e) => e,
            ConnectError::ProbeClosed => ClientError::Closed(Some("the server exited on server/discover".to_owned())),
        }
    }
}

impl From<ClientError> for ConnectError {
    fn from(e: ClientError) -> Self {
        ConnectError::Error(e)
    }
}

/// The era the negotiation ended in.
enum Negotiated {
    Session { init: Box<InitializeResult>, params: Box<InitializeRequestParams> },
    Stateless(Box<Discovered>),
}

/// What a connection needs besides the peer, made before the negotiation.
struct Shared {
    events: broadcast::Sender<ServerEvent>,
    cache: Option<Arc<ListCache>>,
    registry: Arc<Registry>,
}

impl ClientBuilder {
    /// Connects over `transport` and negotiates the protocol revision: `server/discover`
    /// first (a 2026-07-28 server), else the `initialize` handshake. If a server refuses
    /// `initialize` with a JSON-RPC error after a probe that failed without saying that it
    /// speaks only session revisions (an error, no answer in time; or no probe, with
    /// [`initialize_first`](Self::initialize_first)), it is asked with `server/discover` once
    /// more, and spoken to in 2026-07-28 if it answers as a 2026-07-28 server.
    pub async fn connect<T: Transport>(self, transport: T) -> Result<Client, ClientError> {
        self.establish(transport, None, false).await.map_err(ConnectError::into_error)
    }

    /// Connects to the MCP endpoint at `url` over Streamable HTTP (falling back to HTTP+SSE
    /// for a 2024-11-05 server) and negotiates the protocol revision.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), mcp_client::ClientError> {
    /// let client = mcp_client::ClientBuilder::new("my-app", "1.0").connect_http("http://127.0.0.1:8080/mcp").await?;
    /// println!("{} speaks {}", client.server_info().name, client.protocol_version());
    /// client.close().await?; // DELETE ends the session
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "http")]
    pub async fn connect_http(self, url: &str) -> Result<Client, ClientError> {
        let config = crate::http::HttpClientConfig::parse(url).map_err(|e| ClientError::Transport(Arc::new(e)))?;
        self.connect_http_with(config).await
    }

    /// Connects over Streamable HTTP with a full configuration (headers, authorization,
    /// timeouts, a reqwest client of your own; see [`crate::http::HttpClientConfig`]) and
    /// negotiates the protocol revision.
    #[cfg(feature = "http")]
    pub async fn connect_http_with(self, config: crate::http::HttpClientConfig) -> Result<Client, ClientError> {
        let transport =
            crate::http::StreamableHttpTransport::new(config).map_err(|e| ClientError::Transport(Arc::new(e)))?;
        let handle = transport.handle();
        let mut client = self.connect(transport).await?;
        client.session_source.http = Some(handle);
        Ok(client)
    }

    /// Runs a server as a child process, connects to it over its stdio, and negotiates the
    /// protocol revision. If the child dies during the handshake, the error carries its exit
    /// status and the tail of its stderr. A server that exits on the `server/discover` probe
    /// (some servers of the session revisions end on any request before `initialize`) is
    /// started once more and spoken to with `initialize`.
    pub async fn spawn(self, command: ChildCommand) -> Result<Client, ClientError> {
        let (transport, child) = ChildProcess::spawn(command.clone())?;
        let respawnable = self.era == EraChoice::Auto;
        let retry = self.clone();
        match self.establish(transport, Some(child), respawnable).await {
            Ok(client) => Ok(client),
            Err(ConnectError::ProbeClosed) => {
                tracing::info!("the server exited on server/discover; starting it again for `initialize`");
                let (transport, child) = ChildProcess::spawn(command)?;
                let retry = retry.session_revisions_only();
                retry.establish(transport, Some(child), false).await.map_err(ConnectError::into_error)
            }
            Err(ConnectError::Error(e)) => Err(e),
        }
    }

    /// Starts the connection over `transport`, negotiates the era and builds the client.
    /// `child` is the server's process, if it was spawned: when negotiation fails it is
    /// stopped (and its exit reported), unless it closed on the probe and is `respawnable`.
    pub(crate) async fn establish<T: Transport>(
        self,
        transport: T,
        child: Option<ChildProcess>,
        respawnable: bool,
    ) -> Result<Client, ConnectError> {
        if let Some(method) = self.custom.refused.clone() {
            return Err(failed(ClientError::ReservedMethod(method).into(), child, false).await);
        }
        let over_http = T::KIND == TransportKind::HttpClient;
        let (events, _) = broadcast::channel(self.events_capacity.max(1));
        let shared = Shared {
            events,
            cache: self.cache_lists.then(|| Arc::new(ListCache::default())),
            registry: Arc::new(Registry::default()),
        };
        let emit = emitter(self.on_event.clone(), shared.events.clone(), shared.cache.clone());
        let service = ClientService {
            router: service::router(&self.handlers),
            registry: shared.registry.clone(),
            emit,
            custom: self.custom.clone(),
        };
        let peer = Peer::spawn(transport, Arc::new(service), self.peer_config.clone());
        let meta = self.request_meta(over_http.then(|| Arc::new(HeaderRules::default())));
        let negotiated = match self.negotiate(&peer, &meta, over_http).await {
            Ok(negotiated) => negotiated,
            Err(e) => {
                peer.close();
                return Err(failed(e, child, respawnable).await);
            }
        };
        let (server, connection) = self.connection(negotiated, meta, &shared);
        let client = Client {
            version: peer.protocol_version(),
            peer,
            server,
            connection,
            events: shared.events,
            child: tokio::sync::Mutex::new(child),
            checks: SchemaChecks::new(self.validate_arguments, self.validate_structured),
            task_progress: Default::default(),
            session_source: Default::default(),
            layers: self.layers.clone().into(),
        };
        if let Some(s) = client.stateless() {
            s.watch_list_changes(&client.peer, &client.server.capabilities).await;
        }
        Ok(client)
    }

    /// What every stateless request carries in its `_meta` (and, over HTTP, the rules of its
    /// headers).
    fn request_meta(&self, header_rules: Option<Arc<HeaderRules>>) -> RequestMeta {
        RequestMeta {
            info: self.info.clone(),
            capabilities: self.capabilities(STATELESS),
            log_level: Mutex::new(None),
            header_rules,
        }
    }

    /// The server's description and the connection of the era negotiated.
    fn connection(
        &self,
        negotiated: Negotiated,
        meta: RequestMeta,
        shared: &Shared,
    ) -> (ServerDescription, Connection) {
        match negotiated {
            Negotiated::Session { init, params } => {
                let server = ServerDescription {
                    info: init.server_info.clone(),
                    capabilities: init.capabilities.clone(),
                    instructions: init.instructions.clone(),
                };
                let session = SessionConnection {
                    init: *init,
                    params: *params,
                    reinitialize: self.reinitialize,
                    generation: AtomicU64::new(0),
                    renewing: tokio::sync::Mutex::new(()),
                };
                (server, Connection::Session(Box::new(session)))
            }
            Negotiated::Stateless(discovered) => {
                let Discovered { result, server_info } = *discovered;
                let server = ServerDescription {
                    info: server_info,
                    capabilities: result.capabilities.clone(),
                    instructions: result.instructions.clone(),
                };
                let stateless = StatelessConnection {
                    discovered: result,
                    meta,
                    handlers: self.handlers.clone(),
                    max_rounds: self.max_input_rounds,
                    cache: shared.cache.clone(),
                    registry: shared.registry.clone(),
                    background: Default::default(),
                    watch_list_changes: self.on_event.is_some(),
                    ack_timeout: self.peer_config.request_timeout.unwrap_or(Duration::from_secs(60)),
                    events_capacity: self.events_capacity.max(1),
                };
                (server, Connection::Stateless(Box::new(stateless)))
            }
        }
    }

    /// Finds the server's era and starts speaking it.
    ///
    /// The probe first (unless session revisions only, or `initialize` first); then
    /// `initialize`. A server that refuses `initialize` with a JSON-RPC error of its own (not
    /// one the HTTP transport makes up from a status), after a probe that did not show a server
    /// of the session revisions only (or no probe), may be a 2026-07-28 server that has no
    /// `initialize` (the probe went unanswered in time, failed transiently, or was not sent):
    /// it is probed once more, without falling back, and if it answers as a 2026-07-28 server
    /// it is spoken to as one; otherwise the error of `initialize` stands.
    async fn negotiate(&self, peer: &Peer, meta: &RequestMeta, over_http: bool) -> Result<Negotiated, ConnectError> {
        // Whether a probe showed a server that knows 2026-07-28 and speaks only session
        // revisions (no use asking it again).
        let mut only_sessions = false;
        if matches!(self.era, EraChoice::Auto | EraChoice::Stateless) {
            peer.set_protocol_version(STATELESS);
            let timeout = (!over_http).then_some(self.discover_timeout);
            let fallback = self.era == EraChoice::Auto;
            match discover::probe(peer, meta, timeout, over_http, fallback).await {
                Ok(DiscoverOutcome::Stateless(discovered)) => return Ok(Negotiated::Stateless(discovered)),
                Ok(DiscoverOutcome::SessionRevisions { why, conclusive }) => {
                    tracing::debug!(reason = %why, "not a 2026-07-28 server; falling back to `initialize`");
                    only_sessions = conclusive;
                }
                Err(ClientError::Closed(_)) if fallback && !over_http => return Err(ConnectError::ProbeClosed),
                Err(e) => return Err(e.into()),
            }
        }
        peer.set_protocol_version(self.version);
        let params =
            InitializeRequestParams::new(self.capabilities(self.version), self.info.clone(), self.version.as_str());
        match handshake(peer, &params).await {
            Ok(init) => Ok(Negotiated::Session { init: Box::new(init), params: Box::new(params) }),
            Err(ClientError::Remote(refusal))
                if matches!(self.era, EraChoice::Auto | EraChoice::InitializeFirst) && !only_sessions =>
            {
                tracing::debug!(error = %refusal, "`initialize` refused; asking with `server/discover`");
                peer.set_protocol_version(STATELESS);
                match discover::probe(peer, meta, None, over_http, false).await {
                    Ok(DiscoverOutcome::Stateless(discovered)) => Ok(Negotiated::Stateless(discovered)),
                    other => {
                        if let Err(e) = other {
                            tracing::debug!(error = %e, "not a 2026-07-28 server either");
                        }
                        peer.set_protocol_version(self.version);
                        Err(ClientError::Remote(refusal).into())
                    }
                }
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// The error of a failed negotiation, once the child server (if any) is stopped: a child that
/// closed its stdout reports its exit status and the tail of its stderr; one that closed on the
/// probe and may be started again is only stopped.
async fn failed(err: ConnectError, child: Option<ChildProcess>, respawnable: bool) -> ConnectError {
    let Some(mut child) = child else { return err };
    if respawnable && matches!(err, ConnectError::ProbeClosed) {
        let _ = child.shutdown().await;
        return err;
    }
    let err = match err {
        ConnectError::Error(ClientError::Closed(_)) | ConnectError::ProbeClosed => {
            let report = match tokio::time::timeout(Duration::from_secs(5), child.wait_with_report()).await {
                Ok(Ok((_, report))) => report,
                _ => format!("`{}` closed its stdout", child.program()),
            };
            ClientError::Closed(Some(report))
        }
        ConnectError::Error(e) => e,
    };
    let _ = child.shutdown().await;
    ConnectError::Error(err)
}
