//! Checks on the model: what the compiler would not catch, or would report far from the
//! offending token (tool names, URI templates, completion targets, documented arguments that
//! do not exist). Signatures the model cannot represent (generic, `unsafe`, `impl Trait`) are
//! refused while it is read, in `model`.

use crate::attr::Ctxt;
use crate::model::{Function, Options};

/// Checks a function and completes its model (the variables of a resource's URI template).
pub(crate) fn function(cx: &mut Ctxt, f: &mut Function) {
    let mut names: Vec<&str> = Vec::new();
    for p in &f.params {
        if names.contains(&p.name.as_str()) {
            cx.error(p.name_span, format!("two parameters are named `{}`", p.name));
        }
        names.push(&p.name);
    }
    // The flattened parameter takes every argument the others left: there is one.
    for p in f.params.iter().filter_map(|p| p.flatten).skip(1) {
        cx.error(p, "only one parameter can be `flatten`: it takes the arguments the others leave");
    }
    for doc in &f.docs.arguments {
        if !f.params.iter().any(|p| p.ident == doc.name || p.name == doc.name) {
            cx.error(doc.span, format!("`# Arguments` documents `{}`, which is not a parameter", doc.name));
        }
    }
    let (name, span) = f.name();
    match &mut f.options {
        Options::Tool(o) => {
            if let Err(reason) = tool_name(&name) {
                cx.error(span, format!("invalid tool name `{name}`: {reason}; set `name = \"...\"`"));
            }
            // A deferred task needs a tool that may run as one (`ToolDef::deferred_task`).
            let runs_as_task = o.task.as_ref().is_some_and(|v| v != "Forbidden");
            if let Some((key, true)) = &o.deferred_task
                && !runs_as_task
            {
                cx.error_at(key, "`deferred_task` needs a tool that runs as a task: add `task = \"optional\"` or `task = \"required\"`");
            }
            // MCP Apps: a view is a `ui://` resource; visibility is `model`, `app` or both.
            if let Some(uri) = &o.ui
                && uri.value().strip_prefix("ui://").is_none_or(|rest| rest.is_empty())
            {
                cx.error_at(uri, "`ui` names an MCP App view: a `ui://` URI, as in `ui = \"ui://weather/view\"`");
            }
            if let Some((key, values)) = &o.visibility {
                for v in values.iter().filter(|v| !matches!(v.value().as_str(), "model" | "app")) {
                    cx.error_at(v, format!("unknown visibility `{}`: `model` or `app`", v.value()));
                }
                if values.is_empty() {
                    cx.error_at(key, "`visibility` needs `\"model\"`, `\"app\"` or both");
                }
            }
        }
        // A prompt's `complete` targets may be fields of an argument struct, which the macro
        // cannot see: `ServerBuilder::build` refuses a completer of no argument.
        Options::Prompt(_) => {}
        Options::Resource(o) => {
            match uri_variables(&o.uri.value()) {
                Ok(variables) => o.variables = variables,
                Err(reason) => {
                    cx.error_at(&o.uri, format!("invalid URI template: {reason}"));
                    return;
                }
            }
            if let Some(size) = o.size.as_ref().filter(|_| !o.variables.is_empty()) {
                cx.error_at(size, "`size` belongs to a fixed resource; a template's resources differ in size");
            }
            for v in &o.variables {
                if !f.params.iter().any(|p| &p.name == v) {
                    cx.error_at(
                        &o.uri,
                        format!("the URI template's variable `{v}` has no parameter; add `{v}: String`"),
                    );
                }
            }
            for (target, _) in &o.complete {
                if !o.variables.iter().any(|v| target == v) {
                    cx.error_at(
                        target,
                        format!("`complete` names `{target}`, which is not a variable of the URI template"),
                    );
                }
            }
        }
    }
}

/// The 2025-11-25 naming rule: 1 to 128 characters, ASCII letters, digits, `_`, `-` and `.`.
fn tool_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        Err("it is empty")
    } else if name.len() > 128 {
        Err("it is longer than 128 characters")
    } else if !name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) {
        Err("only ASCII letters, digits, `_`, `-` and `.` are allowed")
    } else {
        Ok(())
    }
}

/// The variables of an RFC 6570 URI template, with the rules of `mcp_server::UriTemplate`.
pub(crate) fn uri_variables(template: &str) -> Result<Vec<String>, &'static str> {
    #[derive(PartialEq)]
    enum Part {
        Literal,
        Single,
        Path,
        Query,
    }
    if !template.starts_with('{') && !starts_with_scheme(template) {
        return Err("it starts with no scheme such as `file:`");
    }
    let mut variables = Vec::new();
    let mut last = Part::Literal;
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            last = Part::Literal;
        }
        let close = rest[open..].find('}').ok_or("an expression is not closed")? + open;
        let expr = &rest[open + 1..close];
        let (op, names) = match expr.chars().next() {
            Some(c @ ('+' | '#' | '/' | '?')) => (Some(c), &expr[1..]),
            _ => (None, expr),
        };
        let names: Vec<&str> = names.split(',').map(|n| n.trim_end_matches('*')).collect();
        if names.iter().any(|n| n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')) {
            return Err("a variable name is empty or has characters other than letters, digits, `_` and `.`");
        }
        let part = match op {
            Some('?') => Part::Query,
            _ if names.len() != 1 => return Err("only `{?a,b}` expressions may list several variables"),
            Some('/') => Part::Path,
            _ => Part::Single,
        };
        if matches!(last, Part::Single | Part::Path) && part == Part::Single {
            return Err("two variables side by side cannot be told apart");
        }
        for n in names {
            if variables.iter().any(|v| v == n) {
                return Err("a variable appears twice");
            }
            variables.push(n.to_owned());
        }
        last = part;
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return Err("a `}` has no `{`");
    }
    Ok(variables)
}

/// Whether `uri` starts with a scheme and `:` (RFC 3986, section 3.1), as
/// `mcp_server::ResourceDef` and `TemplateDef` require.
fn starts_with_scheme(uri: &str) -> bool {
    let scheme = uri.find(':').map_or(&b""[..], |colon| &uri.as_bytes()[..colon]);
    scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_templates_follow_the_runtime_rules() {
        assert_eq!(uri_variables("notes://all").unwrap(), Vec::<String>::new());
        assert_eq!(uri_variables("users://{user}/posts/{post}").unwrap(), ["user", "post"]);
        assert_eq!(uri_variables("file:///{+path}").unwrap(), ["path"]);
        assert_eq!(uri_variables("repo://x{/branch}{?a,b}").unwrap(), ["branch", "a", "b"]);
        assert_eq!(uri_variables("{+uri}").unwrap(), ["uri"]);
        for bad in ["readme", "notes/{id}", "x://{a", "x://{}", "x://{a}{b}", "x://{a,b}", "x://a}", "x://{a}/{a}"] {
            assert!(uri_variables(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tool_names_follow_the_rule() {
        assert!(tool_name("get_weather.v2-beta").is_ok());
        assert!(tool_name("").is_err());
        assert!(tool_name("résumé").is_err());
        assert!(tool_name(&"x".repeat(129)).is_err());
    }
}
