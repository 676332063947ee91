//! What a graceful shutdown does to the sessions: the [`Drain`] that the clones of one
//! configuration share, with the session tables of the endpoints built from them.

use mcp_jsonrpc::sync::MutexExt as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use super::Session;
use super::table::SessionTable;

/// Whether the endpoints built from one configuration are draining, and the sessions of those
/// endpoints.
#[derive(Default)]
pub(crate) struct Drain {
    /// A graceful shutdown has started: `/readyz` answers 503 (through the unready delay).
    pub(crate) unready: AtomicBool,
    /// The endpoints drain: new requests get 503.
    draining: AtomicBool,
    /// The session tables of the endpoints.
    tables: Mutex<Vec<Weak<Mutex<SessionTable>>>>,
}

impl Drain {
    /// Whether a graceful shutdown has started.
    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Whether `/readyz` answers 200: no graceful shutdown has started.
    pub(crate) fn is_ready(&self) -> bool {
        !self.unready.load(Ordering::Relaxed)
    }

    /// Adds the sessions of an endpoint built from the configuration (forgetting those of
    /// endpoints gone).
    pub(crate) fn register(&self, sessions: &Arc<Mutex<SessionTable>>) {
        let mut tables = self.tables.lock_unpoisoned();
        tables.retain(|t| t.strong_count() > 0);
        tables.push(Arc::downgrade(sessions));
    }

    fn tables(&self) -> Vec<Arc<Mutex<SessionTable>>> {
        self.tables.lock_unpoisoned().iter().filter_map(Weak::upgrade).collect()
    }

    /// Draining starts: readiness turns false, new requests get 503, standalone streams end.
    pub(crate) async fn begin(&self) {
        self.unready.store(true, Ordering::Relaxed);
        self.draining.store(true, Ordering::Relaxed);
        for sessions in self.tables() {
            begin_drain(&sessions).await;
        }
    }

    /// The grace is over: what still runs is cancelled.
    pub(crate) async fn cancel(&self) {
        for sessions in self.tables() {
            cancel_all(&sessions).await;
        }
    }
}

/// A graceful shutdown starts: the sessions' standalone streams end (with a `retry` hint).
async fn begin_drain(sessions: &Mutex<SessionTable>) {
    for session in all_sessions(sessions) {
        session.router.end_standalone().await;
    }
}

/// The shutdown's grace is over: requests still running are answered with an error (those
/// with a stream of their own) and their handlers cancelled; every stream ends.
async fn cancel_all(sessions: &Mutex<SessionTable>) {
    for session in all_sessions(sessions) {
        session.router.shut_down().await;
        // Those of an HTTP+SSE session too, which have no stream to answer on.
        session.peer().cancel_all_incoming();
    }
}

fn all_sessions(sessions: &Mutex<SessionTable>) -> Vec<Arc<Session>> {
    sessions.lock_unpoisoned().all()
}
