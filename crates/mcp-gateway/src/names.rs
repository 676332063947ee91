//! How a mount's names and URIs appear in the gateway: tools and prompts as `prefix_name`,
//! resource URIs and URI templates as `prefix+uri` (`github+file:///x`: the prefix joins the
//! URI's scheme, so the result is still a URI, and stripping `prefix+` gives the original
//! back). An empty prefix leaves both as they are. A mounted server's task ids appear as
//! `prefix:id`.

use crate::GatewayError;

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
    pub(crate) fn uri(&self, uri: &str) -> String {
        if self.prefix.is_empty() { uri.to_owned() } else { format!("{}+{uri}", self.prefix) }
    }

    /// The mounted server's URI of a gateway URI, if it is one of this mount's.
    pub(crate) fn original_uri<'a>(&self, uri: &'a str) -> Option<&'a str> {
        if self.prefix.is_empty() {
            return Some(uri);
        }
        uri.strip_prefix(self.prefix.as_str())?.strip_prefix('+')
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
        assert_eq!(github.original_uri("github+file:///x"), Some("file:///x"));
        assert_eq!(github.original_uri("git+file:///x"), None);
        assert_eq!(github.original_uri("githubfile:///x"), None);
        let bare = Naming::new("").unwrap();
        assert_eq!(bare.name("search"), "search");
        assert_eq!(bare.uri("file:///x"), "file:///x");
        assert_eq!(bare.original_uri("file:///x"), Some("file:///x"));
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
