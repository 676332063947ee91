//! The verdict of a compiled [`Schema`]: whether an instance is valid (on every tool call,
//! allocation-free), and the exact comparison of JSON numbers and values it rests on.

use std::cmp::Ordering;

use serde_json::{Number, Value};

use super::{ARRAY, BOOLEAN, INTEGER, Keywords, NULL, NUMBER, Node, OBJECT, STRING, Schema, Types};

impl Schema {
    /// Whether `instance` is valid. Does not allocate.
    pub(crate) fn is_valid(&self, instance: &Value) -> bool {
        self.root.is_valid(instance)
    }
}

impl Types {
    pub(super) fn matches(self, value: &Value) -> bool {
        let bits = match value {
            Value::Null => NULL,
            Value::Bool(_) => BOOLEAN,
            Value::Number(n) if is_integer(n) => INTEGER | NUMBER,
            Value::Number(_) => NUMBER,
            Value::String(_) => STRING,
            Value::Array(_) => ARRAY,
            Value::Object(_) => OBJECT,
        };
        self.0 & bits != 0
    }
}

impl Node {
    pub(super) fn is_valid(&self, instance: &Value) -> bool {
        match self {
            Node::Bool(b) => *b,
            Node::Keywords(k) => k.is_valid(instance),
        }
    }
}

impl Keywords {
    fn is_valid(&self, instance: &Value) -> bool {
        if self.types.is_some_and(|t| !t.matches(instance)) {
            return false;
        }
        if self.constant.as_ref().is_some_and(|c| !equal(instance, c)) {
            return false;
        }
        if self.enumeration.as_ref().is_some_and(|options| !options.iter().any(|o| equal(instance, o))) {
            return false;
        }
        match instance {
            Value::Number(n) => {
                if !self.number_is_valid(n) {
                    return false;
                }
            }
            Value::String(s) => {
                if !self.length_is_valid(s) {
                    return false;
                }
            }
            Value::Array(items) => {
                if !within(items.len() as u64, self.min_items, self.max_items) {
                    return false;
                }
                if let Some(schema) = &self.items
                    && !items.iter().all(|item| schema.is_valid(item))
                {
                    return false;
                }
            }
            Value::Object(object) => {
                if !within(object.len() as u64, self.min_properties, self.max_properties) {
                    return false;
                }
                if !self.required.iter().all(|name| object.contains_key(name)) {
                    return false;
                }
                if !self.properties.is_empty() || self.additional_properties.is_some() {
                    for (name, value) in object {
                        let valid = match (self.property(name), &self.additional_properties) {
                            (Some(schema), _) | (None, Some(schema)) => schema.is_valid(value),
                            (None, None) => true,
                        };
                        if !valid {
                            return false;
                        }
                    }
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
        self.all_of.iter().all(|s| s.is_valid(instance))
            && (self.any_of.is_empty() || self.any_of.iter().any(|s| s.is_valid(instance)))
            && (self.one_of.is_empty() || self.one_of_matches(instance) == 1)
            && self.not.as_ref().is_none_or(|(s, _)| !s.is_valid(instance))
    }

    /// How many `oneOf` branches `instance` is valid under: 0, 1, or 2 for "more than one".
    pub(super) fn one_of_matches(&self, instance: &Value) -> usize {
        let mut matches = 0;
        for schema in &self.one_of {
            if schema.is_valid(instance) {
                matches += 1;
                if matches == 2 {
                    break;
                }
            }
        }
        matches
    }

    /// The numeric bounds: each with its limit, whether an order of the instance against the
    /// limit satisfies it, and the wording of its message.
    #[allow(clippy::type_complexity)]
    pub(super) fn bounds(&self) -> [(&Option<Number>, fn(Ordering) -> bool, &'static str); 4] {
        [
            (&self.minimum, |o| o != Ordering::Less, "is less than the minimum of"),
            (&self.maximum, |o| o != Ordering::Greater, "is greater than the maximum of"),
            (&self.exclusive_minimum, |o| o == Ordering::Greater, "is less than or equal to the minimum of"),
            (&self.exclusive_maximum, |o| o == Ordering::Less, "is greater than or equal to the maximum of"),
        ]
    }

    fn number_is_valid(&self, n: &Number) -> bool {
        let value = Num::of(n);
        self.bounds().into_iter().all(|(limit, ok, _)| limit.as_ref().is_none_or(|l| ok(value.cmp(Num::of(l)))))
    }

    pub(super) fn length_is_valid(&self, s: &str) -> bool {
        if self.min_length.is_none() && self.max_length.is_none() {
            return true;
        }
        within(s.chars().count() as u64, self.min_length, self.max_length)
    }
}

/// Whether a size is within the bounds.
fn within(len: u64, min: Option<u64>, max: Option<u64>) -> bool {
    min.is_none_or(|min| len >= min) && max.is_none_or(|max| len <= max)
}

/// A JSON number as serde_json holds it (without `arbitrary_precision`: always one of these,
/// finite).
#[derive(Debug, Clone, Copy)]
pub(super) enum Num {
    U(u64),
    I(i64),
    F(f64),
}

impl Num {
    pub(super) fn of(n: &Number) -> Num {
        if let Some(u) = n.as_u64() {
            Num::U(u)
        } else if let Some(i) = n.as_i64() {
            Num::I(i)
        } else {
            // Always `Some` without `arbitrary_precision`, which `Schema::compile` rules out.
            Num::F(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    /// The exact order of two numbers, by value (`1 == 1.0`, `2^53 + 1 > 2^53 as f64`), as
    /// `num-cmp` gives it to jsonschema. NaN, which JSON cannot hold, orders as `Less`.
    pub(super) fn cmp(self, other: Num) -> Ordering {
        match (self, other) {
            (Num::F(a), Num::F(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Less),
            (Num::F(a), b) => int_vs_float(b.integer(), a).reverse(),
            (a, Num::F(b)) => int_vs_float(a.integer(), b),
            (a, b) => a.integer().cmp(&b.integer()),
        }
    }

    fn integer(self) -> i128 {
        match self {
            Num::U(u) => i128::from(u),
            Num::I(i) => i128::from(i),
            Num::F(_) => 0, // not called for floats
        }
    }
}

/// The exact order of an integer (in `i64` or `u64` range) and a float.
fn int_vs_float(int: i128, float: f64) -> Ordering {
    const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
    const MINUS_TWO_POW_63: f64 = -9_223_372_036_854_775_808.0;
    if float.is_nan() {
        return Ordering::Less;
    }
    if float >= TWO_POW_64 {
        return Ordering::Less;
    }
    if float < MINUS_TWO_POW_63 {
        return Ordering::Greater;
    }
    // In [-2^63, 2^64): the integral part is exact in i128.
    let truncated = float.trunc();
    #[allow(clippy::cast_possible_truncation)]
    match int.cmp(&(truncated as i128)) {
        Ordering::Equal => truncated.partial_cmp(&float).unwrap_or(Ordering::Less),
        order => order,
    }
}

/// Whether a number is an integer: `1.0` is (drafts 6 and later, as jsonschema).
fn is_integer(n: &Number) -> bool {
    match Num::of(n) {
        Num::U(_) | Num::I(_) => true,
        Num::F(f) => f.fract() == 0.0,
    }
}

/// JSON equality as JSON Schema means it (for `const` and `enum`): numbers by value, objects
/// whatever their key order.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Number(a), Value::Number(b)) => Num::of(a).cmp(Num::of(b)) == Ordering::Equal,
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b)),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => false,
    }
}
