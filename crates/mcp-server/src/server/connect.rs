//! Serving connections: over any transport, stdio (feature `stdio`), with or without the
//! handshake, until the connection ends or a signal comes; each connection's session is
//! registered to hear of changes.

use mcp_jsonrpc::sync::MutexExt as _;
use std::sync::Arc;

use mcp_jsonrpc::{Peer, Transport};

use super::Server;
use crate::context::session::SessionState;
use crate::serve::session::Session;

impl Server {
    /// Serves one connection until it ends.
    pub async fn serve<T: Transport>(&self, transport: T) {
        self.connect(transport).closed().await;
    }

    /// Serves this process's stdin and stdout until stdin closes (feature `stdio`);
    /// [`Server::serve_stdio_until`] also stops on a signal.
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio(&self) {
        self.serve(mcp_transport_stdio::StdioTransport::new()).await;
    }

    /// Serves one connection until it ends or `signal` completes. On the signal the server
    /// stops reading; requests in flight get the peer's
    /// [`shutdown_grace`](mcp_jsonrpc::PeerConfig::shutdown_grace) to finish (their responses
    /// are written), those still running then are cancelled, and it returns once the
    /// connection is closed.
    ///
    /// ```no_run
    /// # async fn run(server: mcp_server::Server, transport: impl mcp_jsonrpc::Transport) {
    /// server.serve_until(transport, mcp_server::shutdown_signal()).await;
    /// # }
    /// ```
    pub async fn serve_until<T: Transport>(&self, transport: T, signal: impl std::future::Future<Output = ()>) {
        let peer = self.connect(transport);
        tokio::select! {
            () = peer.closed() => return,
            () = signal => {}
        }
        tracing::info!("shutting down: finishing the requests in flight");
        peer.close();
        peer.closed().await;
    }

    /// Serves stdin and stdout until stdin closes or `signal` completes (feature `stdio`); on
    /// the signal, as [`Server::serve_until`] does.
    ///
    /// ```no_run
    /// # async fn run(server: mcp_server::Server) {
    /// server.serve_stdio_until(mcp_server::shutdown_signal()).await;
    /// # }
    /// ```
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio_until(&self, signal: impl std::future::Future<Output = ()>) {
        self.serve_until(mcp_transport_stdio::StdioTransport::new(), signal).await;
    }

    /// Starts serving one connection and returns its handle at once.
    pub fn connect<T: Transport>(&self, transport: T) -> Peer {
        self.connect_with(transport, SessionState::new(), None, self.shared.peer_config.clone())
    }

    /// Serves one connection without the handshake, as for a client that negotiated
    /// `version` before (stateless HTTP serves each POST so). The client's capabilities are
    /// unknown: sampling, elicitation and roots calls fail with `NotSupported`.
    ///
    /// Such a connection usually carries one request, so its handler is polled where the
    /// request is read and spawned only if it has to wait (unless the server's
    /// [`PeerConfig::inline_handlers`](mcp_jsonrpc::PeerConfig::inline_handlers) says otherwise).
    pub fn connect_preinitialized<T: Transport>(&self, transport: T, version: mcp_types::ProtocolVersion) -> Peer {
        let mut config = self.shared.peer_config.clone();
        config.inline_handlers.get_or_insert(true);
        self.connect_with(transport, SessionState::preinitialized(), Some(version), config)
    }

    fn connect_with<T: Transport>(
        &self,
        transport: T,
        state: SessionState,
        version: Option<mcp_types::ProtocolVersion>,
        config: mcp_jsonrpc::PeerConfig,
    ) -> Peer {
        let (state, service) = self.new_session(state, true);
        let peer = Peer::spawn(transport, service, config);
        if let Some(version) = version {
            peer.set_protocol_version(version);
        }
        self.register(&state, &peer, true);
        peer
    }

    /// A new connection's state, and the service that serves it.
    /// `counted`: a session that counts among the live ones (`mcp_sessions`), not a stateless
    /// POST's.
    pub(crate) fn new_session(
        &self,
        state: SessionState,
        counted: bool,
    ) -> (Arc<SessionState>, Arc<dyn mcp_jsonrpc::Service>) {
        let state = Arc::new(state);
        (state.clone(), Arc::new(Session::new(self.shared.clone(), state, counted)))
    }

    /// Gives a connection's state its peer; `live`: it hears of changes (list_changed and
    /// resource updates) from now on.
    pub(crate) fn register(&self, state: &Arc<SessionState>, peer: &Peer, live: bool) {
        let _ = state.peer.set(peer.clone());
        if !live {
            return;
        }
        if self.shared.bus.fans_out() {
            self.start_relay();
        }
        let mut sessions = self.shared.sessions.lock_unpoisoned();
        // Forget the ended ones before the list would grow: amortized, not on every connect.
        if sessions.len() == sessions.capacity() {
            sessions.retain(|s| s.upgrade().is_some_and(|s| s.peer.get().is_some_and(|p| !p.is_closed())));
        }
        sessions.push(Arc::downgrade(state));
    }
}
