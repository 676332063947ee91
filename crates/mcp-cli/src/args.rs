//! The arguments of `call` and `prompt`: the words of the command line split into
//! `key=value` pairs and the server, the pairs typed by the tool's input schema, and the
//! checks made before anything is sent (unknown keys, missing required ones).

use std::collections::BTreeMap;
use std::path::Path;

use mcp_types::{JsonObject, PromptArgument};
use serde_json::{Map, Value};

/// The largest `--args @FILE` read (16 MiB).
const MAX_ARGS_FILE: u64 = 16 << 20;

/// One argument of the command line: `key=value` (typed by the schema) or `key:=JSON`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// The argument's name.
    pub key: String,
    /// What follows `=`.
    pub text: String,
    /// `key:=JSON`: the value is JSON whatever the schema says.
    pub raw: bool,
}

/// Splits the words of `call` and `prompt` (before `--`) into `key=value` pairs and the
/// server: a word starting with `http://` or `https://` is the server's URL (the last word);
/// `command` (after `--`) is the server's command line.
pub fn split(words: &[String], command: &[String]) -> Result<(Vec<Pair>, Vec<String>), String> {
    let mut pairs = Vec::new();
    let mut server = command.to_vec();
    for (i, word) in words.iter().enumerate() {
        if word.starts_with("http://") || word.starts_with("https://") {
            if i + 1 != words.len() || !command.is_empty() {
                return Err(format!("{word}: the server's URL comes last, and alone (not with a command after `--`)"));
            }
            server = vec![word.clone()];
            continue;
        }
        pairs.push(pair(word)?);
    }
    Ok((pairs, server))
}

/// `key=value` or `key:=JSON`.
fn pair(word: &str) -> Result<Pair, String> {
    let Some((key, text)) = word.split_once('=') else {
        return Err(format!(
            "{word:?} is not key=value (a server run as a command goes after `--`: `mcp call TOOL key=value -- ./server`)"
        ));
    };
    let (key, raw) = match key.strip_suffix(':') {
        Some(key) => (key, true),
        None => (key, false),
    };
    if key.is_empty() {
        return Err(format!("{word:?}: the argument has no name"));
    }
    Ok(Pair { key: key.to_owned(), text: text.to_owned(), raw })
}

/// The JSON object of `--args`: inline JSON, or `@FILE`.
pub fn json_arguments(args: &str) -> Result<Map<String, Value>, String> {
    let text = match args.strip_prefix('@') {
        Some(file) => read_bounded(Path::new(file))?,
        None => args.to_owned(),
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(format!("--args: a JSON object is needed, not {}", kind(&other))),
        Err(e) => Err(format!("--args: not JSON: {e}")),
    }
}

/// A file's text, refused beyond [`MAX_ARGS_FILE`].
fn read_bounded(file: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(file).map_err(|e| format!("--args @{}: {e}", file.display()))?;
    if meta.len() > MAX_ARGS_FILE {
        return Err(format!("--args @{}: larger than {} MiB", file.display(), MAX_ARGS_FILE >> 20));
    }
    std::fs::read_to_string(file).map_err(|e| format!("--args @{}: {e}", file.display()))
}

/// The tool's arguments: `base` (from `--args`) with the pairs added, each value typed by
/// `schema` (the tool's input schema), then checked: no unknown key (unless the schema
/// allows additional properties), no required key missing.
pub fn tool_arguments(schema: &JsonObject, base: Map<String, Value>, pairs: &[Pair]) -> Result<Value, String> {
    let root = Value::Object(schema.clone());
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut arguments = base;
    let mut given = BTreeMap::<&str, usize>::new();
    for pair in pairs {
        let property = properties.and_then(|p| p.get(&pair.key)).map(|p| resolve(&root, p));
        let seen = given.entry(&pair.key).or_default();
        *seen += 1;
        let value = typed(&root, property, pair)?;
        if *seen > 1 {
            append(&mut arguments, pair, value, property, &root)?;
        } else {
            arguments.insert(pair.key.clone(), value);
        }
    }
    check_keys(schema, &arguments)?;
    Ok(Value::Object(arguments))
}

/// A key given again: one more item of an array property (`tag=a tag=b`).
fn append(
    arguments: &mut Map<String, Value>,
    pair: &Pair,
    value: Value,
    property: Option<&Value>,
    root: &Value,
) -> Result<(), String> {
    let is_array = property.is_some_and(|p| types(root, p).contains(&"array"));
    match arguments.get_mut(&pair.key) {
        Some(Value::Array(items)) if is_array => {
            match value {
                Value::Array(more) => items.extend(more),
                one => items.push(one),
            }
            Ok(())
        }
        _ => Err(format!("{} is given twice (only an array argument may be repeated)", pair.key)),
    }
}

/// Refuses unknown keys and missing required ones.
fn check_keys(schema: &JsonObject, arguments: &Map<String, Value>) -> Result<(), String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let open = match schema.get("additionalProperties") {
        Some(Value::Bool(open)) => *open,
        Some(Value::Object(_)) => true,
        _ => schema.contains_key("patternProperties") || properties.is_none(),
    };
    let known: Vec<&str> = properties.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
    if !open && let Some(unknown) = arguments.keys().find(|k| !known.contains(&k.as_str())) {
        let expected = if known.is_empty() { "it takes none".to_owned() } else { known.join(", ") };
        return Err(format!("unknown argument `{unknown}` (expected: {expected})"));
    }
    let required = schema.get("required").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let missing: Vec<&str> =
        required.iter().filter_map(Value::as_str).filter(|k| !arguments.contains_key(*k)).collect();
    if !missing.is_empty() {
        return Err(format!("missing required argument(s): {}", missing.join(", ")));
    }
    Ok(())
}

/// The value of one pair, typed by its property's schema.
fn typed(root: &Value, property: Option<&Value>, pair: &Pair) -> Result<Value, String> {
    let text = pair.text.as_str();
    let as_json = || serde_json::from_str::<Value>(text);
    if pair.raw {
        return as_json().map_err(|e| format!("{}:= needs JSON: {e}", pair.key));
    }
    let types = property.map(|p| types(root, p)).unwrap_or_default();
    if types.is_empty() {
        // Nothing says: JSON when it reads as JSON (a number, true, [1, 2]), else the text.
        return Ok(as_json().unwrap_or_else(|_| Value::String(text.to_owned())));
    }
    if types.contains(&"string") {
        return Ok(Value::String(text.to_owned()));
    }
    for ty in &types {
        if let Some(value) = parse_as(ty, text, property, root) {
            return Ok(value);
        }
    }
    Err(format!("{}={text}: not {} (as the tool's schema asks)", pair.key, types.join(" or ")))
}

/// `text` read as the JSON type `ty`, if it is one.
fn parse_as(ty: &str, text: &str, property: Option<&Value>, root: &Value) -> Option<Value> {
    let json = serde_json::from_str::<Value>(text.trim()).ok();
    match (ty, json) {
        ("integer", Some(Value::Number(n))) if n.is_i64() || n.is_u64() => Some(Value::Number(n)),
        ("number", Some(Value::Number(n))) => Some(Value::Number(n)),
        ("boolean", Some(Value::Bool(b))) => Some(Value::Bool(b)),
        ("null", Some(Value::Null)) => Some(Value::Null),
        ("object", Some(Value::Object(o))) => Some(Value::Object(o)),
        ("array", Some(Value::Array(a))) => Some(Value::Array(a)),
        // One item of an array (`tag=a`): typed by `items`.
        ("array", _) => {
            let items = property.and_then(|p| p.get("items")).map(|i| resolve(root, i));
            let pair = Pair { key: "item".to_owned(), text: text.to_owned(), raw: false };
            typed(root, items, &pair).ok().map(|item| Value::Array(vec![item]))
        }
        _ => None,
    }
}

/// The JSON types a property's schema allows (see [`types`]), for the table of tools.
pub fn property_types(root: &Value, property: &Value) -> Vec<&'static str> {
    types(root, property)
}

/// The JSON types a schema allows: its `type`, those of its `anyOf`/`oneOf` members, and
/// those of its `enum`/`const` values (`$ref`s to the document's definitions followed).
fn types(root: &Value, schema: &Value) -> Vec<&'static str> {
    let mut found = Vec::new();
    collect_types(root, schema, &mut found, 0);
    found
}

fn collect_types(root: &Value, schema: &Value, found: &mut Vec<&'static str>, depth: usize) {
    const ALL: [&str; 7] = ["string", "integer", "number", "boolean", "object", "array", "null"];
    let schema = resolve(root, schema);
    let mut add = |ty: &str| {
        if let Some(known) = ALL.iter().find(|k| **k == ty)
            && !found.contains(known)
        {
            found.push(known);
        }
    };
    match schema.get("type") {
        Some(Value::String(ty)) => add(ty),
        Some(Value::Array(tys)) => tys.iter().filter_map(Value::as_str).for_each(&mut add),
        _ => {}
    }
    let values = schema.get("enum").and_then(Value::as_array).into_iter().flatten().chain(schema.get("const"));
    for value in values {
        add(kind(value));
    }
    if depth < 8 {
        for key in ["anyOf", "oneOf", "allOf"] {
            for member in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
                collect_types(root, member, found, depth + 1);
            }
        }
    }
}

/// The JSON type of a value, as JSON Schema names it.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `schema`, or what its `$ref` points to within the document (`#/$defs/X`, `#/definitions/X`).
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let mut schema = schema;
    for _ in 0..8 {
        let Some(pointer) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) else {
            break;
        };
        match root.pointer(pointer) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// A prompt's arguments (strings): `base` (from `--args`, whose values must be strings) with
/// the pairs added, checked against the prompt's declared arguments.
pub fn prompt_arguments(
    declared: &[PromptArgument],
    base: Map<String, Value>,
    pairs: &[Pair],
) -> Result<BTreeMap<String, String>, String> {
    let mut arguments = BTreeMap::new();
    for (key, value) in base {
        match value {
            Value::String(text) => arguments.insert(key, text),
            other => return Err(format!("--args: prompt arguments are strings; {key} is {}", kind(&other))),
        };
    }
    for pair in pairs {
        arguments.insert(pair.key.clone(), pair.text.clone());
    }
    let known: Vec<&str> = declared.iter().map(|a| a.name.as_str()).collect();
    if let Some(unknown) = arguments.keys().find(|k| !known.contains(&k.as_str())) {
        let expected = if known.is_empty() { "it takes none".to_owned() } else { known.join(", ") };
        return Err(format!("unknown argument `{unknown}` (expected: {expected})"));
    }
    let missing: Vec<&str> = declared
        .iter()
        .filter(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!("missing required argument(s): {}", missing.join(", ")));
    }
    Ok(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_owned()).collect()
    }

    fn schema(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    fn call(schema_json: Value, w: &[&str]) -> Result<Value, String> {
        let (pairs, _) = split(&words(w), &[])?;
        tool_arguments(&schema(schema_json), Map::new(), &pairs)
    }

    #[test]
    fn the_server_is_a_url_last_or_a_command_after_the_double_dash() {
        let (pairs, server) = split(&words(&["a=1", "https://h/mcp"]), &[]).unwrap();
        assert_eq!((pairs.len(), server), (1, words(&["https://h/mcp"])));
        let (pairs, server) = split(&words(&["a=1", "b:=[1]"]), &words(&["./srv", "--x=1"])).unwrap();
        assert_eq!(pairs[1], Pair { key: "b".into(), text: "[1]".into(), raw: true });
        assert_eq!(server, words(&["./srv", "--x=1"]));
        assert!(split(&words(&["https://h/mcp", "a=1"]), &[]).is_err(), "the URL comes last");
        assert!(split(&words(&["./srv"]), &[]).unwrap_err().contains("after `--`"));
        assert!(split(&words(&["=1"]), &[]).is_err());
    }

    #[test]
    fn values_are_typed_by_the_schema() {
        let s = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
            "s": {"type": "string"}, "o": {"type": "object"}, "tags": {"type": "array", "items": {"type": "integer"}},
            "opt": {"anyOf": [{"type": "number"}, {"type": "null"}]}, "r": {"$ref": "#/$defs/R"},
            "e": {"enum": [1, 2]}, "free": {}
        }, "$defs": {"R": {"type": "boolean"}}});
        let args = call(
            s.clone(),
            &[
                "n=3",
                "x=1.5",
                "b=true",
                "s=42",
                "o={\"k\":1}",
                "tags=1",
                "tags=2",
                "opt=null",
                "r=false",
                "e=2",
                "free=[1]",
            ],
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"n": 3, "x": 1.5, "b": true, "s": "42", "o": {"k": 1}, "tags": [1, 2], "opt": null, "r": false, "e": 2, "free": [1]})
        );
        assert_eq!(call(s.clone(), &["tags=[3,4]", "free=hello"]).unwrap(), json!({"tags": [3, 4], "free": "hello"}));
        assert!(call(s.clone(), &["n=1.5"]).unwrap_err().contains("not integer"));
        assert!(call(s.clone(), &["b=yes"]).unwrap_err().contains("not boolean"));
        assert!(call(s.clone(), &["n=1", "n=2"]).unwrap_err().contains("twice"));
        assert_eq!(call(s, &["s:=7"]).unwrap(), json!({"s": 7}), "key:= is raw JSON");
    }

    #[test]
    fn unknown_and_missing_keys_are_refused() {
        let s = json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]});
        assert!(call(s.clone(), &["a=1", "z=2"]).unwrap_err().contains("unknown argument `z` (expected: a)"));
        assert!(call(s.clone(), &[]).unwrap_err().contains("missing required argument(s): a"));
        let open = json!({"type": "object", "properties": {}, "additionalProperties": true});
        assert_eq!(call(open, &["z=2"]).unwrap(), json!({"z": 2}));
        let base = json_arguments(r#"{"a": 1}"#).unwrap();
        assert_eq!(tool_arguments(&schema(s), base, &[]).unwrap(), json!({"a": 1}));
        assert!(json_arguments("[1]").unwrap_err().contains("JSON object"));
        assert!(json_arguments("@/nonexistent/args.json").is_err());
    }

    #[test]
    fn prompt_arguments_are_strings_checked_against_the_declaration() {
        let declared: Vec<PromptArgument> =
            serde_json::from_value(json!([{"name": "code", "required": true}, {"name": "language"}])).unwrap();
        let (pairs, _) = split(&words(&["code=x", "language=rust"]), &[]).unwrap();
        let args = prompt_arguments(&declared, Map::new(), &pairs).unwrap();
        assert_eq!(args["language"], "rust");
        assert!(prompt_arguments(&declared, Map::new(), &[]).unwrap_err().contains("code"));
        let (pairs, _) = split(&words(&["code=x", "nope=1"]), &[]).unwrap();
        assert!(prompt_arguments(&declared, Map::new(), &pairs).unwrap_err().contains("unknown argument `nope`"));
        let base = json_arguments(r#"{"code": 1}"#).unwrap();
        assert!(prompt_arguments(&declared, base, &[]).is_err());
    }
}
