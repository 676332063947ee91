//! What a handler can do besides computing its result: report progress, log to the client,
//! notice cancellation, and ask the client for a completion (sampling), for input
//! (elicitation) or for its roots.

use std::sync::Arc;

use mcp_jsonrpc::{CallError, CallOptions, CancellationToken, Peer};
use mcp_types::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
    ElicitRequestParams, ElicitResult, Implementation, ListRootsRequest, ListRootsResult, LoggingLevel,
    LoggingMessageNotification, LoggingMessageNotificationParams, ProgressToken, ProtocolVersion, RequestId,
};

use crate::extract::{Progress, StateMap};
use crate::session::SessionState;

/// Why a request to the client failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientRequestError {
    /// The client did not declare the capability the request needs.
    #[error("the client did not declare the `{0}` capability")]
    NotSupported(&'static str),
    /// The call failed (the client's error, a timeout, the connection closed, ...).
    #[error(transparent)]
    Call(#[from] CallError),
}

/// The context of one request, handed to tool, prompt, resource and completion handlers.
#[derive(Clone)]
pub struct Context {
    pub(crate) peer: Peer,
    pub(crate) session: Arc<SessionState>,
    pub(crate) request_id: RequestId,
    pub(crate) cancel: CancellationToken,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) state: Arc<StateMap>,
    pub(crate) attachment: Option<mcp_jsonrpc::Attachment>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("request_id", &self.request_id).finish_non_exhaustive()
    }
}

/// `level` is at least as severe as `threshold`.
pub(crate) fn severity(level: &LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
        LoggingLevel::Other(_) => 1,
    }
}

impl Context {
    /// The id of the request being handled.
    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }

    /// Fires when the client cancels the request (or the connection ends).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The protocol revision of this session.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.peer.protocol_version()
    }

    /// The client's capabilities.
    pub fn client_capabilities(&self) -> ClientCapabilities {
        self.session.client_capabilities()
    }

    /// The client's name and version, as it reported them.
    pub fn client_info(&self) -> Option<Implementation> {
        self.session.client_info()
    }

    /// The connection to the client.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// What the transport attached to the request (see [`mcp_jsonrpc::RequestContext::attachment`]).
    pub fn attachment(&self) -> Option<&mcp_jsonrpc::Attachment> {
        self.attachment.as_ref()
    }

    /// The HTTP request that carried this request, when served over HTTP: its headers and
    /// extensions (what middleware such as authentication put there).
    #[cfg(feature = "http")]
    pub fn http_request(&self) -> Option<&mcp_transport_http::server::RequestInfo> {
        self.attachment.as_ref()?.downcast_ref()
    }

    /// Over HTTP, closes the SSE connection carrying this request's response while the handler
    /// goes on (SSE polling): the client reconnects and resumes. Whether there was one.
    pub async fn close_sse_stream(&self) -> bool {
        #[cfg(feature = "http")]
        if let Some(info) = self.http_request() {
            return info.close_sse_stream().await;
        }
        false
    }

    /// The shared state of type `T` registered with
    /// [`ServerBuilder::state`](crate::ServerBuilder::state), if any.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.state.get(&std::any::TypeId::of::<T>()).cloned().and_then(|s| s.downcast::<T>().ok())
    }

    /// A handle that reports the progress of this request; it can outlive the context.
    pub fn progress_reporter(&self) -> Progress {
        Progress::new(self.peer.clone(), self.progress_token.clone())
    }

    /// Reports progress, if the client asked for it (otherwise does nothing).
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.progress_reporter().report(progress, total, message).await;
    }

    /// Sends a log message to the client, if its level passes the level the client set.
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: serde_json::Value) {
        if !self.session.log_enabled(&level) {
            return;
        }
        let mut params = LoggingMessageNotificationParams::new(data, level);
        params.logger = logger.map(str::to_owned);
        if let Err(e) = self.peer.notify::<LoggingMessageNotification>(params).await {
            tracing::debug!(error = %e, "log notification not sent");
        }
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    pub async fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ClientRequestError> {
        if self.client_capabilities().sampling.is_none() {
            return Err(ClientRequestError::NotSupported("sampling"));
        }
        Ok(self.peer.request::<CreateMessageRequest>(params, self.options()).await?)
    }

    /// Asks the client's user for input (`elicitation/create`, form or URL mode).
    pub async fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult, ClientRequestError> {
        let caps = self.client_capabilities();
        let Some(elicitation) = caps.elicitation else {
            return Err(ClientRequestError::NotSupported("elicitation"));
        };
        if matches!(params, ElicitRequestParams::ElicitRequestURL(_)) && elicitation.url.is_none() {
            return Err(ClientRequestError::NotSupported("elicitation.url"));
        }
        Ok(self.peer.request::<ElicitRequest>(params, self.options()).await?)
    }

    /// Asks the client for its roots (`roots/list`).
    pub async fn list_roots(&self) -> Result<ListRootsResult, ClientRequestError> {
        if self.client_capabilities().roots.is_none() {
            return Err(ClientRequestError::NotSupported("roots"));
        }
        Ok(self.peer.request::<ListRootsRequest>(Default::default(), self.options()).await?)
    }

    /// Requests to the client made on behalf of this request end when it is cancelled.
    fn options(&self) -> CallOptions {
        CallOptions::default().cancel_on(self.cancel.clone())
    }
}
