//! The HTTP+SSE transport (2024-11-05): the one SSE stream, its `endpoint` event, and the
//! messages that come on it.

use std::sync::Arc;

use http::Method;
use http::header::ACCEPT;
use tokio::sync::oneshot;
use tracing::{debug, warn};
use url::Url;

use super::exchange::{body_text, is_event_stream, media_type};
use super::streams::{Cursor, SseBody};
use super::{Core, Snapshot};
use crate::client::error::HttpClientError;
use crate::client::sse::SseEvent;
use crate::headers::TEXT_EVENT_STREAM;

impl Core {
    /// Opens the HTTP+SSE stream at the configured URL and waits for its `endpoint` event.
    pub(crate) async fn open_sse(self: &Arc<Self>) -> Result<Url, HttpClientError> {
        let snap = Snapshot {
            session_id: None,
            protocol_version: None,
            generation: 0,
            sse: true,
            stateless: false,
            extra: Vec::new(),
            final_errors: &[],
        };
        let timeout = self.config.http_timeout;
        let send = self.send(|| self.request(Method::GET, &self.config.url, &snap).header(ACCEPT, TEXT_EVENT_STREAM));
        let response = tokio::time::timeout(timeout, send)
            .await
            .map_err(|_| HttpClientError::Timeout(format!("opening the SSE stream took over {timeout:?}")))?
            .map_err(HttpClientError::Request)?;
        let status = response.status();
        if !status.is_success() {
            return Err(HttpClientError::Status { status, body: body_text(response, timeout).await });
        }
        if !is_event_stream(&response) {
            return Err(HttpClientError::Endpoint(format!(
                "the answer to GET is {:?}, not an event stream",
                media_type(&response).unwrap_or_default()
            )));
        }
        let (tx, rx) = oneshot::channel();
        tokio::spawn(self.clone().run_sse_stream(response, tx));
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(endpoint)) => endpoint,
            Ok(Err(_)) => Err(HttpClientError::Endpoint("the SSE stream ended before the `endpoint` event".to_owned())),
            Err(_) => Err(HttpClientError::Timeout(format!("no `endpoint` event within {timeout:?}"))),
        }
    }

    fn resolve_endpoint(&self, event: &SseEvent) -> Result<Url, HttpClientError> {
        let data = event.data.as_deref().unwrap_or_default();
        let text = String::from_utf8_lossy(data);
        let endpoint = self
            .config
            .url
            .join(text.trim())
            .map_err(|e| HttpClientError::Endpoint(format!("invalid endpoint {text:?}: {e}")))?;
        if endpoint.origin() != self.config.url.origin() {
            return Err(HttpClientError::Endpoint(format!(
                "the endpoint {endpoint} is not on the origin of {}",
                self.config.url
            )));
        }
        Ok(endpoint)
    }

    /// Reads the HTTP+SSE stream: the `endpoint` event, then messages. Its end ends the
    /// connection.
    async fn run_sse_stream(
        self: Arc<Self>,
        response: reqwest::Response,
        endpoint: oneshot::Sender<Result<Url, HttpClientError>>,
    ) {
        let mut body = SseBody::new(response, self.config.max_message_size);
        let mut endpoint = Some(endpoint);
        let mut cursor = Cursor::default();
        loop {
            let next = tokio::select! {
                biased;
                _ = self.closing.cancelled() => return,
                n = body.next() => n,
            };
            match next {
                Ok(Some(event)) if event.event.as_deref() == Some("endpoint") => {
                    if let Some(tx) = endpoint.take() {
                        let _ = tx.send(self.resolve_endpoint(&event));
                    }
                }
                Ok(Some(event)) => {
                    if endpoint.is_some() {
                        debug!("a message before the `endpoint` event");
                    }
                    if !self.on_event(event, &mut cursor).await {
                        return;
                    }
                }
                Ok(None) => {
                    debug!("the HTTP+SSE stream ended");
                    break;
                }
                Err(e) => {
                    warn!(error = %e, "the HTTP+SSE stream broke");
                    break;
                }
            }
        }
        if endpoint.is_none() {
            self.ended.cancel();
        }
    }
}
