//! `tower` layers as middleware (feature `tower`): the chain seen as a
//! `Service<`[`Chained`]`>`, so that `tower::timeout::TimeoutLayer`,
//! `tower::limit::ConcurrencyLimitLayer` and the like wrap the rest of it.
//!
//! The stack is built once ([`from_tower`]), so state a layer's service keeps (a concurrency
//! limit's semaphore) is shared by every request; each request uses a clone of it (a service
//! that must be ready, `poll_ready`, before it is called, as `tower` asks). Its errors become
//! the request's error: a `tower` timeout -32001 (request timeout), any other -32603.

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use mcp_jsonrpc::{ErrorObject, Reply};
use mcp_types::ErrorCode;
use tower::{BoxError, Layer, Service};

use super::{McpRequest, Middleware, Next};

/// A request and the rest of the chain after the `tower` layers: what their services serve.
#[derive(Debug)]
pub struct Chained<'a> {
    /// The request (a `tower` layer may read it; the chain serves it as it is).
    pub request: McpRequest<'a>,
    next: Next<'a>,
}

/// The innermost service of a `tower` stack: the rest of the chain.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunNext {
    _private: (),
}

impl<'a> Service<Chained<'a>> for RunNext {
    type Response = Reply;
    type Error = Infallible;
    type Future = BoxFuture<'a, Result<Reply, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, chained: Chained<'a>) -> Self::Future {
        chained.next.run(chained.request).map(Ok).boxed()
    }
}

/// A `tower` stack as middleware: see [`from_tower`].
#[derive(Debug, Clone)]
pub struct Tower<S> {
    service: S,
}

/// `layer` (a `tower::Layer`, or a `tower::ServiceBuilder` of several) as middleware.
///
/// ```
/// use std::time::Duration;
/// use mcp_server::Server;
/// use mcp_server::middleware::tower::from_tower;
///
/// let server = Server::builder("demo", "1.0")
///     .middleware(from_tower(tower::timeout::TimeoutLayer::new(Duration::from_secs(30))))
///     .middleware(from_tower(tower::limit::ConcurrencyLimitLayer::new(64)))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
pub fn from_tower<L: Layer<RunNext>>(layer: L) -> Tower<L::Service> {
    Tower { service: layer.layer(RunNext::default()) }
}

/// The request's error for a `tower` error.
fn to_error(e: BoxError) -> ErrorObject {
    if e.is::<tower::timeout::error::Elapsed>() {
        return ErrorObject::new(ErrorCode::REQUEST_TIMEOUT.code(), "request timed out");
    }
    ErrorObject::internal_error(e)
}

impl<S> Middleware for Tower<S>
where
    S: for<'a> Service<Chained<'a>, Response = Reply> + Clone + Send + Sync + 'static,
    for<'a> <S as Service<Chained<'a>>>::Future: Send,
    for<'a> <S as Service<Chained<'a>>>::Error: Into<BoxError>,
{
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        let mut service = self.service.clone();
        Box::pin(async move {
            std::future::poll_fn(|cx| Service::<Chained<'a>>::poll_ready(&mut service, cx))
                .await
                .map_err(|e| to_error(e.into()))?;
            service.call(Chained { request: req, next }).await.map_err(|e| to_error(e.into()))?
        })
    }
}
