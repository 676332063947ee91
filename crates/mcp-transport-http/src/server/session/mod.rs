//! The sessions: a [`Session`] (its streams' router, its peer's entry point, its client and
//! owner), the table of an endpoint's sessions with the bounds they are counted against
//! (`table.rs`), and the [`Drain`](drain::Drain) that ends the sessions of the endpoints a
//! configuration built (`drain.rs`, graceful shutdown). It uses the streams, the factory's
//! types and auth's `Owner`; the configuration and the endpoint above use it.

use std::sync::Arc;

use mcp_jsonrpc::{Dispatcher, Peer};

use super::factory::Refresh;
use super::stream::router::SessionRouter;

pub(crate) mod drain;
pub(crate) mod table;

/// A session: its routing, and its peer's entry point.
pub(crate) struct Session {
    pub(crate) router: Arc<SessionRouter>,
    pub(crate) dispatcher: Dispatcher,
    /// Applies a record another copy saved (a session a fleet shares).
    pub(crate) refresh: Option<Refresh>,
    /// The address of the client that created the session, counted against
    /// `max_sessions_per_client` (`None`: unknown, or a fleet's copy of a session created
    /// elsewhere).
    pub(crate) client: Option<std::net::IpAddr>,
    /// Who the session belongs to (the principal of the request that created it): requests
    /// of anyone else find no such session.
    #[cfg(feature = "auth")]
    pub(crate) owner: Option<crate::server::auth::owner::Owner>,
}

impl Session {
    /// The session's peer.
    pub(crate) fn peer(&self) -> &Peer {
        self.dispatcher.peer()
    }

    /// Ends the session: the peer stops, its connections close.
    pub(crate) async fn end(&self) {
        self.peer().close();
        self.router.close().await;
    }

    /// Ends this instance's copy of a session a fleet shares (idle here): the session lives
    /// on, in the store and in the other copies.
    pub(crate) async fn end_copy(&self) {
        self.peer().close();
        self.router.close_copy().await;
    }

    /// Ends this instance's copy of a shared session whose record is gone (the caller took it
    /// out of the table: no new request reaches it): the server's calls waiting for the client
    /// fail (-32603), the requests running finish within the peer's shutdown grace and their
    /// answers go out on their streams, then its connections close.
    pub(crate) async fn end_copy_after_running(&self) {
        let gone = mcp_jsonrpc::ErrorObject::internal_error(
            "the session ended: its record is gone from the servers' shared store; start a new session",
        );
        self.peer().fail_pending_calls(&gone);
        self.peer().close();
        self.peer().closed().await;
        self.router.close_copy().await;
    }
}
