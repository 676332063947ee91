//! Every generated type of `mcp-types`, in every revision that defines it.

use mcp_types::__registry::SCHEMA_TYPES;
use serde_json::Value;

/// Picks a schema definition by the first two bytes (big-endian index into
/// `mcp_types::__registry::SCHEMA_TYPES`, modulo its length) and one of its revisions by the
/// third, and decodes the rest as that type. What decodes is encoded for the revision; that
/// encoding must decode again, and decoding and encoding it gives the same JSON: encoding for a
/// revision is a fixed point after one round (the first round may drop what the revision does
/// not have, or what the type ignores, but nothing after it).
pub fn types(data: &[u8]) {
    let [hi, lo, rev, rest @ ..] = data else { return };
    let ty = &SCHEMA_TYPES[(usize::from(*hi) << 8 | usize::from(*lo)) % SCHEMA_TYPES.len()];
    let revisions: Vec<_> = ty.revisions.iter().collect();
    let Some(&revision) = revisions.get(usize::from(*rev) % revisions.len().max(1)) else { return };
    let Ok(value) = serde_json::from_slice::<Value>(rest) else { return };
    let Ok(once) = (ty.roundtrip)(value, revision.only()) else { return };
    let twice = (ty.roundtrip)(once.clone(), revision.only()).unwrap_or_else(|e| {
        panic!(
            "{} ({}): its own encoding for {} does not decode: {e}\n{once}",
            ty.name,
            ty.rust_type,
            revision.as_str()
        )
    });
    assert_eq!(
        twice,
        once,
        "{} ({}) for {}: a second round trip changed the value",
        ty.name,
        ty.rust_type,
        revision.as_str()
    );
}
