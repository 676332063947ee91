//! A small, exact validator for the part of JSON Schema 2020-12 that tool input schemas use.
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

use std::cmp::Ordering;
use std::fmt;
use std::sync::OnceLock;

use serde_json::{Map, Number, Value};

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

    fn matches(self, value: &Value) -> bool {
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

    /// Whether `instance` is valid. Does not allocate.
    pub(crate) fn is_valid(&self, instance: &Value) -> bool {
        self.root.is_valid(instance)
    }

    /// What is wrong with `instance`, at most `max` problems: one line each, `/json/pointer:
    /// message` (only the message at the root). Empty when it is valid.
    pub(crate) fn problems(&self, instance: &Value, max: usize) -> Vec<String> {
        let mut problems = Problems { lines: Vec::new(), max, path: String::new() };
        if max > 0 {
            self.root.collect(instance, &mut problems);
        }
        problems.lines
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

    fn is_valid(&self, instance: &Value) -> bool {
        match self {
            Node::Bool(b) => *b,
            Node::Keywords(k) => k.is_valid(instance),
        }
    }

    fn collect(&self, instance: &Value, problems: &mut Problems) {
        match self {
            Node::Bool(true) => {}
            Node::Bool(false) => problems.push(format_args!("False schema does not allow {instance}")),
            Node::Keywords(k) => k.collect(instance, problems),
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
    fn one_of_matches(&self, instance: &Value) -> usize {
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
    fn bounds(&self) -> [(&Option<Number>, fn(Ordering) -> bool, &'static str); 4] {
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

    fn length_is_valid(&self, s: &str) -> bool {
        if self.min_length.is_none() && self.max_length.is_none() {
            return true;
        }
        within(s.chars().count() as u64, self.min_length, self.max_length)
    }

    /// The problems of `instance`, in jsonschema's words: the keywords of every type, then those
    /// of its own type, then the applicators.
    fn collect(&self, instance: &Value, problems: &mut Problems) {
        self.collect_common(instance, problems);
        let done = match instance {
            Value::Number(n) => self.collect_number(instance, n, problems),
            Value::String(s) => self.collect_string(instance, s, problems),
            Value::Array(items) => self.collect_array(instance, items, problems),
            Value::Object(object) => self.collect_object(instance, object, problems),
            Value::Null | Value::Bool(_) => false,
        };
        if !done {
            self.collect_applicators(instance, problems);
        }
    }

    /// `type`, `const`, `enum`.
    fn collect_common(&self, instance: &Value, problems: &mut Problems) {
        if let Some(types) = self.types
            && !types.matches(instance)
        {
            if types.0.count_ones() == 1 {
                problems.push(format_args!("{instance} is not of type {types}"));
            } else {
                problems.push(format_args!("{instance} is not of types {types}"));
            }
        }
        if let Some(constant) = &self.constant
            && !equal(instance, constant)
        {
            problems.push(format_args!("{constant} was expected"));
        }
        if let Some(options) = &self.enumeration
            && !options.iter().any(|o| equal(instance, o))
        {
            problems.push(format_args!("{instance} is not one of {}", EnumOptions(options)));
        }
    }

    /// The bounds of a number. Each `collect_*` of a type returns whether the walk is over
    /// (the problems are full), so that the applicators are not visited.
    fn collect_number(&self, instance: &Value, n: &serde_json::Number, problems: &mut Problems) -> bool {
        let value = Num::of(n);
        for (limit, ok, message) in self.bounds() {
            if let Some(limit) = limit
                && !ok(value.cmp(Num::of(limit)))
            {
                problems.push(format_args!("{instance} {message} {limit}"));
            }
        }
        false
    }

    /// `minLength`, `maxLength`.
    fn collect_string(&self, instance: &Value, s: &str, problems: &mut Problems) -> bool {
        if !self.length_is_valid(s) {
            let length = s.chars().count() as u64;
            let plural = |limit: u64| if limit == 1 { "" } else { "s" };
            if let Some(min) = self.min_length.filter(|min| length < *min) {
                problems.push(format_args!("{instance} is shorter than {min} character{}", plural(min)));
            }
            if let Some(max) = self.max_length.filter(|max| length > *max) {
                problems.push(format_args!("{instance} is longer than {max} character{}", plural(max)));
            }
        }
        false
    }

    /// `minItems`, `maxItems`, `items`.
    fn collect_array(&self, instance: &Value, items: &[Value], problems: &mut Problems) -> bool {
        let (len, plural) = (items.len() as u64, |limit: u64| if limit == 1 { "" } else { "s" });
        if let Some(min) = self.min_items.filter(|min| len < *min) {
            problems.push(format_args!("{instance} has less than {min} item{}", plural(min)));
        }
        if let Some(max) = self.max_items.filter(|max| len > *max) {
            problems.push(format_args!("{instance} has more than {max} item{}", plural(max)));
        }
        if let Some(schema) = &self.items {
            for (i, item) in items.iter().enumerate() {
                if problems.full() {
                    return true;
                }
                if !schema.is_valid(item) {
                    problems.at(&i.to_string(), |p| schema.collect(item, p));
                }
            }
        }
        false
    }

    /// `minProperties`, `maxProperties`, `required`, `properties`, `additionalProperties`.
    fn collect_object(&self, instance: &Value, object: &Map<String, Value>, problems: &mut Problems) -> bool {
        let (len, plural) = (object.len() as u64, |limit: u64| if limit == 1 { "y" } else { "ies" });
        if let Some(min) = self.min_properties.filter(|min| len < *min) {
            problems.push(format_args!("{instance} has less than {min} propert{}", plural(min)));
        }
        if let Some(max) = self.max_properties.filter(|max| len > *max) {
            problems.push(format_args!("{instance} has more than {max} propert{}", plural(max)));
        }
        for name in &self.required {
            if !object.contains_key(name) {
                problems.push(format_args!("{} is a required property", Value::String(name.clone())));
            }
        }
        if let (false, Some(Node::Bool(false)), Some((_, first))) =
            (self.has_properties, &self.additional_properties, object.iter().next())
        {
            // jsonschema's wording for this case: the first value, at the object.
            problems.push(format_args!("False schema does not allow {first}"));
            return false;
        }
        let mut unexpected = Vec::new();
        for (name, value) in object {
            if problems.full() {
                return true;
            }
            match (self.property(name), &self.additional_properties) {
                (None, Some(Node::Bool(false))) => unexpected.push(name.as_str()),
                (Some(schema), _) | (None, Some(schema)) => {
                    if !schema.is_valid(value) {
                        problems.at(name, |p| schema.collect(value, p));
                    }
                }
                (None, None) => {}
            }
        }
        if !unexpected.is_empty() {
            let verb = if unexpected.len() == 1 { "was" } else { "were" };
            let names = QuotedList(&unexpected);
            problems.push(format_args!("Additional properties are not allowed ({names} {verb} unexpected)"));
        }
        false
    }

    /// The problems of `allOf`, `anyOf`, `oneOf` and `not`.
    fn collect_applicators(&self, instance: &Value, problems: &mut Problems) {
        for schema in &self.all_of {
            if !schema.is_valid(instance) {
                schema.collect(instance, problems);
            }
        }
        if !self.any_of.is_empty() && !self.any_of.iter().any(|s| s.is_valid(instance)) {
            problems
                .push(format_args!("{instance} is not valid under any of the schemas listed in the 'anyOf' keyword"));
        }
        if !self.one_of.is_empty() {
            match self.one_of_matches(instance) {
                0 => problems.push(format_args!(
                    "{instance} is not valid under any of the schemas listed in the 'oneOf' keyword"
                )),
                1 => {}
                _ => problems.push(format_args!(
                    "{instance} is valid under more than one of the schemas listed in the 'oneOf' keyword"
                )),
            }
        }
        if let Some((schema, json)) = &self.not
            && schema.is_valid(instance)
        {
            problems.push(format_args!("{json} is not allowed for {instance}"));
        }
    }
}

/// Whether a size is within the bounds.
fn within(len: u64, min: Option<u64>, max: Option<u64>) -> bool {
    min.is_none_or(|min| len >= min) && max.is_none_or(|max| len <= max)
}

/// The problems found so far, and the instance path being checked.
struct Problems {
    lines: Vec<String>,
    max: usize,
    /// A JSON pointer: empty at the root, then `/name/0`.
    path: String,
}

impl Problems {
    fn full(&self) -> bool {
        self.lines.len() >= self.max
    }

    fn push(&mut self, message: fmt::Arguments<'_>) {
        if self.full() {
            return;
        }
        self.lines.push(if self.path.is_empty() { message.to_string() } else { format!("{}: {message}", self.path) });
    }

    /// Runs `check` one level down, at `segment`.
    fn at(&mut self, segment: &str, check: impl FnOnce(&mut Problems)) {
        let len = self.path.len();
        self.path.push('/');
        for c in segment.chars() {
            match c {
                '~' => self.path.push_str("~0"),
                '/' => self.path.push_str("~1"),
                c => self.path.push(c),
            }
        }
        check(self);
        self.path.truncate(len);
    }
}

/// `'a', 'b'`: unexpected property names, as jsonschema lists them.
struct QuotedList<'a>(&'a [&'a str]);

impl fmt::Display for QuotedList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "'{name}'")?;
        }
        Ok(())
    }
}

/// `1, 2 or 3`, or `1, 2 or 5 other candidates`: enum options, as jsonschema lists them.
struct EnumOptions<'a>(&'a [Value]);

impl fmt::Display for EnumOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 3;
        let options = self.0;
        if options.len() <= SHOWN {
            for (i, option) in options.iter().enumerate() {
                match i {
                    0 => write!(f, "{option}")?,
                    i if i == options.len() - 1 => write!(f, " or {option}")?,
                    _ => write!(f, ", {option}")?,
                }
            }
        } else {
            for (i, option) in options.iter().take(SHOWN - 1).enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{option}")?;
            }
            write!(f, " or {} other candidates", options.len() - (SHOWN - 1))?;
        }
        Ok(())
    }
}

/// A JSON number as serde_json holds it (without `arbitrary_precision`: always one of these,
/// finite).
#[derive(Debug, Clone, Copy)]
enum Num {
    U(u64),
    I(i64),
    F(f64),
}

impl Num {
    fn of(n: &Number) -> Num {
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
    fn cmp(self, other: Num) -> Ordering {
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
fn equal(a: &Value, b: &Value) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// SplitMix64: a small seeded generator, so every run checks the same instances.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn chance(&mut self, percent: u64) -> bool {
            self.next() % 100 < percent
        }

        fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
            &items[self.below(items.len())]
        }
    }

    fn float(x: f64) -> Value {
        Value::Number(Number::from_f64(x).unwrap())
    }

    /// Scalars, with the numbers where exactness matters: integers written as floats, `2^53`
    /// and its neighbours, the ends of `u64` and `i64` as integers and as floats.
    fn scalars() -> Vec<Value> {
        vec![
            Value::Null,
            json!(true),
            json!(false),
            json!(0),
            json!(-1),
            json!(1),
            float(1.0),
            float(1.5),
            float(-0.5),
            float(-0.0),
            float(0.1),
            json!(2),
            json!(3),
            json!(5),
            json!(10),
            json!(100),
            json!(127),
            json!(128),
            json!(-128),
            json!(-129),
            json!(255),
            json!(256),
            json!(65535),
            json!(65536),
            json!(2_147_483_647),
            json!(4_294_967_296_u64),
            json!(9_007_199_254_740_992_u64),
            json!(9_007_199_254_740_993_u64),
            float(9_007_199_254_740_992.0),
            json!(u64::MAX),
            float(18_446_744_073_709_551_616.0),
            json!(i64::MIN),
            float(-9_223_372_036_854_775_808.0),
            json!(i64::MAX),
            float(1e308),
            float(-1e308),
            float(2.5),
            json!(""),
            json!("a"),
            json!("ab"),
            json!("abc"),
            json!("é"),
            json!("😀"),
            json!("日本語"),
            json!("xxxxxxxxxx"),
            json!("celsius"),
            json!("fahrenheit"),
            json!("kelvin"),
            json!("Circle"),
            json!("Square"),
            json!("Dot"),
            json!("A"),
            json!("C"),
            json!("1"),
            json!("not an email"),
        ]
    }

    fn composites() -> Vec<Value> {
        vec![
            json!([]),
            json!([1]),
            json!(["a"]),
            json!(["a", "b"]),
            json!([1, "a"]),
            json!([null]),
            json!([1, 2, 3]),
            json!([[1]]),
            json!([{}]),
            json!([1.0, 2]),
            json!({}),
            json!({"a": 1}),
            json!({"a": "x"}),
            json!({"x": null}),
            json!({"a": 1, "b": [1]}),
            json!({"text": "hi"}),
            json!({"text": 5}),
            json!({"kind": "Circle", "radius": 1}),
            json!({"kind": "Dot"}),
            json!({"A": "x"}),
            json!({"city": "Oslo"}),
            json!({"a": {"b": 1.0}, "c": null}),
        ]
    }

    struct Pools {
        scalars: Vec<Value>,
        composites: Vec<Value>,
        /// How often, in percent, a generated value ignores its schema; varied per instance.
        noise: u64,
    }

    impl Pools {
        fn any(&self, rng: &mut Rng, depth: u32) -> Value {
            match rng.below(10) {
                0..=5 => rng.pick(&self.scalars).clone(),
                6 | 7 => rng.pick(&self.composites).clone(),
                8 if depth > 0 => Value::Array((0..rng.below(4)).map(|_| self.any(rng, depth - 1)).collect()),
                9 if depth > 0 => {
                    let keys = ["a", "b", "x", "kind", "text", "zzz"];
                    let n = rng.below(4);
                    Value::Object((0..n).map(|_| (rng.pick(&keys).to_string(), self.any(rng, depth - 1))).collect())
                }
                _ => rng.pick(&self.scalars).clone(),
            }
        }

        /// An instance shaped by `schema` (so that many are valid), or not (so that many are not).
        fn instance(&self, schema: &Value, rng: &mut Rng, depth: u32) -> Value {
            let Value::Object(s) = schema else { return self.any(rng, depth) };
            if depth == 0 || rng.chance(self.noise) {
                return self.any(rng, depth);
            }
            if let Some(c) = s.get("const")
                && rng.chance(50)
            {
                return variant(c, rng);
            }
            if let Some(Value::Array(options)) = s.get("enum")
                && !options.is_empty()
                && rng.chance(60)
            {
                return variant(rng.pick(options), rng);
            }
            if let Some(not) = s.get("not")
                && rng.chance(40)
            {
                return self.instance(not, rng, depth);
            }
            for key in ["oneOf", "anyOf", "allOf"] {
                if let Some(Value::Array(branches)) = s.get(key)
                    && rng.chance(70)
                {
                    return self.instance(rng.pick(branches), rng, depth);
                }
            }
            let ty = match s.get("type") {
                Some(Value::String(t)) => t.as_str(),
                Some(Value::Array(types)) => rng.pick(types).as_str().unwrap(),
                _ if s.contains_key("properties") || s.contains_key("required") => "object",
                _ if s.contains_key("additionalProperties") || s.contains_key("minProperties") => "object",
                _ if s.contains_key("items") || s.contains_key("minItems") => "array",
                _ if s.contains_key("minLength") || s.contains_key("maxLength") => "string",
                _ if s.contains_key("minimum") || s.contains_key("exclusiveMinimum") => "number",
                _ if s.contains_key("maximum") || s.contains_key("exclusiveMaximum") => "number",
                _ => return self.any(rng, depth),
            };
            match ty {
                "null" => Value::Null,
                "boolean" => json!(rng.chance(50)),
                "integer" | "number" => self.number(s, ty == "integer", rng),
                "string" => string_near(s, self.noise, rng),
                "array" => {
                    let len = size_near(s, "minItems", "maxItems", self.noise, rng);
                    let items = s.get("items");
                    Value::Array(
                        (0..len)
                            .map(|_| match items {
                                Some(items) => self.instance(items, rng, depth - 1),
                                None => self.any(rng, depth - 1),
                            })
                            .collect(),
                    )
                }
                _ => {
                    let mut object = Map::new();
                    let required =
                        |name: &String| s.get("required").is_some_and(|r| r.as_array().unwrap().contains(&json!(name)));
                    if let Some(Value::Object(properties)) = s.get("properties") {
                        for (name, schema) in properties {
                            if rng.chance(if required(name) { 100 - self.noise } else { 70 }) {
                                object.insert(name.clone(), self.instance(schema, rng, depth - 1));
                            }
                        }
                    }
                    let additional = s.get("additionalProperties").filter(|a| a.is_object());
                    let extra = if additional.is_some() { rng.below(4) } else { usize::from(rng.chance(self.noise)) };
                    for i in 0..extra {
                        let value = match additional {
                            Some(schema) => self.instance(schema, rng, depth - 1),
                            None => self.any(rng, depth - 1),
                        };
                        object.insert(format!("{}{i}", rng.pick(&["k", "a/b~", "é"])), value);
                    }
                    Value::Object(object)
                }
            }
        }

        /// A number: mostly one the schema allows (by an `f64` reading of its bounds), else one
        /// at, next to or away from a bound.
        fn number(&self, s: &Map<String, Value>, integer: bool, rng: &mut Rng) -> Value {
            let bound = |k: &str| s.get(k).and_then(Value::as_number);
            let bounds: Vec<&Number> =
                ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"].into_iter().filter_map(bound).collect();
            if !bounds.is_empty() && rng.chance(self.noise.max(5) * 2) {
                let bound = *rng.pick(&bounds);
                return match (rng.below(6), bound.as_i64(), bound.as_u64()) {
                    (0, ..) => Value::Number(bound.clone()),
                    (1, ..) => float(bound.as_f64().unwrap()),
                    (2, Some(i), _) => json!(i.saturating_add(1)),
                    (3, Some(i), _) => json!(i.saturating_sub(1)),
                    (2 | 3, None, Some(u)) => json!(u.saturating_sub(1)),
                    (4, ..) => float(bound.as_f64().unwrap() + 0.5),
                    _ => float(bound.as_f64().unwrap() - 0.5),
                };
            }
            let f = |k: &str| bound(k).and_then(Number::as_f64);
            let allowed = |v: &&Value| {
                let x = v.as_f64().unwrap();
                (!integer || x.fract() == 0.0)
                    && f("minimum").is_none_or(|b| x >= b)
                    && f("maximum").is_none_or(|b| x <= b)
                    && f("exclusiveMinimum").is_none_or(|b| x > b)
                    && f("exclusiveMaximum").is_none_or(|b| x < b)
            };
            let numbers: Vec<&Value> = self.scalars.iter().filter(|v| v.is_number()).collect();
            let fitting: Vec<&Value> = numbers.iter().copied().filter(allowed).collect();
            match (fitting.is_empty() || rng.chance(self.noise), bounds.first()) {
                (false, _) => (*rng.pick(&fitting)).clone(),
                (true, Some(bound)) if !rng.chance(self.noise) => Value::Number((*bound).clone()),
                _ => (*rng.pick(&numbers)).clone(),
            }
        }
    }

    /// The same JSON value, or one equal to it written otherwise (`1` as `1.0`).
    fn variant(value: &Value, rng: &mut Rng) -> Value {
        match value {
            Value::Number(n) if rng.chance(50) => float(n.as_f64().unwrap()),
            Value::Array(items) => Value::Array(items.iter().map(|v| variant(v, rng)).collect()),
            Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), variant(v, rng))).collect()),
            v => v.clone(),
        }
    }

    /// A size: mostly within the bounds, else at or next to one.
    fn size_near(s: &Map<String, Value>, min: &str, max: &str, noise: u64, rng: &mut Rng) -> usize {
        let (min, max) = (s.get(min).and_then(Value::as_u64), s.get(max).and_then(Value::as_u64));
        let limits: Vec<usize> = [min, max].into_iter().flatten().map(|l| l as usize).collect();
        if !limits.is_empty() && rng.chance(noise.max(5) * 2) {
            return (*rng.pick(&limits) + rng.below(3)).saturating_sub(1);
        }
        let low = min.unwrap_or(0) as usize;
        let high = max.map_or(low + 3, |max| (max as usize).min(low + 3));
        if high < low { low } else { low + rng.below(high - low + 1) }
    }

    /// A string with a length in code points within or next to its bounds, of one- to
    /// four-byte characters.
    fn string_near(s: &Map<String, Value>, noise: u64, rng: &mut Rng) -> Value {
        let len = size_near(s, "minLength", "maxLength", noise, rng);
        Value::String((0..len).map(|_| *rng.pick(&['a', 'é', '語', '😀'])).collect())
    }

    /// Schemas within the subset: what schemars derives (the macros' settings: subschemas
    /// inlined, no `$schema`; and a root schema as `schema_for!` writes it), whole tool schemas,
    /// and edge cases for each keyword.
    fn schemas() -> Vec<Value> {
        [schemars_schemas(), tool_schemas(), edge_cases_of_values(), edge_cases_of_structure()].concat()
    }

    /// What schemars derives, one type at a time.
    fn schemars_schemas() -> Vec<Value> {
        vec![
            json!({"type": "string"}),
            json!({"type": ["string", "null"]}),
            json!({"format": "uint32", "minimum": 0, "type": "integer"}),
            json!({"format": "int64", "type": "integer"}),
            json!({"format": "double", "type": "number"}),
            json!({"type": "boolean"}),
            json!({"items": {"type": "string"}, "type": "array"}),
            json!({"properties": {"city": {"type": "string"}, "country": {"type": ["string", "null"]}},
                   "required": ["city"], "type": "object"}),
            json!({"additionalProperties": {"format": "int32", "type": "integer"}, "type": "object"}),
            json!({"enum": ["celsius", "fahrenheit"], "type": "string"}),
            json!({"enum": ["celsius", "fahrenheit", null], "type": ["string", "null"]}),
            tagged_enum(),
            externally_tagged_enum(),
            json!({"anyOf": [{"format": "int64", "type": "integer"}, {"type": "string"}]}),
            json!({"format": "int8", "maximum": 127, "minimum": -128, "type": "integer"}),
            json!({"maxLength": 1, "minLength": 1, "type": "string"}),
            json!({"format": "uint64", "minimum": 0, "type": ["integer", "null"]}),
            schemars_struct(),
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Inner", "type": "object",
                   "properties": {"city": {"type": "string"}, "country": {"type": ["string", "null"]}}, "required": ["city"]}),
        ]
    }

    /// Tool schemas as the macros and hand-written tools build them.
    fn tool_schemas() -> Vec<Value> {
        vec![
            json!({"type": "object", "properties": {"text": {"type": "string", "description": "the note"}}, "required": ["text"]}),
            json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
            json!({"type": "object", "properties": {"place": {"properties": {"city": {"type": "string"}}, "required": ["city"],
                   "type": "object"}, "unit": {"enum": ["celsius", "fahrenheit"], "type": "string"}, "shape": tagged_enum()},
                   "required": ["place", "unit"]}),
            json!({"type": "object", "properties": {}}),
        ]
    }

    /// Edge cases of the keywords on values: `type`, the bounds of numbers, `const` and `enum`.
    fn edge_cases_of_values() -> Vec<Value> {
        vec![
            json!(true),
            json!(false),
            json!({}),
            json!({"type": "integer"}),
            json!({"type": ["integer"]}),
            json!({"type": ["number", "string"]}),
            json!({"type": ["null", "boolean", "object", "array"]}),
            json!({"minimum": 9_007_199_254_740_993_u64}),
            json!({"maximum": 9_007_199_254_740_992.0}),
            json!({"maximum": u64::MAX, "exclusiveMinimum": i64::MIN}),
            json!({"exclusiveMaximum": 18_446_744_073_709_551_616.0, "minimum": -9_223_372_036_854_775_808.0}),
            json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1.5}),
            json!({"minimum": 1.5, "type": "integer"}),
            json!({"minimum": 5, "maximum": 2}),
            json!({"minimum": -0.5, "maximum": 0.1, "exclusiveMaximum": 0}),
            json!({"const": 1}),
            json!({"const": 9_007_199_254_740_993_u64}),
            json!({"const": {"a": [1, 2.0], "b": null}}),
            json!({"const": [1, "a", {"x": true}]}),
            json!({"const": null}),
            json!({"enum": [1, "a", null, [1], {"x": 1}]}),
            json!({"enum": [1.5, 2, -1]}),
            json!({"enum": [u64::MAX, 9_007_199_254_740_993_u64, 0.1]}),
            json!({"enum": []}),
            json!({"enum": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "celsius"]}),
        ]
    }

    /// Edge cases of the other keywords: sizes, arrays, objects, combinators, annotations.
    fn edge_cases_of_structure() -> Vec<Value> {
        vec![
            json!({"minLength": 2, "maxLength": 3}),
            json!({"maxLength": 0}),
            json!({"minLength": 4, "maxLength": 2}),
            json!({"minItems": 1, "maxItems": 2, "items": {"type": "integer"}}),
            json!({"items": false}),
            json!({"items": true, "type": "array"}),
            json!({"items": {"items": {"minimum": 1}}}),
            json!({"minProperties": 1, "maxProperties": 2}),
            json!({"properties": {"a": {"type": "string"}, "b": false, "c": true, "a/b~0": {"type": "integer"}},
                   "required": ["a"], "additionalProperties": false}),
            json!({"required": ["a", "b"]}),
            json!({"additionalProperties": {"type": "integer", "minimum": 0}, "properties": {"a": {"type": "string"}}}),
            json!({"additionalProperties": false}),
            json!({"anyOf": [{"type": "string"}, {"minimum": 3}]}),
            json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}),
            json!({"oneOf": [true, true]}),
            json!({"allOf": [{"minimum": 1}, {"maximum": 5}, {"type": "integer"}]}),
            json!({"not": {"type": "null"}}),
            json!({"not": {"properties": {"a": {"const": 1}}, "required": ["a"]}}),
            json!({"not": {}}),
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "T", "description": "d",
                   "$comment": "c", "default": 1, "examples": [1, "x"], "deprecated": true, "readOnly": false,
                   "writeOnly": false, "format": "email", "type": "string"}),
            json!({"format": "date-time"}),
            json!({"format": "no-such-format", "type": ["string", "integer"]}),
        ]
    }

    /// schemars' schema of a struct with a field of each kind.
    fn schemars_struct() -> Value {
        json!({
            "additionalProperties": false,
            "description": "Doc comment.",
            "properties": {
                "arr": {"items": {"format": "uint8", "maximum": 255, "minimum": 0, "type": "integer"},
                        "maxItems": 3, "minItems": 3, "type": "array"},
                "b": {"type": "boolean"},
                "c": {"maxLength": 1, "minLength": 1, "type": "string"},
                "d": {"default": 0, "format": "uint16", "maximum": 65535, "minimum": 0, "type": "integer"},
                "e": {"enum": ["celsius", "fahrenheit"], "type": "string"},
                "f": {"format": "double", "type": "number"},
                "i": {"format": "int64", "type": "integer"},
                "m": {"additionalProperties": {"format": "int32", "type": "integer"}, "type": "object"},
                "n": {"properties": {"city": {"type": "string"}, "country": {"type": ["string", "null"]}},
                      "required": ["city"], "type": "object"},
                "o": {"type": ["string", "null"]},
                "ou": {"format": "uint64", "minimum": 0, "type": ["integer", "null"]},
                "s": {"description": "the text", "type": "string"},
                "u": {"format": "uint32", "minimum": 0, "type": "integer"},
                "v": {"items": {"type": "string"}, "type": "array"}
            },
            "required": ["s", "u", "i", "f", "b", "v", "n", "m", "e", "arr", "c"],
            "type": "object"
        })
    }

    /// schemars' schema of an internally tagged enum.
    fn tagged_enum() -> Value {
        json!({"oneOf": [
            {"properties": {"kind": {"const": "Circle", "type": "string"}, "radius": {"format": "double", "type": "number"}},
             "required": ["kind", "radius"], "type": "object"},
            {"properties": {"kind": {"const": "Square", "type": "string"}, "side": {"format": "double", "type": "number"}},
             "required": ["kind", "side"], "type": "object"},
            {"properties": {"kind": {"const": "Dot", "type": "string"}}, "required": ["kind"], "type": "object"}
        ]})
    }

    /// schemars' schema of an externally tagged enum.
    fn externally_tagged_enum() -> Value {
        json!({"oneOf": [
            {"enum": ["C"], "type": "string"},
            {"additionalProperties": false, "properties": {"A": {"type": "string"}}, "required": ["A"], "type": "object"},
            {"additionalProperties": false,
             "properties": {"B": {"properties": {"x": {"format": "int32", "type": "integer"}}, "required": ["x"], "type": "object"}},
             "required": ["B"], "type": "object"}
        ]})
    }

    fn their_lines(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
        validator
            .iter_errors(instance)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() { e.to_string() } else { format!("{at}: {e}") }
            })
            .collect()
    }

    /// The same verdict as jsonschema, on every instance: each schema against every value of
    /// the pools, and against a few hundred instances generated from it. Invalid instances get
    /// the same problems, in jsonschema's words (in whatever order).
    #[test]
    fn same_verdicts_as_jsonschema() {
        let mut pools = Pools { scalars: scalars(), composites: composites(), noise: 0 };
        let mut rng = Rng(0x5EED_1234_ABCD_0042);
        let (mut checked, mut valid) = (0, 0);
        for schema in schemas() {
            let ours = Schema::compile(&schema).unwrap_or_else(|| panic!("outside the subset: {schema}"));
            let theirs = jsonschema::validator_for(&schema).unwrap();
            let mut instances: Vec<Value> = pools.scalars.iter().chain(&pools.composites).cloned().collect();
            for _ in 0..300 {
                pools.noise = *rng.pick(&[0, 3, 10, 30]);
                instances.push(pools.instance(&schema, &mut rng, 4));
            }
            let mut verdicts = [0; 2];
            for instance in &instances {
                let verdict = theirs.is_valid(instance);
                assert_eq!(ours.is_valid(instance), verdict, "schema {schema}\ninstance {instance}");
                let mut problems = ours.problems(instance, usize::MAX);
                let mut expected = their_lines(&theirs, instance);
                problems.sort();
                expected.sort();
                assert_eq!(problems, expected, "schema {schema}\ninstance {instance}");
                verdicts[usize::from(verdict)] += 1;
            }
            // Schemas that take everything or nothing; `format` is an annotation only.
            let constant = [json!(true), json!(false), json!({}), json!({"enum": []}), json!({"not": {}})];
            let constant = constant.contains(&schema)
                || [json!({"oneOf": [true, true]}), json!({"format": "date-time"})].contains(&schema);
            assert!(constant || verdicts.iter().all(|n| *n >= 10), "{verdicts:?} (invalid, valid) for {schema}");
            checked += instances.len();
            valid += verdicts[1];
        }
        assert!(checked > 20_000 && valid > 5_000, "{checked} instances, {valid} valid");
    }

    #[test]
    fn schemas_outside_the_subset_go_to_jsonschema() {
        for schema in outside_the_subset() {
            assert!(Schema::compile(&schema).is_none(), "{schema}");
        }
    }

    /// Malformed: jsonschema says what is wrong with them.
    #[test]
    fn malformed_schemas_go_to_jsonschema_which_refuses_them() {
        for schema in malformed() {
            assert!(Schema::compile(&schema).is_none(), "{schema}");
            assert!(jsonschema::validator_for(&schema).is_err(), "jsonschema accepts {schema}");
        }
    }

    /// Well-formed schemas with keywords (anywhere) that the subset does not have.
    fn outside_the_subset() -> Vec<Value> {
        vec![
            json!({"$ref": "#"}),
            json!({"$defs": {"a": {}}}),
            json!({"definitions": {"a": {}}}),
            json!({"$id": "urn:example:a"}),
            json!({"$anchor": "a"}),
            json!({"$dynamicRef": "#a"}),
            json!({"$dynamicAnchor": "a"}),
            json!({"$vocabulary": {}}),
            json!({"pattern": "^a"}),
            json!({"patternProperties": {"^a": {}}}),
            json!({"multipleOf": 2}),
            json!({"uniqueItems": true}),
            json!({"prefixItems": [true]}),
            json!({"contains": true}),
            json!({"minContains": 1}),
            json!({"maxContains": 1}),
            json!({"if": true}),
            json!({"then": true}),
            json!({"else": true}),
            json!({"dependentRequired": {}}),
            json!({"dependentSchemas": {}}),
            json!({"dependencies": {}}),
            json!({"additionalItems": false}),
            json!({"propertyNames": true}),
            json!({"unevaluatedProperties": false}),
            json!({"unevaluatedItems": false}),
            json!({"contentMediaType": "text/plain"}),
            json!({"contentEncoding": "base64"}),
            json!({"contentSchema": {}}),
            json!({"x-unknown": 1}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema#"}),
            // anywhere below the root, too
            json!({"properties": {"a": {"$ref": "#"}}}),
            json!({"properties": {"a": {"$schema": DRAFT_2020_12}}}),
            json!({"items": {"pattern": "a"}}),
            json!({"anyOf": [{"type": "string"}, {"uniqueItems": true}]}),
            json!({"not": {"if": true}}),
            json!({"additionalProperties": {"propertyNames": {}}}),
            // well formed, but not how we take them (jsonschema reads 1.0 as a size)
            json!({"minLength": 1.0}),
        ]
    }

    /// Schemas that are not valid JSON Schema.
    fn malformed() -> Vec<Value> {
        vec![
            json!({"required": "x"}),
            json!({"required": [1]}),
            json!({"required": ["a", "a"]}),
            json!({"type": "strin"}),
            json!({"type": []}),
            json!({"type": ["string", "string"]}),
            json!({"type": 1}),
            json!({"minLength": -1}),
            json!({"maxLength": 1.5}),
            json!({"minItems": "2"}),
            json!({"maxProperties": null}),
            json!({"minimum": "0"}),
            json!({"exclusiveMaximum": true}),
            json!({"properties": []}),
            json!({"properties": {"a": 1}}),
            json!({"additionalProperties": 1}),
            json!({"items": [true]}),
            json!({"enum": 1}),
            json!({"anyOf": []}),
            json!({"oneOf": {}}),
            json!({"allOf": [1]}),
            json!({"not": null}),
            json!({"title": 1}),
            json!({"description": false}),
            json!({"$comment": 1}),
            json!({"format": 1}),
            json!({"examples": {}}),
            json!({"deprecated": "yes"}),
            json!({"readOnly": 1}),
            json!({"writeOnly": null}),
            json!({"properties": {"a": {"type": "strin"}}}),
            json!([1]),
            json!(1),
        ]
    }

    #[test]
    fn problems_in_jsonschema_words() {
        let schema = json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "unit": {"enum": ["celsius", "fahrenheit"]},
                "tags": {"type": "array", "items": {"type": ["string", "null"]}},
                "a/b~c": {"minimum": 0}
            },
            "required": ["text", "unit"],
            "additionalProperties": false
        });
        let ours = Schema::compile(&schema).unwrap();
        let problems = |instance: Value| ours.problems(&instance, 8);
        assert_eq!(problems(json!({"unit": "celsius"})), [r#""text" is a required property"#]);
        assert_eq!(problems(json!({"text": 5, "unit": "celsius"})), [r#"/text: 5 is not of type "string""#]);
        assert_eq!(problems(json!({"text": "hi", "unit": "celsius"})), Vec::<String>::new());
        assert_eq!(problems(json!([])), [r#"[] is not of type "object""#]);
        assert_eq!(
            problems(json!({"text": "hi", "unit": "kelvin", "x": 1, "y": 2})),
            [
                r#"/unit: "kelvin" is not one of "celsius" or "fahrenheit""#,
                "Additional properties are not allowed ('x', 'y' were unexpected)"
            ]
        );
        assert_eq!(
            problems(json!({"text": "hi", "unit": "celsius", "tags": ["a", 1], "a/b~c": -1})),
            [r#"/a~1b~0c: -1 is less than the minimum of 0"#, r#"/tags/1: 1 is not of types "null", "string""#]
        );
        // At most as many as asked for.
        let many = Value::Object((0..20).map(|i| (format!("k{i}"), json!(i))).collect());
        assert_eq!(problems(many.clone()).len(), 3); // two required, one for the unexpected
        let strings = Schema::compile(&json!({"additionalProperties": {"type": "string"}})).unwrap();
        assert_eq!(strings.problems(&many, 8).len(), 8);
        assert_eq!(strings.problems(&many, 8)[0], r#"/k0: 0 is not of type "string""#);
    }
}
