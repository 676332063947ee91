//! Typed dispatch: the requests a server serves, one [`Serve`] implementation per request
//! marker type of `mcp-types`, picked by the marker's `METHOD`.
//!
//! What every method shares is written once, in [`serve`]: a method the stateless revision
//! removed, or whose capability the server did not declare, is -32601 (as if unknown); params
//! that do not decode are -32602. Each method answers through [`Call::respond`], which encodes
//! its result for the request's revision (and, for the stateless revision, decorates it). The
//! four list methods share one paging function ([`Listing`]).
//!
//! Dispatch is a `match` on the method string, whose arms are the markers' `METHOD`s: no table,
//! no allocation and no boxing per request; each arm awaits its method's future in place.

// The methods that await are written as functions returning async blocks: an async fn's future
// holds its arguments twice (once as arguments, once moved into its body), and these futures
// are part of every request's.
#![allow(clippy::manual_async_fn)]

use std::collections::BTreeMap;
use std::future::{Future, ready};
use std::panic::AssertUnwindSafe;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::FutureExt as _;
use mcp_jsonrpc::{ErrorObject, Reply};
use mcp_types::{
    CallToolRequest, CallToolResult, CompleteRequest, CompleteRequestParams, CompleteResult, CompletionReference,
    EmptyResult, GetPromptRequest, GetPromptRequestParams, ListPromptsRequest, ListPromptsResult,
    ListResourceTemplatesRequest, ListResourceTemplatesResult, ListResourcesRequest, ListResourcesResult,
    ListToolsRequest, ListToolsResult, LoggingLevel, PaginatedRequestParams, ReadResourceRequest,
    ReadResourceRequestParams, ReadResourceResult, Request, ServerCapabilities, SetLevelRequest, SetLevelRequestParams,
    SubscribeRequest, SubscribeRequestParams, UnsubscribeRequest, UnsubscribeRequestParams,
};

use super::call::{Call, FromParams, Serve, ToolCall, tool_outcome, tool_panicked};
use super::reply::{downgrade_content, downgrade_tool_result};
use crate::context::session::{RecordChange, update_shared};
use crate::context::visibility::Item;
use crate::def::completion::{Completion, CompletionRequest};
use crate::def::registry::Registry;
use crate::error::ToolError;

/// Serves a request by the marker type of its method: what the session's `dispatch` does after
/// the middleware, if any.
pub(crate) fn route(call: Call<'_>) -> impl Future<Output = Reply> + Send {
    async move {
        match call.req.method.as_str() {
            ListToolsRequest::METHOD => serve::<ListToolsRequest>(&call).await,
            CallToolRequest::METHOD => serve::<CallToolRequest>(&call).await,
            ListPromptsRequest::METHOD => serve::<ListPromptsRequest>(&call).await,
            GetPromptRequest::METHOD => serve::<GetPromptRequest>(&call).await,
            ListResourcesRequest::METHOD => serve::<ListResourcesRequest>(&call).await,
            ListResourceTemplatesRequest::METHOD => serve::<ListResourceTemplatesRequest>(&call).await,
            ReadResourceRequest::METHOD => serve::<ReadResourceRequest>(&call).await,
            SubscribeRequest::METHOD => serve::<SubscribeRequest>(&call).await,
            UnsubscribeRequest::METHOD => serve::<UnsubscribeRequest>(&call).await,
            CompleteRequest::METHOD => serve::<CompleteRequest>(&call).await,
            SetLevelRequest::METHOD => serve::<SetLevelRequest>(&call).await,
            mcp_types::GetTaskRequest::METHOD => serve::<mcp_types::GetTaskRequest>(&call).await,
            mcp_types::GetTaskPayloadRequest::METHOD => serve::<mcp_types::GetTaskPayloadRequest>(&call).await,
            mcp_types::ListTasksRequest::METHOD => serve::<mcp_types::ListTasksRequest>(&call).await,
            mcp_types::CancelTaskRequest::METHOD => serve::<mcp_types::CancelTaskRequest>(&call).await,
            // Not the protocol's: a custom method, if the server has a handler for it (its
            // future boxed, out of every request's).
            other => match call.server.custom.request(other) {
                Some(handler) => Box::pin(super::custom::serve(call, handler.clone())).await,
                None => Err(ErrorObject::method_not_found(other)),
            },
        }
    }
}

/// What every method shares: the gate and the decoding of its params (the method encodes its
/// own result, [`Serve::serve`]).
///
/// The gate: a method the stateless revision removed (`logging/setLevel`, `resources/subscribe`,
/// ...), asked for in a request of that revision, or a method whose capability the server did
/// not declare, is -32601. (A session serves the methods of the session revisions whatever
/// revision its connection was set up with.)
fn serve<R: Serve>(call: &Call<'_>) -> impl Future<Output = Reply> + Send {
    async move {
        let removed = call.era.is_stateless() && !R::REVISIONS.contains(call.era.version);
        if removed || !R::offered(&call.server.capabilities) {
            return Err(ErrorObject::method_not_found(R::METHOD));
        }
        let input = <R::Input<'_> as FromParams<'_>>::read(call)?;
        R::serve(call, input).await
    }
}

// ---------------------------------------------------------------------------------------------
// The list methods.

/// A list method: one page of a list the registry prepared.
trait Listing: Request<Params = PaginatedRequestParams> {
    /// An entry of the list.
    type Item: Clone;
    /// Whether the server declared the capability the list belongs to.
    fn offered(capabilities: &ServerCapabilities) -> bool;
    /// The whole list, as a client of `version` sees it.
    fn items(registry: &Registry, version: mcp_types::ProtocolVersion) -> &[Self::Item];
    /// Entry `index` of the list, `entry`, as the visibility predicate sees it.
    fn item<'r>(registry: &'r Registry, entry: &'r Self::Item, index: usize) -> Item<'r>;
    /// The result of one page.
    fn page(items: Vec<Self::Item>, next_cursor: Option<String>) -> Self::Result;
}

impl<R: Listing> Serve for R {
    type Input<'a> = PaginatedRequestParams;
    fn offered(capabilities: &ServerCapabilities) -> bool {
        <R as Listing>::offered(capabilities)
    }
    fn serve(call: &Call<'_>, params: PaginatedRequestParams) -> impl Future<Output = Reply> + Send {
        ready(list::<R>(call, &params))
    }
}

/// One page of the list of a list method, encoded: of the items the request sees, when some
/// may be hidden from it.
fn list<R: Listing>(call: &Call<'_>, params: &PaginatedRequestParams) -> Reply {
    let registry = call.server.registry();
    let items = R::items(&registry, call.era.version);
    let cursor = params.cursor.as_deref();
    let (items, next) = match call.filters() {
        false => page(items, cursor, call.server.page_size)?,
        true => page_where(items, cursor, call.server.page_size, |i| call.sees(R::item(&registry, &items[i], i)))?,
    };
    call.respond::<R>(&R::page(items, next))
}

/// Opaque, stable cursors: the offset of the next page, base64url-encoded.
fn page<T: Clone>(items: &[T], cursor: Option<&str>, size: usize) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = start_of(items, cursor)?;
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| URL_SAFE_NO_PAD.encode(format!("o:{end}")));
    Ok((items[start..end].to_vec(), next))
}

/// A page of the items at the indexes `visible` keeps, filtered before paging: the cursor is
/// the offset in the whole list of the next page's first item, so a cursor stays valid when
/// what the request sees changes between pages (it resumes where it was), and a page is never
/// empty but the first.
fn page_where<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    size: usize,
    visible: impl Fn(usize) -> bool,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = start_of(items, cursor)?;
    let mut page = Vec::new();
    let mut next = None;
    for i in (start..items.len()).filter(|i| visible(*i)) {
        if page.len() >= size {
            next = Some(URL_SAFE_NO_PAD.encode(format!("o:{i}")));
            break;
        }
        page.push(items[i].clone());
    }
    Ok((page, next))
}

/// The offset a cursor names (0 without one): -32602 for a cursor this server did not make.
fn start_of<T>(items: &[T], cursor: Option<&str>) -> Result<usize, ErrorObject> {
    Ok(match cursor {
        None => 0,
        Some(c) => URL_SAFE_NO_PAD
            .decode(c)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| s.strip_prefix("o:").and_then(|n| n.parse::<usize>().ok()))
            .filter(|n| *n <= items.len())
            .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor `{c}`")))?,
    })
}

/// Implements [`Listing`] for list methods: `marker: capability, registry list => result`.
macro_rules! listings {
    ($($marker:ty: $capability:ident, $list:ident, $defs:ident.$variant:ident => $result:ident<$item:ty>;)*) => {$(
        impl Listing for $marker {
            type Item = $item;
            fn offered(capabilities: &ServerCapabilities) -> bool {
                capabilities.$capability.is_some()
            }
            fn items(registry: &Registry, version: mcp_types::ProtocolVersion) -> &[$item] {
                registry.$list(version)
            }
            fn item<'r>(registry: &'r Registry, entry: &'r $item, index: usize) -> Item<'r> {
                // The lists are built from the definitions, in their order.
                Item::$variant(entry, registry.$defs.get(index).map_or(&[], |d| d.scopes.as_slice()))
            }
            fn page(items: Vec<$item>, next_cursor: Option<String>) -> $result {
                let mut result = $result::new(items);
                result.next_cursor = next_cursor;
                result
            }
        }
    )*};
}

listings! {
    ListToolsRequest: tools, tool_list, tools.Tool => ListToolsResult<mcp_types::Tool>;
    ListPromptsRequest: prompts, prompt_list, prompts.Prompt => ListPromptsResult<mcp_types::Prompt>;
    ListResourcesRequest: resources, resource_list, resources.Resource => ListResourcesResult<mcp_types::Resource>;
    ListResourceTemplatesRequest: resources, template_list, templates.ResourceTemplate
        => ListResourceTemplatesResult<mcp_types::ResourceTemplate>;
}

impl Serve for CallToolRequest {
    type Input<'a> = ToolCall<'a>;
    fn offered(capabilities: &ServerCapabilities) -> bool {
        capabilities.tools.is_some()
    }
    fn serve<'a>(call: &Call<'a>, input: ToolCall<'a>) -> impl Future<Output = Reply> + Send {
        let call = *call;
        async move {
            // A server with task tools decides first whether the call is (or must be) a task:
            // that path is boxed, out of this future.
            let input = match &call.server.tasks {
                None => input,
                Some(tasks) => match super::tasks::route(&call, tasks, input) {
                    Ok(task_path) => return task_path.await,
                    Err(plain) => plain,
                },
            };
            // Only what the call needs was decoded, and is kept across its await.
            let ToolCall { name, arguments, progress } = input;
            let registry = call.server.registry();
            // A tool hidden from the request is unknown, as one that does not exist.
            let Some(tool) = registry.tool(&name).filter(|t| call.sees(t.item())) else {
                return Err(ErrorObject::invalid_params(format!("unknown tool `{name}`")));
            };
            let mut ctx = call.context(progress);
            if call.server.task_forwarder.is_some() {
                // Tasks run elsewhere: the handler is told the client asked for one.
                ctx.requested_task = super::tasks::requested(&call)?;
            }
            let mut result: CallToolResult = tool_outcome!(tool, &name, arguments, ctx,
                raw => return call.rctx.encode_result(&*raw))?;
            downgrade_tool_result(&mut result, tool.wraps_output, call.era.version);
            call.respond::<Self>(&result)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Prompts.

impl Serve for GetPromptRequest {
    type Input<'a> = GetPromptRequestParams;
    fn offered(capabilities: &ServerCapabilities) -> bool {
        capabilities.prompts.is_some()
    }
    fn serve(call: &Call<'_>, p: GetPromptRequestParams) -> impl Future<Output = Reply> + Send {
        // Looked up before the future: it holds the handler's future only, not the params
        // (whose `_meta` is hundreds of bytes) nor the registry.
        let get = (|| {
            let registry = call.server.registry();
            let Some(prompt) = registry.prompt(&p.name).filter(|p| call.sees(p.item())) else {
                return Err(ErrorObject::invalid_params(format!("unknown prompt `{}`", p.name)));
            };
            let arguments = p.arguments.unwrap_or_default();
            let missing = prompt.missing(&arguments);
            if !missing.is_empty() {
                return Err(ErrorObject::invalid_params(format!(
                    "prompt `{}` needs the argument(s): {}",
                    p.name,
                    missing.join(", ")
                )));
            }
            let progress = p.meta.and_then(|m| m.progress_token);
            Ok(prompt.handler.get(arguments, call.context(progress)))
        })();
        async move {
            let mut result = get?.await?;
            for m in &mut result.messages {
                downgrade_content(std::slice::from_mut(&mut m.content), call.era.version);
            }
            call.respond::<Self>(&result)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Resources.

impl Serve for ReadResourceRequest {
    type Input<'a> = ReadResourceRequestParams;
    fn offered(capabilities: &ServerCapabilities) -> bool {
        capabilities.resources.is_some()
    }
    fn serve(call: &Call<'_>, p: ReadResourceRequestParams) -> impl Future<Output = Reply> + Send {
        // Looked up before the future: it holds the handler's future only, not the params
        // (whose `_meta` is hundreds of bytes).
        let read = (|| {
            let progress = p.meta.and_then(|m| m.progress_token);
            let registry = call.server.registry();
            // What is hidden from the request is as if it did not exist.
            let (handler, variables, cache) = match registry.resource(&p.uri).filter(|r| call.sees(r.item())) {
                Some(r) => (&r.handler, BTreeMap::new(), r.cache.clone()),
                None => match registry
                    .templates
                    .iter()
                    .find_map(|t| t.pattern.matches(&p.uri).filter(|_| call.sees(t.item())).map(|v| (t, v)))
                {
                    Some((t, vars)) => (&t.handler, vars, t.cache.clone()),
                    // A generated file of a dynamic skill, seen with its skill (the Skills extension).
                    None => match call.server.skill_generated.find(&p.uri).filter(|f| {
                        call.sees(Item::Resource(&f.resource, &[]))
                            && registry.resource(&f.skill_md).is_none_or(|md| call.sees(md.item()))
                    }) {
                        Some(file) => return Ok((file.read(call.context(progress)), None)),
                        None => return Err(ErrorObject::resource_not_found(&p.uri).for_revision(call.era.version)),
                    },
                },
            };
            Ok((handler.read(p.uri, variables, call.context(progress)), cache))
        })();
        async move {
            let (read, cache) = read?;
            // A handler's "not found" (`ErrorObject::resource_not_found`) in the revision's code.
            let contents = read.await.map_err(|e| e.for_revision(call.era.version))?;
            let mut result = ReadResourceResult::new(contents);
            if let Some(hints) = cache {
                // The resource's own hints win over the server's (2026-07-28 only on the wire).
                result.ttl_ms = Some(hints.ttl_ms);
                result.cache_scope = Some(hints.scope);
            }
            call.respond::<Self>(&result)
        }
    }
}

impl Serve for SubscribeRequest {
    type Input<'a> = SubscribeRequestParams;
    fn offered(capabilities: &ServerCapabilities) -> bool {
        capabilities.resources.is_some()
    }
    fn serve(call: &Call<'_>, p: SubscribeRequestParams) -> impl Future<Output = Reply> + Send {
        // A resource the server hides from the request is unknown: answered as one that does
        // not exist, and not subscribed to (what the session hides itself is subscribed to,
        // as an absent resource is, and its updates wait until it is shown again).
        let hidden = (call.server.visibility.is_some() || call.server.hide_out_of_scope)
            && call.server.registry().serves_visibly(&p.uri, |item| call.server_shows(item)) == Some(false);
        async move {
            if hidden {
                return call.respond::<Self>(&EmptyResult::default());
            }
            // Shared: in the record first, then here (with the record); else here only.
            if !update_shared(call.state, call.rctx, RecordChange::Subscribe(&p.uri)).await? {
                call.state.subscribe(p.uri)?;
            }
            call.respond::<Self>(&EmptyResult::default())
        }
    }
}

impl Serve for UnsubscribeRequest {
    type Input<'a> = UnsubscribeRequestParams;
    fn offered(capabilities: &ServerCapabilities) -> bool {
        capabilities.resources.is_some()
    }
    fn serve(call: &Call<'_>, p: UnsubscribeRequestParams) -> impl Future<Output = Reply> + Send {
        async move {
            if !update_shared(call.state, call.rctx, RecordChange::Unsubscribe(&p.uri)).await? {
                call.state.unsubscribe(&p.uri);
            }
            call.respond::<Self>(&EmptyResult::default())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Completions and logging.

impl Serve for CompleteRequest {
    type Input<'a> = CompleteRequestParams;
    fn offered(capabilities: &ServerCapabilities) -> bool {
        capabilities.completions.is_some()
    }
    fn serve(call: &Call<'_>, p: CompleteRequestParams) -> impl Future<Output = Reply> + Send {
        // Looked up before the future: it holds the completer's future only, not the params
        // (whose `_meta` is hundreds of bytes).
        let complete = (|| {
            let registry = call.server.registry();
            let completer = match &p.r#ref {
                CompletionReference::PromptReference(r) => {
                    match registry.prompt(&r.name).filter(|p| call.sees(p.item())) {
                        Some(prompt) => prompt.completer(&p.argument.name),
                        None => return Err(ErrorObject::invalid_params(format!("unknown prompt `{}`", r.name))),
                    }
                }
                CompletionReference::ResourceTemplateReference(r) => {
                    match registry.templates.iter().find(|t| t.template.uri_template == r.uri && call.sees(t.item())) {
                        Some(t) => t.completer(&p.argument.name),
                        None => {
                            return Err(ErrorObject::invalid_params(format!("unknown resource template `{}`", r.uri)));
                        }
                    }
                }
            };
            Ok(completer.map(|c| {
                let request = CompletionRequest {
                    name: p.argument.name,
                    value: p.argument.value,
                    context: p.context.and_then(|c| c.arguments).unwrap_or_default(),
                };
                let progress = p.meta.and_then(|m| m.progress_token);
                c.complete(request, call.context(progress))
            }))
        })();
        async move {
            let completion = match complete? {
                Some(complete) => complete.await?,
                None => Completion::default(),
            };
            call.respond::<Self>(&CompleteResult::new(completion.into_wire()))
        }
    }
}

impl Serve for SetLevelRequest {
    type Input<'a> = SetLevelRequestParams;
    /// Offered whatever the server declared: a session may always set its level.
    fn offered(_: &ServerCapabilities) -> bool {
        true
    }
    fn serve(call: &Call<'_>, p: SetLevelRequestParams) -> impl Future<Output = Reply> + Send {
        // The level is one of the eight of RFC 5424; anything else is invalid params.
        async move {
            match p.level {
                LoggingLevel::Other(level) => {
                    Err(ErrorObject::invalid_params(format!("unknown logging level `{level}`")))
                }
                level => {
                    if !update_shared(call.state, call.rctx, RecordChange::Level(&level)).await? {
                        call.state.set_log_level(level);
                    }
                    call.respond::<Self>(&EmptyResult::default())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_of_any_size_and_forged_cursors_do_not_panic() {
        let items = [1, 2, 3];
        let (all, next) = page(&items, None, usize::MAX).unwrap();
        assert_eq!((all, next), (vec![1, 2, 3], None));
        // The offset 1, as a cursor: valid, whatever the page size.
        let cursor = URL_SAFE_NO_PAD.encode("o:1");
        assert_eq!(page(&items, Some(&cursor), usize::MAX).unwrap(), (vec![2, 3], None));
        let (two, next) = page(&items, None, 2).unwrap();
        assert_eq!(two, [1, 2]);
        assert_eq!(page(&items, next.as_deref(), 2).unwrap(), (vec![3], None));
        let beyond = URL_SAFE_NO_PAD.encode("o:4");
        assert_eq!(page(&items, Some(&beyond), 2).unwrap_err().code, -32602);
    }

    #[test]
    fn filtered_pages_hold_what_is_seen_and_resume_where_they_were() {
        let items = [1, 2, 3, 4, 5];
        let odd = |i: usize| items[i] % 2 == 1;
        let (first, next) = page_where(&items, None, 2, odd).unwrap();
        assert_eq!(first, [1, 3]);
        // The cursor is the offset of the next item seen, in the whole list.
        assert_eq!(next.as_deref(), Some(URL_SAFE_NO_PAD.encode("o:4").as_str()));
        assert_eq!(page_where(&items, next.as_deref(), 2, odd).unwrap(), (vec![5], None));
        // No empty page after the last item seen.
        assert_eq!(page_where(&items[..4], None, 2, |i| items[i] % 2 == 1).unwrap(), (vec![1, 3], None));
        assert_eq!(page_where(&items, None, 2, |_| false).unwrap(), (vec![], None));
        let beyond = URL_SAFE_NO_PAD.encode("o:6");
        assert_eq!(page_where(&items, Some(&beyond), 2, odd).unwrap_err().code, -32602);
    }
}
