//! The messages as this client writes and reads them: what a 2026-07-28 request carries (its
//! `_meta`, its HTTP header hints), how an answer is read before it is decoded (its
//! `resultType`, a task of the 2026-07-28 extension), and a notification read as a
//! [`ServerEvent`](event::ServerEvent). Nothing here sends or receives: every other part of the
//! crate may use it, and it uses only [`crate::error`].

pub(crate) mod event;
pub(crate) mod stateless;
pub(crate) mod tasks;
pub(crate) mod tool_headers;
