//! The sessions this endpoint holds, by id, with the count of those each client address
//! created: what the bounds on live sessions ([`HttpServerConfig::max_sessions`] and
//! [`HttpServerConfig::max_sessions_per_client`]) are checked against.
//!
//! [`HttpServerConfig::max_sessions`]: crate::server::HttpServerConfig::max_sessions
//! [`HttpServerConfig::max_sessions_per_client`]: crate::server::HttpServerConfig::max_sessions_per_client

use std::net::IpAddr;
use std::sync::Arc;

use hashbrown::HashMap;

use super::Session;

/// The live sessions, and how many of them each client address holds.
#[derive(Default)]
pub(crate) struct SessionTable {
    sessions: HashMap<Arc<str>, Arc<Session>>,
    /// Sessions created here per client address (an address holding none has no entry).
    per_client: HashMap<IpAddr, usize>,
}

/// Why the table has no room for a new session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Full {
    /// The endpoint holds `max_sessions`.
    Server,
    /// The client's address holds `max_sessions_per_client`.
    Client,
    /// The fleet holds as many sessions as its store allows ([`SharedSessions::admit`](crate::server::SharedSessions::admit)).
    Fleet,
}

impl SessionTable {
    /// The session `id`.
    pub(crate) fn get(&self, id: &str) -> Option<&Arc<Session>> {
        self.sessions.get(id)
    }

    /// How many sessions the table holds.
    pub(crate) fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether a session of `client` fits: `max` in all, `per_client` for one address.
    pub(crate) fn room(&self, client: Option<IpAddr>, max: usize, per_client: usize) -> Result<(), Full> {
        if self.sessions.len() >= max {
            return Err(Full::Server);
        }
        match client.and_then(|ip| self.per_client.get(&ip)) {
            Some(&held) if held >= per_client => Err(Full::Client),
            _ => Ok(()),
        }
    }

    /// Adds `session` under `id`, counted for its client's address.
    pub(crate) fn insert(&mut self, id: Arc<str>, session: Arc<Session>) {
        if let Some(ip) = session.client {
            *self.per_client.entry(ip).or_default() += 1;
        }
        if let Some(old) = self.sessions.insert(id, session) {
            // Ids are 128 random bits, and a fleet's copy is inserted only where none is: not
            // reached, but the count stays right if it were.
            self.uncount(&old);
        }
    }

    /// Removes the session `id`, no longer counted for its client's address.
    pub(crate) fn remove(&mut self, id: &str) -> Option<Arc<Session>> {
        let session = self.sessions.remove(id)?;
        self.uncount(&session);
        self.shrink();
        Some(session)
    }

    /// Removes the sessions `expired` says should go.
    pub(crate) fn remove_where(&mut self, mut expired: impl FnMut(&Session) -> bool) -> Vec<Arc<Session>> {
        let ids: Vec<Arc<str>> = self.sessions.iter().filter(|(_, s)| expired(s)).map(|(id, _)| id.clone()).collect();
        ids.iter().filter_map(|id| self.remove(id)).collect()
    }

    /// The sessions, in no order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<Session>> {
        self.sessions.values()
    }

    /// Every session.
    pub(crate) fn all(&self) -> Vec<Arc<Session>> {
        self.sessions.values().cloned().collect()
    }

    fn uncount(&mut self, session: &Session) {
        let Some(ip) = session.client else { return };
        if let Some(held) = self.per_client.get_mut(&ip) {
            *held -= 1;
            if *held == 0 {
                self.per_client.remove(&ip);
            }
        }
    }

    /// Gives back the memory of a table that held many more sessions than it does now (a
    /// flood that ended), so that what a burst took does not stay taken: once a quarter full,
    /// each table is halved (amortized O(1) per removal).
    fn shrink(&mut self) {
        if self.sessions.capacity() > 1024 && self.sessions.len() < self.sessions.capacity() / 4 {
            self.sessions.shrink_to(self.sessions.len() * 2);
        }
        if self.per_client.capacity() > 1024 && self.per_client.len() < self.per_client.capacity() / 4 {
            self.per_client.shrink_to(self.per_client.len() * 2);
        }
    }
}
