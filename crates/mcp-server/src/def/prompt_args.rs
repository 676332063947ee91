//! Prompt arguments as a struct: the listed arguments derived from its JSON Schema
//! (`schemars`), and the `prompts/get` arguments (a map of strings) decoded into it (`serde`).
//!
//! [`PromptDef::with_args`](crate::PromptDef::with_args),
//! [`PromptDef::arguments_from`](crate::PromptDef::arguments_from) and the `#[prompt]` macro
//! use these; [`decode_prompt_arguments`] is public for handlers written by hand.

use serde::de::{self, DeserializeOwned, IntoDeserializer};
use serde_json::Value;

use mcp_types::{ErrorObject, PromptArgument};

use std::collections::BTreeMap;

/// The arguments of a prompt: name to value.
pub type PromptArguments = BTreeMap<String, String>;

/// The arguments a prompt lists for the struct `T` (see
/// [`PromptDef::arguments_from`](crate::PromptDef::arguments_from)), or why there are none.
pub(crate) fn prompt_arguments<T: DeserializeOwned + schemars::JsonSchema>() -> Result<Vec<PromptArgument>, String> {
    let schema = crate::schema::form::inline_schema_for::<T>();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Err(format!("`{}` is not a struct with named fields", T::schema_name()));
    };
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let mut names: Vec<&str> = field_names::<T>().iter().copied().filter(|f| properties.contains_key(*f)).collect();
    names.extend(properties.keys().map(String::as_str).filter(|k| !names.contains(k)).collect::<Vec<_>>());
    names
        .into_iter()
        .map(|name| {
            let property = &properties[name];
            if let Some(kind) = structured_type(property) {
                return Err(format!("the field `{name}` is {kind}; prompt arguments are strings"));
            }
            let text = |key: &str| property.get(key).and_then(Value::as_str).map(str::to_owned);
            let mut argument = PromptArgument::new(name).with_required(required.contains(&name));
            argument.description = text("description");
            argument.title = text("title");
            Ok(argument)
        })
        .collect()
}

/// Decodes the arguments of a `prompts/get` into `T`: each value is a string, parsed where the
/// field wants a number, a boolean or an enum. A missing required field or a value that does not
/// decode is an invalid-params error (-32602) that names the argument.
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
/// struct Review {
///     code: String,
///     max_issues: Option<u32>,
/// }
///
/// let arguments = [("code".to_owned(), "x = 1".to_owned()), ("max_issues".to_owned(), "3".to_owned())];
/// let review: Review = mcp_server::decode_prompt_arguments(&arguments.into_iter().collect()).unwrap();
/// assert_eq!(review, Review { code: "x = 1".into(), max_issues: Some(3) });
///
/// let wrong = [("code".to_owned(), "x".to_owned()), ("max_issues".to_owned(), "many".to_owned())];
/// let e = mcp_server::decode_prompt_arguments::<Review>(&wrong.into_iter().collect()).unwrap_err();
/// assert_eq!(e.code, -32602);
/// assert!(e.message.contains("argument `max_issues`"), "{}", e.message);
/// ```
pub fn decode_prompt_arguments<T: DeserializeOwned>(arguments: &PromptArguments) -> Result<T, ErrorObject> {
    let map = Arguments { entries: arguments.iter(), current: None, value: None };
    T::deserialize(de::value::MapAccessDeserializer::new(map))
        .map_err(|e| ErrorObject::invalid_params(format!("invalid prompt arguments: {e}")))
}

/// `an object` or `a list` when the property's schema says so.
fn structured_type(property: &Value) -> Option<&'static str> {
    let types: Vec<&str> = match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"object") {
        Some("an object")
    } else if types.contains(&"array") {
        Some("a list")
    } else {
        None
    }
}

/// The field names of the struct `T`, in declaration order, as its `Deserialize` passes them to
/// `deserialize_struct` (empty for other types, and for structs with flattened fields).
fn field_names<T: DeserializeOwned>() -> &'static [&'static str] {
    struct Fields(&'static [&'static str]);
    impl de::Error for Fields {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Fields(&[])
        }
    }
    impl std::fmt::Display for Fields {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("fields")
        }
    }
    impl std::fmt::Debug for Fields {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("fields")
        }
    }
    impl std::error::Error for Fields {}
    struct Probe;
    impl<'de> de::Deserializer<'de> for Probe {
        type Error = Fields;
        fn deserialize_any<V: de::Visitor<'de>>(self, _: V) -> Result<V::Value, Fields> {
            Err(Fields(&[]))
        }
        fn deserialize_struct<V: de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Fields> {
            Err(Fields(fields))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }
    match T::deserialize(Probe) {
        Ok(_) => &[],
        Err(Fields(fields)) => fields,
    }
}

/// The arguments as a map whose values are [`Argument`]s; an error decoding a value names it.
struct Arguments<'a> {
    entries: std::collections::btree_map::Iter<'a, String, String>,
    current: Option<&'a str>,
    value: Option<&'a str>,
}

impl<'de, 'a> de::MapAccess<'de> for Arguments<'a> {
    type Error = de::value::Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Self::Error> {
        let Some((name, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.current = Some(name);
        self.value = Some(value);
        seed.deserialize(name.as_str().into_deserializer()).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Self::Error> {
        let (name, value) = (self.current.unwrap_or_default(), self.value.take().unwrap_or_default());
        seed.deserialize(Argument(value)).map_err(|e| de::Error::custom(format_args!("argument `{name}`: {e}")))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// One argument's string, parsed as what the field asks for.
struct Argument<'a>(&'a str);

impl Argument<'_> {
    fn parse<T: std::str::FromStr>(&self, what: &str) -> Result<T, de::value::Error> {
        self.0.parse().map_err(|_| de::Error::custom(format_args!("expected {what}, got `{}`", self.0)))
    }
}

macro_rules! parse_as {
    ($($method:ident => $visit:ident $what:literal),* $(,)?) => {
        $(fn $method<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            visitor.$visit(self.parse($what)?)
        })*
    };
}

impl<'de> de::Deserializer<'de> for Argument<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_str(self.0)
    }

    parse_as! {
        deserialize_bool => visit_bool "`true` or `false`",
        deserialize_i8 => visit_i8 "an integer",
        deserialize_i16 => visit_i16 "an integer",
        deserialize_i32 => visit_i32 "an integer",
        deserialize_i64 => visit_i64 "an integer",
        deserialize_i128 => visit_i128 "an integer",
        deserialize_u8 => visit_u8 "a non-negative integer",
        deserialize_u16 => visit_u16 "a non-negative integer",
        deserialize_u32 => visit_u32 "a non-negative integer",
        deserialize_u64 => visit_u64 "a non-negative integer",
        deserialize_u128 => visit_u128 "a non-negative integer",
        deserialize_f32 => visit_f32 "a number",
        deserialize_f64 => visit_f64 "a number",
        deserialize_char => visit_char "one character",
    }

    fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: de::Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_enum(self.0.into_deserializer())
    }

    serde::forward_to_deserialize_any! {
        str string bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Tone {
        Kind,
        Blunt,
    }

    /// The arguments.
    #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
    struct Args {
        /// The code.
        code: String,
        #[serde(rename = "maxIssues", default)]
        max_issues: u8,
        /// Strict or not.
        strict: Option<bool>,
        tone: Option<Tone>,
        #[schemars(title = "Ratio")]
        ratio: Option<f64>,
    }

    fn map(pairs: &[(&str, &str)]) -> PromptArguments {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn arguments_follow_the_fields() {
        let args = prompt_arguments::<Args>().unwrap();
        let value = serde_json::to_value(&args).unwrap();
        assert_eq!(
            value,
            serde_json::json!([
                {"name": "code", "description": "The code.", "required": true},
                {"name": "maxIssues", "required": false},
                {"name": "strict", "description": "Strict or not.", "required": false},
                {"name": "tone", "required": false},
                {"name": "ratio", "title": "Ratio", "required": false}
            ])
        );
    }

    #[test]
    fn lists_objects_and_non_structs_are_refused() {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Bad {
            tags: Vec<String>,
        }
        let e = prompt_arguments::<Bad>().unwrap_err();
        assert_eq!(e, "the field `tags` is a list; prompt arguments are strings");
        assert!(prompt_arguments::<String>().unwrap_err().contains("not a struct"));
    }

    #[test]
    fn values_are_parsed_as_the_fields_want() {
        let got: Args =
            decode_prompt_arguments(&map(&[("code", "x"), ("maxIssues", "3"), ("strict", "true"), ("tone", "blunt")]))
                .unwrap();
        assert_eq!(
            got,
            Args { code: "x".into(), max_issues: 3, strict: Some(true), tone: Some(Tone::Blunt), ratio: None }
        );
        let got: Args =
            decode_prompt_arguments(&map(&[("code", "x"), ("ratio", "0.5"), ("other", "ignored")])).unwrap();
        assert_eq!((got.max_issues, got.ratio), (0, Some(0.5)));
        for (pairs, expected) in [
            (&[("maxIssues", "3")][..], "missing field `code`"),
            (
                &[("code", "x"), ("maxIssues", "300")][..],
                "argument `maxIssues`: expected a non-negative integer, got `300`",
            ),
            (&[("code", "x"), ("strict", "yes")][..], "argument `strict`: expected `true` or `false`, got `yes`"),
            (&[("code", "x"), ("tone", "rude")][..], "argument `tone`: unknown variant `rude`"),
        ] {
            let e = decode_prompt_arguments::<Args>(&map(pairs)).unwrap_err();
            assert_eq!(e.code, -32602);
            assert!(e.message.contains(expected), "{} / {expected}", e.message);
        }
    }
}
