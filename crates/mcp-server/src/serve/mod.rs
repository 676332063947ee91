//! The protocol serving: one connection's requests and notifications, in every revision.
//!
//! From the bottom up: `shared` (what every connection of a server shares) and `seal` (the
//! sealing of `requestState`); `reply` (a request's revision and the encoding of its result);
//! `call` (one request being served, and the traits of typed dispatch); `owner` (whose tasks are
//! whose); the methods: `custom` (methods outside the protocol), `tasks_ext` (the 2026-07-28
//! tasks extension), `tasks` (the task methods of 2025-11-25 and task-augmented calls),
//! `dispatch` (every other method, by its marker type), `stateless` (the 2026-07-28 envelope,
//! `server/discover`, input-required round trips), `subscriptions` (`subscriptions/listen`);
//! and on top `session` (the `Service` of a connection: the handshake, and each request handed
//! to its revision). `param_headers` and `auth` are the checks the HTTP endpoint asks of the
//! server before a request is served (feature `http`, `auth`).
//!
//! Layer 5: uses the definitions, the context, tasks and the foundations; only the server
//! (`server`) uses it.

#[cfg(feature = "auth")]
pub(crate) mod auth;
pub(crate) mod call;
pub(crate) mod custom;
pub(crate) mod dispatch;
pub(crate) mod owner;
#[cfg(feature = "http")]
pub(crate) mod param_headers;
pub(crate) mod reply;
pub(crate) mod seal;
pub(crate) mod session;
pub(crate) mod shared;
pub(crate) mod stateless;
pub(crate) mod subscriptions;
pub(crate) mod tasks;
pub(crate) mod tasks_ext;
