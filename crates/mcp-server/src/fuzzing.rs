//! Internals the fuzz targets of `crates/mcp-fuzz` drive directly: the built-in checker of
//! tool input schemas and the sealing of `requestState`. Not a stable API.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::schema::Schema;
use crate::serve::seal::StateKeys;

/// A schema compiled by the built-in checker (`schema`), which handles the subset of
/// JSON Schema tool input schemas use.
#[derive(Debug)]
pub struct CheckedSchema(Schema);

impl CheckedSchema {
    /// Compiles `schema`: `None` when it is outside the checker's subset (the server then
    /// hands it to the `jsonschema` crate).
    pub fn compile(schema: &Value) -> Option<CheckedSchema> {
        Schema::compile(schema).map(CheckedSchema)
    }

    /// Compiles an object schema, as a tool's input schema is compiled.
    pub fn compile_object(schema: &Map<String, Value>) -> Option<CheckedSchema> {
        Schema::compile_object(schema).map(CheckedSchema)
    }

    /// Whether `instance` is valid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.0.is_valid(instance)
    }

    /// What is wrong with `instance`, at most `max` problems (empty when it is valid).
    pub fn problems(&self, instance: &Value, max: usize) -> Vec<String> {
        self.0.problems(instance, max)
    }
}

/// The keys that seal and open `requestState` (the first seals, all open).
#[derive(Debug, Clone)]
pub struct StateSealer(StateKeys);

impl StateSealer {
    /// Sealing with `keys[0]`, opening with any of `keys` (at least one).
    pub fn new(keys: Vec<Vec<u8>>) -> StateSealer {
        assert!(!keys.is_empty(), "at least one key");
        StateSealer(StateKeys::new(keys, Duration::from_secs(60)))
    }

    /// Seals `payload` into a `requestState` token.
    pub fn seal(&self, payload: &Value) -> String {
        self.0.seal(payload)
    }

    /// Opens a token: its payload if one of the keys sealed it, `None` otherwise.
    pub fn open(&self, state: &str) -> Option<Value> {
        self.0.open(state)
    }
}
