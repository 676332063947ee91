//! A session's streams: the [`SessionRouter`](router::SessionRouter) that takes what the
//! session's peer sends to the stream of the POST whose request it belongs to, or to the
//! standalone GET stream, numbering and storing events so that a stream can be resumed
//! (`router.rs`); the [`EventStore`](event_store::EventStore) that keeps them
//! (`event_store.rs`); the body of an SSE response and the count of a session's open
//! connections (`body.rs`). It uses the SSE wire format and the fleet link (a stream resumed
//! on another instance); the sessions above hold a router each.

pub(crate) mod body;
pub(crate) mod event_store;
pub(crate) mod router;
