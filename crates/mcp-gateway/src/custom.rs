//! Custom methods passed through ([`GatewayBuilder::forward`](crate::GatewayBuilder::forward)):
//! a client's requests of a forwarded method go to its mount over the session's connection, as
//! calls do (its progress passed back, its cancellation passed on), its notifications to the session's open
//! connection to that mount; the mounted server's requests and notifications of a forwarded
//! method go to the client of the session whose connection they came on (its call in flight,
//! else the session itself), as its sampling requests and log messages do.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_client::{Client, ClientBuilder};
use mcp_jsonrpc::Peer;
use mcp_server::{Context, ServerBuilder};
use mcp_types::{ErrorObject, ProgressToken};
use serde_json::Value;

use crate::link::Link;
use crate::upstream::{Upstream, flush};

/// Numbers the progress tokens of the custom requests passed on.
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// A mount as the custom methods see it.
pub(crate) trait CustomMount: Send + Sync + 'static {
    /// Passes the client's request `method` on to the mounted server over the connection of
    /// `ctx`'s gateway session ([`request`]).
    fn request(
        self: Arc<Self>,
        method: String,
        params: Option<Value>,
        ctx: Context,
    ) -> impl Future<Output = Result<Value, ErrorObject>> + Send;
    /// Passes the client's notification `method` on to the mounted server over the
    /// connection of the session on `peer`, if it has one open ([`notify`]).
    fn notify(&self, method: &str, params: Option<Value>, peer: &Peer);
}

/// `server` serving each of `forwarded` (a method, its mount) by passing it on.
pub(crate) fn server<M: CustomMount>(mut server: ServerBuilder, forwarded: &[(String, Arc<M>)]) -> ServerBuilder {
    for (method, mount) in forwarded {
        let (requested, notified) = (mount.clone(), mount.clone());
        let name = method.clone();
        server = server.raw_request_handler(method.clone(), move |params, ctx| {
            requested.clone().request(name.clone(), params, ctx)
        });
        let name = method.clone();
        server =
            server.raw_notification_handler(method.clone(), move |params, peer| notified.notify(&name, params, peer));
    }
    server
}

/// `builder` passing the mounted server's requests and notifications of `methods` to the
/// gateway's client through `link`.
pub(crate) fn client(mut builder: ClientBuilder, methods: &[String], link: &Arc<Link>) -> ClientBuilder {
    for method in methods {
        let (requests, notifications) = (Arc::downgrade(link), Arc::downgrade(link));
        let name = method.clone();
        builder = builder.raw_request_handler(method.clone(), move |params, _rctx| {
            let ctx = requests.upgrade().and_then(|link| link.current());
            let name = name.clone();
            async move {
                let ctx = ctx.ok_or_else(|| ErrorObject::internal_error("the gateway's client is gone"))?;
                ctx.request_raw(&name, params).await.map_err(ErrorObject::from)
            }
        });
        let name = method.clone();
        builder = builder.raw_notification_handler(method.clone(), move |params, _peer| {
            let Some(link) = notifications.upgrade() else { return };
            link.pass_notification(&name, params);
        });
    }
    builder
}

/// Passes the client's request `method` to the mount `prefix` over `upstream`'s connection
/// `client`; its answer (or error) is the request's.
pub(crate) async fn request(
    prefix: &str,
    upstream: &Upstream,
    client: &Client,
    method: &str,
    params: Option<Value>,
    ctx: &Context,
) -> Result<Value, ErrorObject> {
    let _call = upstream.link.enter(ctx);
    let (mut options, progress) = crate::upstream::options(ctx);
    let mut params = params;
    // A raw request carries no progress token by itself: the gateway names one.
    let _route = options.progress.take().and_then(|callback| {
        let token = ProgressToken::String(format!("mcp-gateway-{}", NEXT_TOKEN.fetch_add(1, Ordering::Relaxed)));
        let meta = params.get_or_insert_with(|| Value::Object(Default::default())).as_object_mut()?;
        let meta = meta.entry("_meta").or_insert_with(|| Value::Object(Default::default())).as_object_mut()?;
        meta.insert(mcp_types::meta::PROGRESS_TOKEN.to_owned(), serde_json::to_value(&token).ok()?);
        Some(client.peer().route_progress(token, callback))
    });
    let result = client.request_raw_with(method, params, options).await;
    // The answer goes after the progress, notifications and log messages before it.
    flush(progress).await;
    upstream.link.flushed().await;
    let mut result = result.map_err(|e| upstream.error(prefix, e))?;
    if client.protocol_version().is_stateless() {
        undecorate(&mut result);
    }
    Ok(result)
}

/// Passes the client's notification `method` on to `upstreams` (the connections of the
/// session that sent it to the mount `prefix`), if it has any open.
pub(crate) fn notify(prefix: &str, upstreams: Vec<Arc<Upstream>>, method: &str, params: Option<Value>) {
    if upstreams.is_empty() {
        tracing::debug!(mount = prefix, method, "a custom notification with no connection to pass it on");
        return;
    }
    let method = method.to_owned();
    tokio::spawn(async move {
        for upstream in upstreams {
            let client = upstream.client.lock().await.clone();
            if let Some(client) = client
                && let Err(e) = client.notify_raw(&method, params.clone()).await
            {
                tracing::debug!(error = %e, method, "a custom notification not passed on");
            }
        }
    });
}

/// A 2026-07-28 result without what its server added for the revision (`resultType`, its
/// `serverInfo` in `_meta`): the gateway answers its own client with its own.
fn undecorate(result: &mut Value) {
    let Some(object) = result.as_object_mut() else { return };
    object.remove("resultType");
    if let Some(Value::Object(meta)) = object.get_mut("_meta") {
        meta.remove(mcp_types::meta::SERVER_INFO);
        if meta.is_empty() {
            object.remove("_meta");
        }
    }
}
