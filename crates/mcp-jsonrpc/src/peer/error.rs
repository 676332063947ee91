//! Why an outgoing call failed ([`CallError`]). Uses nothing of the engine.

use std::time::Duration;

use mcp_types::{ErrorObject, ProtocolVersion};

use crate::transport::TransportError;

/// Why an outgoing call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The other side answered with an error.
    #[error("{0}")]
    Remote(ErrorObject),
    /// No answer in time; a cancellation was sent.
    #[error("request `{method}` timed out after {elapsed:?}")]
    Timeout {
        /// The method called.
        method: String,
        /// How long it waited.
        elapsed: Duration,
    },
    /// The caller cancelled the call; a cancellation was sent.
    #[error("request cancelled")]
    Cancelled,
    /// The connection closed before an answer came.
    #[error("connection closed")]
    Closed,
    /// The transport could not deliver the request or its answer (over HTTP: an error
    /// status, a broken connection, an expired session); [`CallError::transport_error`]
    /// reaches the transport's own error.
    #[error(transparent)]
    Transport(TransportError),
    /// The method is not part of the connection's protocol revision.
    #[error("`{method}` is not part of protocol revision {version}")]
    NotInRevision {
        /// The method.
        method: &'static str,
        /// The connection's revision.
        version: ProtocolVersion,
    },
    /// The params could not be encoded.
    #[error("cannot encode the request's params")]
    Encode(#[source] serde_json::Error),
    /// The answer did not decode into the expected result type.
    #[error("cannot decode the result of `{method}`")]
    Decode {
        /// The method called.
        method: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
}

impl CallError {
    /// The transport's own error, for [`CallError::Transport`] (downcast it to the type the
    /// transport documents).
    pub fn transport_error(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        match self {
            CallError::Transport(e) => Some(&**e),
            _ => None,
        }
    }
}
