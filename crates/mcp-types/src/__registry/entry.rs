//! One row of the generated registry: a schema definition, the revisions that define it, its
//! Rust type and the round trip through that type.

use serde::de::DeserializeOwned;

use crate::version::Revisions;
use crate::wire::{ForRevision, WireSerialize};

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

/// Decodes `value` as `T` and serializes it for `revs`.
pub fn roundtrip<T: DeserializeOwned + WireSerialize>(
    value: serde_json::Value,
    revs: Revisions,
) -> Result<serde_json::Value, String> {
    let t: T = serde_json::from_value(value).map_err(|e| format!("decode: {e}"))?;
    serde_json::to_value(ForRevision::new(&t, revs)).map_err(|e| format!("encode: {e}"))
}
