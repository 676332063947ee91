//! Prompts: a definition (`mcp_types::Prompt`), a handler that renders its messages from the
//! arguments, and optional completion of argument values.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use mcp_jsonrpc::BoxFuture;
use mcp_types::{ErrorObject, GetPromptResult, JsonObject, Prompt, PromptArgument};
use serde::de::DeserializeOwned;

use super::completion::{Completer, Completion, CompletionRequest};
use super::prompt_args::PromptArguments;
use crate::context::Context;

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

    /// A prompt whose arguments are the fields of the struct `T`: they are listed as
    /// [`arguments_from`](Self::arguments_from) derives them, and each `prompts/get` decodes
    /// its arguments into a `T` ([`decode_prompt_arguments`](crate::decode_prompt_arguments))
    /// before the handler runs: a missing required argument, or one that does not parse as its
    /// field's type, is an invalid-params error (-32602) naming it.
    ///
    /// Refused (with [`DefinitionError::InvalidPromptArguments`](crate::DefinitionError))
    /// when `T` is not a struct with named fields or has a field that is a list or an object.
    ///
    /// ```
    /// use mcp_server::PromptDef;
    /// use mcp_types::{ContentBlock, ErrorObject, GetPromptResult, PromptMessage, Role};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Review {
    ///     /// The code to review.
    ///     code: String,
    ///     /// How many issues to list at most.
    ///     max_issues: Option<u32>,
    /// }
    ///
    /// let review = PromptDef::with_args("review", |args: Review, _ctx| async move {
    ///     let text = format!("List at most {} issues in:\n{}", args.max_issues.unwrap_or(3), args.code);
    ///     Ok::<_, ErrorObject>(GetPromptResult::new(vec![PromptMessage::new(Role::User, ContentBlock::text(text))]))
    /// })
    /// .unwrap();
    /// let arguments = review.definition().arguments.as_ref().unwrap();
    /// assert_eq!((arguments[0].name.as_str(), arguments[0].required), ("code", Some(true)));
    /// assert_eq!((arguments[1].name.as_str(), arguments[1].required), ("max_issues", Some(false)));
    /// ```
    pub fn with_args<T, F, Fut>(name: impl Into<String>, handler: F) -> Result<Self, crate::error::DefinitionError>
    where
        T: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(T, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ErrorObject>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        PromptDef::new(name, move |arguments: PromptArguments, ctx: Context| {
            let handler = handler.clone();
            async move { handler(super::prompt_args::decode_prompt_arguments::<T>(&arguments)?, ctx).await }
        })
        .arguments_from::<T>()
    }

    /// Adds the fields of the struct `T` as arguments, in their order (as serde names them),
    /// each with
    ///
    /// - `description`: the field's doc comment,
    /// - `title`: what schemars gives (`#[schemars(title = "...")]`),
    /// - `required`: `true` unless the field is an `Option` or has a default
    ///   (`#[serde(default)]`).
    ///
    /// Arguments are strings on the wire: a field may be a string, a number, a boolean or an
    /// enum of unit variants (parsed from the string, see
    /// [`decode_prompt_arguments`](crate::decode_prompt_arguments)). A `T` that is not a struct
    /// with named fields, or a field that is a list or an object, is refused with
    /// [`DefinitionError::InvalidPromptArguments`](crate::DefinitionError).
    ///
    /// ```
    /// use mcp_server::PromptDef;
    /// use mcp_types::{ErrorObject, GetPromptResult};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Review {
    ///     /// The code to review.
    ///     code: String,
    ///     #[serde(default)]
    ///     strict: bool,
    /// }
    ///
    /// let review = PromptDef::new("review", |_args, _ctx| async { Ok::<_, ErrorObject>(GetPromptResult::new(vec![])) })
    ///     .arguments_from::<Review>()
    ///     .unwrap();
    /// let arguments = review.definition().arguments.as_ref().unwrap();
    /// assert_eq!(arguments[0].description.as_deref(), Some("The code to review."));
    /// assert_eq!((arguments[0].required, arguments[1].required), (Some(true), Some(false)));
    /// ```
    pub fn arguments_from<T: DeserializeOwned + schemars::JsonSchema>(
        mut self,
    ) -> Result<Self, crate::error::DefinitionError> {
        let arguments = super::prompt_args::prompt_arguments::<T>().map_err(|reason| {
            crate::error::DefinitionError::InvalidPromptArguments { name: self.prompt.name.clone(), reason }
        })?;
        self.prompt.arguments.get_or_insert_with(Vec::new).extend(arguments);
        Ok(self)
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

    /// Sets the icons a client may show for the prompt.
    pub fn icons(mut self, icons: Vec<mcp_types::Icon>) -> Self {
        self.prompt.icons = Some(icons);
        self
    }

    /// Sets `_meta`.
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.prompt.meta = Some(mcp_types::MetaObject { extra: meta });
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

    /// Refuses two arguments of one name, and a completer of an argument the prompt does not
    /// have (which no client could ask for).
    pub(crate) fn check(&self) -> Result<(), crate::error::DefinitionError> {
        let arguments = self.prompt.arguments.as_deref().unwrap_or_default();
        let invalid = |reason: String| crate::error::DefinitionError::InvalidPromptArguments {
            name: self.prompt.name.clone(),
            reason,
        };
        for (i, a) in arguments.iter().enumerate() {
            if arguments[..i].iter().any(|b| b.name == a.name) {
                return Err(invalid(format!("two arguments are named `{}`", a.name)));
            }
        }
        match self.completers.keys().find(|c| !arguments.iter().any(|a| &a.name == *c)) {
            Some(c) => Err(invalid(format!("a completer names `{c}`, which is not an argument"))),
            None => Ok(()),
        }
    }

    pub(crate) fn completer(&self, argument: &str) -> Option<&Arc<dyn Completer>> {
        self.completers.get(argument)
    }
}
