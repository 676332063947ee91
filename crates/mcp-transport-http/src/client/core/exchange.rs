//! The HTTP of the client transports: requests with the session's headers, the auth
//! provider's `Authorization` and its answers to challenges, and what an error status means
//! (a JSON-RPC error the server sent, an expired session, HTTP's own).

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderValue, Method, StatusCode};
use mcp_types::ErrorObject;
use serde::Deserialize;
use tracing::debug;
use url::Url;

use super::inbound::Failure;
use super::{Core, Snapshot};
use crate::client::auth::Unauthorized;
use crate::client::error::{HttpErrorKind, HttpRequestError};
use crate::headers::{APPLICATION_JSON, LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, TEXT_EVENT_STREAM};

/// How many times one request is sent again after the auth provider answered a challenge:
/// a 401, then a step-up 403, and once more.
const MAX_AUTH_TRIES: usize = 2;

/// The header a server hands its DPoP nonce in (RFC 9449 §8, §9).
const DPOP_NONCE: &str = "dpop-nonce";

/// Whether a `WWW-Authenticate` value is a `Bearer` challenge for more scopes.
fn is_insufficient_scope(value: &HeaderValue) -> bool {
    value.to_str().is_ok_and(|v| v.to_ascii_lowercase().contains("insufficient_scope"))
}

/// What a POST accepts back.
pub(super) const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// How much of an error body goes into an error message.
pub(super) const ERROR_BODY_LIMIT: usize = 2048;
/// How much of an error body is read to find a JSON-RPC error in it.
pub(super) const ERROR_JSON_LIMIT: usize = 64 * 1024;

pub(super) fn media_type(response: &reqwest::Response) -> Option<String> {
    let value = response.headers().get(CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
}

pub(super) fn is_event_stream(response: &reqwest::Response) -> bool {
    media_type(response).as_deref() == Some(TEXT_EVENT_STREAM)
}

/// The start of a body, as text, for error messages (never waits long).
pub(super) async fn body_text(response: reqwest::Response, wait: Duration) -> String {
    body_text_limited(response, wait, ERROR_BODY_LIMIT).await
}

/// At most `limit` bytes of a body, as text (never waits long).
pub(super) async fn body_text_limited(mut response: reqwest::Response, wait: Duration, limit: usize) -> String {
    let read = async {
        let mut buf = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            buf.extend_from_slice(&chunk);
            if buf.len() >= limit {
                break;
            }
        }
        buf
    };
    let buf = tokio::time::timeout(wait, read).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&buf[..buf.len().min(limit)]);
    text.trim().to_owned()
}

/// The first `limit` bytes of `text` (at a character boundary).
pub(super) fn truncate(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The error of a body that is a JSON-RPC error response.
pub(super) fn jsonrpc_error(body: &str) -> Option<ErrorObject> {
    #[derive(Deserialize)]
    struct ErrorResponse {
        error: ErrorObject,
    }
    serde_json::from_str::<ErrorResponse>(body).ok().map(|r| r.error)
}

impl Core {
    pub(super) fn request(&self, method: Method, url: &Url, snap: &Snapshot) -> reqwest::RequestBuilder {
        let mut rb = self.client.request(method, url.clone()).headers(self.config.headers.clone());
        if !snap.sse
            && let Some(s) = &snap.session_id
        {
            rb = rb.header(MCP_SESSION_ID, s.clone());
        }
        if let Some(v) = &snap.protocol_version {
            rb = rb.header(MCP_PROTOCOL_VERSION, v.clone());
        }
        for (name, value) in &snap.extra {
            rb = rb.header(name.clone(), value.clone());
        }
        rb
    }

    /// Sends a request with the auth provider's `Authorization`; on a 401, or a 403 that asks
    /// for more scopes (`insufficient_scope`), the provider may ask for another try, at most
    /// [`MAX_AUTH_TRIES`] times.
    pub(super) async fn send(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, reqwest::Error> {
        self.send_answering(build, true).await
    }

    /// [`Self::send`], which with `answer_challenges` false sends the provider's current
    /// `Authorization` and takes a 401 as the answer: what ending a session sends must not
    /// start an authorization (after a logout, it would undo it).
    pub(super) async fn send_answering(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
        answer_challenges: bool,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let mut tries = 0;
        loop {
            let response = match &self.config.auth {
                Some(auth) => {
                    // The provider's headers may be bound to the request (a DPoP proof).
                    let (client, request) = build().build_split();
                    let mut request = request?;
                    let headers = auth.request_headers(request.method(), request.url()).await;
                    request.headers_mut().extend(headers);
                    let response = client.execute(request).await?;
                    auth.on_response(response.url(), response.headers());
                    response
                }
                None => build().send().await?,
            };
            let status = response.status();
            let challenge = response.headers().get(WWW_AUTHENTICATE).cloned();
            let asks = status == StatusCode::UNAUTHORIZED
                || (status == StatusCode::FORBIDDEN && challenge.as_ref().is_some_and(is_insufficient_scope));
            if asks
                && answer_challenges
                && tries < MAX_AUTH_TRIES
                && let Some(auth) = &self.config.auth
            {
                let dpop_nonce = response.headers().get(DPOP_NONCE).cloned();
                let challenge =
                    Unauthorized { url: response.url().clone(), status, www_authenticate: challenge, dpop_nonce };
                if auth.on_unauthorized(challenge).await {
                    tries += 1;
                    continue;
                }
            }
            return Ok(response);
        }
    }

    pub(super) async fn post(
        &self,
        url: &Url,
        snap: &Snapshot,
        frame: &Bytes,
    ) -> Result<reqwest::Response, reqwest::Error> {
        self.send(|| {
            self.request(Method::POST, url, snap)
                .header(ACCEPT, ACCEPT_BOTH)
                .header(CONTENT_TYPE, APPLICATION_JSON)
                .body(frame.clone())
        })
        .await
    }

    /// Opens an SSE stream with GET (resuming after `last_event_id`), waiting at most the
    /// HTTP timeout for its headers.
    pub(super) async fn get(
        &self,
        url: &Url,
        snap: &Snapshot,
        last_event_id: Option<&str>,
    ) -> Result<reqwest::Response, String> {
        let last = last_event_id.and_then(|id| HeaderValue::from_str(id).ok());
        let send = self.send(|| {
            let rb = self.request(Method::GET, url, snap).header(ACCEPT, TEXT_EVENT_STREAM);
            match &last {
                Some(id) => rb.header(LAST_EVENT_ID, id.clone()),
                None => rb,
            }
        });
        match tokio::time::timeout(self.config.http_timeout, send).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(format!("HTTP request failed: {e}")),
            Err(_) => Err(format!("no answer within {:?}", self.config.http_timeout)),
        }
    }

    /// The failure for an error status: a JSON-RPC error in the body of a 4xx answer to a
    /// stateless request (or one whose code the client named final) as it came, else HTTP's,
    /// from the status and the body text.
    pub(super) async fn status_error(&self, response: reqwest::Response, snap: &Snapshot, what: &str) -> Failure {
        let status = response.status();
        let challenge = response.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = body_text_limited(response, self.config.http_timeout, ERROR_JSON_LIMIT).await;
        if status.is_client_error()
            && !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
            && let Some(error) = jsonrpc_error(&body)
            && (snap.stateless || snap.final_errors.contains(&error.code))
        {
            debug!(%status, code = error.code, "the server answered {what} with a JSON-RPC error");
            return Failure::Remote(error);
        }
        let body = truncate(&body, ERROR_BODY_LIMIT);
        let body = if body.is_empty() { String::new() } else { format!(": {body}") };
        let error = if status == StatusCode::NOT_FOUND && snap.session_id.is_some() && !snap.sse {
            self.expire(snap.generation);
            HttpRequestError::new(
                HttpErrorKind::SessionExpired,
                Some(status),
                format!(
                    "MCP session expired: the server answered {what} with HTTP {status}{body}; initialize a new session"
                ),
            )
        } else if status == StatusCode::UNAUTHORIZED {
            let challenge = challenge.map(|c| format!(" (WWW-Authenticate: {c})")).unwrap_or_default();
            HttpRequestError::new(
                HttpErrorKind::Unauthorized,
                Some(status),
                format!("HTTP {status}: the server requires authorization{challenge}{body}"),
            )
        } else {
            HttpRequestError::new(HttpErrorKind::Status, Some(status), format!("HTTP {status} for {what}{body}"))
                .with_retry_after(retry_after)
        };
        Failure::Http(error)
    }
}
