//! A type whose methods are tools, prompts and resources, registered together.

use std::sync::Arc;

use super::prompt::PromptDef;
use super::resource::{ResourceDef, TemplateDef};
use super::tool::ToolDef;

/// A value that provides tools, prompts, resources and resource templates, sharing its state
/// between them through an `Arc`.
///
/// `#[mcp_sdk::handlers]` on an `impl` block implements it from the block's `#[tool]`,
/// `#[prompt]` and `#[resource]` methods; [`ServerBuilder::handlers`](crate::ServerBuilder::handlers)
/// registers everything at once. By hand:
///
/// ```
/// use std::sync::Arc;
/// use mcp_server::{Handlers, PromptDef, Server};
/// use mcp_types::{ErrorObject, GetPromptResult};
///
/// struct Greeter;
///
/// impl Handlers for Greeter {
///     fn prompts(self: &Arc<Self>) -> Vec<PromptDef> {
///         vec![PromptDef::new("hello", |_args, _ctx| async { Ok::<_, ErrorObject>(GetPromptResult::new(vec![])) })]
///     }
/// }
///
/// let server = Server::builder("greeter", "1.0").handlers(Arc::new(Greeter)).build().unwrap();
/// assert!(server.capabilities().prompts.is_some());
/// ```
pub trait Handlers: Send + Sync + 'static {
    /// The tools.
    fn tools(self: &Arc<Self>) -> Vec<ToolDef> {
        Vec::new()
    }
    /// The prompts.
    fn prompts(self: &Arc<Self>) -> Vec<PromptDef> {
        Vec::new()
    }
    /// The fixed resources.
    fn resources(self: &Arc<Self>) -> Vec<ResourceDef> {
        Vec::new()
    }
    /// The resource templates.
    fn resource_templates(self: &Arc<Self>) -> Vec<TemplateDef> {
        Vec::new()
    }
}
