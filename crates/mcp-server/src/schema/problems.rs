//! What is wrong with an instance a compiled [`Schema`] refuses: one line per problem, in
//! jsonschema's words, with the JSON pointer of where it is.

use std::fmt;

use serde_json::{Map, Value};

use super::valid::{Num, equal};
use super::{Keywords, Node, Schema};

impl Schema {
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
    fn collect(&self, instance: &Value, problems: &mut Problems) {
        match self {
            Node::Bool(true) => {}
            Node::Bool(false) => problems.push(format_args!("False schema does not allow {instance}")),
            Node::Keywords(k) => k.collect(instance, problems),
        }
    }
}

impl Keywords {
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
