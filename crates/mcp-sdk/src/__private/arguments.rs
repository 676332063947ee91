//! A tool's argument decoded from its JSON as serde's derive decodes a field: a missing one is
//! `None` for an `Option`, and a number the input schema counts as an integer (`2.0`) decodes
//! as one.

use serde_json::Value;

/// Deserializes `T` from a missing field the way serde's derive does: `Option` gives `None`,
/// anything else an error. That makes `Option<T>` parameters optional.
pub(super) struct Missing;

impl<'de> serde::Deserializer<'de> for Missing {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("missing"))
    }

    fn deserialize_option<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// A number written with a fraction of zero (`2.0`) within `value`.
pub(super) fn has_integral_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64().is_some_and(|f| n.is_f64() && f.fract() == 0.0),
        Value::Array(items) => items.iter().any(has_integral_float),
        Value::Object(members) => members.values().any(has_integral_float),
        _ => false,
    }
}

/// `value` with every number written with a fraction of zero made an integer (where it fits).
pub(super) fn integral_floats_as_integers(value: Value) -> Value {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.2e18 => Value::from(f as i64),
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(integral_floats_as_integers).collect()),
        Value::Object(members) => {
            Value::Object(members.into_iter().map(|(k, v)| (k, integral_floats_as_integers(v))).collect())
        }
        other => other,
    }
}
