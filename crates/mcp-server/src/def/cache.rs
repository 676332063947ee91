//! Cache hints of 2026-07-28 results (`ttlMs`, `cacheScope`): the server's, one per kind of
//! result ([`CacheTarget`]), and a resource's or template's own.

use std::time::Duration;

use mcp_types::{
    CacheScope, DiscoverRequest, ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
    ListToolsRequest, ReadResourceRequest, Request as _,
};

/// The results that carry cache hints (`ttlMs`, `cacheScope`) in 2026-07-28, each with hints
/// of its own: see [`ServerBuilder::cache_hints_for`](crate::ServerBuilder::cache_hints_for).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CacheTarget {
    /// `server/discover`.
    Discover,
    /// `tools/list`.
    ToolsList,
    /// `prompts/list`.
    PromptsList,
    /// `resources/list`.
    ResourcesList,
    /// `resources/templates/list`.
    ResourceTemplatesList,
    /// `resources/read`, for resources and templates without hints of their own
    /// ([`ResourceDef::cache_hints`](crate::ResourceDef::cache_hints),
    /// [`TemplateDef::cache_hints`](crate::TemplateDef::cache_hints)).
    ResourcesRead,
}

impl CacheTarget {
    /// Every target.
    pub const ALL: [CacheTarget; 6] = [
        CacheTarget::Discover,
        CacheTarget::ToolsList,
        CacheTarget::PromptsList,
        CacheTarget::ResourcesList,
        CacheTarget::ResourceTemplatesList,
        CacheTarget::ResourcesRead,
    ];

    /// The target of a method whose result carries cache hints.
    pub fn of_method(method: &str) -> Option<CacheTarget> {
        Some(match method {
            DiscoverRequest::METHOD => CacheTarget::Discover,
            ListToolsRequest::METHOD => CacheTarget::ToolsList,
            ListPromptsRequest::METHOD => CacheTarget::PromptsList,
            ListResourcesRequest::METHOD => CacheTarget::ResourcesList,
            ListResourceTemplatesRequest::METHOD => CacheTarget::ResourceTemplatesList,
            ReadResourceRequest::METHOD => CacheTarget::ResourcesRead,
            _ => return None,
        })
    }
}

/// Freshness hints of cacheable results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CacheHints {
    pub(crate) ttl_ms: i64,
    pub(crate) scope: CacheScope,
}

impl CacheHints {
    pub(crate) fn new(ttl: Duration, scope: CacheScope) -> Self {
        CacheHints { ttl_ms: i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX), scope }
    }
}

impl Default for CacheHints {
    fn default() -> Self {
        CacheHints { ttl_ms: 0, scope: CacheScope::Private }
    }
}

/// The server's cache hints, one setting per [`CacheTarget`].
#[derive(Debug, Clone, Default)]
pub(crate) struct CachePolicy {
    hints: [CacheHints; CacheTarget::ALL.len()],
}

impl CachePolicy {
    /// The same hints for every target.
    pub(crate) fn all(hints: CacheHints) -> Self {
        CachePolicy { hints: std::array::from_fn(|_| hints.clone()) }
    }

    pub(crate) fn set(&mut self, target: CacheTarget, hints: CacheHints) {
        self.hints[target as usize] = hints;
    }

    pub(crate) fn get(&self, target: CacheTarget) -> &CacheHints {
        &self.hints[target as usize]
    }

    /// The hints of a method's result, if it carries any.
    pub(crate) fn for_method(&self, method: &str) -> Option<&CacheHints> {
        CacheTarget::of_method(method).map(|t| self.get(t))
    }
}
