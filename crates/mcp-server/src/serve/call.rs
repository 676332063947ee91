//! One request being served ([`Call`]): what its method may need, the context handed to its
//! handler, and the two traits of typed dispatch (a method's marker type [`Serve`]s it and
//! reads what it needs of the params with [`FromParams`]). Also what a `tools/call` reads of
//! its params ([`ToolCall`]) and the outcome of a tool's handler ([`run_tool`]), which the plain
//! and the task paths share.

// As in `dispatch`: futures as async blocks.
#![allow(clippy::manual_async_fn)]

use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;
use mcp_jsonrpc::message::{self, decode_params};
use mcp_jsonrpc::{ErrorObject, Reply, RequestContext};
use mcp_types::{CallToolResult, JsonObject, ProgressToken, Request, ServerCapabilities};
use serde::de::DeserializeOwned;

use super::reply::{Era, respond};
use super::shared::ServerShared;
use crate::context::Context;
use crate::context::session::SessionState;
use crate::context::visibility::{Item, Viewer};
use crate::def::tool::ToolDef;
use crate::error::ToolError;

/// Whether `server` shows `item` to the request `rctx` of `state`, served in `version` (its
/// predicate, and with `hide_out_of_scope` the token's scopes), whatever the session hides.
#[inline]
pub(crate) fn server_shows(
    server: &ServerShared,
    state: &SessionState,
    rctx: &RequestContext,
    version: mcp_types::ProtocolVersion,
    item: Item<'_>,
) -> bool {
    if server.visibility.is_none() && !server.hide_out_of_scope {
        return true;
    }
    let who = Viewer { session: state, attachment: rctx.attachment(), version };
    crate::context::visibility::server_shows(server.visibility.as_ref(), server.hide_out_of_scope, item, &who)
}

/// The outcome of a tool's handler on checked arguments, inside an async block: arguments the
/// input schema refuses, the handler's failure (or panic) are a result with `isError`; a
/// protocol error is the request's error, and so is a result whose structured content does not
/// match the output schema, when the server checks it (`ToolDef::check_output`, a branch on a
/// field that is `None` when it does not). A macro, so that a plain call's future holds the
/// handler's future in place (a function's future around it costs a move and a state more on
/// every call).
macro_rules! tool_outcome {
    ($tool:expr, $name:expr, $arguments:expr, $ctx:expr) => {
        tool_outcome!($tool, $name, $arguments, $ctx, _raw => Err(ErrorObject::internal_error(
            "a tool run as a task of this server answered with a task run elsewhere"
        )))
    };
    // `$raw => $task`: what a handler's `ToolError::Task` becomes (`$task` may `return`).
    ($tool:expr, $name:expr, $arguments:expr, $ctx:expr, $raw:ident => $task:expr) => {{
        let (arguments, problem) = $tool.check_arguments($arguments.unwrap_or_default());
        match problem {
            Some(problem) => Ok(CallToolResult::error(problem)),
            None => match AssertUnwindSafe($tool.handler.call(arguments, $ctx)).catch_unwind().await {
                Ok(Ok(result)) => $tool.check_output(result),
                Ok(Err(ToolError::Tool(message))) => Ok(CallToolResult::error(message)),
                Ok(Err(ToolError::Protocol(e))) => Err(e),
                Ok(Err(ToolError::Task($raw))) => $task,
                Err(panic) => Ok(tool_panicked($name, panic.as_ref())),
            },
        }
    }};
}
pub(crate) use tool_outcome;

/// One request being served: what its method may need, borrowed from the caller.
#[derive(Clone, Copy)]
pub(crate) struct Call<'a> {
    pub(crate) server: &'a ServerShared,
    pub(crate) state: &'a Arc<SessionState>,
    pub(crate) req: &'a message::Request,
    pub(crate) rctx: &'a RequestContext,
    pub(crate) era: &'a Era,
}

impl Call<'_> {
    /// The context handed to a handler of this request.
    pub(crate) fn context(&self, progress_token: Option<ProgressToken>) -> Context {
        Context {
            version: self.era.version,
            input_rounds: self.era.input_rounds.clone(),
            peer: self.rctx.peer().clone(),
            session: self.state.clone(),
            request_id: self.rctx.id().clone(),
            cancel: self.rctx.cancellation().clone(),
            progress_token,
            state: self.server.state.clone(),
            attachment: self.rctx.attachment().cloned(),
            task: None,
            deferred: None,
            requested_task: None,
            // One branch when the server has no layer: no count taken.
            layers: (!self.server.outgoing.is_empty()).then(|| self.server.outgoing.clone()),
        }
    }

    /// Whether the request sees `item`: the session does not hide it and the server's
    /// predicate, if any, shows it. Without a predicate, for a session that hides nothing: two
    /// loads, no lock.
    #[inline]
    pub(crate) fn sees(&self, item: Item<'_>) -> bool {
        !self.state.hides(item.kind(), item.key()) && self.server_shows(item) && self.sees_skill_of(item)
    }

    /// A file of a skill (the Skills extension) is seen only with its skill, named by its
    /// `SKILL.md` resource. Nothing to ask when no item may be hidden or no skill is served.
    fn sees_skill_of(&self, item: Item<'_>) -> bool {
        let Item::Resource(resource, _) = item else { return true };
        if self.server.skill_files.is_empty() || !self.filters() {
            return true;
        }
        match self.server.skill_files.get(&resource.uri) {
            Some(skill_md) if *skill_md != resource.uri => {
                let registry = self.server.registry();
                registry.resource(skill_md).is_none_or(|md| self.sees(md.item()))
            }
            _ => true,
        }
    }

    /// Whether the server shows `item` to the request (its predicate, and with
    /// `hide_out_of_scope` the token's scopes), whatever the session hides.
    #[inline]
    pub(crate) fn server_shows(&self, item: Item<'_>) -> bool {
        server_shows(self.server, self.state, self.rctx, self.era.version, item)
    }

    /// Whether some item may be hidden from the request (else lists are not filtered).
    #[inline]
    pub(crate) fn filters(&self) -> bool {
        self.server.visibility.is_some() || self.server.hide_out_of_scope || self.state.hides_any()
    }

    /// Encodes the result of a method of marker `R` for the request's revision (decorated for
    /// the stateless revision): what every method answers with.
    #[inline]
    pub(crate) fn respond<R: Serve>(&self, result: &R::Result) -> Reply {
        respond(self.rctx, result, self.era)
    }

    /// Encodes any result for the request's revision (what a middleware answers with).
    pub(crate) fn respond_with<T: mcp_types::WireSerialize>(&self, result: &T) -> Reply {
        respond(self.rctx, result, self.era)
    }
}

/// A request the server serves, implemented by its marker type.
pub(crate) trait Serve: Request {
    /// What the method reads of its params: `Self::Params`, or a cheaper view of them.
    type Input<'a>: FromParams<'a>;
    /// Whether the server offers the method: it declared the capability the method belongs to.
    /// A method it does not offer is -32601, as if unknown.
    fn offered(capabilities: &ServerCapabilities) -> bool;
    /// Serves the decoded params, and answers with the result encoded by [`Call::respond`]:
    /// encoded where it is built, the result (hundreds of bytes) is not moved out of the
    /// method's future and through the ones around it; only the encoded reply is.
    fn serve<'a>(call: &Call<'a>, input: Self::Input<'a>) -> impl Future<Output = Reply> + Send;
}

/// What a method reads of its request's params (-32602 if they do not decode).
pub(crate) trait FromParams<'a>: Sized {
    /// Reads the params of the request `call` serves.
    fn read(call: &Call<'a>) -> Result<Self, ErrorObject>;
}

impl<T: DeserializeOwned> FromParams<'_> for T {
    fn read(call: &Call<'_>) -> Result<Self, ErrorObject> {
        decode_params(call.req.params.as_deref())
    }
}

/// The members of `tools/call` params that a call needs (`CallToolRequestParams` has more):
/// `_meta` is read for its progress token only, and the rest of it (in 2026-07-28 the client's
/// info and capabilities) is skipped rather than built into JSON values.
#[derive(serde::Deserialize)]
struct ToolCallParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default)]
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta", default)]
    meta: Option<CallMeta>,
}

#[derive(serde::Deserialize)]
struct CallMeta {
    #[serde(rename = "progressToken", default)]
    progress_token: Option<ProgressToken>,
}

/// What a `tools/call` needs of its params (the name borrowed from them where it has no
/// escapes): the input of [`CallToolRequest`], cheaper than its whole params.
pub(crate) struct ToolCall<'a> {
    pub(crate) name: Cow<'a, str>,
    pub(crate) arguments: Option<JsonObject>,
    pub(crate) progress: Option<ProgressToken>,
}

impl<'a> FromParams<'a> for ToolCall<'a> {
    // In the request's future, as before tasks moved `serve`'s body behind a branch.
    #[inline(always)]
    fn read(call: &Call<'a>) -> Result<ToolCall<'a>, ErrorObject> {
        let req = call.req;
        // A request of the stateless revision had its params indexed for its envelope: its
        // members are read from there, and its `_meta` is not scanned again. Other requests
        // are decoded in one pass (cheaper than indexing them).
        if call.era.is_stateless()
            && let Some(params) = req.params_object()
        {
            fn member<T: DeserializeOwned>(text: Option<&str>) -> Result<Option<T>, ErrorObject> {
                text.map(serde_json::from_str::<Option<T>>)
                    .transpose()
                    .map(Option::flatten)
                    .map_err(ErrorObject::invalid_params)
            }
            let name = params.get("name").ok_or_else(|| ErrorObject::invalid_params("missing field `name`"))?;
            let name = match mcp_jsonrpc::raw::str_text(name) {
                Some(name) => name,
                // Not a string: serde_json's own words for it.
                None => serde_json::from_str::<String>(name).map(Into::into).map_err(ErrorObject::invalid_params)?,
            };
            return Ok(ToolCall {
                name,
                arguments: member(params.get("arguments"))?,
                progress: member(req.meta_object().and_then(|m| m.get(mcp_types::meta::PROGRESS_TOKEN)))?,
            });
        }
        let text = req.params.as_deref().map_or("{}", serde_json::value::RawValue::get);
        let ToolCallParams { name, arguments, meta } =
            serde_json::from_str(text).map_err(ErrorObject::invalid_params)?;
        Ok(ToolCall { name, arguments, progress: meta.and_then(|m| m.progress_token) })
    }
}
/// [`tool_outcome!`] as a future of its own, for the task paths.
pub(crate) fn run_tool<'a>(
    tool: &'a ToolDef,
    name: &'a str,
    arguments: Option<JsonObject>,
    ctx: Context,
) -> impl Future<Output = Result<CallToolResult, ErrorObject>> + Send + 'a {
    async move { tool_outcome!(tool, name, arguments, ctx) }
}

/// The result of a tool whose handler panicked (with `isError`).
#[cold]
pub(crate) fn tool_panicked(name: &str, panic: &(dyn std::any::Any + Send)) -> CallToolResult {
    let msg = mcp_jsonrpc::panic_message(panic);
    tracing::warn!(tool = %name, panic = %msg, "tool panicked");
    CallToolResult::error(format!("tool `{name}` failed: {msg}"))
}
