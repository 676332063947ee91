//! A tool's schemas: the compiled check of its arguments and of its structured results
//! ([`SchemaCheck`]), the rules its input and output schemas follow, and the output schema as
//! clients of revisions before 2026-07-28 see it.

use std::sync::Arc;

use mcp_types::JsonObject;

use crate::error::DefinitionError;
use crate::schema;

/// A compiled input or output schema: by the built-in checker (`schema`) when the schema lies within its subset
/// (the usual case, and much cheaper to build), by jsonschema otherwise (feature `jsonschema`).
/// Both give the same verdicts. Without the feature, a schema outside the subset is not checked:
/// the tool is registered with a warning, and its handler sees the arguments as sent (or its
/// client the structured content as returned).
#[derive(Clone)]
pub(crate) enum SchemaCheck {
    Subset(Arc<schema::Schema>),
    #[cfg(feature = "jsonschema")]
    Full(Arc<jsonschema::Validator>),
    #[cfg(not(feature = "jsonschema"))]
    Unchecked,
}

impl SchemaCheck {
    /// Compiles the schema `which` (`inputSchema` or `outputSchema`) of tool `name`.
    pub(crate) fn compile(
        name: &str,
        which: &'static str,
        schema: &JsonObject,
    ) -> Result<SchemaCheck, DefinitionError> {
        if let Some(schema) = schema::Schema::compile_object(schema) {
            return Ok(SchemaCheck::Subset(Arc::new(schema)));
        }
        #[cfg(feature = "jsonschema")]
        {
            let validator = jsonschema::validator_for(&serde_json::Value::Object(schema.clone()))
                .map_err(|e| DefinitionError::InvalidSchema { name: name.to_owned(), which, reason: e.to_string() })?;
            Ok(SchemaCheck::Full(Arc::new(validator)))
        }
        #[cfg(not(feature = "jsonschema"))]
        {
            tracing::warn!(
                tool = name,
                schema = which,
                "the schema uses JSON Schema beyond the built-in checker's subset: it is not checked (enable \
                 the `jsonschema` feature of mcp-server to check it)"
            );
            Ok(SchemaCheck::Unchecked)
        }
    }

    /// What is wrong with `value` (at most [`MAX_PROBLEMS`] lines); `None` if it conforms.
    /// A conforming value (the usual case) costs one validation pass and no allocation.
    pub(crate) fn problems(&self, value: &serde_json::Value) -> Option<Vec<String>> {
        match self {
            SchemaCheck::Subset(schema) => (!schema.is_valid(value)).then(|| schema.problems(value, MAX_PROBLEMS)),
            #[cfg(feature = "jsonschema")]
            SchemaCheck::Full(validator) => (!validator.is_valid(value)).then(|| {
                validator
                    .iter_errors(value)
                    .take(MAX_PROBLEMS)
                    .map(|e| {
                        let at = e.instance_path().to_string();
                        if at.is_empty() { e.to_string() } else { format!("{at}: {e}") }
                    })
                    .collect()
            }),
            #[cfg(not(feature = "jsonschema"))]
            SchemaCheck::Unchecked => None,
        }
    }
}

/// At most this many problems are reported for a call's arguments.
const MAX_PROBLEMS: usize = 8;

pub(crate) fn object_schema(
    name: &str,
    which: &'static str,
    schema: serde_json::Value,
) -> Result<JsonObject, DefinitionError> {
    match schema {
        serde_json::Value::Object(m) if is_object_schema(&m) => Ok(m),
        _ => Err(DefinitionError::InvalidSchema {
            name: name.to_owned(),
            which,
            reason: "it must be a JSON object schema with \"type\": \"object\"".to_owned(),
        }),
    }
}

/// Whether a schema's root is `"type": "object"`, as revisions before 2026-07-28 demand of an
/// output schema.
pub(crate) fn is_object_schema(schema: &JsonObject) -> bool {
    schema.get("type").and_then(|t| t.as_str()) == Some("object")
}

/// An output schema's own checks, whether or not the server checks structured content: its
/// `type`, if any, names JSON types.
pub(crate) fn check_output_schema(name: &str, schema: &JsonObject) -> Result<(), DefinitionError> {
    const TYPES: [&str; 7] = ["object", "array", "string", "number", "integer", "boolean", "null"];
    let known = |t: &serde_json::Value| t.as_str().is_some_and(|t| TYPES.contains(&t));
    let ok = match schema.get("type") {
        None => true,
        Some(serde_json::Value::Array(types)) => types.iter().all(known),
        Some(t) => known(t),
    };
    if ok {
        return Ok(());
    }
    Err(DefinitionError::InvalidSchema {
        name: name.to_owned(),
        which: "outputSchema",
        reason: "its `type` names no JSON type".to_owned(),
    })
}

/// What a client of a revision before 2026-07-28 sees of an output schema whose root is not an
/// object schema: an object schema whose required property `result` is that schema (as the
/// official TypeScript SDK writes it, SEP-2106). References within the schema (`#/...`) are
/// rewritten to point into `result`, unless the schema sets its own `$id` (then they resolve
/// against it). `$schema` stays at the root.
pub(crate) fn legacy_output_schema(natural: &JsonObject) -> JsonObject {
    let mut inner = serde_json::Value::Object(natural.clone());
    if !natural.contains_key("$id") {
        rewrite_refs(&mut inner, false);
    }
    let mut wrapped = JsonObject::new();
    if let Some(dialect) = natural.get("$schema") {
        wrapped.insert("$schema".to_owned(), dialect.clone());
    }
    wrapped.insert("type".to_owned(), "object".into());
    wrapped.insert("properties".to_owned(), serde_json::json!({ "result": inner }));
    wrapped.insert("required".to_owned(), serde_json::json!(["result"]));
    wrapped
}

/// Prefixes the local references (`#`, `#/...`) of a schema with `/properties/result`; values
/// that are instance data (`const`, `enum`, `default`, `examples`) are left alone, and so are
/// subschemas with their own `$id`. `names` says that `node` maps names to subschemas
/// (`properties`, `$defs`, ...), whose keys are not keywords.
fn rewrite_refs(node: &mut serde_json::Value, names: bool) {
    const DATA: [&str; 4] = ["const", "enum", "default", "examples"];
    const NAME_MAPS: [&str; 5] = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
    match node {
        serde_json::Value::Array(items) => items.iter_mut().for_each(|item| rewrite_refs(item, false)),
        serde_json::Value::Object(map) => {
            if !names && map.contains_key("$id") {
                return;
            }
            for (key, value) in map.iter_mut() {
                if names {
                    rewrite_refs(value, false);
                } else if key == "$ref" || key == "$dynamicRef" {
                    if let serde_json::Value::String(r) = value
                        && let Some(rest) = r.strip_prefix('#')
                        && (rest.is_empty() || rest.starts_with('/'))
                    {
                        *r = format!("#/properties/result{rest}");
                    }
                } else if !DATA.contains(&key.as_str()) {
                    rewrite_refs(value, NAME_MAPS.contains(&key.as_str()));
                }
            }
        }
        _ => {}
    }
}
