//! Code generated from the vendored schemas by `cargo xtask codegen` (see `xtask/src/codegen`).
//! Nothing under this module is edited by hand; hand-written additions live in `*_ext.rs`.
//! The files are formatted by the generator (prettyplease), so rustfmt leaves them alone.

#[rustfmt::skip]
pub(crate) mod methods;
#[rustfmt::skip]
pub(crate) mod registry;
#[rustfmt::skip]
pub(crate) mod types;
