//! The optional cache of list results (2026-07-28 caching hints).

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

/// Pages kept at most; more and the cache starts afresh.
const MAX_PAGES: usize = 1024;

/// Pages by method and cursor, with when they go stale.
type Pages = HashMap<(&'static str, Option<String>), (Instant, Value)>;

/// List pages (by method and cursor) kept while their `ttlMs` says they are fresh. A change
/// notification of the list drops its pages.
#[derive(Debug, Default)]
pub(crate) struct ListCache {
    pages: Mutex<Pages>,
}

impl ListCache {
    /// A fresh page, if one is kept.
    pub(crate) fn get(&self, method: &'static str, cursor: &Option<String>) -> Option<Value> {
        let mut pages = self.pages.lock_unpoisoned();
        let key = (method, cursor.clone());
        match pages.get(&key) {
            Some((expires, value)) if Instant::now() < *expires => Some(value.clone()),
            Some(_) => {
                pages.remove(&key);
                None
            }
            None => None,
        }
    }

    /// Keeps a page whose `ttlMs` is positive, for that long.
    pub(crate) fn put(&self, method: &'static str, cursor: Option<String>, value: &Value) {
        let Some(ttl) = value.get("ttlMs").and_then(Value::as_i64).filter(|t| *t > 0) else { return };
        let expires = Instant::now() + Duration::from_millis(ttl.unsigned_abs());
        let mut pages = self.pages.lock_unpoisoned();
        if pages.len() >= MAX_PAGES {
            pages.clear();
        }
        pages.insert((method, cursor), (expires, value.clone()));
    }

    /// Drops every page of these methods (their list changed).
    pub(crate) fn invalidate(&self, methods: &[&str]) {
        let mut pages = self.pages.lock_unpoisoned();
        pages.retain(|(m, _), _| !methods.contains(m));
    }

    /// Drops every page.
    pub(crate) fn clear(&self) {
        self.pages.lock_unpoisoned().clear();
    }
}
