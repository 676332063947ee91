//! JSON-RPC 2.0 for the Model Context Protocol: the envelope, the [`Transport`] trait, and the
//! peer engine that both servers and clients run on.
//!
//! - [`message`]: parsing frames into requests, notifications and responses (params and
//!   results kept raw, to be decoded once into their target types), encoding frames.
//! - [`transport`]: the [`Transport`] trait (split into a reading and a writing half) and an
//!   in-memory transport for tests.
//! - [`peer`]: the engine. [`Peer::spawn`] runs a connection; the [`Peer`] handle calls typed
//!   methods (`peer.request::<CallToolRequest>(..)`), sends notifications and closes.
//! - [`router`]: a [`Service`] that dispatches requests to typed handlers by method.
//!
//! ```
//! use std::sync::Arc;
//! use mcp_jsonrpc::{CallOptions, Peer, PeerConfig, Router, transport::memory};
//! use mcp_types::{EmptyResult, PingRequest, SetLevelRequest};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let (a, b) = memory(64);
//! let server = Router::new().request::<SetLevelRequest, _, _>(|params, _ctx| async move {
//!     assert_eq!(params.level.as_str(), "debug");
//!     Ok(EmptyResult::default())
//! });
//! let _server = Peer::spawn(a, Arc::new(server), PeerConfig::default());
//! let client = Peer::spawn(b, Arc::new(Router::new()), PeerConfig::default());
//!
//! let params = serde_json::from_value(serde_json::json!({"level": "debug"})).unwrap();
//! client.request::<SetLevelRequest>(params, CallOptions::default()).await.unwrap();
//! client.request::<PingRequest>(Default::default(), CallOptions::default()).await.unwrap();
//! # });
//! ```

// Internal to the SDK: the erased handlers of custom methods, for `mcp-server` and
// `mcp-client`. Not part of the public API; it may change in any release.
#[doc(hidden)]
pub mod custom;
pub mod message;
pub mod peer;
// Internal to the SDK: `mcp-server` and `mcp-transport-http` read request params through it.
// Not part of the public API; it may change in any release.
#[doc(hidden)]
pub mod raw;
pub mod router;
// Internal to the SDK: the poison-tolerant lock every crate of it uses. Not public API.
#[doc(hidden)]
pub mod sync;
pub mod transport;

pub use mcp_types::{ErrorCode, ErrorObject, RequestId};
pub use peer::{
    BoxFuture, CallError, CallOptions, Dispatcher, FrameSink, NoService, Peer, PeerConfig, ProgressCallback,
    ProgressRegistration, Reply, RequestContext, Service,
};
// Internal to the SDK (`mcp-server` reports a handler's panic with it); not public API.
#[doc(hidden)]
pub use peer::panic_message;
pub use router::Router;
pub use tokio_util::sync::CancellationToken;
pub use transport::{
    Attachment, FrameHints, FrameKind, Inbound, Outbound, Route, Transport, TransportError, TransportKind,
    TransportRead, TransportWrite,
};
