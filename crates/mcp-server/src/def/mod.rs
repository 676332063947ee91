//! The definitions a user registers, and the registry that holds them: tools (`tool`, with
//! their schemas in `tool_schema` and the arguments mirrored into headers in
//! `header_params`), prompts (`prompt`, with `prompt_args` for arguments from a struct),
//! resources and templates (`resource`, `uri_template`), completion, the conversions of
//! handlers' return values (`output`), [`Handlers`](crate::Handlers) for types whose methods
//! are items, custom methods (`custom`), the task methods of a server whose tasks run elsewhere
//! (`forward`), cache hints (`cache`) and the `Registry` the builder
//! fills and the serving reads (`registry`).
//!
//! Layer 4: a handler takes a [`Context`](crate::Context), so definitions use `context`, and
//! `tasks` (a tool's task support) and the foundations; never the serving nor the server.

pub(crate) mod cache;
pub(crate) mod completion;
pub(crate) mod custom;
pub(crate) mod forward;
pub(crate) mod handlers;
#[cfg(feature = "http")]
pub(crate) mod header_params;
pub(crate) mod output;
pub(crate) mod prompt;
pub(crate) mod prompt_args;
pub(crate) mod registry;
pub(crate) mod resource;
pub(crate) mod tool;
pub(crate) mod tool_schema;
pub(crate) mod uri_template;
