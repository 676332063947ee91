//! The calls of a [`Client`](crate::Client), as `impl Client` blocks over what
//! [`crate::client`] holds: the typed calls of the protocol (`protocol`), custom methods
//! (`custom`), and tools called as tasks (`tasks`, public as `mcp_client::tasks`). Each uses the
//! layers below it ([`crate::client`], [`crate::connection`], [`crate::serve`],
//! [`crate::listen`], [`crate::wire`], ...); nothing below uses them.

pub mod apps;
mod custom;
mod protocol;
pub mod skills;
pub mod tasks;
