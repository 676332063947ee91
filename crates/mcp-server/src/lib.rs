//! The MCP server runtime: lifecycle, tools, prompts, resources, completions and logging, over
//! any transport, for every revision it knows: the session revisions (2024-11-05 to
//! 2025-11-25, after the `initialize` handshake) and the stateless revision (2026-07-28: each
//! request carries its revision and the client's capabilities in `_meta`, `server/discover`,
//! input-required round trips, `subscriptions/listen`), side by side on one connection.
//!
//! - [`Server::builder`] collects [`ToolDef`]s, [`PromptDef`]s, [`ResourceDef`]s and
//!   [`TemplateDef`]s; `build()` checks them and prepares the lists once.
//! - [`Server::serve_stdio`] serves stdin/stdout in one line; [`Server::serve`] any
//!   transport; [`Server::connect`] starts a connection and returns its handle. The `_until`
//!   forms ([`Server::serve_until`], `serve_stdio_until`, `serve_http_until`) stop gracefully
//!   on a signal such as [`shutdown_signal`] (Ctrl-C or SIGTERM).
//! - Handlers get a [`Context`]: progress, logging to the client, cancellation, and requests
//!   to the client (sampling, elicitation, roots) when it declared the capability (in the
//!   stateless revision, input-required round trips instead).
//! - Items can be added and removed at runtime; connected clients get `list_changed`.
//! - The `#[tool]`, `#[prompt]` and `#[resource]` macros (`mcp-macros`, through `mcp-sdk`)
//!   build the same definitions from plain functions. What they rely on lives here: context
//!   parameters ([`FromContext`]: [`Context`], [`Progress`], [`State`], ...), return-value
//!   conversions ([`IntoToolResult`], [`IntoPromptResult`], [`IntoResourceContents`],
//!   [`IntoCompletion`]) and [`Handlers`] for types whose methods are items.
//!   `docs/server.md` shows both ways side by side.
//!
//! ## Features
//!
//! Additive; the default is `stdio`, `http` and `jsonschema`. Without any, a server still runs over any
//! [`Transport`](mcp_jsonrpc::Transport) given to [`Server::serve`] or [`Server::connect`].
//!
//! | feature | what it adds |
//! |---|---|
//! | `stdio` | [`Server::serve_stdio`] (`mcp-transport-stdio`) |
//! | `http` | serving over Streamable HTTP and HTTP+SSE: `Server::serve_http`, `Server::http_router`, the [`mcp_transport_http`] re-export (axum, hyper) |
//! | `auth` | OAuth 2.1 bearer tokens on the HTTP endpoint: `Context::principal`, and the `scopes` of tools, prompts and resources answered with 403 `insufficient_scope` (implies `http`; see `docs/auth.md`) |
//! | `jsonschema` | checking tool arguments against any input schema (and structured results against any output schema), with the `jsonschema` crate |
//! | `opentelemetry` | not default: the trace context a request carries in `_meta` (`traceparent`, `tracestate`, `baggage`) becomes the parent of its `mcp.server.request` span, through `tracing-opentelemetry` (see `docs/tracing.md`) |
//!
//! Tool arguments are checked against the tool's input schema before its handler runs. A
//! built-in checker covers the schemas `#[tool]` derives and most hand-written ones (`type`,
//! `properties`, `required`, `items`, `enum`, `const`, numeric and length bounds, `allOf`,
//! `anyOf`, `oneOf`, `not`, ...); the `jsonschema` crate handles the rest (`$ref`, `pattern`,
//! `prefixItems`, `patternProperties`, `if`, unknown keywords, ...). Without the `jsonschema`
//! feature, a tool whose input schema lies outside the built-in subset is still defined, with a
//! `tracing` warning when it is, and its arguments reach the handler unchecked (a malformed
//! schema, which `jsonschema` would refuse with [`DefinitionError::InvalidSchema`], is accepted
//! the same way).
//!
//! Structured results are checked against the tool's output schema by the same checkers, where
//! [`ServerBuilder::check_structured_content`] says so (by default in debug builds): a result
//! that does not match is a JSON-RPC internal error. Output schemas need not be objects in
//! revision 2026-07-28 ([`Json`] returns any JSON value); older revisions see them wrapped as
//! `{"result": ...}` (see `docs/server.md`, "Output schemas").
//!
//! ```no_run
//! use mcp_server::{Server, ToolDef, ToolError};
//! use mcp_types::{CallToolResult, ContentBlock};
//!
//! #[tokio::main]
//! async fn main() {
//!     let echo = ToolDef::new(
//!         "echo",
//!         serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
//!         |args, _ctx| async move {
//!             let text = args["text"].as_str().unwrap_or_default().to_owned();
//!             Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(text)]))
//!         },
//!     )
//!     .unwrap();
//!     Server::builder("echo", "1.0").tool(echo).build().unwrap().serve_stdio().await;
//! }
//! ```

pub mod apps;
mod bus;
mod context;
mod def;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod metrics;
pub mod middleware;
mod schema;
mod serve;
mod server;
pub mod skills;
pub mod tasks;
mod trace;

pub use bus::{ChangeEvent, InMemoryBus, SubscriptionBus};
pub use context::elicit;
pub use context::extract::{FromContext, State};
pub use context::progress::{Progress, ProgressReport};
pub use context::visibility::{Item, ItemKind, SessionControl, Viewer};
pub use context::{Context, Logger};
pub use def::cache::CacheTarget;
pub use def::completion::{Completer, Completion, CompletionRequest, MAX_COMPLETIONS};
pub use def::forward::{FollowedTasks, TaskForwarder};
pub use def::handlers::Handlers;
pub use def::output::{IntoCompletion, IntoPromptResult, IntoResourceContents, IntoToolResult, Json, StringArgument};
pub use def::prompt::{PromptDef, PromptHandler};
pub use def::prompt_args::{PromptArguments, decode_prompt_arguments};
pub use def::resource::{ResourceDef, ResourceHandler, TemplateDef};
pub use def::tool::{ToolDef, ToolHandler, check_tool_name};
pub use def::uri_template::{TemplateError, UriTemplate, UriVariables};
#[doc(no_inline)]
pub use elicit::{ContentError, ElicitSchemaError, Elicitation, FormProblem, UrlElicitation};
pub use error::{ClientRequestError, DefinitionError, ToolError};
pub use serve::shared::RootsChangedCallback;
pub use server::builder::ServerBuilder;
pub use server::shutdown::shutdown_signal;
pub use server::{Server, WeakServer};
pub use tasks::{TaskConfig, TaskSupport};

/// The HTTP transport, for its configuration and request types.
#[cfg(feature = "http")]
pub use mcp_transport_http;
