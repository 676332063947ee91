//! Prompts: a definition (`mcp_types::Prompt`), a handler that renders its messages from the
//! arguments, and optional completion of argument values.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use mcp_jsonrpc::BoxFuture;
use mcp_types::{ErrorObject, GetPromptResult, Prompt, PromptArgument};

use crate::completion::{Completer, Completion, CompletionRequest};
use crate::context::Context;

/// The arguments of a prompt: name to value.
pub type PromptArguments = BTreeMap<String, String>;

/// The code behind a prompt.
pub trait PromptHandler: Send + Sync + 'static {
    /// Renders the prompt (required arguments were checked).
    fn get(&self, arguments: PromptArguments, ctx: Context) -> BoxFuture<Result<GetPromptResult, ErrorObject>>;
}

impl<F, Fut> PromptHandler for F
where
    F: Fn(PromptArguments, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<GetPromptResult, ErrorObject>> + Send + 'static,
{
    fn get(&self, arguments: PromptArguments, ctx: Context) -> BoxFuture<Result<GetPromptResult, ErrorObject>> {
        Box::pin(self(arguments, ctx))
    }
}

/// A prompt: its definition, its handler, and completers for its arguments.
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    pub(crate) handler: Arc<dyn PromptHandler>,
    pub(crate) completers: BTreeMap<String, Arc<dyn Completer>>,
    /// The OAuth scopes a `prompts/get` needs (see [`PromptDef::scopes`]).
    pub(crate) scopes: Vec<String>,
}

impl std::fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptDef").field("prompt", &self.prompt).finish_non_exhaustive()
    }
}

impl PromptDef {
    /// A prompt named `name` with a handler.
    pub fn new<F, Fut>(name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(PromptArguments, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ErrorObject>> + Send + 'static,
    {
        PromptDef {
            prompt: Prompt::new(name),
            handler: Arc::new(handler),
            completers: BTreeMap::new(),
            scopes: Vec::new(),
        }
    }

    /// A prompt from a complete definition.
    pub fn from_prompt(prompt: Prompt, handler: impl PromptHandler) -> Self {
        PromptDef { prompt, handler: Arc::new(handler), completers: BTreeMap::new(), scopes: Vec::new() }
    }

    /// The OAuth scopes a `prompts/get` needs (feature `auth` of the HTTP endpoint): a request whose
    /// token lacks one is refused with 403 `insufficient_scope` naming them, before the
    /// handler runs. Requests without a token (stdio, HTTP without `auth`) are not checked.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The OAuth scopes a `prompts/get` needs (see [`Self::scopes`]).
    pub fn required_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The definition as listed.
    pub fn definition(&self) -> &Prompt {
        &self.prompt
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.prompt.description = Some(description.into());
        self
    }

    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.prompt.title = Some(title.into());
        self
    }

    /// Adds an argument, described by its own builder:
    ///
    /// ```
    /// use mcp_server::PromptDef;
    /// use mcp_types::{ErrorObject, GetPromptResult, PromptArgument};
    ///
    /// let review = PromptDef::new("review", |_args, _ctx| async { Ok::<_, ErrorObject>(GetPromptResult::new(vec![])) })
    ///     .argument(PromptArgument::new("code").with_description("the code").with_required(true))
    ///     .argument(PromptArgument::new("language"));
    /// assert_eq!(review.definition().arguments.as_ref().map(Vec::len), Some(2));
    /// ```
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.prompt.arguments.get_or_insert_with(Vec::new).push(argument);
        self
    }

    /// Completes values of an argument.
    pub fn complete<F, Fut>(mut self, argument: impl Into<String>, completer: F) -> Self
    where
        F: Fn(CompletionRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Completion, ErrorObject>> + Send + 'static,
    {
        self.completers.insert(argument.into(), Arc::new(completer));
        self
    }

    /// The required arguments missing from `arguments`.
    pub(crate) fn missing(&self, arguments: &PromptArguments) -> Vec<String> {
        self.prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
            .map(|a| a.name.clone())
            .collect()
    }

    pub(crate) fn completer(&self, argument: &str) -> Option<&Arc<dyn Completer>> {
        self.completers.get(argument)
    }
}
