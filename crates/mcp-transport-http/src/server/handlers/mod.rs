//! The endpoint's HTTP handlers: POST (`post.rs`, and a request of the stateless revision in
//! `stateless_revision.rs`), GET and DELETE (`get_delete.rs`), the HTTP+SSE endpoints of
//! 2024-11-05 (`http_sse.rs`); the extractors they take first (`extract.rs`), and the
//! [`RequestInfo`](info::RequestInfo) they attach to each message (`info.rs`). They use the
//! endpoint's state and everything below it; only the routes use them.

pub(crate) mod extract;
pub(crate) mod get_delete;
pub(crate) mod http_sse;
pub(crate) mod info;
pub(crate) mod post;
pub(crate) mod stateless_revision;
