//! Test fixtures shared by the tests of this workspace's crates. **Not for users**: it is not
//! published, its API changes with the tests, and it panics on anything unexpected (a test
//! that fails is what it is for).
//!
//! | module | feature | depends on |
//! |---|---|---|
//! | [`schema`]: a value checked against a definition of the official schema | `schema` | jsonschema |
//! | [`memory`]: the test's end of an in-memory connection, frame by frame | `memory` | mcp-jsonrpc |
//! | [`spans`]: a `tracing` layer that records spans and their fields | `spans` | tracing-subscriber |
//! | [`redis`]: a real `redis-server` on a free port, killed on drop | `redis` | (std only) |
//! | [`prometheus`]: a `/metrics` scrape in the Prometheus text format, read | `prometheus` | (std only) |
//!
//! A layer crate takes it as a `[dev-dependency]` with only the features its tests need, so
//! that no crate depends, even for its tests, on a crate above it.

#[cfg(feature = "memory")]
pub mod memory;
#[cfg(feature = "prometheus")]
pub mod prometheus;
#[cfg(feature = "redis")]
pub mod redis;
#[cfg(feature = "schema")]
pub mod schema;
#[cfg(feature = "spans")]
pub mod spans;

#[cfg(feature = "memory")]
pub use memory::{Session, Wire};
#[cfg(feature = "schema")]
pub use schema::{result_def, validate};
