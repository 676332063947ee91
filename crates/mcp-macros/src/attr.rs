//! Parsing: the arguments of `#[tool(...)]`, `#[prompt(...)]`, `#[resource(...)]` and
//! `#[handlers(...)]`, the `#[serde(...)]` attributes of parameters, and doc comments.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, LitBool, LitStr, Meta, MetaNameValue, Token};

/// Errors collected along the way, reported together (serde's `Ctxt`).
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub(crate) fn error(&mut self, span: Span, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    pub(crate) fn error_at(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// All errors as one, if any.
    pub(crate) fn finish(self) -> syn::Result<()> {
        let mut errors = self.errors.into_iter();
        let Some(mut first) = errors.next() else {
            return Ok(());
        };
        for e in errors {
            first.combine(e);
        }
        Err(first)
    }
}

/// The arguments inside an attribute: string literals first (the URI of `#[resource]`), then
/// `key`, `key = value` and `key(...)` items.
pub(crate) struct Args {
    pub(crate) positional: Vec<LitStr>,
    pub(crate) items: Vec<Meta>,
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut args = Args { positional: Vec::new(), items: Vec::new() };
        while !input.is_empty() {
            if input.peek(LitStr) {
                args.positional.push(input.parse()?);
            } else {
                args.items.push(input.parse()?);
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(args)
    }
}

impl Args {
    pub(crate) fn parse_tokens(tokens: TokenStream) -> syn::Result<Args> {
        syn::parse2(tokens)
    }

    /// The items by key, reporting unknown and repeated keys (`repeatable` keys may repeat).
    pub(crate) fn keyed<'a>(
        &'a self,
        cx: &mut Ctxt,
        expected: &[&str],
        repeatable: &[&str],
    ) -> Vec<(String, &'a Meta)> {
        let mut seen: Vec<String> = Vec::new();
        let mut out = Vec::new();
        for item in &self.items {
            let key = item.path().get_ident().map(ToString::to_string).unwrap_or_else(|| path_text(item.path()));
            if !expected.contains(&key.as_str()) {
                let list = expected.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                cx.error_at(item.path(), format!("unknown argument `{key}`, expected one of: {list}"));
                continue;
            }
            if seen.contains(&key) && !repeatable.contains(&key.as_str()) {
                cx.error_at(item.path(), format!("duplicate argument `{key}`"));
                continue;
            }
            seen.push(key.clone());
            out.push((key, item));
        }
        out
    }
}

fn path_text(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

/// `key = "text"`.
pub(crate) fn string(cx: &mut Ctxt, key: &str, meta: &Meta) -> Option<LitStr> {
    match meta {
        Meta::NameValue(MetaNameValue { value: Expr::Lit(ExprLit { lit: Lit::Str(s), .. }), .. }) => Some(s.clone()),
        _ => {
            cx.error_at(meta, format!("`{key}` expects a string, as in `{key} = \"...\"`"));
            None
        }
    }
}

/// `key`, `key = true` or `key = false`.
pub(crate) fn flag(cx: &mut Ctxt, key: &str, meta: &Meta) -> Option<bool> {
    match meta {
        Meta::Path(_) => Some(true),
        Meta::NameValue(MetaNameValue {
            value: Expr::Lit(ExprLit { lit: Lit::Bool(LitBool { value, .. }), .. }),
            ..
        }) => Some(*value),
        _ => {
            cx.error_at(meta, format!("`{key}` expects `true`, `false` or no value"));
            None
        }
    }
}

/// `key = "some::path"`, as serde writes paths, or `key = some::path`.
pub(crate) fn path(cx: &mut Ctxt, key: &str, meta: &Meta) -> Option<syn::Path> {
    match meta {
        Meta::NameValue(MetaNameValue { value: Expr::Lit(ExprLit { lit: Lit::Str(s), .. }), .. }) => match s.parse() {
            Ok(p) => Some(p),
            Err(_) => {
                cx.error_at(s, format!("`{key}` expects a path, as in `{key} = \"path::to::item\"`"));
                None
            }
        },
        Meta::NameValue(MetaNameValue { value: Expr::Path(p), .. }) if p.qself.is_none() => Some(p.path.clone()),
        _ => {
            cx.error_at(meta, format!("`{key}` expects a path, as in `{key} = \"path::to::item\"`"));
            None
        }
    }
}

/// `complete(var = path::to::fn, other = f)`.
pub(crate) fn completions(cx: &mut Ctxt, meta: &Meta) -> Vec<(syn::Ident, syn::Path)> {
    let Meta::List(list) = meta else {
        cx.error_at(meta, "`complete` expects a list, as in `complete(name = path::to::function)`");
        return Vec::new();
    };
    let items = match list.parse_args_with(Punctuated::<MetaNameValue, Token![,]>::parse_terminated) {
        Ok(items) => items,
        Err(e) => {
            cx.push(syn::Error::new(e.span(), "`complete` expects `name = path::to::function` items"));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for item in items {
        let Some(name) = item.path.get_ident() else {
            cx.error_at(&item.path, "expected the name of an argument or variable");
            continue;
        };
        match item.value {
            Expr::Path(p) if p.qself.is_none() => out.push((name.clone(), p.path)),
            other => cx.error_at(other, "expected the path of a completion function"),
        }
    }
    out
}

/// An icon: `icon = "src"` or `icon(src = "...", mime_type = "...", sizes = ["48x48"], theme = "dark")`.
pub(crate) struct Icon {
    pub(crate) src: LitStr,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) sizes: Vec<LitStr>,
    pub(crate) theme: Option<LitStr>,
}

pub(crate) fn icon(cx: &mut Ctxt, meta: &Meta) -> Option<Icon> {
    let list = match meta {
        Meta::NameValue(_) => {
            return string(cx, "icon", meta).map(|src| Icon { src, mime_type: None, sizes: Vec::new(), theme: None });
        }
        Meta::List(list) => list,
        Meta::Path(_) => {
            cx.error_at(meta, "`icon` expects a source, as in `icon = \"https://...\"` or `icon(src = \"...\")`");
            return None;
        }
    };
    let args: Args = match list.parse_args() {
        Ok(args) => args,
        Err(e) => {
            cx.push(e);
            return None;
        }
    };
    let mut icon = Icon { src: LitStr::new("", list.span()), mime_type: None, sizes: Vec::new(), theme: None };
    let mut has_src = false;
    for (key, meta) in args.keyed(cx, &["src", "mime_type", "sizes", "theme"], &[]) {
        match key.as_str() {
            "src" => {
                if let Some(s) = string(cx, "src", meta) {
                    icon.src = s;
                    has_src = true;
                }
            }
            "mime_type" => icon.mime_type = string(cx, "mime_type", meta),
            "theme" => icon.theme = string(cx, "theme", meta),
            _ => icon.sizes = strings(cx, "sizes", meta, r#"sizes = ["48x48", "any"]"#),
        }
    }
    if !has_src {
        cx.error_at(meta, "`icon(...)` needs `src = \"...\"`");
        return None;
    }
    Some(icon)
}

/// `annotations(audience = ["user"], priority = 0.5, last_modified = "2025-01-12T15:00:58Z")`:
/// the annotations of a resource.
pub(crate) struct Annotations {
    /// `user` or `assistant`, checked.
    pub(crate) audience: Vec<LitStr>,
    /// Between 0 and 1, checked.
    pub(crate) priority: Option<f64>,
    /// An ISO 8601 date-time, roughly checked.
    pub(crate) last_modified: Option<LitStr>,
}

pub(crate) fn annotations(cx: &mut Ctxt, meta: &Meta) -> Option<Annotations> {
    const EXAMPLE: &str = r#"annotations(audience = ["user"], priority = 0.5, last_modified = "2025-01-12T15:00:58Z")"#;
    let Meta::List(list) = meta else {
        cx.error_at(meta, format!("`annotations` expects a list, as in `{EXAMPLE}`"));
        return None;
    };
    let args: Args = match list.parse_args() {
        Ok(args) => args,
        Err(e) => {
            cx.push(e);
            return None;
        }
    };
    for s in &args.positional {
        cx.error_at(s, format!("expected `key = value`, as in `{EXAMPLE}`"));
    }
    let mut out = Annotations { audience: Vec::new(), priority: None, last_modified: None };
    for (key, meta) in args.keyed(cx, &["audience", "priority", "last_modified"], &[]) {
        match key.as_str() {
            "audience" => {
                out.audience = strings(cx, "audience", meta, r#"audience = ["user", "assistant"]"#);
                for role in &out.audience {
                    if !matches!(role.value().as_str(), "user" | "assistant") {
                        cx.error_at(role, "an audience is \"user\" or \"assistant\"");
                    }
                }
            }
            "priority" => out.priority = priority(cx, meta),
            _ => {
                out.last_modified = string(cx, "last_modified", meta);
                if let Some(date) = &out.last_modified
                    && !is_date_time(&date.value())
                {
                    cx.error_at(date, "`last_modified` is an ISO 8601 date-time, as in \"2025-01-12T15:00:58Z\"");
                }
            }
        }
    }
    Some(out)
}

/// `priority = 0.5`: a number from 0 (least important) to 1 (most).
fn priority(cx: &mut Ctxt, meta: &Meta) -> Option<f64> {
    let value = match meta {
        Meta::NameValue(MetaNameValue { value: Expr::Lit(ExprLit { lit: Lit::Float(f), .. }), .. }) => {
            f.base10_parse::<f64>().ok()
        }
        Meta::NameValue(MetaNameValue { value: Expr::Lit(ExprLit { lit: Lit::Int(i), .. }), .. }) => {
            i.base10_parse::<u8>().ok().map(f64::from)
        }
        _ => None,
    };
    match value {
        Some(v) if (0.0..=1.0).contains(&v) => Some(v),
        _ => {
            cx.error_at(meta, "`priority` expects a number from 0 to 1, as in `priority = 0.5`");
            None
        }
    }
}

/// `2025-01-12`, `2025-01-12T15:00:58Z`, `2025-01-12T15:00:58.5+01:00`: an ISO 8601 date, or
/// date-time with seconds and a zone (RFC 3339).
fn is_date_time(s: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let date = |d: &str| {
        let parts: Vec<&str> = d.split('-').collect();
        parts.len() == 3
            && parts[0].len() == 4
            && parts[1].len() == 2
            && parts[2].len() == 2
            && parts.iter().all(|p| digits(p))
    };
    let Some((day, time)) = s.split_once(['T', 't']) else {
        return date(s);
    };
    let (clock, zone) = match time.strip_suffix(['Z', 'z']) {
        Some(clock) => (clock, "+00:00"),
        None => match time.rfind(['+', '-']) {
            Some(i) => (&time[..i], &time[i + 1..]),
            None => return false,
        },
    };
    let zone_ok = zone.trim_start_matches('+').split(':').all(|p| p.len() == 2 && digits(p));
    let (clock, fraction) = clock.split_once('.').unwrap_or((clock, "0"));
    let hms: Vec<&str> = clock.split(':').collect();
    date(day) && zone_ok && digits(fraction) && hms.len() == 3 && hms.iter().all(|p| p.len() == 2 && digits(p))
}

/// `size = 1024`: a resource's size in bytes.
pub(crate) fn size(cx: &mut Ctxt, meta: &Meta) -> Option<syn::LitInt> {
    if let Meta::NameValue(MetaNameValue { value: Expr::Lit(ExprLit { lit: Lit::Int(i), .. }), .. }) = meta
        && i.base10_parse::<u64>().is_ok()
        && i.suffix().is_empty()
    {
        return Some(i.clone());
    }
    cx.error_at(meta, "`size` expects the size in bytes, as in `size = 1024`");
    None
}

/// One `_meta` entry: its key, and the value's tokens (JSON as `serde_json::json!` reads it).
pub(crate) struct MetaEntry {
    pub(crate) key: LitStr,
    pub(crate) value: TokenStream,
}

/// `meta(key = value, "com.example/key" = value, ...)`: each value is what `serde_json::json!`
/// takes (a literal, `[...]`, `{...}`, or an expression); each key follows the `_meta` key rule.
pub(crate) fn meta_entries(cx: &mut Ctxt, meta: &Meta) -> Vec<MetaEntry> {
    const EXAMPLE: &str = r#"meta("com.example/owner" = "search", version = 2)"#;
    let Meta::List(list) = meta else {
        cx.error_at(meta, format!("`meta` expects a list, as in `{EXAMPLE}`"));
        return Vec::new();
    };
    let entries = match list.parse_args_with(parse_meta_entries) {
        Ok(entries) => entries,
        Err(e) => {
            cx.push(syn::Error::new(e.span(), format!("{e}; `meta` expects `key = value` items, as in `{EXAMPLE}`")));
            return Vec::new();
        }
    };
    let mut keys: Vec<String> = Vec::new();
    for entry in &entries {
        let key = entry.key.value();
        if let Err(reason) = meta_key(&key) {
            cx.error_at(&entry.key, format!("invalid `_meta` key `{key}`: {reason}"));
        }
        if keys.contains(&key) {
            cx.error_at(&entry.key, format!("duplicate `_meta` key `{key}`"));
        }
        keys.push(key);
    }
    entries
}

fn parse_meta_entries(input: ParseStream<'_>) -> syn::Result<Vec<MetaEntry>> {
    let mut entries = Vec::new();
    while !input.is_empty() {
        let key = if input.peek(LitStr) {
            input.parse::<LitStr>()?
        } else {
            let ident: syn::Ident = input.call(syn::ext::IdentExt::parse_any)?;
            let text = ident.to_string();
            LitStr::new(text.strip_prefix("r#").unwrap_or(&text), ident.span())
        };
        input.parse::<Token![=]>()?;
        let mut value = TokenStream::new();
        while !input.is_empty() && !input.peek(Token![,]) {
            value.extend([input.parse::<proc_macro2::TokenTree>()?]);
        }
        if value.is_empty() {
            return Err(input.error("expected a value"));
        }
        entries.push(MetaEntry { key, value });
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(entries)
}

/// The `_meta` key rule (2025-06-18 on, "General fields"): an optional prefix of dot-separated
/// labels and a `/`, then a name; prefixes whose second label is `modelcontextprotocol` or `mcp`
/// are reserved for MCP.
pub(crate) fn meta_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        let labels: Vec<&str> = prefix.split('.').collect();
        let label_ok = |l: &&str| {
            l.starts_with(|c: char| c.is_ascii_alphabetic())
                && l.ends_with(|c: char| c.is_ascii_alphanumeric())
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        };
        if !labels.iter().all(label_ok) {
            return Err(
                "a prefix is labels separated by `.` (letters, digits and `-`, starting with a letter), then `/`"
                    .into(),
            );
        }
        if labels.get(1).is_some_and(|l| matches!(*l, "modelcontextprotocol" | "mcp")) {
            return Err(format!("the prefix `{prefix}/` is reserved for MCP itself"));
        }
    }
    let ends_ok =
        name.starts_with(|c: char| c.is_ascii_alphanumeric()) && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    let inside_ok = name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    let name_ok = name.is_empty() || (ends_ok && inside_ok);
    if !name_ok {
        return Err(
            "a name begins and ends with a letter or digit, with only letters, digits, `-`, `_` and `.` between".into(),
        );
    }
    Ok(())
}

/// `key = ["a", "b"]`; `example` shows it in the error.
pub(crate) fn strings(cx: &mut Ctxt, key: &str, meta: &Meta, example: &str) -> Vec<LitStr> {
    if let Meta::NameValue(MetaNameValue { value: Expr::Array(array), .. }) = meta {
        let strings: Vec<LitStr> = array
            .elems
            .iter()
            .filter_map(|e| match e {
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.clone()),
                _ => None,
            })
            .collect();
        if strings.len() == array.elems.len() {
            return strings;
        }
    }
    cx.error_at(meta, format!("`{key}` expects a list of strings, as in `{example}`"));
    Vec::new()
}

/// What `#[serde(...)]` on a parameter says.
#[derive(Default)]
pub(crate) struct ParamAttrs {
    pub(crate) rename: Option<LitStr>,
    pub(crate) default: Option<DefaultValue>,
    /// `#[serde(flatten)]`: the struct's fields are the arguments.
    pub(crate) flatten: Option<Span>,
}

/// `#[serde(default)]` or `#[serde(default = "path")]`.
pub(crate) enum DefaultValue {
    Trait(Span),
    Path(syn::Path),
}

impl DefaultValue {
    pub(crate) fn span(&self) -> Span {
        match self {
            DefaultValue::Trait(span) => *span,
            DefaultValue::Path(path) => path.span(),
        }
    }
}

/// Reads the `#[serde(...)]` attributes of a parameter.
pub(crate) fn param_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> ParamAttrs {
    let mut out = ParamAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let args = match attr.parse_args::<Args>() {
            Ok(args) => args,
            Err(e) => {
                cx.push(e);
                continue;
            }
        };
        for s in &args.positional {
            cx.error_at(s, "expected `rename = \"...\"` or `default`");
        }
        for (key, meta) in args.keyed(cx, &["rename", "default", "flatten"], &[]) {
            if key == "rename" {
                out.rename = string(cx, "rename", meta);
            } else if key == "flatten" {
                match meta {
                    Meta::Path(p) => out.flatten = Some(p.span()),
                    _ => cx.error_at(meta, "`flatten` takes no value"),
                }
            } else if let Meta::Path(p) = meta {
                out.default = Some(DefaultValue::Trait(p.span()));
            } else {
                out.default = path(cx, "default", meta).map(DefaultValue::Path);
            }
        }
    }
    out
}

/// A doc comment split into the description and the `# Arguments` section.
#[derive(Default)]
pub(crate) struct Docs {
    pub(crate) description: Option<String>,
    pub(crate) arguments: Vec<ArgumentDoc>,
}

/// One `* `name` - text` line of an `# Arguments` section.
pub(crate) struct ArgumentDoc {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) span: Span,
}

impl Docs {
    pub(crate) fn argument(&self, name: &str) -> Option<&str> {
        self.arguments.iter().find(|a| a.name == name).map(|a| a.text.as_str())
    }
}

/// Reads the `#[doc = "..."]` attributes (`///` comments).
pub(crate) fn docs(attrs: &[Attribute]) -> Docs {
    let mut lines: Vec<(String, Span)> = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let Meta::NameValue(MetaNameValue { value: Expr::Lit(ExprLit { lit: Lit::Str(s), .. }), .. }) = &attr.meta {
            for line in s.value().lines() {
                lines.push((line.strip_prefix(' ').unwrap_or(line).to_owned(), s.span()));
            }
        }
    }
    split_docs(&lines)
}

fn split_docs(lines: &[(String, Span)]) -> Docs {
    let mut docs = Docs::default();
    let mut description: Vec<&str> = Vec::new();
    let mut in_arguments = false;
    let mut in_code = false;
    for (line, span) in lines {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_code = !in_code;
        }
        if !in_code && trimmed.starts_with('#') {
            let title = trimmed.trim_start_matches('#').trim();
            in_arguments = title.eq_ignore_ascii_case("arguments") || title.eq_ignore_ascii_case("parameters");
            if in_arguments {
                continue;
            }
        }
        if !in_arguments {
            description.push(line);
            continue;
        }
        if let Some(item) = trimmed.strip_prefix("* ").or_else(|| trimmed.strip_prefix("- ")) {
            if let Some((name, text)) = argument_item(item) {
                docs.arguments.push(ArgumentDoc { name, text, span: *span });
            }
        } else if !trimmed.is_empty()
            && let Some(last) = docs.arguments.last_mut()
        {
            last.text.push(' ');
            last.text.push_str(trimmed);
        }
    }
    let text = description.join("\n");
    let text = text.trim();
    docs.description = (!text.is_empty()).then(|| text.to_owned());
    docs
}

/// "`name` - text", "`name`: text" or "name - text".
fn argument_item(item: &str) -> Option<(String, String)> {
    let item = item.trim();
    let (name, rest) = match item.strip_prefix('`') {
        Some(rest) => {
            let end = rest.find('`')?;
            (&rest[..end], &rest[end + 1..])
        }
        None => {
            let end = item.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(item.len());
            (&item[..end], &item[end..])
        }
    };
    let name = name.trim().trim_start_matches("r#");
    if name.is_empty() {
        return None;
    }
    let text = rest.trim_start().trim_start_matches(['-', ':', '\u{2013}', '\u{2014}']).trim();
    Some((name.to_owned(), text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Docs {
        let lines: Vec<(String, Span)> = text.lines().map(|l| (l.to_owned(), Span::call_site())).collect();
        split_docs(&lines)
    }

    #[test]
    fn the_arguments_section_leaves_the_description() {
        let docs = split(
            "Adds two numbers.\n\n# Arguments\n\n* `a` - the first\n* `b`: the second,\n  continued\n- c – third\n\n# Errors\nNever.",
        );
        assert_eq!(docs.description.as_deref(), Some("Adds two numbers.\n\n# Errors\nNever."));
        let args: Vec<(&str, &str)> = docs.arguments.iter().map(|a| (a.name.as_str(), a.text.as_str())).collect();
        assert_eq!(args, [("a", "the first"), ("b", "the second, continued"), ("c", "third")]);
    }

    #[test]
    fn meta_keys_and_dates_follow_the_rules() {
        for good in ["owner", "com.example/owner", "a-b/x_y.z", "com.example.mcp/x", "x/"] {
            assert!(meta_key(good).is_ok(), "{good}");
        }
        for bad in ["io.modelcontextprotocol/x", "dev.mcp/x", "-a", "a-", "1abc/x", "a..b/x", "com.example/x y"] {
            assert!(meta_key(bad).is_err(), "{bad}");
        }
        for good in ["2025-01-12", "2025-01-12T15:00:58Z", "2025-01-12T15:00:58.123+01:00"] {
            assert!(is_date_time(good), "{good}");
        }
        for bad in ["yesterday", "2025-1-12", "2025-01-12T15:00Z", "2025-01-12T15:00:58"] {
            assert!(!is_date_time(bad), "{bad}");
        }
    }

    #[test]
    fn code_blocks_are_not_headings() {
        let docs = split("Text.\n```\n# let x = 1;\n```");
        assert_eq!(docs.description.as_deref(), Some("Text.\n```\n# let x = 1;\n```"));
        assert!(docs.arguments.is_empty());
        assert!(split("").description.is_none());
    }
}
