//! How a mount's names and URIs appear in the gateway: tools and prompts as `prefix_name`,
//! resource URIs and URI templates as `prefix+uri` (`github+file:///x`: the prefix joins the
//! URI's scheme, so the result is still a URI, and stripping `prefix+` gives the original
//! back). A `ui://` URI (an MCP App's view, SEP-1865, which must stay `ui://`) becomes
//! `ui://prefix+rest` (`ui://ev+counter/view`: the prefix joins the authority, where RFC 3986
//! allows `+`, a sub-delim). An empty prefix leaves both as they are. A mounted server's task
//! ids appear as `prefix:id`.

use crate::GatewayError;

/// The scheme of an MCP App's views, kept by the gateway's URIs.
const UI: &str = mcp_types::apps::SCHEME;

/// The tasks extension of 2026-07-28 (SEP-2663).
pub(crate) const EXTENSION: &str = mcp_server::tasks::EXTENSION;

/// The separator of a mount's prefix and a mounted server's task id (a prefix has none).
pub(crate) const TASK_SEPARATOR: char = ':';

/// The gateway's id of the task `id` of the mount with `prefix`.
pub(crate) fn gateway_id(prefix: &str, id: &str) -> String {
    format!("{prefix}{TASK_SEPARATOR}{id}")
}

/// The longest prefix: a tool name is at most 128 characters.
const MAX_PREFIX: usize = 64;

/// A mount's prefix, checked: ASCII letters, digits, `-` and `.` (no `_` and no `+`, the
/// separators, so that a prefixed name or URI is read back without ambiguity).
#[derive(Debug, Clone)]
pub(crate) struct Naming {
    prefix: String,
}

impl Naming {
    /// Checks `prefix`.
    pub(crate) fn new(prefix: &str) -> Result<Self, GatewayError> {
        let valid =
            prefix.len() <= MAX_PREFIX && prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
        if !valid {
            return Err(GatewayError::InvalidPrefix(prefix.to_owned()));
        }
        Ok(Naming { prefix: prefix.to_owned() })
    }

    /// The prefix (empty: mounted unprefixed).
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// A tool's or prompt's name in the gateway.
    pub(crate) fn name(&self, name: &str) -> String {
        if self.prefix.is_empty() { name.to_owned() } else { format!("{}_{name}", self.prefix) }
    }

    /// A resource URI (or URI template) in the gateway.
    /// A `ui://` URI stays one: `ui://prefix+rest`.
    pub(crate) fn uri(&self, uri: &str) -> String {
        if self.prefix.is_empty() {
            return uri.to_owned();
        }
        match uri.strip_prefix(UI) {
            Some(rest) => format!("{UI}{}+{rest}", self.prefix),
            None => format!("{}+{uri}", self.prefix),
        }
    }

    /// The mounted server's URI of a gateway URI, if it is one of this mount's.
    pub(crate) fn original_uri(&self, uri: &str) -> Option<String> {
        if self.prefix.is_empty() {
            return Some(uri.to_owned());
        }
        if let Some(rest) = uri.strip_prefix(UI) {
            let rest = rest.strip_prefix(self.prefix.as_str())?.strip_prefix('+')?;
            return Some(format!("{UI}{rest}"));
        }
        let original = uri.strip_prefix(self.prefix.as_str())?.strip_prefix('+')?;
        // `prefix+ui://…` is no URI of the gateway's: its views keep their scheme.
        (!original.starts_with(UI)).then(|| original.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_uris_are_prefixed_reversibly() {
        let github = Naming::new("github").unwrap();
        assert_eq!(github.name("search"), "github_search");
        assert_eq!(github.uri("file:///x"), "github+file:///x");
        assert_eq!(github.original_uri("github+file:///x").as_deref(), Some("file:///x"));
        assert_eq!(github.original_uri("git+file:///x"), None);
        assert_eq!(github.original_uri("githubfile:///x"), None);
        let bare = Naming::new("").unwrap();
        assert_eq!(bare.name("search"), "search");
        assert_eq!(bare.uri("file:///x"), "file:///x");
        assert_eq!(bare.original_uri("file:///x").as_deref(), Some("file:///x"));
    }

    #[test]
    fn ui_uris_stay_ui_uris_reversibly() {
        let ev = Naming::new("ev").unwrap();
        assert_eq!(ev.uri("ui://everything/counter"), "ui://ev+everything/counter");
        assert_eq!(ev.uri("ui://{name}/view"), "ui://ev+{name}/view");
        assert_eq!(ev.original_uri("ui://ev+everything/counter").as_deref(), Some("ui://everything/counter"));
        assert_eq!(ev.original_uri("ui://e+everything/counter"), None);
        assert_eq!(ev.original_uri("ui://everything/counter"), None);
        assert_eq!(ev.original_uri("ui://evx+everything/counter"), None);
        assert_eq!(ev.original_uri("ev+ui://everything/counter"), None);
        // A mount named `ui` keeps its URIs apart from the views'.
        let ui = Naming::new("ui").unwrap();
        assert_eq!(ui.uri("file:///x"), "ui+file:///x");
        assert_eq!(ui.original_uri("ui+file:///x").as_deref(), Some("file:///x"));
        assert_eq!(ui.uri("ui://v"), "ui://ui+v");
        assert_eq!(ui.original_uri("ui://ui+v").as_deref(), Some("ui://v"));
        let bare = Naming::new("").unwrap();
        assert_eq!(bare.uri("ui://everything/counter"), "ui://everything/counter");
        assert_eq!(bare.original_uri("ui://everything/counter").as_deref(), Some("ui://everything/counter"));
    }

    #[test]
    fn separators_are_refused_in_prefixes() {
        for bad in ["a_b", "a+b", "a b", "ü", &"x".repeat(65)] {
            assert!(Naming::new(bad).is_err(), "{bad}");
        }
        for ok in ["a", "a-b", "v1.2", "GitHub"] {
            Naming::new(ok).unwrap();
        }
    }
}
