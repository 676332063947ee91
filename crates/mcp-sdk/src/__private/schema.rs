//! The schemas of a tool, from its parameters' and return type's `JsonSchema` impls (schemars):
//! subschemas inlined, so that a schema stands alone (recursive types aside, whose definitions
//! go to `$defs`).

use schemars::{SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

/// Builds the input schema of a tool, one parameter at a time.
pub struct InputSchema {
    generator: SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<Value>,
}

impl Default for InputSchema {
    fn default() -> Self {
        Self::new()
    }
}

impl InputSchema {
    /// An input schema without properties.
    pub fn new() -> Self {
        InputSchema {
            generator: generator(SchemaSettings::draft2020_12().for_deserialize()),
            properties: Map::new(),
            required: Vec::new(),
        }
    }

    pub(super) fn generator(&mut self) -> &mut SchemaGenerator {
        &mut self.generator
    }

    /// Adds an argument (`schema` is `None` for a context parameter).
    pub fn add(&mut self, name: &str, description: Option<&str>, schema: Option<Value>, optional: bool) {
        let Some(schema) = schema else {
            return;
        };
        self.properties.insert(name.to_owned(), describe(schema, description));
        if !optional {
            self.required.push(Value::String(name.to_owned()));
        }
    }

    /// Adds the fields of `T`, a struct, as arguments (`#[serde(flatten)]` on the parameter
    /// `name`): its properties and their `required`.
    ///
    /// # Panics
    ///
    /// If `T`'s schema is not an object with properties (not a struct with named fields), or
    /// one of its fields has the name of another argument: when the tool is defined.
    pub fn flatten<T: schemars::JsonSchema>(&mut self, name: &str) {
        let schema = self.generator.subschema_for::<T>().to_value();
        let (Some(Value::Object(properties)), Some("object")) =
            (schema.get("properties"), schema.get("type").and_then(Value::as_str))
        else {
            panic!(
                "the `#[serde(flatten)]` parameter `{name}` must be a struct with named fields (its fields are the \
                 tool's arguments), not `{}`",
                T::schema_name()
            );
        };
        for (field, property) in properties {
            if self.properties.insert(field.clone(), property.clone()).is_some() {
                panic!("two arguments are named `{field}`: a field of `{name}` and another parameter or field");
            }
        }
        if let Some(Value::Array(required)) = schema.get("required") {
            self.required.extend(required.iter().cloned());
        }
    }

    /// The schema: an object of the arguments added, those not optional `required`, and the
    /// definitions of recursive types in `$defs`.
    pub fn finish(mut self) -> Value {
        let mut schema = json!({"type": "object", "properties": self.properties});
        if !self.required.is_empty() {
            schema["required"] = Value::Array(self.required);
        }
        add_definitions(&mut schema, &mut self.generator);
        schema
    }
}

pub(super) fn generator(settings: SchemaSettings) -> SchemaGenerator {
    settings
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator()
}

/// Only recursive types leave definitions behind when subschemas are inlined.
pub(super) fn add_definitions(schema: &mut Value, generator: &mut SchemaGenerator) {
    let definitions = generator.take_definitions(true);
    if !definitions.is_empty() {
        schema["$defs"] = Value::Object(definitions);
    }
}

fn describe(schema: Value, description: Option<&str>) -> Value {
    let Some(description) = description else {
        return schema;
    };
    let mut object = match schema {
        Value::Object(m) => m,
        Value::Bool(false) => Map::from_iter([("not".to_owned(), json!({}))]),
        _ => Map::new(),
    };
    object.insert("description".to_owned(), Value::String(description.to_owned()));
    Value::Object(object)
}

/// The output schema of a tool, and whether results are wrapped in `{"result": ...}`.
pub struct OutputSpec {
    /// The output schema, if the tool declares one.
    pub schema: Option<Value>,
    /// Whether results are wrapped as `{"result": ...}` (a schema that is not an object's).
    pub wrap: bool,
}
