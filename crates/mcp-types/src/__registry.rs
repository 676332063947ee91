//! A table from every schema definition name of every revision to its Rust type, for tests and
//! tools that work by schema name.

use serde::de::DeserializeOwned;

use crate::Revisions;
use crate::wire::{ForRevision, WireSerialize};

pub use crate::generated::registry::SCHEMA_TYPES;

/// One definition of the schemas.
#[derive(Debug, Clone, Copy)]
pub struct SchemaType {
    /// The definition's name, as the schema spells it.
    pub name: &'static str,
    /// The revisions whose schema defines this name (with this meaning).
    pub revisions: Revisions,
    /// The Rust type it maps to.
    pub rust_type: &'static str,
    /// Decodes JSON into the Rust type, then serializes it for `revs`.
    pub roundtrip: fn(serde_json::Value, Revisions) -> Result<serde_json::Value, String>,
}

/// Finds the entry for a definition name of one revision.
pub fn lookup(name: &str, rev: crate::ProtocolVersion) -> Option<&'static SchemaType> {
    SCHEMA_TYPES.iter().find(|t| t.name == name && t.revisions.contains(rev))
}

/// Decodes `value` as `T` and serializes it for `revs`.
pub fn roundtrip<T: DeserializeOwned + WireSerialize>(
    value: serde_json::Value,
    revs: Revisions,
) -> Result<serde_json::Value, String> {
    let t: T = serde_json::from_value(value).map_err(|e| format!("decode: {e}"))?;
    serde_json::to_value(ForRevision::new(&t, revs)).map_err(|e| format!("encode: {e}"))
}
