//! Serialization for a chosen protocol revision.
//!
//! Every generated type implements [`WireSerialize`]: it writes only the fields that the chosen
//! revisions' schemas have. [`ForRevision`] adapts any such value to a plain [`serde::Serialize`]
//! for one revision, and the plain `Serialize` impl of every generated type writes every field
//! that is set (the union of all revisions).
//!
//! ```
//! use mcp_types::{ForRevision, ProtocolVersion, Tool};
//!
//! let schema = serde_json::json!({"type": "object"});
//! let mut tool = Tool::new("add", schema.as_object().unwrap().clone());
//! tool.title = Some("Add two numbers".into());
//!
//! // 2025-06-18 introduced `title`; a 2024-11-05 peer never sees it.
//! let old = serde_json::to_value(ForRevision::new(&tool, ProtocolVersion::V2024_11_05)).unwrap();
//! assert!(old.get("title").is_none());
//! let new = serde_json::to_value(ForRevision::new(&tool, ProtocolVersion::V2025_06_18)).unwrap();
//! assert_eq!(new["title"], "Add two numbers");
//! ```

use std::collections::{BTreeMap, HashMap};

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::Revisions;

/// A value that can be written as a chosen set of protocol revisions expects it.
///
/// `revs` is the filter: a field is written when the revisions it belongs to intersect it.
/// Passing one revision (`ProtocolVersion::only`) gives that revision's wire form;
/// [`Revisions::ALL`] writes everything that is set.
pub trait WireSerialize {
    /// Serializes `self` for the revisions in `revs`.
    fn wire_serialize<S: Serializer>(&self, revs: Revisions, serializer: S) -> Result<S::Ok, S::Error>;
}

/// Adapts a [`WireSerialize`] value to [`serde::Serialize`] for a chosen revision.
#[derive(Debug, Clone, Copy)]
pub struct ForRevision<'a, T: ?Sized> {
    value: &'a T,
    revs: Revisions,
}

impl<'a, T: ?Sized> ForRevision<'a, T> {
    /// Wraps `value` to be serialized for `revs` (a [`crate::ProtocolVersion`] or a [`Revisions`]).
    #[inline]
    pub fn new(value: &'a T, revs: impl Into<Revisions>) -> Self {
        ForRevision { value, revs: revs.into() }
    }
}

impl<T: WireSerialize + ?Sized> Serialize for ForRevision<'_, T> {
    #[inline]
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.wire_serialize(self.revs, serializer)
    }
}

/// Serializes `value` for one revision into a [`serde_json::Value`].
pub fn to_value_for<T: WireSerialize + ?Sized>(
    value: &T,
    revs: impl Into<Revisions>,
) -> serde_json::Result<serde_json::Value> {
    serde_json::to_value(ForRevision::new(value, revs))
}

/// Serializes `value` for one revision into a compact JSON string.
pub fn to_string_for<T: WireSerialize + ?Sized>(value: &T, revs: impl Into<Revisions>) -> serde_json::Result<String> {
    serde_json::to_string(&ForRevision::new(value, revs))
}

macro_rules! leaf {
    ($($t:ty),* $(,)?) => {$(
        impl WireSerialize for $t {
            #[inline]
            fn wire_serialize<S: Serializer>(&self, _: Revisions, serializer: S) -> Result<S::Ok, S::Error> {
                Serialize::serialize(self, serializer)
            }
        }
    )*};
}

leaf!(
    bool,
    i64,
    u64,
    String,
    str,
    serde_json::Value,
    serde_json::Map<String, serde_json::Value>,
    serde_json::value::RawValue,
    crate::ProtocolVersion,
);

/// JSON has one number type: a whole `f64` is written as an integer (`50`, not `50.0`), so
/// values decoded from a peer are written back as they came.
impl WireSerialize for f64 {
    #[inline]
    fn wire_serialize<S: Serializer>(&self, _: Revisions, serializer: S) -> Result<S::Ok, S::Error> {
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        if self.fract() == 0.0 && self.abs() < EXACT {
            serializer.serialize_i64(*self as i64)
        } else {
            serializer.serialize_f64(*self)
        }
    }
}

impl<T: WireSerialize + ?Sized> WireSerialize for &T {
    #[inline]
    fn wire_serialize<S: Serializer>(&self, revs: Revisions, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).wire_serialize(revs, serializer)
    }
}

impl<T: WireSerialize + ?Sized> WireSerialize for Box<T> {
    #[inline]
    fn wire_serialize<S: Serializer>(&self, revs: Revisions, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).wire_serialize(revs, serializer)
    }
}

impl<T: WireSerialize> WireSerialize for Option<T> {
    #[inline]
    fn wire_serialize<S: Serializer>(&self, revs: Revisions, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Some(v) => v.wire_serialize(revs, serializer),
            None => serializer.serialize_none(),
        }
    }
}

impl<T: WireSerialize> WireSerialize for [T] {
    fn wire_serialize<S: Serializer>(&self, revs: Revisions, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for item in self {
            seq.serialize_element(&ForRevision { value: item, revs })?;
        }
        seq.end()
    }
}

impl<T: WireSerialize> WireSerialize for Vec<T> {
    #[inline]
    fn wire_serialize<S: Serializer>(&self, revs: Revisions, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_slice().wire_serialize(revs, serializer)
    }
}

impl<T: WireSerialize> WireSerialize for BTreeMap<String, T> {
    fn wire_serialize<S: Serializer>(&self, revs: Revisions, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            map.serialize_entry(k, &ForRevision { value: v, revs })?;
        }
        map.end()
    }
}

impl<T: WireSerialize, H: std::hash::BuildHasher> WireSerialize for indexmap::IndexMap<String, T, H> {
    fn wire_serialize<S: Serializer>(&self, revs: Revisions, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            map.serialize_entry(k, &ForRevision { value: v, revs })?;
        }
        map.end()
    }
}

impl<T: WireSerialize, H: std::hash::BuildHasher> WireSerialize for HashMap<String, T, H> {
    fn wire_serialize<S: Serializer>(&self, revs: Revisions, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            map.serialize_entry(k, &ForRevision { value: v, revs })?;
        }
        map.end()
    }
}

/// Scores how well a JSON value fits a type, for decoding unions whose variants carry no
/// distinguishing tag: `None` when it cannot be that type (a required field or a constant is
/// missing or wrong), else the number of the value's keys the type knows.
pub(crate) trait Probe {
    /// The score of `v` for this type.
    fn probe(v: &serde_json::Value) -> Option<u32>;
}

macro_rules! probe_leaf {
    ($($t:ty => $check:expr),* $(,)?) => {$(
        impl Probe for $t {
            #[inline]
            fn probe(v: &serde_json::Value) -> Option<u32> {
                let check: fn(&serde_json::Value) -> bool = $check;
                check(v).then_some(0)
            }
        }
    )*};
}

probe_leaf!(
    String => serde_json::Value::is_string,
    bool => serde_json::Value::is_boolean,
    i64 => |v| v.is_i64() || v.is_u64(),
    f64 => serde_json::Value::is_number,
    serde_json::Value => |_| true,
    serde_json::Map<String, serde_json::Value> => serde_json::Value::is_object,
);

/// An array fits when its first element fits (an empty one always does).
impl<T: Probe> Probe for Vec<T> {
    fn probe(v: &serde_json::Value) -> Option<u32> {
        match v.as_array()?.first() {
            Some(first) => T::probe(first),
            None => Some(0),
        }
    }
}

/// A map fits when its first value fits (an empty one always does).
impl<T: Probe> Probe for BTreeMap<String, T> {
    fn probe(v: &serde_json::Value) -> Option<u32> {
        match v.as_object()?.values().next() {
            Some(first) => T::probe(first).map(|_| 0),
            None => Some(0),
        }
    }
}

/// A map fits when its first value fits (an empty one always does).
impl<T: Probe> Probe for indexmap::IndexMap<String, T> {
    fn probe(v: &serde_json::Value) -> Option<u32> {
        match v.as_object()?.values().next() {
            Some(first) => T::probe(first).map(|_| 0),
            None => Some(0),
        }
    }
}

/// Any JSON value, read from any deserializer and kept as its JSON text, object members in the
/// order they came. `serde_json::Value` sorts them (unless serde_json's `preserve_order`
/// feature is on, which would slow every decode): a union holding an ordered map (the fields
/// of an elicitation form) is buffered as this instead, then decoded from the text.
pub(crate) struct JsonText(String);

impl JsonText {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> serde::Deserialize<'de> for JsonText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut out = String::new();
        d.deserialize_any(TextVisitor(&mut out))?;
        Ok(JsonText(out))
    }
}

/// Writes the value it visits as JSON text into its string.
struct TextVisitor<'a>(&'a mut String);

/// A value nested in an array or object, written into the parent's string.
struct Nested<'a>(&'a mut String);

impl<'de> serde::de::DeserializeSeed<'de> for Nested<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(TextVisitor(self.0))
    }
}

impl TextVisitor<'_> {
    fn json<T: Serialize + ?Sized, E: serde::de::Error>(self, v: &T) -> Result<(), E> {
        let text = serde_json::to_string(v).map_err(E::custom)?;
        self.0.push_str(&text);
        Ok(())
    }
}

impl<'de> serde::de::Visitor<'de> for TextVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<(), E> {
        self.json(&v)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.json(&v)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.json(&v)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        // `to_string` writes a non-finite number as `null`: refuse it instead.
        if !v.is_finite() {
            return Err(E::custom("a number that is not finite"));
        }
        self.json(&v)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        self.json(v)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.0.push_str("null");
        Ok(())
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.push('[');
        let mut first = true;
        loop {
            let mark = self.0.len();
            if !first {
                self.0.push(',');
            }
            if seq.next_element_seed(Nested(self.0))?.is_none() {
                self.0.truncate(mark);
                break;
            }
            first = false;
        }
        self.0.push(']');
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.push('{');
        let mut first = true;
        while let Some(key) = map.next_key::<String>()? {
            if !first {
                self.0.push(',');
            }
            first = false;
            let key = serde_json::to_string(&key).map_err(serde::de::Error::custom)?;
            self.0.push_str(&key);
            self.0.push(':');
            map.next_value_seed(Nested(self.0))?;
        }
        self.0.push('}');
        Ok(())
    }
}

/// The index of the highest score; the first one wins a tie.
pub(crate) fn best(scores: &[Option<u32>]) -> Option<usize> {
    let mut best: Option<(u32, usize)> = None;
    for (i, s) in scores.iter().enumerate() {
        if let Some(s) = *s
            && best.is_none_or(|(b, _)| s > b)
        {
            best = Some((s, i));
        }
    }
    best.map(|(_, i)| i)
}

/// Deserializes a string through a parsing function, borrowing where the input allows.
pub(crate) struct StrVisitor<F>(pub(crate) F);

impl<T, F: FnOnce(&str) -> T> serde::de::Visitor<'_> for StrVisitor<F> {
    type Value = T;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        Ok((self.0)(v))
    }
}
