//! Tools: a definition (`mcp_types::Tool`) and a handler, registered at start-up or at runtime.
//!
//! ```
//! use mcp_server::{ToolDef, ToolError};
//! use mcp_types::CallToolResult;
//!
//! let add = ToolDef::new(
//!     "add",
//!     serde_json::json!({
//!         "type": "object",
//!         "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
//!         "required": ["a", "b"]
//!     }),
//!     |args, _ctx| async move {
//!         let a = args["a"].as_f64().unwrap_or_default();
//!         let b = args["b"].as_f64().unwrap_or_default();
//!         Ok::<_, ToolError>(CallToolResult::structured(serde_json::json!({"sum": a + b})))
//!     },
//! )
//! .unwrap()
//! .description("Adds two numbers");
//! assert_eq!(add.definition().name, "add");
//! ```

use std::future::Future;
use std::sync::Arc;

use mcp_jsonrpc::BoxFuture;
use mcp_types::{CallToolResult, ErrorObject, JsonObject, Tool, ToolAnnotations};

use crate::context::Context;
use crate::schema_check;
use crate::tasks::TaskSupport;

/// Why a tool call failed.
///
/// `Tool` errors become a result with `isError: true`, which the model sees and can act on;
/// `Protocol` errors become a JSON-RPC error response.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool failed: reported to the model as an `isError` result.
    #[error("{0}")]
    Tool(String),
    /// A protocol-level failure: reported as a JSON-RPC error.
    #[error("{0}")]
    Protocol(ErrorObject),
}

impl ToolError {
    /// A tool failure with a message for the model.
    pub fn new(message: impl std::fmt::Display) -> Self {
        ToolError::Tool(message.to_string())
    }
}

impl From<String> for ToolError {
    fn from(s: String) -> Self {
        ToolError::Tool(s)
    }
}

impl From<&str> for ToolError {
    fn from(s: &str) -> Self {
        ToolError::Tool(s.to_owned())
    }
}

impl From<ErrorObject> for ToolError {
    fn from(e: ErrorObject) -> Self {
        ToolError::Protocol(e)
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(e: serde_json::Error) -> Self {
        ToolError::Tool(e.to_string())
    }
}

/// The code behind a tool.
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the tool with its arguments (already checked against the input schema).
    fn call(&self, arguments: JsonObject, ctx: Context) -> BoxFuture<Result<CallToolResult, ToolError>>;
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(JsonObject, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
{
    fn call(&self, arguments: JsonObject, ctx: Context) -> BoxFuture<Result<CallToolResult, ToolError>> {
        Box::pin(self(arguments, ctx))
    }
}

/// Why a tool definition was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    /// The name breaks the 2025-11-25 naming rule.
    #[error("invalid tool name `{name}`: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The input or output schema is not an object schema, or does not compile.
    #[error("invalid {which} of tool `{name}`: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// `inputSchema` or `outputSchema`.
        which: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A resource's URI starts with no scheme such as `file:` (often: its name and URI were
    /// given the wrong way round).
    #[error(
        "invalid URI `{uri}` of resource `{name}`: it starts with no scheme such as `file:` (are the name and URI swapped?)"
    )]
    InvalidUri {
        /// The resource's name.
        name: String,
        /// The URI.
        uri: String,
    },
    /// An item added at runtime to a server that did not declare its kind's capability.
    #[error(
        "the server does not declare the `{capability}` capability: enable it on its builder to add {capability} at runtime"
    )]
    NotDeclared {
        /// `tools`, `prompts` or `resources`.
        capability: &'static str,
    },
    /// Two items with the same name (or URI).
    #[error("duplicate {kind} `{name}`")]
    Duplicate {
        /// `tool`, `prompt`, `resource`, `resource template`, `custom request` or
        /// `custom notification`.
        kind: &'static str,
        /// The name, URI or method.
        name: String,
    },
    /// A custom method named as one of the protocol's (see
    /// [`is_reserved_method`](mcp_types::is_reserved_method)): it would shadow it.
    #[error("`{method}` is a method of the protocol: a custom method needs a name of its own (`vendor/method`)")]
    ReservedMethod {
        /// The method.
        method: String,
    },
    /// An extension whose identifier has no prefix (`vendor/name`), which the 2026-07-28
    /// specification requires of extension identifiers.
    #[error("invalid extension identifier `{name}`: it needs a prefix, as in `com.example/{name}`")]
    InvalidExtension {
        /// The identifier.
        name: String,
    },
}

/// Checks a tool name against the 2025-11-25 rule: 1 to 128 characters, ASCII letters,
/// digits, `_`, `-` and `.`.
pub fn check_tool_name(name: &str) -> Result<(), DefinitionError> {
    let reason = if name.is_empty() {
        Some("it is empty")
    } else if name.len() > 128 {
        Some("it is longer than 128 characters")
    } else if !name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) {
        Some("only ASCII letters, digits, `_`, `-` and `.` are allowed")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(DefinitionError::InvalidName { name: name.to_owned(), reason }),
        None => Ok(()),
    }
}

/// A tool: its definition and its handler, with the input schema compiled once.
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) handler: Arc<dyn ToolHandler>,
    pub(crate) args_check: ArgsCheck,
    /// The OAuth scopes a call needs (see [`ToolDef::scopes`]).
    pub(crate) scopes: Vec<String>,
    /// Whether it may be called as a task (see [`ToolDef::task_support`]).
    pub(crate) task_support: TaskSupport,
    /// Whether, as a task of the 2026-07-28 extension, its task begins where the handler
    /// awaits [`Context::run_as_task`](crate::Context::run_as_task) (see [`ToolDef::deferred_task`]).
    pub(crate) deferred_task: bool,
    /// The arguments its input schema mirrors into `Mcp-Param-*` headers (2026-07-28), read
    /// from the schema once, here, rather than on every call (most tools have none).
    #[cfg(feature = "http")]
    pub(crate) header_params: Vec<crate::param_headers::HeaderParam>,
}

/// The compiled input schema: by [`schema_check`] when the schema lies within its subset (the
/// usual case, and much cheaper to build), by jsonschema otherwise (feature `jsonschema`). Both
/// give the same verdicts. Without the feature, a schema outside the subset is not checked:
/// the tool is registered with a warning, and its handler sees the arguments as sent.
#[derive(Clone)]
pub(crate) enum ArgsCheck {
    Subset(Arc<schema_check::Schema>),
    #[cfg(feature = "jsonschema")]
    Full(Arc<jsonschema::Validator>),
    #[cfg(not(feature = "jsonschema"))]
    Unchecked,
}

impl ArgsCheck {
    /// Compiles the input schema of tool `name`.
    fn compile(name: &str, schema: &JsonObject) -> Result<ArgsCheck, DefinitionError> {
        if let Some(schema) = schema_check::Schema::compile_object(schema) {
            return Ok(ArgsCheck::Subset(Arc::new(schema)));
        }
        #[cfg(feature = "jsonschema")]
        {
            let validator = jsonschema::validator_for(&serde_json::Value::Object(schema.clone())).map_err(|e| {
                DefinitionError::InvalidSchema { name: name.to_owned(), which: "inputSchema", reason: e.to_string() }
            })?;
            Ok(ArgsCheck::Full(Arc::new(validator)))
        }
        #[cfg(not(feature = "jsonschema"))]
        {
            tracing::warn!(
                tool = name,
                "the input schema uses JSON Schema beyond the built-in checker's subset: arguments are not \
                 checked (enable the `jsonschema` feature of mcp-server to check them)"
            );
            Ok(ArgsCheck::Unchecked)
        }
    }
}

/// At most this many problems are reported for a call's arguments.
const MAX_PROBLEMS: usize = 8;

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("tool", &self.tool).finish_non_exhaustive()
    }
}

fn object_schema(name: &str, which: &'static str, schema: serde_json::Value) -> Result<JsonObject, DefinitionError> {
    match schema {
        serde_json::Value::Object(m) if m.get("type").and_then(|t| t.as_str()) == Some("object") => Ok(m),
        _ => Err(DefinitionError::InvalidSchema {
            name: name.to_owned(),
            which,
            reason: "it must be a JSON object schema with \"type\": \"object\"".to_owned(),
        }),
    }
}

impl ToolDef {
    /// A tool with a name, an input schema (a JSON Schema object) and a handler.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        input_schema: serde_json::Value,
        handler: F,
    ) -> Result<Self, DefinitionError>
    where
        F: Fn(JsonObject, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        let name = name.into();
        check_tool_name(&name)?;
        let schema = object_schema(&name, "inputSchema", input_schema)?;
        Self::from_tool(Tool::new(name, schema), handler)
    }

    /// A tool from a complete definition (as read from a configuration file, say) and any
    /// [`ToolHandler`].
    pub fn from_tool(tool: Tool, handler: impl ToolHandler) -> Result<Self, DefinitionError> {
        check_tool_name(&tool.name)?;
        let args_check = ArgsCheck::compile(&tool.name, &tool.input_schema)?;
        Ok(ToolDef {
            #[cfg(feature = "http")]
            header_params: crate::param_headers::HeaderParam::from_schema_object(&tool.input_schema),
            tool,
            handler: Arc::new(handler),
            args_check,
            scopes: Vec::new(),
            task_support: TaskSupport::Forbidden,
            deferred_task: false,
        })
    }

    /// The definition as listed.
    pub fn definition(&self) -> &Tool {
        &self.tool
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.tool.description = Some(description.into());
        self
    }

    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.tool.title = Some(title.into());
        self
    }

    /// Sets the annotations (read-only, destructive, idempotent, open-world hints).
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// Sets the icons a client may show for the tool.
    pub fn icons(mut self, icons: Vec<mcp_types::Icon>) -> Self {
        self.tool.icons = Some(icons);
        self
    }

    /// Sets the output schema; results should then carry matching `structuredContent`.
    pub fn output_schema(mut self, schema: serde_json::Value) -> Result<Self, DefinitionError> {
        self.tool.output_schema = Some(object_schema(&self.tool.name, "outputSchema", schema)?);
        Ok(self)
    }

    /// Sets `_meta`.
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.tool.meta = Some(mcp_types::MetaObject { extra: meta });
        self
    }

    /// The OAuth scopes a call needs (feature `auth` of the HTTP endpoint): a request whose
    /// token lacks one is refused with 403 `insufficient_scope` naming them, before the
    /// handler runs. Requests without a token (stdio, HTTP without `auth`) are not checked.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The OAuth scopes a call needs (see [`Self::scopes`]).
    pub fn required_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// For the 2026-07-28 tasks extension: the call runs synchronously (its input-required
    /// round trips included) until the handler awaits
    /// [`Context::run_as_task`](crate::Context::run_as_task); only then is the task created
    /// and the call answered with it. Without this, a task-supporting tool's call from a
    /// request that declares the extension is a task from the start. Has effect only with
    /// [`task_support`](Self::task_support) `Optional` or `Required`; see
    /// [`tasks`](crate::tasks).
    pub fn deferred_task(mut self) -> Self {
        self.deferred_task = true;
        self
    }

    /// Whether the tool may be called as a task (protocol revision 2025-11-25, see
    /// [`tasks`](crate::tasks)): `execution.taskSupport` of its definition. A server with such a
    /// tool declares the `tasks` capability (and, for 2026-07-28,
    /// the `io.modelcontextprotocol/tasks` extension). Default [`TaskSupport::Forbidden`].
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        let execution = self.tool.execution.get_or_insert_with(Default::default);
        execution.task_support = Some(support.wire());
        self.task_support = support;
        self
    }

    /// Whether the tool may be called as a task.
    pub fn task_support_of(&self) -> TaskSupport {
        self.task_support
    }

    /// Checks `arguments` against the input schema: they come back, with the problems if any.
    /// Valid arguments (the usual case) cost one validation pass, no copy and no allocation.
    pub(crate) fn check_arguments(&self, arguments: JsonObject) -> (JsonObject, Option<String>) {
        let value = serde_json::Value::Object(arguments);
        let problems = match &self.args_check {
            ArgsCheck::Subset(schema) => (!schema.is_valid(&value)).then(|| schema.problems(&value, MAX_PROBLEMS)),
            #[cfg(feature = "jsonschema")]
            ArgsCheck::Full(validator) => (!validator.is_valid(&value)).then(|| {
                validator
                    .iter_errors(&value)
                    .take(MAX_PROBLEMS)
                    .map(|e| {
                        let at = e.instance_path().to_string();
                        if at.is_empty() { e.to_string() } else { format!("{at}: {e}") }
                    })
                    .collect()
            }),
            #[cfg(not(feature = "jsonschema"))]
            ArgsCheck::Unchecked => None,
        };
        let problems =
            problems.map(|lines| format!("invalid arguments for tool `{}`: {}", self.tool.name, lines.join("; ")));
        match value {
            serde_json::Value::Object(arguments) => (arguments, problems),
            _ => (JsonObject::new(), problems), // built as an object above
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_the_rule() {
        for ok in ["add", "get_weather", "a.b-c_D9", &"x".repeat(128)] {
            check_tool_name(ok).unwrap();
        }
        for bad in ["", "has space", "ünïcode", "a/b", &"x".repeat(129)] {
            assert!(check_tool_name(bad).is_err(), "{bad}");
        }
    }

    fn tool(schema: serde_json::Value) -> Result<ToolDef, DefinitionError> {
        ToolDef::new("t", schema, |_: JsonObject, _: Context| async {
            Ok::<_, ToolError>(CallToolResult::success(vec![]))
        })
    }

    fn problems(tool: &ToolDef, arguments: serde_json::Value) -> Option<String> {
        let serde_json::Value::Object(arguments) = arguments else { panic!("not an object") };
        let (back, problems) = tool.check_arguments(arguments.clone());
        assert_eq!(back, arguments);
        problems
    }

    #[test]
    fn subset_schemas_are_checked_without_jsonschema() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"text": {"type": "string"}, "n": {"type": "integer", "minimum": 0}},
            "required": ["text"]
        });
        let t = tool(schema).unwrap();
        assert!(matches!(t.args_check, ArgsCheck::Subset(_)));
        assert_eq!(problems(&t, serde_json::json!({"text": "hi", "n": 1.0})), None);
        assert_eq!(
            problems(&t, serde_json::json!({"n": -1})).unwrap(),
            "invalid arguments for tool `t`: \"text\" is a required property; /n: -1 is less than the minimum of 0"
        );
        assert_eq!(
            problems(&t, serde_json::json!({"text": 5})).unwrap(),
            "invalid arguments for tool `t`: /text: 5 is not of type \"string\""
        );
    }

    #[test]
    #[cfg(not(feature = "jsonschema"))]
    fn without_jsonschema_other_schemas_are_not_checked() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"point": {"$ref": "#/$defs/point"}},
            "$defs": {"point": {"type": "object", "required": ["x"]}}
        });
        let t = tool(schema).unwrap();
        assert!(matches!(t.args_check, ArgsCheck::Unchecked));
        assert_eq!(problems(&t, serde_json::json!({"point": {}})), None);
    }

    #[test]
    #[cfg(feature = "jsonschema")]
    fn other_schemas_still_go_to_jsonschema() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"point": {"$ref": "#/$defs/point"}, "code": {"type": "string", "pattern": "^[A-Z]+$"}},
            "required": ["point"],
            "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}
        });
        let t = tool(schema).unwrap();
        assert!(matches!(t.args_check, ArgsCheck::Full(_)));
        assert_eq!(problems(&t, serde_json::json!({"point": {"x": 1}, "code": "AB"})), None);
        assert_eq!(
            problems(&t, serde_json::json!({"point": {}})).unwrap(),
            "invalid arguments for tool `t`: /point: \"x\" is a required property"
        );
        let p = problems(&t, serde_json::json!({"point": {"x": 1}, "code": "ab"})).unwrap();
        assert!(p.starts_with("invalid arguments for tool `t`: /code: \"ab\" does not match"), "{p}");

        // A schema that does not compile is still refused when the tool is defined.
        for bad in [
            serde_json::json!({"type": "object", "properties": {"a": {"type": "strin"}}}),
            serde_json::json!({"type": "object", "required": "a"}),
            serde_json::json!({"type": "object", "properties": {"a": {"minLength": -1}}}),
        ] {
            let err = tool(bad.clone()).unwrap_err();
            assert!(matches!(&err, DefinitionError::InvalidSchema { which: "inputSchema", .. }), "{bad}: {err}");
        }
    }

    #[test]
    fn schemas_must_be_object_schemas() {
        let handler = |_: JsonObject, _: Context| async { Ok::<_, ToolError>(CallToolResult::success(vec![])) };
        let err = ToolDef::new("t", serde_json::json!({"type": "string"}), handler).unwrap_err();
        assert!(err.to_string().contains("\"type\": \"object\""), "{err}");
    }
}
