//! Reading a few members of a JSON object without building the rest of it: the routing and
//! envelope checks of 2026-07-28 requests look at a handful of keys of large params.
//!
//! ```
//! let m = mcp_jsonrpc::raw::members(r#"{"name":"echo","arguments":{}}"#, &["name"]).unwrap();
//! assert_eq!(mcp_jsonrpc::raw::as_str(m.values[0].unwrap()).as_deref(), Some("echo"));
//! assert_eq!(m.len, 2);
//! ```

use std::borrow::Cow;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

/// Some members of a JSON object, borrowed from its text: the value of each asked-for key (the
/// last one where a key repeats, as a map keeps it), and how many members the object has.
#[derive(Debug)]
pub struct Members<'a, const N: usize> {
    /// The value of each asked-for key, in the order asked.
    pub values: [Option<&'a RawValue>; N],
    /// The number of members of the object (repeated keys counted each time).
    pub len: usize,
}

/// Reads the members `keys` of the JSON object `json`, skipping the others: `None` when `json`
/// is not an object.
pub fn members<'a, const N: usize>(json: &'a str, keys: &[&str; N]) -> Option<Members<'a, N>> {
    let mut de = serde_json::Deserializer::from_str(json);
    let out = Pick(keys).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(out)
}

/// The `_meta` key that carries a 2026-07-28 request's protocol revision.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// Whether `json` names [`PROTOCOL_VERSION_KEY`] verbatim: the cheap test, before any parsing,
/// of whether a request may be a 2026-07-28 one (one search, with a finder built once).
pub fn names_protocol_version(json: &str) -> bool {
    static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(PROTOCOL_VERSION_KEY));
    KEY.find(json.as_bytes()).is_some()
}

/// A member's value that is present and not `null`.
pub fn non_null(raw: Option<&RawValue>) -> Option<&RawValue> {
    raw.filter(|r| r.get() != "null")
}

/// A JSON string's text (`None` for any other value).
pub fn as_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    match serde_json::from_str::<&str>(raw.get()) {
        Ok(s) => Some(Cow::Borrowed(s)),
        // Escapes: the text needs unescaping.
        Err(_) => serde_json::from_str::<String>(raw.get()).ok().map(Cow::Owned),
    }
}

struct Pick<'k, const N: usize>(&'k [&'k str; N]);

/// A key, as its position among the asked-for keys.
struct Key<'k, const N: usize>(&'k [&'k str; N]);

impl<'de, const N: usize> DeserializeSeed<'de> for Key<'_, N> {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<const N: usize> Visitor<'_> for Key<'_, N> {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|k| *k == key))
    }
}

impl<'de, const N: usize> DeserializeSeed<'de> for Pick<'_, N> {
    type Value = Members<'de, N>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Members<'de, N>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, const N: usize> Visitor<'de> for Pick<'_, N> {
    type Value = Members<'de, N>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de, N>, A::Error> {
        let mut out = Members { values: [None; N], len: 0 };
        while let Some(key) = map.next_key_seed(Key(self.0))? {
            out.len += 1;
            match key {
                Some(i) => out.values[i] = Some(map.next_value::<&'de RawValue>()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_members_and_rejects_non_objects() {
        let m = members(r#"{"a":1,"b":{"x":[1,2]},"c":"s\"q","a":"last"}"#, &["a", "b", "c", "d"]).unwrap();
        let got: Vec<Option<&str>> = m.values.iter().map(|v| v.map(RawValue::get)).collect();
        assert_eq!(got, [Some(r#""last""#), Some(r#"{"x":[1,2]}"#), Some(r#""s\"q""#), None]);
        assert_eq!(as_str(m.values[2].unwrap()).as_deref(), Some("s\"q"));
        assert_eq!(as_str(m.values[1].unwrap()), None);
        assert!(members("[1]", &["a"]).is_none());
        assert!(members("null", &["a"]).is_none());
        assert!(members(r#"{"a":1} x"#, &["a"]).is_none());
        assert!(non_null(members(r#"{"a":null}"#, &["a"]).unwrap().values[0]).is_none());
    }
}
