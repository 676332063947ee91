//! `tower` layers as client middleware (feature `tower`): the rest of the chain seen as a
//! `Service<`[`Chained`]`>`, so that `tower::timeout::TimeoutLayer`,
//! `tower::limit::ConcurrencyLimitLayer` and the like wrap it.
//!
//! The stack is built once ([`from_tower`]), so state a layer's service keeps (a concurrency
//! limit's semaphore) is shared by every request of the client; each request uses a clone of
//! it, made ready (`poll_ready`) before it is called, as `tower` asks. The service answers the
//! request's result as JSON, or its [`ClientError`], which comes back as it was. The stack's
//! own errors become the request's: a `tower` timeout [`ClientError::Timeout`] (the request
//! is cancelled, as a call's own timeout does), any other a [`ClientError::Transport`].

use std::task::{Context, Poll};

use serde_json::Value;
use tower::{BoxError, Layer, Service};

use super::{BoxFuture, ClientMiddleware, ClientRequest, ClientResponse, Next};
use crate::error::ClientError;

/// A request and the rest of the chain after the `tower` layers: what their services serve.
#[derive(Debug)]
pub struct Chained<'a> {
    /// The request (a `tower` layer may read it; the chain sends it as it is).
    pub request: ClientRequest<'a>,
    next: Next<'a>,
}

/// The innermost service of a `tower` stack: the rest of the chain.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunNext {
    _private: (),
}

impl<'a> Service<Chained<'a>> for RunNext {
    type Response = Value;
    type Error = ClientError;
    type Future = BoxFuture<'a, ClientResponse>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ClientError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, chained: Chained<'a>) -> Self::Future {
        chained.next.run(chained.request)
    }
}

/// A `tower` stack as client middleware: see [`from_tower`].
#[derive(Debug, Clone)]
pub struct Tower<S> {
    service: S,
}

/// `layer` (a `tower::Layer`, or a `tower::ServiceBuilder` of several) as client middleware.
///
/// ```
/// use std::time::Duration;
/// use mcp_client::ClientBuilder;
/// use mcp_client::middleware::tower::from_tower;
///
/// let builder = ClientBuilder::new("demo", "1.0")
///     .layer(from_tower(tower::timeout::TimeoutLayer::new(Duration::from_secs(30))))
///     .layer(from_tower(tower::limit::ConcurrencyLimitLayer::new(8)));
/// # let _ = builder;
/// ```
pub fn from_tower<L: Layer<RunNext>>(layer: L) -> Tower<L::Service> {
    Tower { service: layer.layer(RunNext::default()) }
}

/// The request's error for an error of the stack: the chain's own [`ClientError`] as it was.
fn to_error(e: BoxError, method: &str, started: tokio::time::Instant) -> ClientError {
    match e.downcast::<ClientError>() {
        Ok(e) => *e,
        Err(e) if e.is::<tower::timeout::error::Elapsed>() => {
            ClientError::Timeout { method: method.to_owned(), elapsed: started.elapsed() }
        }
        Err(e) => ClientError::Transport(e.into()),
    }
}

impl<S> ClientMiddleware for Tower<S>
where
    S: for<'a> Service<Chained<'a>, Response = Value> + Clone + Send + Sync + 'static,
    for<'a> <S as Service<Chained<'a>>>::Future: Send,
    for<'a> <S as Service<Chained<'a>>>::Error: Into<BoxError>,
{
    fn call<'a>(&'a self, request: ClientRequest<'a>, next: Next<'a>) -> BoxFuture<'a, ClientResponse> {
        let mut service = self.service.clone();
        Box::pin(async move {
            let (method, started) = (request.method(), tokio::time::Instant::now());
            std::future::poll_fn(|cx| Service::<Chained<'a>>::poll_ready(&mut service, cx))
                .await
                .map_err(|e| to_error(e.into(), method, started))?;
            service.call(Chained { request, next }).await.map_err(|e| to_error(e.into(), method, started))
        })
    }
}
