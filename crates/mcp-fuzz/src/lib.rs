//! The bodies of the fuzz targets under `fuzz/`: one function per target, taking any bytes and
//! asserting a property of the code it drives. A panic is a finding.
//!
//! The functions build on the stable toolchain: `fuzz/` (libFuzzer, nightly) calls them from
//! its `fuzz_targets/<name>.rs`, and this crate's test `tests/corpus.rs` replays every input of
//! `fuzz/corpus/<name>/` and `fuzz/artifacts/<name>/` through them, so that an ordinary
//! `cargo test` keeps every finding fixed. `cargo xtask fuzz` runs the fuzzers.
//!
//! | target | drives | property |
//! |---|---|---|
//! | [`frame`] | `mcp_jsonrpc::message::parse` | no panic; the error is -32700 exactly for malformed JSON; what parses as a message agrees with serde_json |
//! | [`raw`] | `mcp_jsonrpc::raw` (`Index`, `has_keys`) | any text: no panic; valid JSON: every member and `_meta` member as serde_json reads it |
//! | [`types`] | every generated type of `mcp-types`, every revision | decode, encode for the revision, decode and encode again: the same JSON |
//! | [`sse`] | the HTTP client's SSE parser | any chunking gives the events a reference parser gives; no event over the limit |
//! | [`lines`] | the stdio line framer (`LineRead`) | any read chunking gives the frames of a reference split; no frame over the limit |
//! | [`template`] | `mcp_server::UriTemplate` | no panic; an expansion of a template matches it and re-expands to itself |
//! | [`schema`] | the server's built-in tool-argument schema checker | the verdict of the `jsonschema` crate on every schema it accepts |
//! | [`args`] | the argument decoding `#[tool]` generates | never a panic; a bad argument is -32602 |
//! | [`state`] | the sealing of `requestState` | a token sealed with the key opens to its payload; any other token, a tampered one, or another key's, never opens |
//!
//! ```
//! // Every target takes any bytes.
//! for (name, target) in mcp_fuzz::TARGETS {
//!     target(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
//!     assert_eq!(mcp_fuzz::target(name).map(|f| f as usize), Some(*target as usize));
//! }
//! ```

mod args;
mod frame;
mod lines;
mod schema;
mod sse;
mod state;
mod template;
mod types;

pub use args::args;
pub use frame::{frame, raw};
pub use lines::lines;
pub use schema::schema;
pub use sse::sse;
pub use state::state;
pub use template::template;
pub use types::types;

/// A fuzz target: any bytes in, a panic when its property fails.
pub type Target = fn(&[u8]);

/// Every target, by the name of its directory under `fuzz/corpus/` and its file under
/// `fuzz/fuzz_targets/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("frame", frame),
    ("raw", raw),
    ("types", types),
    ("sse", sse),
    ("lines", lines),
    ("template", template),
    ("schema", schema),
    ("args", args),
    ("state", state),
];

/// The target named `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
