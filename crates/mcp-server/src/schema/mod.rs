//! JSON Schema, as far as a server checks it itself: the built-in checker of the subset that
//! tool input schemas use (this module: what a compiled [`Schema`] holds and how it is
//! compiled; `valid`: the verdict; `problems`: what is wrong, in jsonschema's words), and the
//! forms of elicitation derived from Rust types (`form`).
//!
//! The lowest layer of the crate, with `bus`, `error` and `trace`: it uses nothing else of it.
//!
//! The checker: a small, exact validator for the part of JSON Schema 2020-12 that tool input schemas use.
//!
//! Why it exists: `jsonschema::validator_for` first validates every schema against the draft
//! 2020-12 meta-schema, which costs about 6 M instructions and 600 KB of heap when the first
//! tool is defined, and jsonschema has no public switch to skip it. That one step dominated the
//! cold start and the idle memory of a server. The schemas tools actually carry (written by
//! hand, or derived by `schemars` with subschemas inlined, as the macros do) use a handful of
//! keywords, which this module checks directly.
//!
//! [`Schema::compile`] accepts a schema only when it understands every keyword in it and every
//! keyword is well formed (as the meta-schema would demand); anything else (`$ref`, `pattern`,
//! `prefixItems`, an unknown keyword, a malformed value, another `$schema`) gives `None`, and
//! the tool keeps using jsonschema exactly as before, including its error for a schema that
//! does not compile (feature `jsonschema`; without it, such a tool's arguments are not checked
//! at all, with a warning when it is defined: see the crate docs). For the schemas it accepts, the verdict is jsonschema's for every instance:
//! numbers compare by exact value across `u64`, `i64` and `f64` (as jsonschema's `num-cmp`),
//! `1.0` is an integer, string lengths count code points, `format` is an annotation (its
//! default in 2020-12). Error messages follow jsonschema's wording.
//!
//! Supported: boolean schemas; `type`, `enum`, `const`; `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum`; `minLength`, `maxLength`; `items`, `minItems`,
//! `maxItems`; `properties`, `required`, `additionalProperties`, `minProperties`,
//! `maxProperties`; `allOf`, `anyOf`, `oneOf`, `not`; and the annotations `title`,
//! `description`, `$comment`, `default`, `examples`, `deprecated`, `readOnly`, `writeOnly`,
//! `format`, plus `$schema` (draft 2020-12 only) at the root.

use std::fmt;
use std::sync::OnceLock;

use serde_json::{Map, Number, Value};

pub(crate) mod form;
mod problems;
#[cfg(test)]
mod tests;
mod valid;

/// The only `$schema` accepted (at the root): the draft jsonschema assumes without one.
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// A compiled schema of the subset.
#[derive(Debug)]
pub(crate) struct Schema {
    root: Node,
}

#[derive(Debug)]
enum Node {
    Bool(bool),
    Keywords(Box<Keywords>),
}

/// The keywords of one object schema; absent ones are `None` or empty.
#[derive(Debug, Default)]
struct Keywords {
    types: Option<Types>,
    constant: Option<Value>,
    enumeration: Option<Vec<Value>>,
    minimum: Option<Number>,
    maximum: Option<Number>,
    exclusive_minimum: Option<Number>,
    exclusive_maximum: Option<Number>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    items: Option<Node>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    /// Sorted by name, for binary search.
    properties: Vec<(String, Node)>,
    /// Whether `properties` is there at all (even empty): jsonschema words `additionalProperties:
    /// false` differently without it.
    has_properties: bool,
    required: Vec<String>,
    additional_properties: Option<Node>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    all_of: Vec<Node>,
    any_of: Vec<Node>,
    one_of: Vec<Node>,
    /// The subschema, and its JSON for the error message.
    not: Option<(Node, Value)>,
}

/// A set of JSON types, in jsonschema's order (which its messages list them in).
#[derive(Debug, Clone, Copy)]
struct Types(u8);

const TYPE_NAMES: [&str; 7] = ["null", "boolean", "integer", "number", "string", "array", "object"];
const NULL: u8 = 1;
const BOOLEAN: u8 = 1 << 1;
const INTEGER: u8 = 1 << 2;
const NUMBER: u8 = 1 << 3;
const STRING: u8 = 1 << 4;
const ARRAY: u8 = 1 << 5;
const OBJECT: u8 = 1 << 6;

impl Types {
    fn parse(name: &str) -> Option<u8> {
        TYPE_NAMES.iter().position(|t| *t == name).map(|i| 1 << i)
    }

    fn compile(value: &Value) -> Option<Types> {
        match value {
            Value::String(name) => Types::parse(name).map(Types),
            Value::Array(names) if !names.is_empty() => {
                let mut set = 0;
                for name in names {
                    let bit = Types::parse(name.as_str()?)?;
                    if set & bit != 0 {
                        return None; // the meta-schema wants unique items
                    }
                    set |= bit;
                }
                Some(Types(set))
            }
            _ => None,
        }
    }
}

impl fmt::Display for Types {
    /// `"string"`, or `"string", "null"`: as jsonschema writes them after "is not of type(s)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (i, name) in TYPE_NAMES.iter().enumerate() {
            if self.0 & (1 << i) != 0 {
                if !first {
                    f.write_str(", ")?;
                }
                write!(f, "\"{name}\"")?;
                first = false;
            }
        }
        Ok(())
    }
}

/// Whether serde_json keeps numbers as text (`arbitrary_precision`, enabled by any crate in
/// the build): numbers may then be past `f64`, where jsonschema can reason in big numbers, so
/// every schema goes to jsonschema.
fn numbers_are_arbitrary_precision() -> bool {
    static ARBITRARY: OnceLock<bool> = OnceLock::new();
    *ARBITRARY.get_or_init(|| serde_json::from_str::<Value>("1e400").is_ok())
}

impl Schema {
    /// Compiles `schema` if it lies entirely within the subset, and is well formed there;
    /// `None` otherwise (jsonschema then validates it, or reports what is wrong with it).
    #[cfg_attr(not(test), allow(dead_code))] // tools compile their object schemas with `compile_object`
    pub(crate) fn compile(schema: &Value) -> Option<Schema> {
        if numbers_are_arbitrary_precision() {
            return None;
        }
        Node::compile(schema, true).map(|root| Schema { root })
    }

    /// [`Schema::compile`] for an object schema.
    pub(crate) fn compile_object(schema: &Map<String, Value>) -> Option<Schema> {
        if numbers_are_arbitrary_precision() {
            return None;
        }
        Keywords::compile(schema, true).map(|k| Schema { root: Node::Keywords(Box::new(k)) })
    }
}

impl Node {
    fn compile(schema: &Value, root: bool) -> Option<Node> {
        match schema {
            Value::Bool(b) => Some(Node::Bool(*b)),
            Value::Object(m) => Keywords::compile(m, root).map(|k| Node::Keywords(Box::new(k))),
            _ => None,
        }
    }

    fn compile_list(schemas: &Value) -> Option<Vec<Node>> {
        match schemas {
            Value::Array(list) if !list.is_empty() => list.iter().map(|s| Node::compile(s, false)).collect(),
            _ => None,
        }
    }
}

/// A non-negative integer (the meta-schema's `nonNegativeInteger`), as a `u64`.
fn size(value: &Value) -> Option<u64> {
    value.as_u64()
}

/// A list of unique strings (the meta-schema's `stringArray`).
fn unique_strings(value: &Value) -> Option<Vec<String>> {
    let mut strings: Vec<String> = Vec::new();
    for item in value.as_array()? {
        let s = item.as_str()?;
        if strings.iter().any(|seen| seen == s) {
            return None;
        }
        strings.push(s.to_owned());
    }
    Some(strings)
}

impl Keywords {
    fn compile(schema: &Map<String, Value>, root: bool) -> Option<Keywords> {
        let mut k = Keywords::default();
        for (keyword, value) in schema {
            match keyword.as_str() {
                "type" => k.types = Some(Types::compile(value)?),
                "const" => k.constant = Some(value.clone()),
                "enum" => k.enumeration = Some(value.as_array()?.clone()),
                "minimum" => k.minimum = Some(value.as_number()?.clone()),
                "maximum" => k.maximum = Some(value.as_number()?.clone()),
                "exclusiveMinimum" => k.exclusive_minimum = Some(value.as_number()?.clone()),
                "exclusiveMaximum" => k.exclusive_maximum = Some(value.as_number()?.clone()),
                "minLength" => k.min_length = Some(size(value)?),
                "maxLength" => k.max_length = Some(size(value)?),
                "items" => k.items = Some(Node::compile(value, false)?),
                "minItems" => k.min_items = Some(size(value)?),
                "maxItems" => k.max_items = Some(size(value)?),
                "properties" => {
                    let mut properties = Vec::new();
                    for (name, subschema) in value.as_object()? {
                        properties.push((name.clone(), Node::compile(subschema, false)?));
                    }
                    properties.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                    k.properties = properties;
                    k.has_properties = true;
                }
                "required" => k.required = unique_strings(value)?,
                "additionalProperties" => k.additional_properties = Some(Node::compile(value, false)?),
                "minProperties" => k.min_properties = Some(size(value)?),
                "maxProperties" => k.max_properties = Some(size(value)?),
                "allOf" => k.all_of = Node::compile_list(value)?,
                "anyOf" => k.any_of = Node::compile_list(value)?,
                "oneOf" => k.one_of = Node::compile_list(value)?,
                "not" => k.not = Some((Node::compile(value, false)?, value.clone())),
                // Annotations: no effect on validity, but typed by the meta-schema.
                "title" | "description" | "$comment" | "format" => {
                    value.as_str()?;
                }
                "deprecated" | "readOnly" | "writeOnly" => {
                    value.as_bool()?;
                }
                "examples" => {
                    value.as_array()?;
                }
                "default" => {}
                "$schema" if root && value.as_str() == Some(DRAFT_2020_12) => {}
                _ => return None,
            }
        }
        Some(k)
    }

    fn property(&self, name: &str) -> Option<&Node> {
        self.properties.binary_search_by(|(p, _)| p.as_str().cmp(name)).ok().map(|i| &self.properties[i].1)
    }
}
