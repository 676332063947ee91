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

use super::tool_schema::{SchemaCheck, check_output_schema, is_object_schema, object_schema};
use crate::context::Context;
use crate::error::{DefinitionError, ToolError};
use crate::tasks::TaskSupport;

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
    pub(crate) args_check: SchemaCheck,
    /// The output schema compiled, by a server that checks structured content (see
    /// [`ServerBuilder::check_structured_content`](crate::ServerBuilder::check_structured_content)),
    /// when the tool is registered; `None` otherwise, and then the call path never looks further.
    pub(crate) output_check: Option<SchemaCheck>,
    /// Whether the output schema's root is not `"type": "object"` (2026-07-28 allows that):
    /// clients of older revisions then see it, and the structured content, wrapped as the
    /// property `result` (see `legacy_output_schema`).
    pub(crate) wraps_output: bool,
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
    pub(crate) header_params: Vec<crate::def::header_params::HeaderParam>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("tool", &self.tool).finish_non_exhaustive()
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
        let args_check = SchemaCheck::compile(&tool.name, "inputSchema", &tool.input_schema)?;
        if let Some(schema) = &tool.output_schema {
            check_output_schema(&tool.name, schema)?;
        }
        Ok(ToolDef {
            wraps_output: tool.output_schema.as_ref().is_some_and(|s| !is_object_schema(s)),
            output_check: None,
            #[cfg(feature = "http")]
            header_params: crate::def::header_params::HeaderParam::from_schema_object(&tool.input_schema),
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

    /// Sets the output schema; results must then carry matching `structuredContent` (a server
    /// can check that they do: see
    /// [`ServerBuilder::check_structured_content`](crate::ServerBuilder::check_structured_content)).
    ///
    /// Any JSON Schema object: `"type": "object"` as every revision allows, or (protocol
    /// revision 2026-07-28) an array, string, number, ... schema. Clients of older revisions,
    /// whose schema demands an object, see such a schema wrapped as the required property
    /// `result` of an object schema, and the structured content as `{"result": ...}`.
    ///
    /// ```
    /// use mcp_server::{Json, ToolDef, ToolError, IntoToolResult};
    /// use serde_json::json;
    ///
    /// let users = ToolDef::new("list_users", json!({"type": "object"}), |_args, _ctx| async {
    ///     Json(vec!["alice", "bob"]).into_tool_result()
    /// })
    /// .unwrap()
    /// .output_schema(json!({"type": "array", "items": {"type": "string"}}))
    /// .unwrap();
    /// assert_eq!(users.definition().output_schema.as_ref().unwrap()["type"], "array");
    /// ```
    pub fn output_schema(mut self, schema: serde_json::Value) -> Result<Self, DefinitionError> {
        let schema = match schema {
            serde_json::Value::Object(schema) => schema,
            _ => {
                return Err(DefinitionError::InvalidSchema {
                    name: self.tool.name.clone(),
                    which: "outputSchema",
                    reason: "it must be a JSON Schema object".to_owned(),
                });
            }
        };
        check_output_schema(&self.tool.name, &schema)?;
        self.wraps_output = !is_object_schema(&schema);
        self.tool.output_schema = Some(schema);
        self.output_check = None;
        Ok(self)
    }

    /// Sets `_meta`.
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.tool.meta = Some(mcp_types::MetaObject { extra: meta });
        self
    }

    /// Links the tool to the MCP App at `uri` (a `ui://` resource the server serves, see
    /// [`ServerBuilder::app`](crate::ServerBuilder::app)): `_meta.ui.resourceUri`, which a
    /// host that renders apps shows the tool's results in. The tool still answers with content
    /// a text-only client can use.
    pub fn ui(self, uri: impl Into<String>) -> Self {
        let uri = serde_json::Value::String(uri.into());
        self.set_ui("resourceUri", uri)
    }

    /// Who may use the tool (`_meta.ui.visibility`, MCP Apps): `[Visibility::App]` makes it a
    /// tool of its app only, which hosts leave out of the model's tool list (the server
    /// lists it, as the specification asks: the host filters). The default is both.
    pub fn ui_visibility(self, visibility: impl IntoIterator<Item = mcp_types::apps::Visibility>) -> Self {
        let visibility: Vec<_> = visibility.into_iter().collect();
        let value = serde_json::to_value(visibility).expect("visibility serializes");
        self.set_ui("visibility", value)
    }

    /// Sets one member of `_meta.ui`, keeping the rest of `_meta`.
    fn set_ui(mut self, key: &str, value: serde_json::Value) -> Self {
        let meta = &mut self.tool.meta.get_or_insert_with(Default::default).extra;
        let ui = meta.entry(mcp_types::apps::META_KEY).or_insert_with(|| serde_json::Value::Object(JsonObject::new()));
        if !ui.is_object() {
            *ui = serde_json::Value::Object(JsonObject::new());
        }
        ui.as_object_mut().expect("an object").insert(key.to_owned(), value);
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

    /// Declares that the handler elicits `T` ([`Context::elicit::<T>`](crate::Context::elicit)),
    /// and checks now, when the tool is defined, that `T` is a form elicitation can express
    /// (a flat object of primitives and enums, in the newest revision): a type that is not
    /// fails here, so the server is never built with it, rather than on the first call. The
    /// form is derived here and cached for the calls. What only an older revision cannot
    /// express (a multi-select, for a 2025-06-18 session) is still refused by the call.
    ///
    /// ```
    /// use mcp_server::{Context, DefinitionError, ToolDef, ToolError};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Confirm { ok: bool }
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Nested { inner: Confirm }
    ///
    /// let handler = |_args, _ctx: Context| async { Ok::<_, ToolError>(mcp_types::CallToolResult::success(vec![])) };
    /// let tool = ToolDef::new("delete", serde_json::json!({"type": "object"}), handler)?;
    /// assert!(tool.clone().elicits::<Confirm>().is_ok());
    /// let err = tool.elicits::<Nested>().unwrap_err();
    /// assert!(err.to_string().contains("field `inner`"), "{err}");
    /// # Ok::<(), DefinitionError>(())
    /// ```
    pub fn elicits<T: schemars::JsonSchema + 'static>(self) -> Result<Self, DefinitionError> {
        match crate::schema::form::check_form::<T>() {
            Ok(()) => Ok(self),
            Err(error) => Err(DefinitionError::InvalidElicitation { name: self.tool.name.clone(), error }),
        }
    }

    /// Whether the tool may be called as a task.
    pub fn task_support_of(&self) -> TaskSupport {
        self.task_support
    }

    /// Compiles the output schema for the check of structured content, once, when a server
    /// that checks it registers the tool. A schema that does not compile is refused then.
    pub(crate) fn compile_output_check(&mut self) -> Result<(), DefinitionError> {
        if let (Some(schema), None) = (&self.tool.output_schema, &self.output_check) {
            self.output_check = Some(SchemaCheck::compile(&self.tool.name, "outputSchema", schema)?);
        }
        Ok(())
    }

    /// Checks a result of the handler against the output schema, if compiled (see
    /// [`Self::compile_output_check`]): a result that is not an error must carry structured
    /// content that conforms. A mismatch is the server's fault, not the model's: a JSON-RPC
    /// internal error (-32603) rather than a result with `isError` (see docs/server.md).
    #[inline]
    pub(crate) fn check_output(&self, result: CallToolResult) -> Result<CallToolResult, ErrorObject> {
        match &self.output_check {
            None => Ok(result),
            Some(check) => self.check_structured(check, result),
        }
    }

    fn check_structured(&self, check: &SchemaCheck, result: CallToolResult) -> Result<CallToolResult, ErrorObject> {
        if result.is_error() {
            return Ok(result);
        }
        let name = &self.tool.name;
        let problems = match &result.structured_content {
            None => format!("tool `{name}` has an output schema but its result has no structured content"),
            Some(structured) => match check.problems(structured) {
                None => return Ok(result),
                Some(lines) => {
                    format!(
                        "structured content of tool `{name}` does not match its output schema: {}",
                        lines.join("; ")
                    )
                }
            },
        };
        tracing::warn!(tool = %name, "{problems}");
        Err(ErrorObject::internal_error(problems))
    }

    /// Checks `arguments` against the input schema: they come back, with the problems if any.
    /// Valid arguments (the usual case) cost one validation pass, no copy and no allocation.
    pub(crate) fn check_arguments(&self, arguments: JsonObject) -> (JsonObject, Option<String>) {
        let value = serde_json::Value::Object(arguments);
        let problems = self.args_check.problems(&value);
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
    use crate::def::tool_schema::legacy_output_schema;

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
        assert!(matches!(t.args_check, SchemaCheck::Subset(_)));
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
        assert!(matches!(t.args_check, SchemaCheck::Unchecked));
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
        assert!(matches!(t.args_check, SchemaCheck::Full(_)));
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
    fn older_revisions_see_non_object_output_schemas_wrapped_with_their_references() {
        let natural = serde_json::json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"$ref": "#/$defs/node"},
            "$defs": {
                "node": {"type": "object", "properties": {
                    "children": {"$ref": "#"},
                    "$ref": {"const": {"$ref": "#/data"}},
                    "elsewhere": {"$ref": "https://example.com/schema#/x"},
                    "own": {"$id": "https://example.com/own", "$ref": "#/inner"}
                }, "default": {"$ref": "#/kept"}}
            }
        });
        let serde_json::Value::Object(natural) = natural else { unreachable!() };
        let wrapped = serde_json::Value::Object(legacy_output_schema(&natural));
        assert_eq!(
            wrapped,
            serde_json::json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "required": ["result"],
                "properties": {"result": {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "array",
                    "items": {"$ref": "#/properties/result/$defs/node"},
                    "$defs": {
                        "node": {"type": "object", "properties": {
                            // A property named `$ref` is a name, its `const` is data.
                            "children": {"$ref": "#/properties/result"},
                            "$ref": {"const": {"$ref": "#/data"}},
                            "elsewhere": {"$ref": "https://example.com/schema#/x"},
                            "own": {"$id": "https://example.com/own", "$ref": "#/inner"}
                        }, "default": {"$ref": "#/kept"}}
                    }
                }}
            })
        );
        // A schema with its own `$id` resolves its references against it: left as it is.
        let serde_json::Value::Object(with_id) =
            serde_json::json!({"$id": "https://example.com/s", "type": "array", "items": {"$ref": "#/$defs/x"}})
        else {
            unreachable!()
        };
        let wrapped = legacy_output_schema(&with_id);
        assert_eq!(wrapped["properties"]["result"], serde_json::Value::Object(with_id));
    }

    #[test]
    fn schemas_must_be_object_schemas() {
        let handler = |_: JsonObject, _: Context| async { Ok::<_, ToolError>(CallToolResult::success(vec![])) };
        let err = ToolDef::new("t", serde_json::json!({"type": "string"}), handler).unwrap_err();
        assert!(err.to_string().contains("\"type\": \"object\""), "{err}");
    }
}
