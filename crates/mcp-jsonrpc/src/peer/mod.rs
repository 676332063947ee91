//! The peer engine: one for both server and client roles.
//!
//! [`Peer::spawn`] runs a connection over a [`Transport`]: a reader task parses frames and
//! dispatches them (requests to the [`Service`] concurrently, responses to the calls waiting
//! for them, cancellation and progress to their requests), and a writer task sends queued
//! frames in batches. The returned [`Peer`] handle makes calls and sends notifications.
//!
//! [`Peer::driven`] runs a connection with no tasks of its own, for transports that receive
//! each message in a task they already have (an HTTP request handler): the transport hands
//! every parsed message to [`Dispatcher::dispatch`], and the engine delivers what it sends to a
//! [`FrameSink`] directly. An idle driven connection costs memory only: no task, no queue.
//!
//! Rules it keeps:
//! - outgoing ids are integers from a counter: never reused within a connection;
//! - `ping` is answered by the engine (but for a 2026-07-28 request, which has no `ping`: it
//!   goes to the service);
//! - `notifications/cancelled` cancels the handler (its [`CancellationToken`] fires, its future
//!   is dropped) and no response is sent; `initialize` is never cancelled;
//! - dropping the future of an outgoing call, or its timeout, sends `notifications/cancelled`;
//! - progress notifications reach the caller's callback by token, reset the call's timeout, and
//!   are dropped once the call completed;
//! - at most [`PeerConfig::max_concurrent_requests`] incoming requests run at once (more are
//!   refused with an error), and at most [`PeerConfig::outgoing_capacity`] frames wait to be
//!   written (senders wait: backpressure);
//! - a panic in a handler becomes an internal-error response;
//! - when the connection ends, pending calls fail with [`CallError::Closed`] and running
//!   handlers get [`PeerConfig::shutdown_grace`] to finish before they are cancelled.
//!
//! [`Transport`]: crate::transport::Transport
//! [`CancellationToken`]: tokio_util::sync::CancellationToken

// The folder, lowest first (each file uses only those before it): `config.rs` and
// `error.rs` (settings, `CallError`), `shared.rs` (a connection's state and the way frames
// leave), `handle.rs` (`Peer`), `service.rs` (`Service`, `RequestContext`), `call.rs`
// (outgoing calls: correlation, timeouts, cancellation, progress), `dispatch.rs` (what
// arrives), then the two ways to run a connection: `spawned.rs` (`Peer::spawn`: reader and
// writer tasks) and `driven.rs` (`Peer::driven`, `Dispatcher`).

mod call;
mod config;
mod dispatch;
mod driven;
mod error;
pub(crate) mod handle;
pub(crate) mod service;
mod shared;
mod spawned;

pub use call::ProgressRegistration;
pub use config::{CallOptions, IdCallback, PeerConfig, ProgressCallback};
pub use dispatch::panic_message;
pub use driven::Dispatcher;
pub use error::CallError;
pub use handle::Peer;
pub use service::{BoxFuture, NoService, Reply, RequestContext, Service};
pub use shared::FrameSink;
