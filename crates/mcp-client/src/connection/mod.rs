//! One connection's state, in the kind of its era: a session (the session revisions, opened
//! with `initialize`) or stateless (2026-07-28, found with `server/discover`), and the requests
//! that open each (`session::handshake`, `discover::probe`). Every call that differs between the
//! eras matches on [`Connection`] once. Uses only the layers below it: [`crate::serve`] (the
//! handlers a 2026-07-28 round trip calls), [`crate::listen`], [`crate::wire`], [`crate::trace`],
//! [`crate::cache`], [`crate::error`].

pub(crate) mod discover;
pub(crate) mod session;
pub(crate) mod stateless;

use mcp_types::{Implementation, ServerCapabilities};

use crate::connection::session::SessionConnection;
use crate::connection::stateless::StatelessConnection;

/// Who the server is, from `initialize` or `server/discover`.
#[derive(Debug)]
pub(crate) struct ServerDescription {
    pub(crate) info: Implementation,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) instructions: Option<String>,
}

/// The two kinds of connection; every call that differs between the eras matches on it.
pub(crate) enum Connection {
    /// A session revision, opened with `initialize`.
    Session(Box<SessionConnection>),
    /// The stateless revision (2026-07-28), found with `server/discover`.
    Stateless(Box<StatelessConnection>),
}
