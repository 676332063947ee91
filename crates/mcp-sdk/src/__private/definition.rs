//! Definitions from the parts the macros computed: a tool, a resource template, icons,
//! annotations, `_meta`, and the pins of a handler's future's output type.

use std::future::Future;

use mcp_server::{Completion, Context, TemplateDef, ToolDef, ToolError, UriVariables};
use mcp_types::{ErrorObject, JsonObject};
use serde_json::Value;

/// Pins the output type of a tool handler's future (for `?` inside it).
pub fn tool_future<F: Future<Output = Result<mcp_types::CallToolResult, ToolError>>>(future: F) -> F {
    future
}

/// Pins the output type of a prompt handler's future.
pub fn prompt_future<F: Future<Output = Result<mcp_types::GetPromptResult, ErrorObject>>>(future: F) -> F {
    future
}

/// Pins the output type of a resource handler's future.
pub fn resource_future<F: Future<Output = Result<Vec<mcp_types::AnyResourceContents>, ErrorObject>>>(future: F) -> F {
    future
}

/// Pins the output type of a completer's future.
pub fn completion_future<F: Future<Output = Result<Completion, ErrorObject>>>(future: F) -> F {
    future
}

/// A tool from the parts the macro computed.
///
/// # Panics
///
/// If the generated input schema does not compile (a parameter type's `JsonSchema` impl wrote
/// an invalid schema, an invalid regex say), or the output schema is not a schema object.
/// Names are checked when the macro expands.
pub fn tool<F, Fut>(name: &str, input: Value, output: Option<Value>, handler: F) -> ToolDef
where
    F: Fn(JsonObject, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<mcp_types::CallToolResult, ToolError>> + Send + 'static,
{
    let def = ToolDef::new(name, input, handler).and_then(|def| match output {
        Some(output) => def.output_schema(output),
        None => Ok(def),
    });
    match def {
        Ok(def) => def,
        Err(e) => panic!("{e} (check the `JsonSchema` impls of the tool's parameter and return types)"),
    }
}

/// `tool` with `ToolDef::elicits::<T>()` (`#[tool(elicits(T))]`).
///
/// # Panics
///
/// If `T` is not a form elicitation can express (a nested object, say), with
/// `DefinitionError::InvalidElicitation`'s message: when the tool is defined, not at the first
/// call.
pub fn elicits<T: schemars::JsonSchema + 'static>(tool: ToolDef) -> ToolDef {
    match tool.elicits::<T>() {
        Ok(tool) => tool,
        Err(e) => panic!("{e}"),
    }
}

/// A resource template from the parts the macro computed.
///
/// # Panics
///
/// If the template does not parse; the macro parses it with the same rules first.
pub fn template<F, Fut>(name: &str, uri_template: &str, handler: F) -> TemplateDef
where
    F: Fn(String, UriVariables, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<mcp_types::AnyResourceContents>, ErrorObject>> + Send + 'static,
{
    match TemplateDef::new(name, uri_template, handler) {
        Ok(def) => def,
        Err(e) => panic!("{e}"),
    }
}

/// An icon.
pub fn icon(src: &str, mime_type: Option<&str>, sizes: &[&str], theme: Option<&str>) -> mcp_types::Icon {
    let mut icon = mcp_types::Icon::new(src);
    icon.mime_type = mime_type.map(str::to_owned);
    icon.sizes = (!sizes.is_empty()).then(|| sizes.iter().map(|s| (*s).to_owned()).collect());
    icon.theme = theme.map(mcp_types::IconTheme::from_wire);
    icon
}

/// Resource annotations; `audience` holds `user` or `assistant` (checked by the macro).
pub fn resource_annotations(
    audience: &[&str],
    priority: Option<f64>,
    last_modified: Option<&str>,
) -> mcp_types::Annotations {
    let role = |r: &&str| if *r == "user" { mcp_types::Role::User } else { mcp_types::Role::Assistant };
    mcp_types::Annotations {
        audience: (!audience.is_empty()).then(|| audience.iter().map(role).collect()),
        priority,
        last_modified: last_modified.map(str::to_owned),
    }
}

/// `_meta` from its entries.
pub fn meta(entries: impl IntoIterator<Item = (&'static str, Value)>) -> JsonObject {
    entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// Tool annotations from the hints given (`None` if none was).
pub fn annotations(
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
) -> Option<mcp_types::ToolAnnotations> {
    let any = read_only.is_some() || destructive.is_some() || idempotent.is_some() || open_world.is_some();
    any.then(|| mcp_types::ToolAnnotations {
        read_only_hint: read_only,
        destructive_hint: destructive,
        idempotent_hint: idempotent,
        open_world_hint: open_world,
        ..Default::default()
    })
}
