//! A table from every schema definition name of every revision to its Rust type, for tests and
//! tools that work by schema name. The table ([`SCHEMA_TYPES`]) is generated; its rows
//! ([`SchemaType`]) are defined in `entry`, below it, so that the generated table and this
//! module, which looks it up, depend one way.

pub(crate) mod entry;

pub use crate::__registry::entry::{SchemaType, roundtrip};
pub use crate::generated::registry::SCHEMA_TYPES;
use crate::version::ProtocolVersion;

/// Finds the entry for a definition name of one revision.
pub fn lookup(name: &str, rev: ProtocolVersion) -> Option<&'static SchemaType> {
    SCHEMA_TYPES.iter().find(|t| t.name == name && t.revisions.contains(rev))
}
