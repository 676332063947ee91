//! The `WWW-Authenticate: Bearer ...` challenge of a 401 or 403 (RFC 6750 §3, RFC 9728 §5.1).

/// What a `Bearer` challenge says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// `resource_metadata`: where the protected resource metadata is (RFC 9728).
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// Reads the `Bearer` challenge of a `WWW-Authenticate` value; `None` if it has none.
    /// Parameters are `name=value` or `name="quoted value"` (with `\` escapes), separated by
    /// commas; other schemes in the same value are skipped.
    pub fn parse(header: &str) -> Option<Self> {
        Self::parse_scheme(header, "bearer")
    }

    /// The `Bearer` challenge of a `WWW-Authenticate` value, else its `DPoP` one (RFC 9449
    /// §7.1: a resource that takes DPoP-bound tokens challenges with that scheme, with the
    /// same parameters).
    pub(crate) fn parse_any(header: &str) -> Option<Self> {
        Self::parse(header).or_else(|| Self::parse_scheme(header, "dpop"))
    }

    /// The challenge of the scheme `scheme` (lowercase) in a `WWW-Authenticate` value.
    pub(crate) fn parse_scheme(header: &str, scheme: &str) -> Option<Self> {
        let start = find_scheme(header, scheme)?;
        let mut rest = &header[start + scheme.len()..];
        let mut challenge = BearerChallenge::default();
        loop {
            rest = rest.trim_start_matches([' ', '\t', ',']);
            let Some(eq) = rest.find('=') else { break };
            let name = rest[..eq].trim();
            if name.is_empty() || name.contains([' ', '\t', ',']) {
                // The next auth scheme begins: this challenge is over.
                break;
            }
            let (value, after) = read_value(&rest[eq + 1..]);
            match name.to_ascii_lowercase().as_str() {
                "resource_metadata" => challenge.resource_metadata = Some(value),
                "scope" => challenge.scope = Some(value),
                "error" => challenge.error = Some(value),
                "error_description" => challenge.error_description = Some(value),
                _ => {}
            }
            rest = after;
        }
        Some(challenge)
    }

    /// The scopes of `scope`, split on spaces.
    pub fn scopes(&self) -> Vec<String> {
        self.scope.as_deref().map(split_scopes).unwrap_or_default()
    }

    /// Whether this is a step-up challenge (`error="insufficient_scope"`).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// Space-separated scopes as a list.
pub(crate) fn split_scopes(scopes: &str) -> Vec<String> {
    scopes.split(' ').filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// Where the scheme `scheme` (lowercase) begins in `header`, as a whole token.
fn find_scheme(header: &str, scheme: &str) -> Option<usize> {
    let lower = header.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(scheme) {
        let at = from + i;
        let before_ok = at == 0 || matches!(lower.as_bytes()[at - 1], b' ' | b',' | b'\t');
        let after = lower.as_bytes().get(at + scheme.len());
        let after_ok = after.is_none_or(|b| matches!(b, b' ' | b'\t'));
        if before_ok && after_ok {
            return Some(at);
        }
        from = at + scheme.len();
    }
    None
}

/// A parameter value (a token or a quoted string) and what follows it.
fn read_value(s: &str) -> (String, &str) {
    let s = s.trim_start();
    if let Some(quoted) = s.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                }
                '"' => return (value, &quoted[i + 1..]),
                c => value.push(c),
            }
        }
        (value, "")
    } else {
        let end = s.find([',', ' ', '\t']).unwrap_or(s.len());
        (s[..end].to_owned(), &s[end..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_quoted_and_bare() {
        let c = BearerChallenge::parse(
            r#"Bearer resource_metadata="https://x/.well-known/oauth-protected-resource/mcp", scope="a b", error=insufficient_scope"#,
        )
        .unwrap();
        assert_eq!(c.resource_metadata.as_deref(), Some("https://x/.well-known/oauth-protected-resource/mcp"));
        assert_eq!(c.scopes(), ["a", "b"]);
        assert!(c.is_insufficient_scope());
    }

    #[test]
    fn escapes_other_schemes_and_case() {
        let c = BearerChallenge::parse(r#"Basic realm="x", bearer error_description="say \"hi\"", Scope=s"#).unwrap();
        assert_eq!(c.error_description.as_deref(), Some(r#"say "hi""#));
        assert_eq!(c.scope.as_deref(), Some("s"));
        assert_eq!(BearerChallenge::parse(r#"Basic realm="x""#), None);
        assert_eq!(BearerChallenge::parse("Bearer"), Some(BearerChallenge::default()));
        // A scheme name inside a value is not a scheme.
        let c = BearerChallenge::parse(r#"Basic realm="bearer", Bearer scope="x""#).unwrap();
        assert_eq!(c.scope.as_deref(), Some("x"));
        // Unterminated quotes end the value.
        let c = BearerChallenge::parse(r#"Bearer scope="a b"#).unwrap();
        assert_eq!(c.scope.as_deref(), Some("a b"));
    }
}
