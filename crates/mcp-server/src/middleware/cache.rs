//! Caching of list results: `tools/list`, `prompts/list`, `resources/list` and
//! `resources/templates/list`, until the server's lists change.

use std::sync::Mutex;

use futures_util::future::BoxFuture;
use hashbrown::HashMap;
use mcp_jsonrpc::Reply;
use mcp_jsonrpc::sync::MutexExt as _;
use serde_json::value::RawValue;

use super::{McpRequest, MethodKind, Middleware, Next, RequestCx, result_of};

/// The most results kept.
const DEFAULT_MAX_ENTRIES: usize = 1024;

/// What partitions the cache beyond the request: a key of the request's client (its principal,
/// say), for a server whose lists differ by client.
pub type Scope = fn(&RequestCx<'_>) -> Option<String>;

/// Keeps the results of the list methods, by method, cursor and revision (and [`Scope`], if
/// set), and answers the same request again from them, until a tool, prompt, resource or
/// template is added or removed ([`Server::add_tool`](crate::Server::add_tool), ...): then
/// every result kept is stale. Only results are kept, never errors; at most `max_entries`
/// (1,024 by default: past it the cache is emptied).
///
/// Lists that differ by client are not kept unless a [`Scope`] is given: with a visibility
/// predicate or [`hide_out_of_scope`](crate::ServerBuilder::hide_out_of_scope), the cache
/// passes lists on uncached, and the lists of a session that hides items of its own
/// ([`SessionControl`](crate::SessionControl)) are never kept. With a scope, the predicate must
/// depend on nothing but what the scope names. A layer inside this one that changes a list
/// result per client must likewise be given a [`Scope`], or be put outside it.
#[derive(Debug)]
pub struct ListCache {
    scope: Option<Scope>,
    max_entries: usize,
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    /// The generation of the server's lists the entries were made in.
    generation: u64,
    results: HashMap<Key, Box<RawValue>>,
}

/// method, cursor, revision (2026-07-28's results are decorated: the stateless revision's
/// alone), scope.
type Key = (String, Option<String>, &'static str, Option<String>);

impl Default for ListCache {
    fn default() -> ListCache {
        ListCache::new()
    }
}

impl ListCache {
    /// A cache of the list results of every client alike.
    pub fn new() -> ListCache {
        ListCache { scope: None, max_entries: DEFAULT_MAX_ENTRIES, entries: Mutex::default() }
    }

    /// Results kept apart per `scope` of the request (a server whose lists differ by client).
    pub fn scope(mut self, scope: Scope) -> ListCache {
        self.scope = Some(scope);
        self
    }

    /// The most results kept.
    pub fn max_entries(mut self, max: usize) -> ListCache {
        self.max_entries = max.max(1);
        self
    }
}

impl Middleware for ListCache {
    fn request<'a>(&'a self, req: McpRequest<'a>, next: Next<'a>) -> BoxFuture<'a, Reply> {
        if req.kind() != MethodKind::List {
            return next.run(req);
        }
        let Some(Ok(cursor)) = req.list_cursor() else { return next.run(req) };
        let cx = req.cx();
        // Lists that differ by client are kept only under a scope, and never those of a session
        // that hides items of its own (its lists change without the server's).
        if cx.session_hides_items() || (self.scope.is_none() && cx.lists_filtered()) {
            return next.run(req);
        }
        let key: Key =
            (req.method().to_owned(), cursor, cx.revision().as_str(), self.scope.and_then(|scope| scope(&cx)));
        // Read before the list is: a change while it is made leaves the result stale, kept
        // under the generation before it.
        let generation = cx.list_generation();
        {
            let entries = self.entries.lock_unpoisoned();
            if entries.generation == generation
                && let Some(result) = entries.results.get(&key)
            {
                return Box::pin(std::future::ready(cx.respond_json(result)));
            }
        }
        Box::pin(async move {
            let reply = next.run(req).await;
            if let Some(result) = result_of(&reply) {
                let mut entries = self.entries.lock_unpoisoned();
                if entries.generation != generation {
                    if entries.generation > generation {
                        // Made before a change the cache knows of: not kept.
                        return reply;
                    }
                    entries.generation = generation;
                    entries.results.clear();
                }
                if entries.results.len() >= self.max_entries {
                    entries.results.clear();
                }
                entries.results.insert(key, result);
            }
            reply
        })
    }
}
