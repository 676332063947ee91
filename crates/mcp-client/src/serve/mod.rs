//! What the client serves: its answers to the server's requests and its handling of the
//! server's notifications. The handlers a user gives the builder and the checks they all pass
//! (`handlers`), the answers to the input a 2026-07-28 server asks for in its results
//! (`input`), the client's own tasks (`input_tasks`, public), the handlers of custom methods
//! (`custom`), and the `Service` the peer calls with every message from the server
//! (`service`). Uses only the layers below it: [`crate::listen`], [`crate::wire`],
//! [`crate::cache`], [`crate::error`].

pub(crate) mod custom;
pub(crate) mod handlers;
pub(crate) mod input;
pub mod input_tasks;
pub(crate) mod service;
