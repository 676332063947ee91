//! The transports: Streamable HTTP (with the fallback to HTTP+SSE) and HTTP+SSE.

use std::io;
use std::sync::Arc;

use mcp_jsonrpc::transport::{Inbound, Outbound, ReadError, Transport, TransportKind, TransportRead, TransportWrite};
use url::Url;

use super::config::HttpClientConfig;
use super::core::{Core, InboundQueue, Mode};
use super::error::HttpClientError;

/// The Streamable HTTP client transport (2025-03-26 and later), falling back to
/// HTTP+SSE (2024-11-05) when the server refuses the POST of `initialize` with a 4xx other
/// than 401 and 403 (see [`HttpClientConfig::http_sse_fallback`]).
///
/// Nothing is sent before the first frame is written: creating the transport does no I/O.
/// See the [module documentation](super) for what it does with each message.
#[derive(Debug)]
pub struct StreamableHttpTransport {
    core: Arc<Core>,
    rx: InboundQueue,
}

impl StreamableHttpTransport {
    /// A transport for the endpoint of `config`.
    pub fn new(config: HttpClientConfig) -> Result<Self, HttpClientError> {
        let mode = if config.http_sse_fallback { Mode::Detect } else { Mode::Streamable };
        let (core, rx) = Core::new(config, mode)?;
        Ok(StreamableHttpTransport { core, rx })
    }

    /// A handle on the connection's state (session id, negotiated revision), usable after
    /// the transport was handed to a connection.
    pub fn handle(&self) -> HttpClientHandle {
        HttpClientHandle(self.core.clone())
    }
}

impl Transport for StreamableHttpTransport {
    type Read = HttpClientRead;
    type Write = HttpClientWrite;
    const KIND: TransportKind = TransportKind::HttpClient;

    fn split(self) -> (HttpClientRead, HttpClientWrite) {
        (HttpClientRead { rx: self.rx, core: self.core.clone() }, HttpClientWrite { core: self.core })
    }
}

/// The HTTP+SSE client transport (2024-11-05): a GET opens the SSE stream, whose
/// first event, `endpoint`, says where to POST messages; every answer comes on the stream.
/// The connection ends with the stream.
#[derive(Debug)]
pub struct HttpSseTransport {
    /// The connection, in HTTP+SSE mode from the start.
    inner: StreamableHttpTransport,
    endpoint: Url,
}

/// The former name of [`HttpSseTransport`].
#[deprecated(note = "renamed `HttpSseTransport`")]
pub type LegacySseTransport = HttpSseTransport;

impl HttpSseTransport {
    /// Opens the SSE stream at the URL of `config` and waits (at most
    /// [`HttpClientConfig::http_timeout`]) for the `endpoint` event; the endpoint must be on
    /// the same origin.
    pub async fn connect(config: HttpClientConfig) -> Result<Self, HttpClientError> {
        let (core, rx) = Core::new(config, Mode::Detect)?;
        let endpoint = match core.open_sse().await {
            Ok(endpoint) => endpoint,
            Err(e) => {
                core.close().await;
                return Err(e);
            }
        };
        core.set_mode(Mode::Sse { endpoint: endpoint.clone() });
        Ok(HttpSseTransport { inner: StreamableHttpTransport { core, rx }, endpoint })
    }

    /// Where messages are POSTed (from the `endpoint` event).
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// A handle on the connection's state.
    pub fn handle(&self) -> HttpClientHandle {
        self.inner.handle()
    }
}

impl Transport for HttpSseTransport {
    type Read = HttpClientRead;
    type Write = HttpClientWrite;
    const KIND: TransportKind = TransportKind::HttpClient;

    fn split(self) -> (HttpClientRead, HttpClientWrite) {
        self.inner.split()
    }
}

/// The reading half of the HTTP client transports: messages from every stream and body, in
/// the order they arrive.
#[derive(Debug)]
pub struct HttpClientRead {
    rx: InboundQueue,
    core: Arc<Core>,
}

impl TransportRead for HttpClientRead {
    async fn read(&mut self) -> Option<Result<Inbound, ReadError>> {
        tokio::select! {
            biased;
            item = self.rx.recv() => item,
            _ = self.core.ended.cancelled() => self.rx.try_recv().ok(),
        }
    }
}

/// The writing half of the HTTP client transports: one POST per message.
#[derive(Debug)]
pub struct HttpClientWrite {
    core: Arc<Core>,
}

impl TransportWrite for HttpClientWrite {
    async fn write(&mut self, frames: &[Outbound]) -> io::Result<()> {
        for f in frames.iter().filter(|f| !f.frame.is_empty()) {
            self.core.send_frame(f).await?;
        }
        Ok(())
    }

    async fn close(&mut self) -> io::Result<()> {
        self.core.close().await;
        Ok(())
    }
}

/// A view of an HTTP client connection's state, from
/// [`StreamableHttpTransport::handle`] or [`HttpSseTransport::handle`].
#[derive(Debug, Clone)]
pub struct HttpClientHandle(Arc<Core>);

impl HttpClientHandle {
    /// The session id the server issued at `initialize`, if any.
    pub fn session_id(&self) -> Option<String> {
        self.0.session_id()
    }

    /// The protocol revision sent as `MCP-Protocol-Version`: the one the server answered
    /// `initialize` with, or that of the last stateless (2026-07-28) request.
    pub fn protocol_version(&self) -> Option<String> {
        self.0.protocol_version()
    }

    /// Whether the connection speaks the stateless revision (2026-07-28): its requests carry
    /// their revision in `_meta`, and go without a session.
    pub fn is_stateless(&self) -> bool {
        self.0.is_stateless()
    }

    /// Whether the connection speaks HTTP+SSE (explicitly, or after the fallback).
    pub fn is_http_sse(&self) -> bool {
        self.0.is_sse()
    }

    /// The former name of [`HttpClientHandle::is_http_sse`].
    #[deprecated(note = "renamed `is_http_sse`")]
    pub fn is_legacy(&self) -> bool {
        self.is_http_sse()
    }

    /// Whether the server ended the session (HTTP 404) and no new `initialize` was sent yet.
    pub fn is_session_expired(&self) -> bool {
        self.0.is_expired()
    }

    /// Whether the transport was closed.
    pub fn is_closed(&self) -> bool {
        self.0.closing.is_cancelled()
    }

    /// The endpoint URL of the configuration.
    pub fn url(&self) -> &Url {
        &self.0.config.url
    }
}
