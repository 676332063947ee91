//! The RFC 6570 URI template matcher of the server (`mcp_server::UriTemplate`).

use mcp_server::UriTemplate;

/// The input is a template, a newline, and a URI. Parsing and matching never panic, and a match
/// names only the template's variables. For a template that parses, an expansion of it (each
/// variable given a value taken from the URI's bytes, of letters and digits) matches it, and
/// the values the match gives expand to the same URI again (a template may match one URI in
/// several ways, so the values themselves may differ). Not for templates that use a name
/// twice (a match has one value per name).
pub fn template(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (template, uri) = text.split_once('\n').unwrap_or((&text, ""));
    let Ok(parsed) = UriTemplate::parse(template) else { return };
    let names = parsed.variables();
    if let Some(found) = parsed.matches(uri) {
        assert!(found.keys().all(|k| names.contains(&k.as_str())), "a variable not in {template:?}");
    }
    // Literal text with `%` would be decoded in a value that swallows it.
    // A name used twice has one value in a match: its expansion need not come back.
    let repeated = names.iter().enumerate().any(|(i, n)| names[..i].contains(n));
    if template.contains('%') || repeated {
        return;
    }
    let mut pool = uri.bytes().filter(u8::is_ascii_alphanumeric).cycle();
    let values: Vec<(String, Option<String>)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let len = 1 + i % 3;
            let v: String = (0..len).map(|_| pool.next().map_or('x', char::from)).collect();
            ((*n).to_owned(), Some(v))
        })
        .collect();
    let Some(expanded) = expand(template, &values) else { return };
    let found =
        parsed.matches(&expanded).unwrap_or_else(|| panic!("{template:?} does not match its expansion {expanded:?}"));
    let again: Vec<(String, Option<String>)> =
        names.iter().map(|n| ((*n).to_owned(), found.get(*n).cloned())).collect();
    assert_eq!(expand(template, &again).as_deref(), Some(expanded.as_str()), "{template:?} matched as {found:?}");
}

/// Expands `template` with `values` (by name, the last one of a repeated name) as RFC 6570
/// does: levels 1 and 2 (`{#var}` is `#` then the value) plus `{/var}` and `{?a,b}`, no
/// percent-encoding (the values are letters and digits).
/// `None` when a query expression is not last (such a template matches only URIs without a
/// query).
fn expand(template: &str, values: &[(String, Option<String>)]) -> Option<String> {
    let defined = |name: &str| values.iter().rev().find(|(n, _)| n == name).and_then(|(_, v)| v.as_deref());
    let value = |name: &str| defined(name).unwrap_or_default();
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}')? + open;
        let expr = &rest[open + 1..close];
        rest = &rest[close + 1..];
        let names = |e: &str| e.split(',').map(|n| n.trim_end_matches('*').to_owned()).collect::<Vec<_>>();
        match expr.chars().next() {
            Some('?') => {
                if !rest.is_empty() {
                    return None;
                }
                // Undefined variables are left out, and the `?` with them when all are.
                let pairs: Vec<String> =
                    names(&expr[1..]).iter().filter_map(|n| Some(format!("{n}={}", defined(n)?))).collect();
                if !pairs.is_empty() {
                    out.push('?');
                    out.push_str(&pairs.join("&"));
                }
            }
            Some('/') => {
                out.push('/');
                out.push_str(value(&names(&expr[1..])[0]));
            }
            Some('#') => {
                out.push('#');
                out.push_str(value(&names(&expr[1..])[0]));
            }
            Some('+') => out.push_str(value(&names(&expr[1..])[0])),
            _ => out.push_str(value(&names(expr)[0])),
        }
    }
    out.push_str(rest);
    Some(out)
}
