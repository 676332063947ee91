//! A gateway session outside its calls, for its connections to the mounted servers: what a
//! mounted server sends on such a connection while no call of the session is in flight (its
//! requests for the client's roots, sampling or elicitation, its log messages) goes to the
//! session itself, and the client's `notifications/roots/list_changed` goes to every mounted
//! server the session is connected to.
//!
//! Only the session revisions: a request of the stateless revision (2026-07-28) is a session
//! of its own, which ends when it is answered, and its client hears nothing outside it.

use std::sync::Arc;

use mcp_jsonrpc::Peer;
use mcp_server::Context;

use crate::link::Link;
use crate::mount::Mount;

impl Link {
    /// Makes the session of `ctx` the one this connection's messages outside any call go to
    /// (once: a connection serves one session).
    pub(crate) fn set_home(&self, ctx: &Context) {
        if let Some(home) = ctx.detached() {
            let _ = self.home.set(home);
        }
    }

    /// Whether this connection serves the gateway session on `peer`.
    pub(crate) fn serves(&self, peer: &Peer) -> bool {
        self.home.get().is_some_and(|home| home.peer().same_connection(peer))
    }
}

/// The gateway server's handler of `notifications/roots/list_changed`: the session's
/// connection to each of `mounts` (those it opened) passes it on.
pub(crate) fn roots_changed(mounts: Vec<Arc<Mount>>) -> impl Fn(Peer) + Send + Sync + 'static {
    move |peer: Peer| {
        let upstreams: Vec<_> = mounts.iter().flat_map(|mount| mount.upstreams_of(&peer)).collect();
        if upstreams.is_empty() {
            return;
        }
        tokio::spawn(async move {
            for upstream in upstreams {
                let client = upstream.client.lock().await.clone();
                if let Some(client) = client
                    && let Err(e) = client.notify_roots_changed().await
                {
                    tracing::debug!(error = %e, "roots/list_changed not passed on to a mounted server");
                }
            }
        });
    }
}
