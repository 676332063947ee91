//! The connections the requests of the stateless revision (2026-07-28) share: each request
//! borrows an idle connection to the mounted server, one that declared what the request's
//! client declared (sampling, elicitation, roots, the tasks and MCP Apps extensions), or opens one if there
//! is none, and gives it back once answered. Sequential requests so share one connection (one
//! child process, for a stdio mount); concurrent ones each hold one of their own meanwhile, so
//! that what the mounted server sends on it during a call (its requests for input, its log
//! messages, its progress) is for the request that holds it alone.
//!
//! What is shared is what the mounted server keeps per connection: its session (for a server
//! of the session revisions), with what it holds (the log level the gateway set, visibility
//! changes, state of its own), seen by each request that borrows the connection. A connection
//! whose call was cancelled is not given back (the mounted server may still send for that
//! call); nor is a lost one. At most [`IDLE`] idle connections are kept per set of
//! capabilities; more are closed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_jsonrpc::sync::MutexExt as _;
use mcp_types::ClientCapabilities;

use crate::upstream::Upstream;

/// The most idle connections kept for one set of capabilities.
pub(crate) const IDLE: usize = 4;

/// A mount's idle connections, by the capabilities they declared ([`key`]).
#[derive(Default)]
pub(crate) struct Pool {
    idle: Arc<Mutex<HashMap<u8, Vec<Arc<Upstream>>>>>,
}

/// What of the client's capabilities a connection declares to the mounted server (see
/// `Link::client`), as bits.
fn key(caps: &ClientCapabilities) -> u8 {
    let sampling = caps.sampling.as_ref();
    let elicitation = caps.elicitation.as_ref();
    [
        sampling.is_some(),
        sampling.is_some_and(|s| s.tools.is_some()),
        sampling.is_some_and(|s| s.context.is_some()),
        elicitation.is_some(),
        elicitation.is_some_and(|e| e.url.is_some()),
        caps.roots.is_some(),
        caps.extensions.as_ref().is_some_and(|e| e.contains_key(crate::names::EXTENSION)),
        mcp_types::apps::supports_html(caps),
    ]
    .iter()
    .enumerate()
    .fold(0, |bits, (i, on)| bits | (u8::from(*on) << i))
}

impl Pool {
    /// A connection for a stateless request whose client declared `caps`: an idle one of the
    /// pool, or a new one (opened by the caller), given back when its last call leaves.
    pub(crate) fn lease(&self, caps: &ClientCapabilities) -> Arc<Upstream> {
        let key = key(caps);
        if let Some(upstream) = self.idle.lock_unpoisoned().get_mut(&key).and_then(Vec::pop) {
            return upstream;
        }
        let upstream = Arc::new(Upstream::default());
        let (pool, held) = (Arc::downgrade(&self.idle), Arc::downgrade(&upstream));
        let give_back = move |reusable: bool| {
            let (Some(pool), Some(upstream)) = (pool.upgrade(), held.upgrade()) else { return };
            let open = upstream.client.try_lock().is_ok_and(|c| c.as_ref().is_some_and(|c| !c.peer().is_closed()));
            if !reusable || !open {
                return;
            }
            let mut idle = pool.lock_unpoisoned();
            let idle = idle.entry(key).or_default();
            if idle.len() < IDLE {
                idle.push(upstream);
            }
        };
        let _ = upstream.link.idle.set(Box::new(give_back));
        upstream
    }
}
