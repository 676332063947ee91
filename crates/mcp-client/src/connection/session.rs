//! A connection of a session revision: the `initialize` handshake, and a new session when the
//! server ended the old one.

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_jsonrpc::{CallError, CallOptions, Peer};
use mcp_types::{
    InitializeRequest, InitializeRequestParams, InitializeResult, InitializedNotification, ProtocolVersion,
};
use tracing::Instrument as _;

use crate::error::{ClientError, session_expired};
use crate::trace;
use crate::wire::tool_headers;

/// A connection of a session revision.
pub(crate) struct SessionConnection {
    /// The server's answer to `initialize`.
    pub(crate) init: InitializeResult,
    /// What `initialize` sent, to start a new session with.
    pub(crate) params: InitializeRequestParams,
    /// Whether a call the server refused because it ended the session starts a new one.
    pub(crate) reinitialize: bool,
    /// Counts sessions started after the first.
    pub(crate) generation: AtomicU64,
    /// Held while a new session is started, so that calls failing together start one.
    pub(crate) renewing: tokio::sync::Mutex<()>,
}

impl SessionConnection {
    /// Calls a typed method; a call the server refused because it ended the HTTP session is
    /// sent once more in a new session (unless turned off).
    pub(crate) async fn request<R: mcp_types::Request>(
        &self,
        peer: &Peer,
        params: R::Params,
        options: CallOptions,
    ) -> Result<R::Result, ClientError>
    where
        R::Params: Clone,
    {
        if !self.reinitialize {
            return Ok(peer.request::<R>(params, options).await?);
        }
        // As `renewing` does, with the params owned (not borrowed across the wait: the
        // future is `Send` for params that are `Send` but not `Sync`).
        let generation = self.generation.load(Ordering::Acquire);
        match peer.request::<R>(params.clone(), options.clone()).await {
            Err(CallError::Transport(e)) if session_expired(&e) => {
                tracing::info!(method = R::METHOD, "the server ended the session; starting a new one");
                self.renew(peer, generation).await?;
                Ok(peer.request::<R>(params, options).await?)
            }
            other => Ok(other?),
        }
    }

    /// Sends with `send`; a call the server refused because it ended the HTTP session is sent
    /// once more in a new session (unless turned off).
    pub(crate) async fn renewing<T, F, Fut>(&self, peer: &Peer, method: &str, send: F) -> Result<T, ClientError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, CallError>>,
    {
        if !self.reinitialize {
            return Ok(send().await?);
        }
        let generation = self.generation.load(Ordering::Acquire);
        match send().await {
            Err(CallError::Transport(e)) if session_expired(&e) => {
                tracing::info!(%method, "the server ended the session; starting a new one");
                self.renew(peer, generation).await?;
                Ok(send().await?)
            }
            other => Ok(other?),
        }
    }

    /// Starts a new session unless one was started since `seen`.
    async fn renew(&self, peer: &Peer, seen: u64) -> Result<(), ClientError> {
        let _renewing = self.renewing.lock().await;
        if self.generation.load(Ordering::Acquire) != seen {
            return Ok(());
        }
        self.reinitialize(peer).await?;
        Ok(())
    }

    /// The handshake once more, offering what the first one offered, encoded for it.
    pub(crate) async fn reinitialize(&self, peer: &Peer) -> Result<InitializeResult, ClientError> {
        if let Some(offered) = ProtocolVersion::from_wire(&self.params.protocol_version) {
            peer.set_protocol_version(offered);
        }
        let init = handshake(peer, &self.params).await?;
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(init)
    }
}

/// `initialize`, the revision check, `notifications/initialized`.
pub(crate) async fn handshake(peer: &Peer, params: &InitializeRequestParams) -> Result<InitializeResult, ClientError> {
    let mut options = CallOptions { hints: tool_headers::initialize(), ..Default::default() };
    let offered = ProtocolVersion::from_wire(&params.protocol_version);
    let span = trace::start(
        <InitializeRequest as mcp_types::Request>::METHOD,
        offered.unwrap_or_else(|| peer.protocol_version()),
        &mut options,
    );
    let init = peer.request::<InitializeRequest>(params.clone(), options).instrument(span.clone()).await;
    trace::record_call_outcome(&span, &init);
    let init = init?;
    // The server answers the revision offered or another it supports; a client that offered
    // an older one (pinned to it) does not take a newer one.
    let version = ProtocolVersion::from_wire(&init.protocol_version)
        .filter(|v| !v.is_stateless() && offered.is_none_or(|o| *v <= o))
        .ok_or_else(|| ClientError::UnsupportedVersion(init.protocol_version.clone()))?;
    peer.set_protocol_version(version);
    match tool_headers::initialized() {
        Some(hints) => peer.notify_with_hints::<InitializedNotification>(Default::default(), hints).await?,
        None => peer.notify::<InitializedNotification>(Default::default()).await?,
    }
    Ok(init)
}
