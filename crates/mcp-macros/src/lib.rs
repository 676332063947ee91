//! Attribute macros that turn plain functions into MCP tools, prompts and resources.
//!
//! Use them through the facade, as `mcp_sdk::tool` and friends:
//!
//! - [`macro@tool`] on a function makes it a tool: its parameters become the input schema, its
//!   doc comment the description, its return value the result.
//! - [`macro@prompt`] makes a prompt of a function of string arguments that returns messages.
//! - [`macro@resource`]`("scheme://path/{var}")` makes a resource (or, with variables, a resource
//!   template) of a function that returns contents.
//! - [`macro@handlers`] on an `impl` block turns its marked methods into definitions that share
//!   the value (`Arc<Self>`), and implements `mcp_server::Handlers` for the type.
//!
//! ```
//! use mcp_sdk::server::{Context, Server};
//! use mcp_sdk::{prompt, resource, tool};
//!
//! /// Adds two numbers.
//! ///
//! /// # Arguments
//! ///
//! /// * `a` - the first number
//! /// * `b` - the second number
//! #[tool(read_only)]
//! fn add(a: f64, b: f64) -> f64 {
//!     a + b
//! }
//!
//! /// Asks for a code review.
//! #[prompt]
//! fn review(code: String, language: Option<String>) -> String {
//!     format!("Review this {} code:\n{code}", language.as_deref().unwrap_or("unknown"))
//! }
//!
//! /// One note.
//! #[resource("notes://{id}", mime_type = "text/plain")]
//! async fn note(id: String, ctx: Context) -> Result<String, String> {
//!     let _ = ctx.request_id();
//!     if id == "1" { Ok("The first note".to_owned()) } else { Err(format!("no note {id}")) }
//! }
//!
//! let server = Server::builder("calc", "1.0")
//!     .tool(add::tool())
//!     .prompt(review::prompt())
//!     .resource_template(note::template())
//!     .build()
//!     .unwrap();
//! let tools = server.tools();
//! assert_eq!(tools[0].description.as_deref(), Some("Adds two numbers."));
//! assert_eq!(
//!     serde_json::Value::Object(tools[0].input_schema.clone()),
//!     serde_json::json!({
//!         "type": "object",
//!         "properties": {
//!             "a": {"type": "number", "format": "double", "description": "the first number"},
//!             "b": {"type": "number", "format": "double", "description": "the second number"}
//!         },
//!         "required": ["a", "b"]
//!     })
//! );
//! ```
//!
//! # How parameters are sorted
//!
//! A parameter is a *context parameter* when its type implements `mcp_server::FromContext`
//! (`Context`, `Progress`, `CancellationToken`, `Peer`, `State<T>`, or your own types), and
//! an *argument* otherwise. The macro cannot see traits, so it does not decide: it emits code
//! that names each parameter's type and lets method resolution pick (autoref specialization,
//! see `mcp_sdk::__private`). Since the decision is made on the type, not its spelling, `use
//! mcp_sdk::server::Context as Ctx;` or `type Ctx = Context;` change nothing.
//!
//! Tool arguments need `serde::Deserialize` and `schemars::JsonSchema`; `Option<T>` ones (and
//! those marked `#[serde(default)]`) are not required. On a parameter, `#[serde(rename =
//! "...")]` and `#[serde(default)]` / `#[serde(default = "path")]` are understood; other serde
//! attributes belong on the argument's own type. Prompt arguments and URI variables are
//! `String`, or `Option<String>` when optional; a prompt's arguments may also be the fields of
//! a `Deserialize + JsonSchema` struct parameter.
//!
//! The input schema is self-contained: subschemas are inlined (no `$ref`), except for
//! recursive types, whose definitions go to a top-level `$defs`.
//!
//! # Return values
//!
//! | tool returns | result |
//! |---|---|
//! | `T: Serialize + JsonSchema` | `structuredContent` and its JSON as text, with `outputSchema` derived from `T`; a `T` whose schema is not an object (a number, a list, an enum) is wrapped as `{"result": ...}` |
//! | `String`, `&str`, `ContentBlock`, `Vec<ContentBlock>` | that content |
//! | `CallToolResult` | as is |
//! | `()` | empty content |
//! | `Result<T, E>` | `Ok` as above; `Err` becomes an `isError` result with the error's message (`E: Display`), or what `E: Into<ToolError>` says |
//!
//! Prompts return `String` (one user message), `PromptMessage`, `Vec<PromptMessage>` or
//! `GetPromptResult`; resources return `String` (text), `Vec<u8>` (a blob),
//! `AnyResourceContents` or `Vec<AnyResourceContents>`; either may be wrapped in a `Result`
//! whose error fails the request. The traits behind these (`IntoToolResult`,
//! `IntoPromptResult`, `IntoResourceContents`) live in `mcp_server` and can be implemented for
//! your own types.

mod attr;
mod check;
mod model;
mod render;

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;

use crate::attr::Ctxt;
use crate::model::{Function, Kind};

/// Makes a function an MCP tool.
///
/// The function may be sync or async. Next to it the macro defines a struct of the same name
/// whose `tool()` returns the `ToolDef`: `Server::builder(..).tool(add::tool())`. In an `impl`
/// block marked [`macro@handlers`], methods taking `&self` or `self: Arc<Self>` are tools too.
///
/// Options, all optional:
///
/// | option | meaning |
/// |---|---|
/// | `name = "..."` | the tool's name (default: the function's) |
/// | `title = "..."` | a human-readable title |
/// | `description = "..."` | the description (default: the doc comment, without its `# Arguments` section) |
/// | `read_only`, `destructive`, `idempotent`, `open_world` | annotation hints (`= false` to say no) |
/// | `icon = "src"`, `icon(src = "...", mime_type = "...", sizes = ["48x48"], theme = "dark")` | icons (repeatable) |
/// | `meta(key = value, "com.example/key" = value)` | `_meta`: each value as `serde_json::json!` takes it; keys follow the specification's rule (`io.modelcontextprotocol/` and other MCP prefixes are refused) |
/// | `output_schema = false` | no `outputSchema` for a structured result |
/// | `scopes = ["files:write"]` | the OAuth scopes a call needs (`ToolDef::scopes`: over HTTP with `auth`, a token without them gets 403 `insufficient_scope`) |
/// | `task = "optional"` (`"required"`, `"forbidden"`) | whether the tool may be called as a task (`ToolDef::task_support`, protocol revision 2025-11-25) |
/// | `ui = "ui://weather/view"` | the MCP App view that renders the tool's results (`ToolDef::ui`: `_meta.ui.resourceUri`; the server must serve it, `ServerBuilder::app`) |
/// | `visibility = ["app"]` (`"model"`, both) | who may use the tool (`ToolDef::ui_visibility`: `_meta.ui.visibility`; `["app"]`: hosts keep it from the model, for its view only) |
/// | `crate = "path"` | where `mcp_sdk` is, if renamed |
///
/// Arguments are described by the doc comment's `# Arguments` section: `` * `name` - text ``.
///
/// ```
/// use mcp_sdk::server::Progress;
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Weather {
///     /// Degrees Celsius.
///     temperature: f64,
/// }
///
/// /// Current weather for a city.
/// ///
/// /// # Arguments
/// ///
/// /// * `city` - the city's name
/// #[mcp_sdk::tool(read_only, open_world, title = "Weather")]
/// async fn weather(city: String, #[serde(default)] metric: bool, progress: Progress) -> Result<Weather, String> {
///     progress.report(1.0).total(1.0).await;
///     if city.is_empty() { Err("no city".into()) } else { Ok(Weather { temperature: if metric { 21.5 } else { 70.7 } }) }
/// }
///
/// let def = weather::tool();
/// let schema = serde_json::Value::Object(def.definition().input_schema.clone());
/// assert_eq!(schema["required"], serde_json::json!(["city"]));
/// assert!(def.definition().output_schema.is_some());
/// ```
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand_fn(Kind::Tool, args.into(), item.into()).into()
}

/// Makes a function an MCP prompt.
///
/// Arguments are `String` (required) or `Option<String>` (optional), or the fields of a struct
/// that implements `serde::Deserialize` and `schemars::JsonSchema` (described by their doc
/// comments, required unless `Option` or defaulted, decoded from the `prompts/get` strings);
/// context parameters may be mixed in. Next to the function the macro defines a struct of the
/// same name whose `prompt()` returns the `PromptDef`.
///
/// Options: `name`, `title`, `description`, `icon`, `meta`, `scopes`, `crate` (as for
/// [`macro@tool`]) and `complete(argument = path::to::function)`, where the function takes a
/// `CompletionRequest` and returns (or, if async, resolves to) `Vec<String>`, `Vec<&str>` or
/// `Completion`, possibly in a `Result`. `ServerBuilder::build` refuses a completer of an
/// argument the prompt does not have.
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Args {
///     /// The topic.
///     topic: String,
///     /// How deep to go.
///     depth: Option<u8>,
/// }
///
/// /// Explains a topic.
/// #[mcp_sdk::prompt(icon = "https://example.com/explain.png", meta("com.example/team" = "docs"))]
/// fn explain(args: Args) -> String {
///     format!("Explain {} to depth {}", args.topic, args.depth.unwrap_or(1))
/// }
///
/// let def = explain::prompt();
/// let arguments = def.definition().arguments.as_ref().unwrap();
/// assert_eq!((arguments[0].name.as_str(), arguments[0].required), ("topic", Some(true)));
/// assert_eq!(arguments[1].description.as_deref(), Some("How deep to go."));
/// ```
///
/// ```
/// use mcp_sdk::server::CompletionRequest;
///
/// fn languages(request: CompletionRequest) -> Vec<String> {
///     ["python", "rust"].iter().filter(|l| l.starts_with(&request.value)).map(|l| l.to_string()).collect()
/// }
///
/// /// Asks for a review.
/// ///
/// /// # Arguments
/// ///
/// /// * `code` - the code to review
/// #[mcp_sdk::prompt(complete(language = languages))]
/// fn review(code: String, language: Option<String>) -> String {
///     format!("Review this {}: {code}", language.unwrap_or_default())
/// }
///
/// let def = review::prompt();
/// assert_eq!(def.definition().arguments.as_ref().unwrap().len(), 2);
/// ```
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    expand_fn(Kind::Prompt, args.into(), item.into()).into()
}

/// Makes a function an MCP resource, or a resource template when the URI has variables.
///
/// `#[resource("notes://all")]` is a fixed resource: `all::resource()` returns its
/// `ResourceDef`. `#[resource("notes://{id}")]` is a template: each variable is the parameter
/// of the same name (`String`, or `Option<String>` for `{?query}` variables), other parameters
/// are context parameters, and `note::template()` returns the `TemplateDef`.
///
/// Options: `name`, `title`, `description`, `icon`, `meta`, `scopes`, `crate` (as for
/// [`macro@tool`]), `mime_type = "..."`, `annotations(audience = ["user", "assistant"],
/// priority = 0.5, last_modified = "2025-01-12T15:00:58Z")` (each part optional), `size = 1024`
/// (fixed resources only: the raw contents' size in bytes), and
/// `complete(variable = path::to::function)` (as for [`macro@prompt`]).
///
/// ```
/// #[mcp_sdk::resource("notes://{id}", mime_type = "text/markdown", annotations(audience = ["user"], priority = 0.5))]
/// fn note(id: String) -> String {
///     format!("# Note {id}")
/// }
///
/// assert_eq!(note::template().definition().uri_template, "notes://{id}");
/// assert_eq!(note::template().definition().annotations.as_ref().unwrap().priority, Some(0.5));
/// ```
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    expand_fn(Kind::Resource, args.into(), item.into()).into()
}

/// Collects the `#[tool]`, `#[prompt]` and `#[resource]` methods of an `impl` block.
///
/// The methods take `&self`, `self: Arc<Self>` or no receiver. The macro adds
/// `tools()`, `prompts()`, `resources()` and `resource_templates()` (for the kinds present)
/// taking `self: &Arc<Self>`, and implements `mcp_server::Handlers`, so that
/// `ServerBuilder::handlers(Arc::new(value))` registers everything. Inside the block the
/// attributes need no import. Option: `crate = "path"`.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicI64, Ordering};
///
/// #[derive(Default)]
/// struct Counter(AtomicI64);
///
/// #[mcp_sdk::handlers]
/// impl Counter {
///     /// Adds `n` and returns the total.
///     #[tool]
///     fn add(&self, n: i64) -> i64 {
///         self.0.fetch_add(n, Ordering::Relaxed) + n
///     }
///
///     /// The total.
///     #[resource("counter://total")]
///     fn total(&self) -> String {
///         self.0.load(Ordering::Relaxed).to_string()
///     }
/// }
///
/// let counter = Arc::new(Counter::default());
/// assert_eq!(counter.tools().len(), 1);
/// let server = mcp_sdk::server::Server::builder("counter", "1.0").handlers(counter).build().unwrap();
/// assert_eq!(server.tools()[0].name, "add");
/// ```
#[proc_macro_attribute]
pub fn handlers(args: TokenStream, item: TokenStream) -> TokenStream {
    expand_impl(args.into(), item.into()).into()
}

fn expand_impl(args: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let mut block: syn::ItemImpl = match syn::parse2(item.clone()) {
        Ok(block) => block,
        Err(_) => return with_error(item, syn::Error::new(Span::call_site(), "`#[handlers]` goes on an `impl` block")),
    };
    let mut cx = Ctxt::default();
    let mut handlers = model::read_handlers(&mut cx, args, &mut block);
    for f in &mut handlers.functions {
        check::function(&mut cx, f);
    }
    match cx.finish() {
        Ok(()) => render::handlers(&handlers, &block),
        Err(e) => with_error(quote!(#block), e),
    }
}

fn expand_fn(kind: Kind, args: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let mut function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            let message = format!("`#[{}]` goes on a function", kind.attribute());
            return with_error(item, syn::Error::new(Span::call_site(), message));
        }
    };
    let generated = expand(kind, args, &function);
    model::strip_param_attrs(&mut function.sig);
    match generated {
        Ok(generated) => quote!(#function #generated),
        Err(e) => with_error(quote!(#function), e),
    }
}

fn expand(kind: Kind, args: TokenStream2, function: &syn::ItemFn) -> syn::Result<TokenStream2> {
    let mut cx = Ctxt::default();
    let f = Function::read(&mut cx, kind, args, &function.attrs, &function.vis, &function.sig, None);
    let f = f.map(|mut f| {
        check::function(&mut cx, &mut f);
        f
    });
    cx.finish()?;
    match f {
        Some(f) => Ok(render::free_function(&f)),
        None => Err(syn::Error::new(Span::call_site(), "invalid arguments")),
    }
}

/// The item as written, followed by the errors (so that IDEs still see the item).
fn with_error(item: TokenStream2, error: syn::Error) -> TokenStream2 {
    let error = error.to_compile_error();
    quote!(#item #error)
}
