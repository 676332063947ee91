//! RFC 6570 URI templates, for matching the URIs of `resources/read` against resource
//! templates ([`UriTemplate`]), and the scheme a resource's URI starts with.

use std::collections::BTreeMap;

/// The variables a template matched: name to value.
pub type UriVariables = BTreeMap<String, String>;

/// The length of the scheme `uri` starts with (`file` of `file:///a`), if it has one:
/// a letter, then letters, digits, `+`, `-` or `.`, then `:` (RFC 3986, section 3.1).
pub(crate) fn uri_scheme_len(uri: &str) -> Option<usize> {
    let colon = uri.find(':')?;
    let scheme = &uri.as_bytes()[..colon];
    let valid = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    valid.then_some(colon)
}

/// A URI template that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template `{template}`: {reason}")]
pub struct TemplateError {
    pub(crate) template: String,
    pub(crate) reason: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    Literal(String),
    /// `{name}`: one path segment (no `/`, `?`, `#`).
    Simple(String),
    /// `{+name}`: anything, slashes included.
    Reserved(String),
    /// `{#name}`: `#` then anything (a fragment).
    Fragment(String),
    /// `{/name}`: `/` then one segment.
    Path(String),
    /// `{?a,b}`: query parameters (all optional).
    Query(Vec<String>),
}

/// An RFC 6570 URI template, for matching URIs against it (levels 1 and 2, plus `{/var}` and
/// `{?var,...}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    pub(crate) parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses a template.
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        let err = |reason| TemplateError { template: template.to_owned(), reason };
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let close = rest[open..].find('}').ok_or_else(|| err("an expression is not closed"))? + open;
            let expr = &rest[open + 1..close];
            let (op, names) = match expr.chars().next() {
                Some(c @ ('+' | '#' | '/' | '?')) => (Some(c), &expr[1..]),
                _ => (None, expr),
            };
            let names: Vec<String> = names.split(',').map(|n| n.trim_end_matches('*').to_owned()).collect();
            if names
                .iter()
                .any(|n| n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            {
                return Err(err("a variable name is empty or has characters other than letters, digits, `_` and `.`"));
            }
            let part = match op {
                Some('?') => Part::Query(names),
                _ if names.len() != 1 => {
                    return Err(err("only `{?a,b}` expressions may list several variables"));
                }
                Some('+') => Part::Reserved(names[0].clone()),
                Some('#') => Part::Fragment(names[0].clone()),
                Some('/') => Part::Path(names[0].clone()),
                _ => Part::Simple(names[0].clone()),
            };
            if let (
                Some(Part::Simple(_) | Part::Reserved(_) | Part::Path(_) | Part::Fragment(_)),
                Part::Simple(_) | Part::Reserved(_),
            ) = (parts.last(), &part)
            {
                return Err(err("two variables side by side cannot be told apart"));
            }
            parts.push(part);
            rest = &rest[close + 1..];
        }
        if rest.contains('}') {
            return Err(err("a `}` has no `{`"));
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(UriTemplate { parts })
    }

    /// Whether the template has no variables (it then names one fixed resource).
    pub fn is_fixed(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Literal(_)))
    }

    /// The variable names, in order.
    pub fn variables(&self) -> Vec<&str> {
        self.parts
            .iter()
            .flat_map(|p| match p {
                Part::Literal(_) => vec![],
                Part::Simple(n) | Part::Reserved(n) | Part::Path(n) | Part::Fragment(n) => vec![n.as_str()],
                Part::Query(ns) => ns.iter().map(String::as_str).collect(),
            })
            .collect()
    }

    /// Matches `uri`, returning the variables' (percent-decoded) values.
    ///
    /// When several splits of `uri` match, each variable takes the longest value that lets the
    /// rest match, from the first to the last. Linear in the length of `uri` (times the number
    /// of the template's parts, and its literals' lengths), whatever the URI: no URI a client
    /// sends can keep the server busy, and none that matches is refused.
    pub fn matches(&self, uri: &str) -> Option<UriVariables> {
        let table = Matchable::build(&self.parts, uri);
        if !table.ok(0, 0) {
            return None;
        }
        // Values are decoded once, after the match: later captures of a name win.
        let mut found: Vec<(&str, &str)> = Vec::new();
        let (bytes, mut at) = (uri.as_bytes(), 0);
        for (k, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(lit) => at += lit.len(),
                Part::Query(names) => {
                    let query = uri[at..].strip_prefix('?').unwrap_or_default();
                    let query = query.split_once('#').map_or(query, |(q, _)| q);
                    for pair in query.split('&').filter(|p| !p.is_empty()) {
                        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                        if let Some(name) = names.iter().find(|n| *n == key) {
                            found.push((name, value));
                        }
                    }
                    at = uri.len();
                }
                Part::Simple(name) | Part::Reserved(name) | Part::Path(name) | Part::Fragment(name) => {
                    let start = at + usize::from(matches!(part, Part::Path(_) | Part::Fragment(_)));
                    let stops = value_stops(part, self.parts.get(k + 1));
                    let limit = bytes[start..].iter().position(|b| stops.contains(b)).map_or(uri.len(), |i| start + i);
                    // The table says some end in `start + 1..=limit` lets the rest match.
                    let end = (start + 1..=limit).rev().find(|&e| uri.is_char_boundary(e) && table.ok(k + 1, e))?;
                    found.push((name, &uri[start..end]));
                    at = end;
                }
            }
        }
        Some(found.into_iter().map(|(name, raw)| (name.to_owned(), decode(raw))).collect())
    }
}

/// The bytes that end a variable's value, by its kind and the part after it. `{+var}` and
/// `{#var}` take reserved characters too, but not the `?` that starts a query expression right
/// after them.
fn value_stops(part: &Part, next: Option<&Part>) -> &'static [u8] {
    match (part, next) {
        (Part::Reserved(_) | Part::Fragment(_), Some(Part::Query(_))) => b"?#",
        (Part::Reserved(_) | Part::Fragment(_), _) => b"",
        _ => b"/?#",
    }
}

/// For each suffix of a template's parts and each position in a URI, whether those parts match
/// the URI from there: one bit each, filled from the last part back, each part in one pass over
/// the URI.
struct Matchable {
    /// Bits per row (positions `0..=uri.len()`), rounded up to whole words.
    words: usize,
    /// Row `k` (parts `k..`) is `bits[k * words..(k + 1) * words]`.
    bits: Vec<u64>,
}

impl Matchable {
    fn build(parts: &[Part], uri: &str) -> Matchable {
        let (bytes, n) = (uri.as_bytes(), uri.len());
        let words = (n + 1).div_ceil(64);
        let mut table = Matchable { words, bits: vec![0; words * (parts.len() + 1)] };
        table.set(parts.len(), n);
        for (k, part) in parts.iter().enumerate().rev() {
            match part {
                Part::Literal(lit) if lit.len() <= n => {
                    for p in 0..=n - lit.len() {
                        if table.ok(k + 1, p + lit.len()) && bytes[p..].starts_with(lit.as_bytes()) {
                            table.set(k, p);
                        }
                    }
                }
                // A query expression matches what is left: nothing, or `?` and a query with no
                // fragment (or an empty one). It is the last part or matches nothing.
                Part::Query(_) if k + 1 == parts.len() => {
                    table.set(k, n);
                    // The first `#` at or after `p + 1`, as `p` goes down.
                    let mut hash = None;
                    for p in (0..n).rev() {
                        if bytes[p] == b'?' && hash.is_none_or(|h| h + 1 == n) {
                            table.set(k, p);
                        }
                        if bytes[p] == b'#' {
                            hash = Some(p);
                        }
                    }
                }
                Part::Literal(_) | Part::Query(_) => {}
                Part::Simple(_) | Part::Reserved(_) | Part::Path(_) | Part::Fragment(_) => {
                    let lead = match part {
                        Part::Path(_) => Some(b'/'),
                        Part::Fragment(_) => Some(b'#'),
                        _ => None,
                    };
                    let stops = value_stops(part, parts.get(k + 1));
                    // A value starting at `s` may end at `e` in `s + 1..=limit(s)`, where
                    // `limit(s)` is the first stop at or after `s`. Going down from the end,
                    // `open` says whether an end that lets the rest match is in that range.
                    let mut open = false;
                    for s in (0..n).rev() {
                        if stops.contains(&bytes[s]) {
                            open = false;
                        } else if uri.is_char_boundary(s + 1) && table.ok(k + 1, s + 1) {
                            open = true;
                        }
                        match lead {
                            None if open => table.set(k, s),
                            Some(lead) if open && s > 0 && bytes[s - 1] == lead => table.set(k, s - 1),
                            _ => {}
                        }
                    }
                }
            }
        }
        table
    }

    fn ok(&self, part: usize, at: usize) -> bool {
        self.bits[part * self.words + at / 64] & (1 << (at % 64)) != 0
    }

    fn set(&mut self, part: usize, at: usize) {
        self.bits[part * self.words + at / 64] |= 1 << (at % 64);
    }
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(t).unwrap().matches(uri).map(|v| v.into_iter().collect())
    }

    fn kv(pairs: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect())
    }

    #[test]
    fn long_uris_match_in_linear_time() {
        // 4 MiB: one pass over it, not one decode of every prefix.
        let long = "a".repeat(4 << 20);
        let got = m("test://items/{id}", &format!("test://items/{long}")).unwrap();
        assert_eq!(got[0].1.len(), long.len());
        assert_eq!(m("test://items/{id}", &format!("test://items/{long}/")), None);
        let got = m("file:///{+path}.txt", &format!("file:///{long}/b.txt")).unwrap();
        assert_eq!(got[0].1.len(), long.len() + 2);
        assert_eq!(m("file:///{+path}.txt", &format!("file:///{long}")), None);
        // Three reserved variables over a run of their separator: cubic for a backtracking
        // matcher, one pass per part here.
        let dots = ".".repeat(1 << 20);
        assert_eq!(m("x://{+a}.{+b}.{+c}!", &format!("x://{dots}")), None);
        assert_eq!(m("x://{+a}/{+b}!", &format!("x://{}", "/".repeat(1 << 20))), None);
        // Where a match exists among them it is found.
        let got = m("x://{+a}.{+b}.{+c}!{d}", &format!("x://{dots}!z")).unwrap();
        assert_eq!(
            got.iter().map(|(k, v)| (k.as_str(), v.len())).collect::<Vec<_>>(),
            [("a", dots.len() - 4), ("b", 1), ("c", 1), ("d", 1)]
        );
        // Each variable takes the longest value that lets the rest match, and the later of two
        // captures of one query name wins.
        assert_eq!(m("x://{+a}.{+b}.txt", "x://1.2.3.txt"), kv(&[("a", "1.2"), ("b", "3")]));
        assert_eq!(m("x://{id}{?id}", "x://p?id=q&id=r"), kv(&[("id", "r")]));
    }

    /// The matcher gives what an exhaustive backtracking search gives (the longest value first,
    /// variable by variable), on every short URI over the characters that matter.
    #[test]
    fn matches_as_an_exhaustive_search_does() {
        fn search<'p, 'u>(parts: &'p [Part], uri: &'u str, found: &mut Vec<(&'p str, &'u str)>) -> bool {
            let Some((first, rest)) = parts.split_first() else { return uri.is_empty() };
            match first {
                Part::Literal(lit) => uri.strip_prefix(lit.as_str()).is_some_and(|u| search(rest, u, found)),
                Part::Query(names) => {
                    let Some(query) = uri.strip_prefix('?') else { return uri.is_empty() && rest.is_empty() };
                    let (query, tail) = query.split_once('#').unwrap_or((query, ""));
                    if !(tail.is_empty() && rest.is_empty()) {
                        return false;
                    }
                    for pair in query.split('&').filter(|p| !p.is_empty()) {
                        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                        if let Some(name) = names.iter().find(|n| *n == k) {
                            found.push((name, v));
                        }
                    }
                    true
                }
                Part::Simple(name) | Part::Reserved(name) | Part::Path(name) | Part::Fragment(name) => {
                    let uri = match first {
                        Part::Path(_) => uri.strip_prefix('/'),
                        Part::Fragment(_) => uri.strip_prefix('#'),
                        _ => Some(uri),
                    };
                    let Some(uri) = uri else { return false };
                    let stops = value_stops(first, rest.first());
                    let limit = uri.bytes().position(|b| stops.contains(&b)).unwrap_or(uri.len());
                    for end in (1..=limit).rev() {
                        let before = found.len();
                        found.push((name, &uri[..end]));
                        if search(rest, &uri[end..], found) {
                            return true;
                        }
                        found.truncate(before);
                    }
                    false
                }
            }
        }
        let templates = [
            "x:{a}",
            "x:{+a}",
            "x:{a}.{b}",
            "x:{+a}.{+b}.{c}",
            "x:{+a}/{b}{?q}",
            "x:{a}{/b}{#c}",
            "x:{+a}{#b}{?q,r}",
            "x:{+a}.{+a}",
            "x:a{?q}",
            "x:{a}{?q}x",
            "x:{#a}.{+b}",
        ];
        let alphabet = ['.', '/', '?', '#', '=', '&', 'q', 'a'];
        let mut checked = 0;
        for template in templates {
            let parsed = UriTemplate::parse(template).unwrap();
            // Every URI `x:` plus up to 5 characters of the alphabet.
            for len in 0..=5u32 {
                for mut code in 0..alphabet.len().pow(len) {
                    let mut uri = String::from("x:");
                    for _ in 0..len {
                        uri.push(alphabet[code % alphabet.len()]);
                        code /= alphabet.len();
                    }
                    let mut found = Vec::new();
                    let expected = search(&parsed.parts, &uri, &mut found)
                        .then(|| found.into_iter().map(|(k, v)| (k.to_owned(), decode(v))).collect::<UriVariables>());
                    assert_eq!(parsed.matches(&uri), expected, "{template} against {uri}");
                    checked += usize::from(expected.is_some());
                }
            }
        }
        assert!(checked > 1000, "only {checked} matches");
    }

    #[test]
    fn matches_simple_variables() {
        assert_eq!(m("test://template/{id}/data", "test://template/42/data"), kv(&[("id", "42")]));
        assert_eq!(m("test://template/{id}/data", "test://template/4/2/data"), None);
        assert_eq!(m("users://{user}/posts/{post}", "users://ann/posts/7"), kv(&[("post", "7"), ("user", "ann")]));
        assert_eq!(m("x://{a}", "x://hello%20world"), kv(&[("a", "hello world")]));
        assert_eq!(m("x://{a}", "x://"), None);
        assert_eq!(m("x://fixed", "x://fixed"), kv(&[]));
    }

    #[test]
    fn matches_reserved_path_and_query_expressions() {
        assert_eq!(m("file:///{+path}", "file:///a/b/c.txt"), kv(&[("path", "a/b/c.txt")]));
        assert_eq!(m("repo://x{/branch}", "repo://x/main"), kv(&[("branch", "main")]));
        assert_eq!(
            m("search://q{?term,lang}", "search://q?term=rust&lang=en"),
            kv(&[("lang", "en"), ("term", "rust")])
        );
        assert_eq!(m("search://q{?term}", "search://q"), kv(&[]));
        assert_eq!(m("file:///{+path}{?rev}", "file:///a/b.txt?rev=3"), kv(&[("path", "a/b.txt"), ("rev", "3")]));
        assert_eq!(m("file:///{+path}{?rev}", "file:///a/b.txt"), kv(&[("path", "a/b.txt")]));
    }

    /// Found by the fuzz target `template` (fuzz/artifacts/template/): `{#frag}` was read as
    /// `{+frag}`, so its value took the `#` that RFC 6570 writes before it.
    #[test]
    fn a_fragment_expression_starts_at_its_hash() {
        assert_eq!(m("http://x/items/{id}{#frag}", "http://x/items/7#top"), kv(&[("frag", "top"), ("id", "7")]));
        assert_eq!(m("doc://{+path}{#frag}", "doc://a/b#c#d"), kv(&[("frag", "d"), ("path", "a/b#c")]));
        assert_eq!(m("doc://a{#frag}", "doc://atop"), None);
        assert!(UriTemplate::parse("doc://{#frag}{name}").is_err());
        // A query expression after it: the fragment ends at the `?`, as it expands.
        assert_eq!(m("doc://a{#frag}{?q}", "doc://a#top?q=1"), kv(&[("frag", "top"), ("q", "1")]));
    }

    #[test]
    fn rejects_bad_templates() {
        for t in ["x://{a", "x://{}", "x://{a}{b}", "x://{a,b}", "x://a}"] {
            assert!(UriTemplate::parse(t).is_err(), "{t}");
        }
        assert!(UriTemplate::parse("x://{a}").unwrap().variables() == vec!["a"]);
    }
}
