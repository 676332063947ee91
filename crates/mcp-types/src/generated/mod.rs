//! Code generated from the vendored schemas by `cargo xtask codegen` (see `xtask/src/codegen`).
//! Nothing under this module is edited by hand; hand-written additions live in `*_ext.rs`.

pub(crate) mod methods;
pub(crate) mod registry;
pub(crate) mod types;
