//! Tool arguments and structured results checked against the tools' schemas (feature
//! `jsonschema`; without it nothing is ever compiled, and the options that turn the checks on
//! do not exist).

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_types::{CallToolRequestParams, CallToolResult, Tool};

use crate::error::ClientError;

/// A compiled JSON Schema.
#[cfg(feature = "jsonschema")]
type Validator = jsonschema::Validator;
#[cfg(not(feature = "jsonschema"))]
enum Validator {}

/// Compiled schemas of one tool.
#[derive(Clone, Default)]
pub(crate) struct ToolSchemas {
    input: Option<Arc<Validator>>,
    output: Option<Arc<Validator>>,
}

/// The checks the builder turned on, and the schemas of the tools last listed.
pub(crate) struct SchemaChecks {
    arguments: bool,
    structured: bool,
    schemas: Mutex<HashMap<String, ToolSchemas>>,
}

impl SchemaChecks {
    /// The checks turned on.
    pub(crate) fn new(arguments: bool, structured: bool) -> Self {
        SchemaChecks { arguments, structured, schemas: Mutex::default() }
    }

    /// Whether any check is on (schemas are compiled only then).
    pub(crate) fn any(&self) -> bool {
        self.arguments || self.structured
    }

    /// Compiles the schemas of a page of tools; a first page (`fresh`) forgets the tools
    /// remembered before, so what is kept stays bounded by one listing.
    pub(crate) fn remember(&self, tools: &[Tool], fresh: bool) {
        if !self.any() {
            return;
        }
        let mut schemas = self.schemas.lock_unpoisoned();
        if fresh {
            schemas.clear();
        }
        for tool in tools {
            let input = compile(&tool.input_schema);
            let output = tool.output_schema.as_ref().and_then(compile);
            schemas.insert(tool.name.clone(), ToolSchemas { input, output });
        }
    }

    /// Checks the arguments of a call (when on); returns the tool's schemas, for
    /// [`SchemaChecks::check_result`].
    pub(crate) fn check_arguments(&self, params: &CallToolRequestParams) -> Result<ToolSchemas, ClientError> {
        let schemas = self.schemas.lock_unpoisoned().get(&params.name).cloned().unwrap_or_default();
        if self.arguments
            && let Some(v) = &schemas.input
        {
            let args = serde_json::Value::Object(params.arguments.clone().unwrap_or_default());
            if let Some(detail) = violations(v, &args) {
                return Err(ClientError::InvalidArguments { tool: params.name.clone(), detail });
            }
        }
        Ok(schemas)
    }

    /// Checks the structured content of a result (when on): a tool with an output schema
    /// MUST return conforming structured content, an error result aside.
    pub(crate) fn check_result(
        &self,
        tool: &str,
        schemas: &ToolSchemas,
        result: &CallToolResult,
    ) -> Result<(), ClientError> {
        let Some(v) = schemas.output.as_ref().filter(|_| self.structured && !result.is_error()) else {
            return Ok(());
        };
        let detail = match &result.structured_content {
            Some(structured) => violations(v, structured),
            None => Some("the tool has an output schema but returned no structuredContent".to_owned()),
        };
        match detail {
            Some(detail) => Err(ClientError::InvalidStructuredContent { tool: tool.to_owned(), detail }),
            None => Ok(()),
        }
    }
}

/// Compiles a tool's schema; `None` if it does not compile (it is then not checked).
fn compile(schema: &mcp_types::JsonObject) -> Option<Arc<Validator>> {
    #[cfg(feature = "jsonschema")]
    return jsonschema::validator_for(&serde_json::Value::Object(schema.clone())).ok().map(Arc::new);
    #[cfg(not(feature = "jsonschema"))]
    {
        let _ = schema;
        None
    }
}

/// The first violations of `value`, joined; `None` if it conforms.
fn violations(validator: &Validator, value: &serde_json::Value) -> Option<String> {
    #[cfg(feature = "jsonschema")]
    {
        let errors: Vec<String> = validator.iter_errors(value).take(8).map(|e| e.to_string()).collect();
        (!errors.is_empty()).then(|| errors.join("; "))
    }
    #[cfg(not(feature = "jsonschema"))]
    {
        let _ = value;
        match *validator {}
    }
}
