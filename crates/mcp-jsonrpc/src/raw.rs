//! Reading members of a JSON object without decoding the rest of it: the routing and envelope
//! checks of 2026-07-28 requests, the server and the handler each look at a few keys of the
//! same params. [`Index`] finds where every member (and every member of `_meta`) lies in one
//! quick scan of valid JSON; [`message::Request`](crate::message::Request) keeps one, built on
//! first use.
//!
//! ```
//! let params: Box<serde_json::value::RawValue> =
//!     serde_json::from_str(r#"{"name":"echo","arguments":{}}"#).unwrap();
//! let index = mcp_jsonrpc::raw::Index::new(&params).unwrap();
//! let name = index.object(params.get()).get("name").unwrap();
//! assert_eq!(mcp_jsonrpc::raw::str_text(name).as_deref(), Some("echo"));
//! ```

use std::borrow::Cow;

use serde_json::value::RawValue;

/// The `_meta` key that carries a 2026-07-28 request's protocol revision.
pub const PROTOCOL_VERSION_KEY: &str = mcp_types::meta::PROTOCOL_VERSION;

/// For `#[serde(deserialize_with = "...")]` on an `Option<&RawValue>` member: a member that is
/// present reads as `Some`, `null` included (plain `Option` reads `null` as absent, which would
/// turn the response `{"result":null}` into one without a result).
pub fn present<'de: 'a, 'a, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'a RawValue>, D::Error> {
    <&'a RawValue as serde::Deserialize>::deserialize(d).map(Some)
}

/// Whether `json` names [`PROTOCOL_VERSION_KEY`] verbatim: the cheap test, before any parsing,
/// of whether a request may be a 2026-07-28 one (one search, with a finder built once).
pub fn names_protocol_version(json: &str) -> bool {
    static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(PROTOCOL_VERSION_KEY));
    KEY.find(json.as_bytes()).is_some()
}

/// The text of the JSON string `json` (`None` for any other JSON value).
pub fn str_text(json: &str) -> Option<Cow<'_, str>> {
    match serde_json::from_str::<&str>(json) {
        Ok(s) => Some(Cow::Borrowed(s)),
        // Escapes: the text needs unescaping.
        Err(_) => serde_json::from_str::<String>(json).ok().map(Cow::Owned),
    }
}

/// Where the members of a JSON object lie in its text, and those of its `_meta` member, found
/// in one pass: for reading several members of the same params, by several readers (the
/// transport's routing checks, the server's envelope, the handler), without scanning them
/// again.
///
/// It holds positions, not borrows: give [`Index::object`] the same text it was built from.
///
/// ```
/// use mcp_jsonrpc::raw::Index;
///
/// let params: Box<serde_json::value::RawValue> = serde_json::from_str(
///     r#"{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":7},"name":"last"}"#,
/// ).unwrap();
/// let index = Index::new(&params).unwrap();
/// let object = index.object(params.get());
/// assert_eq!(object.get("arguments"), Some(r#"{"text":"hi"}"#));
/// assert_eq!(object.get("name"), Some(r#""last""#));
/// assert_eq!(object.len(), 4);
/// assert_eq!(index.meta(params.get()).unwrap().get("progressToken"), Some("7"));
/// assert!(Index::of_valid("[1]").is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Index {
    entries: Vec<Entry>,
    /// The members of `_meta`, when its (last) value is an object.
    meta: Option<Vec<Entry>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    key: IndexKey,
    /// The value's byte range in the indexed text.
    value: (u32, u32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum IndexKey {
    /// Unescaped: the key's byte range in the text.
    Span(u32, u32),
    /// A key with escapes, unescaped.
    Owned(Box<str>),
}

impl Entry {
    /// Positions fit in `u32`: [`object_start`] checked the text's length.
    fn new(key: IndexKey, start: usize, end: usize) -> Entry {
        Entry { key, value: (start as u32, end as u32) }
    }
}

impl IndexKey {
    fn is(&self, text: &str, key: &str) -> bool {
        match self {
            IndexKey::Span(a, b) => text.get(*a as usize..*b as usize) == Some(key),
            IndexKey::Owned(k) => &**k == key,
        }
    }
}

impl Index {
    /// Indexes `json` if it is a JSON object (`None` for any other value, and for objects of
    /// over 4 GiB).
    ///
    /// The text is valid JSON (a [`RawValue`] is), so one quick scan finds the members: no
    /// validation, nothing decoded but keys with escapes.
    pub fn new(json: &RawValue) -> Option<Index> {
        Index::of_valid(json.get())
    }

    /// [`Index::new`] for text known to be valid JSON (what serde_json wrote, or a member's
    /// value taken from a valid object). Text that is not valid JSON gives `None` or an index of
    /// no use, never a panic.
    pub fn of_valid(json: &str) -> Option<Index> {
        let (b, start) = (json.as_bytes(), object_start(json)?);
        let mut index = Index::default();
        let (entries, meta) = (&mut index.entries, &mut index.meta);
        let end = scan_object(json, start, |key, start| {
            let end = if key.is(json, "_meta") {
                // The last `_meta` counts, as for any key; its members are found in this pass.
                *meta = None;
                if b.get(start) == Some(&b'{') {
                    let mut members = Vec::new();
                    let end = scan_object(json, start, |key, start| {
                        let end = value_end(b, start)?;
                        members.push(Entry::new(key, start, end));
                        Some(end)
                    })?;
                    *meta = Some(members);
                    end
                } else {
                    value_end(b, start)?
                }
            } else {
                value_end(b, start)?
            };
            entries.push(Entry::new(key, start, end));
            Some(end)
        })?;
        (skip_ws(b, end) == b.len()).then_some(index)
    }

    /// The object, read through this index: `json` must be the text it was built from.
    pub fn object<'a>(&'a self, json: &'a str) -> Object<'a> {
        Object { text: json, entries: &self.entries }
    }

    /// The object's `_meta` member, if it is an object: `json` must be the text the index was
    /// built from.
    pub fn meta<'a>(&'a self, json: &'a str) -> Option<Object<'a>> {
        self.meta.as_deref().map(|entries| Object { text: json, entries })
    }
}

/// Where the object `json` opens (`None` if it is no object, or too long for the `u32`
/// positions of an [`Index`]).
fn object_start(json: &str) -> Option<usize> {
    u32::try_from(json.len()).ok()?;
    let start = skip_ws(json.as_bytes(), 0);
    (json.as_bytes().get(start) == Some(&b'{')).then_some(start)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The end (just past the closing quote) of the string that opens at `i`, and whether it has
/// escapes.
fn string_end(b: &[u8], i: usize) -> Option<(usize, bool)> {
    let mut j = i + 1;
    let mut escaped = false;
    loop {
        let at = next_quote_or_backslash(b, j)?;
        if b[at] == b'"' {
            return Some((at + 1, escaped));
        }
        escaped = true;
        j = at + 2;
    }
}

/// The position of the first `"` or `\` at or after `j`: eight bytes at a time (SWAR: a byte
/// equal to either sets its high bit in `hits`), the tail one by one.
fn next_quote_or_backslash(b: &[u8], mut j: usize) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = b.get(j..j + 8) {
        let word = u64::from_le_bytes(chunk.try_into().ok()?);
        let (quote, backslash) = (word ^ (LO * u64::from(b'"')), word ^ (LO * u64::from(b'\\')));
        // Exact for the lowest hit, which is all that is read.
        let hits = ((quote.wrapping_sub(LO) & !quote) | (backslash.wrapping_sub(LO) & !backslash)) & HI;
        if hits != 0 {
            return Some(j + (hits.trailing_zeros() / 8) as usize);
        }
        j += 8;
    }
    b.get(j..)?.iter().position(|c| matches!(c, b'"' | b'\\')).map(|n| j + n)
}

/// The end of the value that starts at `i`.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i).map(|(end, _)| end),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match *b.get(j)? {
                    b'"' => {
                        j = string_end(b, j)?.0;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            // A number, `true`, `false` or `null`: up to the next delimiter.
            let len = b[i..].iter().position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'));
            Some(len.map_or(b.len(), |n| i + n))
        }
    }
}

/// Scans the object that opens at `json[open]` (valid JSON): `member` gets each key and the
/// start of its value, and returns the value's end. Returns the end of the object.
fn scan_object(json: &str, open: usize, mut member: impl FnMut(IndexKey, usize) -> Option<usize>) -> Option<usize> {
    let b = json.as_bytes();
    let mut i = skip_ws(b, open + 1);
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let (key_end, escaped) = string_end(b, i)?;
        let key = if escaped {
            IndexKey::Owned(serde_json::from_str::<String>(json.get(i..key_end)?).ok()?.into())
        } else {
            IndexKey::Span(i as u32 + 1, key_end as u32 - 1)
        };
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let end = member(key, skip_ws(b, i + 1))?;
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Which of `keys` the JSON object `json` (valid JSON, as serde_json writes it) has at its top
/// level, and how many members it has: `None` if it is no object. One scan, no allocation.
pub fn has_keys<const N: usize>(json: &str, keys: &[&str; N]) -> Option<([bool; N], usize)> {
    let (b, start) = (json.as_bytes(), object_start(json)?);
    let (mut found, mut len) = ([false; N], 0);
    scan_object(json, start, |key, start| {
        len += 1;
        for (hit, k) in found.iter_mut().zip(keys) {
            *hit |= key.is(json, k);
        }
        value_end(b, start)
    })?;
    Some((found, len))
}

/// A JSON object read through its [`Index`].
#[derive(Debug, Clone, Copy)]
pub struct Object<'a> {
    text: &'a str,
    entries: &'a [Entry],
}

impl<'a> Object<'a> {
    /// The JSON text of member `key`'s value (of the last one, where a key repeats, as a map
    /// keeps it).
    pub fn get(&self, key: &str) -> Option<&'a str> {
        let entry = self.entries.iter().rev().find(|e| e.key.is(self.text, key))?;
        self.text.get(entry.value.0 as usize..entry.value.1 as usize)
    }

    /// The value of member `key`, unless it is absent or `null`.
    pub fn non_null(&self, key: &str) -> Option<&'a str> {
        self.get(key).filter(|v| *v != "null")
    }

    /// The number of members (repeated keys counted each time).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the object has no members.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

    use super::*;

    // The oracle of the index tests: serde_json's own reading of a few members.

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

    #[test]
    fn picks_members_and_rejects_non_objects() {
        let m = members(r#"{"a":1,"b":{"x":[1,2]},"c":"s\"q","a":"last"}"#, &["a", "b", "c", "d"]).unwrap();
        let got: Vec<Option<&str>> = m.values.iter().map(|v| v.map(RawValue::get)).collect();
        assert_eq!(got, [Some(r#""last""#), Some(r#"{"x":[1,2]}"#), Some(r#""s\"q""#), None]);
        assert_eq!(str_text(m.values[2].unwrap().get()).as_deref(), Some("s\"q"));
        assert_eq!(str_text(m.values[1].unwrap().get()), None);
        assert!(members("[1]", &["a"]).is_none());
        assert!(members("null", &["a"]).is_none());
        assert!(members(r#"{"a":1} x"#, &["a"]).is_none());
        assert_eq!(members(r#"{"a":null}"#, &["a"]).unwrap().values[0].map(RawValue::get), Some("null"));
    }

    #[test]
    fn an_index_finds_what_members_finds() {
        let texts = [
            r#" {"a":1,"b":{"x":[1,2]},"c":"s\"q","a":"last","d\u0065":null} "#,
            r#"{ "a" : -1.5e3 , "b" : [ {"}":"]"} , "\\" ] , "c" : true ,"de":"\\\"}"}"#,
            r#"{"a":{"b":{"c":[[],{}]}},"b":"","c":false}"#,
            "{\n\t\"a\"\r: null\n}",
            "{}",
        ];
        for text in texts {
            let raw: Box<RawValue> = serde_json::from_str(text).unwrap();
            let index = Index::new(&raw).unwrap();
            let object = index.object(raw.get());
            let m = members(raw.get(), &["a", "b", "c", "de", "z"]).unwrap();
            for (key, value) in ["a", "b", "c", "de", "z"].iter().zip(m.values) {
                assert_eq!(object.get(key), value.map(RawValue::get), "{key} of {text}");
            }
            assert_eq!(object.len(), m.len, "{text}");
            let (found, len) = has_keys(raw.get(), &["a", "b", "c", "de", "z"]).unwrap();
            assert_eq!(found, m.values.map(|v| v.is_some()), "{text}");
            assert_eq!(len, m.len, "{text}");
        }
        let raw: Box<RawValue> = serde_json::from_str(texts[0]).unwrap();
        let index = Index::new(&raw).unwrap();
        let object = index.object(raw.get());
        assert_eq!(object.get("de"), Some("null"));
        assert_eq!(object.non_null("de"), None);
        assert_eq!(object.non_null("a"), Some(r#""last""#));
        assert!(Index::of_valid("{}").unwrap().object("{}").is_empty());
        // Strings of every length, with an escape at every position, across the eight-byte steps.
        for n in 0..40 {
            for at in 0..=n {
                let mut text = "x".repeat(n);
                text.insert_str(at, "\\\"é");
                let json = serde_json::json!({&text: text, "after": 1}).to_string();
                let index = Index::of_valid(&json).unwrap();
                let object = index.object(&json);
                assert_eq!(object.get(&text), Some(serde_json::to_string(&text).unwrap().as_str()), "{json}");
                assert_eq!(object.get("after"), Some("1"), "{json}");
            }
            let plain = "é".repeat(n);
            let json = serde_json::json!({"a": "b", &plain: n}).to_string();
            assert_eq!(Index::of_valid(&json).unwrap().object(&json).get(&plain), Some(n.to_string().as_str()));
        }
        // The last `_meta` counts.
        let text = r#"{"_meta":{"a":1},"_m\u0065ta":{"b":2}}"#;
        assert_eq!(Index::of_valid(text).unwrap().meta(text).unwrap().get("b"), Some("2"));
        let text = r#"{"_meta":{"a":1},"_meta":null}"#;
        assert!(Index::of_valid(text).unwrap().meta(text).is_none());
        for other in ["[1]", "null", "1", r#""{}""#] {
            assert!(Index::of_valid(other).is_none(), "{other}");
        }
        // Not JSON: no panic, whatever comes out.
        for bad in ["", "{", r#"{"a"#, r#"{"a":"#, r#"{"a":1"#, r#"{"a":{"#, r#"{"a":"x\"#, r#"{"a" 1}"#, "{]"] {
            let _ = Index::of_valid(bad);
        }
    }

    /// Random JSON objects, pretty and compact: the index agrees with serde_json's own reading
    /// of every member.
    #[test]
    fn an_index_agrees_with_serde_json_on_random_objects() {
        struct Gen(u64);
        impl Gen {
            fn next(&mut self, n: u64) -> u64 {
                self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (self.0 >> 33) % n
            }
            fn string(&mut self) -> String {
                const PARTS: [&str; 9] = ["a", "b", "\\", "\"", "}", "]", "{", "é", "\u{1}"];
                (0..self.next(4)).map(|_| PARTS[self.next(9) as usize]).collect()
            }
            fn value(&mut self, depth: u32) -> serde_json::Value {
                use serde_json::Value;
                match self.next(if depth > 3 { 5 } else { 7 }) {
                    0 => Value::Null,
                    1 => Value::Bool(self.next(2) == 0),
                    2 => serde_json::json!(self.next(1000) as f64 / 7.0 - 50.0),
                    3 => serde_json::json!(self.next(100_000)),
                    4 => Value::String(self.string()),
                    5 => Value::Array((0..self.next(4)).map(|_| self.value(depth + 1)).collect()),
                    _ => Value::Object((0..self.next(5)).map(|_| (self.string(), self.value(depth + 1))).collect()),
                }
            }
        }
        let mut g = Gen(7);
        for round in 0..2000 {
            let mut object: serde_json::Map<String, serde_json::Value> =
                (0..g.next(6)).map(|_| (g.string(), g.value(0))).collect();
            if g.next(2) == 0 {
                let meta = if g.next(4) == 0 {
                    g.value(4)
                } else {
                    serde_json::Value::Object((0..g.next(5)).map(|_| (g.string(), g.value(1))).collect())
                };
                object.insert("_meta".into(), meta);
            }
            let text = if round % 2 == 0 {
                serde_json::to_string(&object).unwrap()
            } else {
                serde_json::to_string_pretty(&object).unwrap()
            };
            let raw: Box<RawValue> = serde_json::from_str(&text).unwrap();
            let index = Index::new(&raw).unwrap();
            let read = index.object(raw.get());
            assert_eq!(read.len(), object.len(), "{text}");
            for (key, value) in &object {
                // Both read from text (serde_json's float parsing is not an exact round trip).
                let got: serde_json::Value = serde_json::from_str(read.get(key).unwrap()).unwrap();
                let want: serde_json::Value = serde_json::from_str(&value.to_string()).unwrap();
                assert_eq!(got, want, "{key:?} of {text}");
            }
            let meta = index.meta(raw.get());
            match object.get("_meta") {
                Some(serde_json::Value::Object(members)) => {
                    let meta = meta.unwrap();
                    assert_eq!(meta.len(), members.len(), "{text}");
                    for (key, value) in members {
                        let got: serde_json::Value = serde_json::from_str(meta.get(key).unwrap()).unwrap();
                        let want: serde_json::Value = serde_json::from_str(&value.to_string()).unwrap();
                        assert_eq!(got, want, "_meta.{key:?} of {text}");
                    }
                }
                _ => assert!(meta.is_none(), "{text}"),
            }
        }
    }
}
