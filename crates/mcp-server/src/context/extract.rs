//! Context parameters: values a handler takes from the request it serves rather than from the
//! client's arguments (the [`Context`] itself, a [`Progress`] reporter, the cancellation token,
//! the client [`Peer`], and shared [`State`]).
//!
//! The `#[tool]`, `#[prompt]` and `#[resource]` macros of `mcp-macros` tell a context parameter
//! from an argument by this trait: a parameter whose type implements [`FromContext`] is filled
//! from the request, whatever the type is called at the use site.

use std::sync::Arc;

use mcp_jsonrpc::{CancellationToken, Peer};
use mcp_types::ErrorObject;

use super::Context;
use super::progress::Progress;

/// A value a handler takes from the request context instead of the arguments.
///
/// Implement it for your own types to make them context parameters of macro-defined tools,
/// prompts and resources:
///
/// ```
/// use mcp_server::{Context, FromContext};
/// use mcp_types::ErrorObject;
///
/// /// The name of the client, as it introduced itself.
/// struct ClientName(String);
///
/// impl FromContext for ClientName {
///     fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
///         Ok(ClientName(ctx.client_info().map(|i| i.name).unwrap_or_default()))
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a context parameter type",
    label = "not an argument and not taken from the request context",
    note = "context parameters are `Context`, `Progress`, `CancellationToken`, `Peer`, `State<T>`, \
            or types that implement `FromContext`"
)]
pub trait FromContext: Sized {
    /// Takes the value from the context of the request being handled. An error fails the
    /// request with a JSON-RPC error.
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject>;
}

impl FromContext for Context {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(ctx.clone())
    }
}

impl FromContext for CancellationToken {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(ctx.cancellation().clone())
    }
}

impl FromContext for Peer {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(ctx.peer().clone())
    }
}

impl FromContext for Progress {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(ctx.progress_reporter())
    }
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        ctx.state::<T>().map(State).ok_or_else(|| {
            ErrorObject::internal_error(format!(
                "no shared state of type `{}`: register it with `ServerBuilder::state`",
                std::any::type_name::<T>()
            ))
        })
    }
}

/// Shared state of type `T`, registered once with
/// [`ServerBuilder::state`](crate::ServerBuilder::state) and handed to every handler that
/// asks for it.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use mcp_server::{Context, FromContext, Server, State};
///
/// #[derive(Default)]
/// struct Counter(AtomicU64);
///
/// fn bump(counter: State<Counter>) -> u64 {
///     counter.0.fetch_add(1, Ordering::Relaxed) + 1
/// }
///
/// let server = Server::builder("counter", "1.0").state(Counter::default()).build().unwrap();
/// # let _ = (server, bump);
/// ```
#[derive(Debug)]
pub struct State<T>(Arc<T>);

impl<T> State<T> {
    /// The shared value itself.
    pub fn into_arc(self) -> Arc<T> {
        self.0
    }
}

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T> std::ops::Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
