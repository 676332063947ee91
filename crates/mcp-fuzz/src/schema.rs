//! The server's built-in checker of tool input schemas (`mcp-server`, `schema_check.rs`)
//! against the `jsonschema` crate.

use arbitrary::{Result, Unstructured};
use mcp_server::fuzzing::CheckedSchema;
use serde_json::{Map, Number, Value, json};

/// Builds a schema (from the keywords tool schemas use, and a few others) and four instances
/// from the bytes. When the built-in checker accepts the schema, `jsonschema` compiles it too,
/// and both give the same verdict on every instance; the checker lists problems exactly for an
/// invalid instance.
pub fn schema(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(schema) = gen_schema(&mut u, 3) else { return };
    let instances: Vec<Value> = (0..4).map_while(|_| gen_instance(&mut u, 3).ok()).collect();
    check(&schema, &instances);
}

/// The differential check of one schema on some instances (also used by the unit tests).
pub(crate) fn check(schema: &Value, instances: &[Value]) {
    let Some(ours) = CheckedSchema::compile(schema) else { return };
    let theirs = jsonschema::validator_for(schema)
        .unwrap_or_else(|e| panic!("the checker accepts a schema jsonschema rejects ({e}): {schema}"));
    if let Value::Object(object) = schema {
        assert!(CheckedSchema::compile_object(object).is_some(), "compile and compile_object disagree: {schema}");
    }
    for instance in instances {
        let verdict = ours.is_valid(instance);
        assert_eq!(verdict, theirs.is_valid(instance), "schema {schema}, instance {instance}");
        assert_eq!(ours.problems(instance, 8).is_empty(), verdict, "problems: schema {schema}, instance {instance}");
    }
}

const KEYWORDS: &[&str] = &[
    "type",
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "items",
    "minItems",
    "maxItems",
    "properties",
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "title",
    "description",
    "format",
    "default",
    "$schema",
    "deprecated",
    "pattern",
    "$ref",
    "uniqueItems",
];
const TYPES: &[&str] = &["null", "boolean", "integer", "number", "string", "array", "object", "float"];
const NAMES: &[&str] = &["a", "b", "name", "é", "", "_meta"];

fn gen_schema(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    if depth == 0 || u.ratio(1, 6)? {
        return Ok(match u.int_in_range(0..=3)? {
            0 => Value::Bool(u.arbitrary()?),
            1 => json!({}),
            _ => json!({"type": *u.choose(TYPES)?}),
        });
    }
    let mut map = Map::new();
    for _ in 0..u.int_in_range(1..=4)? {
        let keyword = *u.choose(KEYWORDS)?;
        let value = keyword_value(u, keyword, depth)?;
        map.insert(keyword.to_owned(), value);
    }
    Ok(Value::Object(map))
}

fn keyword_value(u: &mut Unstructured<'_>, keyword: &str, depth: u32) -> Result<Value> {
    Ok(match keyword {
        "type" if u.arbitrary()? => Value::String((*u.choose(TYPES)?).to_owned()),
        "type" => {
            Value::Array((0..u.int_in_range(0..=3)?).map(|_| u.choose(TYPES).map(|t| json!(t))).collect::<Result<_>>()?)
        }
        "enum" => Value::Array((0..u.int_in_range(0..=3)?).map(|_| gen_instance(u, 2)).collect::<Result<_>>()?),
        "const" | "default" => gen_instance(u, 2)?,
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => gen_number(u)?,
        "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties" => {
            match u.int_in_range(0..=9)? {
                0 => json!(-1),
                1 => json!(1.5),
                2 => json!(2.0),
                3 => json!("1"),
                n => json!(n - 4),
            }
        }
        "items" | "additionalProperties" | "not" => gen_schema(u, depth - 1)?,
        "properties" => {
            let mut props = Map::new();
            for _ in 0..u.int_in_range(0..=3)? {
                props.insert((*u.choose(NAMES)?).to_owned(), gen_schema(u, depth - 1)?);
            }
            Value::Object(props)
        }
        "required" => {
            Value::Array((0..u.int_in_range(0..=3)?).map(|_| u.choose(NAMES).map(|n| json!(n))).collect::<Result<_>>()?)
        }
        "allOf" | "anyOf" | "oneOf" => {
            Value::Array((0..u.int_in_range(0..=3)?).map(|_| gen_schema(u, depth - 1)).collect::<Result<_>>()?)
        }
        "title" | "description" => json!("text"),
        "format" => json!(*u.choose(&["email", "date-time", "uri", "unknown"])?),
        "$schema" => json!(
            *u.choose(&["https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#"])?
        ),
        "deprecated" | "uniqueItems" => Value::Bool(u.arbitrary()?),
        "pattern" => json!("^a+$"),
        "$ref" => json!("#"),
        _ => Value::Null,
    })
}

fn gen_number(u: &mut Unstructured<'_>) -> Result<Value> {
    Ok(match u.int_in_range(0..=9)? {
        0 => json!(u64::MAX),
        1 => json!(i64::MIN),
        2 => json!(9_007_199_254_740_993_u64),
        3 => Number::from_f64(u.arbitrary::<f64>()?).map_or(json!(0.5), Value::Number),
        4 => json!(1.0),
        5 => json!(-0.0),
        6 => json!(0.1),
        7 => json!(9_007_199_254_740_992.0),
        _ => json!(u.int_in_range(-3..=3)?),
    })
}

fn gen_instance(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    let pick = if depth == 0 { u.int_in_range(0..=4)? } else { u.int_in_range(0..=6)? };
    Ok(match pick {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => gen_number(u)?,
        3 => json!(*u.choose(&["", "a", "ab", "é", "😀😀", "abc", "1"])?),
        4 => json!(u.int_in_range(0..=3)?),
        5 => Value::Array((0..u.int_in_range(0..=3)?).map(|_| gen_instance(u, depth - 1)).collect::<Result<_>>()?),
        _ => {
            let mut map = Map::new();
            for _ in 0..u.int_in_range(0..=3)? {
                map.insert((*u.choose(NAMES)?).to_owned(), gen_instance(u, depth - 1)?);
            }
            Value::Object(map)
        }
    })
}
