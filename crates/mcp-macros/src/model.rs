//! The model: what a `#[tool]`, `#[prompt]` or `#[resource]` function is, read from its
//! signature, doc comment and attribute arguments. Building it strips the attributes the
//! compiler must not see (`#[serde(...)]` on parameters, `#[tool]` on methods).

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident};
use syn::{FnArg, Ident, LitStr, Pat, ReturnType, Signature, Type, Visibility};

use crate::attr::{self, Annotations, Args, Ctxt, DefaultValue, Docs, Icon, MetaEntry};

/// What the attribute makes of the function.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
}

impl Kind {
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }

    pub(crate) fn from_attribute(name: &str) -> Option<Kind> {
        match name {
            "tool" => Some(Kind::Tool),
            "prompt" => Some(Kind::Prompt),
            "resource" => Some(Kind::Resource),
            _ => None,
        }
    }
}

/// How the function receives the value it is a method of.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Receiver {
    /// A free function or an associated function without `self`.
    None,
    /// `&self`.
    Ref,
    /// `self: Arc<Self>`.
    Arc,
}

/// A function parameter.
pub(crate) struct Param {
    /// The binding in the generated handler.
    pub(crate) binding: Ident,
    /// The name in Rust.
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    /// The name on the wire: the Rust name, or `#[serde(rename = "...")]`.
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) default: Option<DefaultValue>,
    /// `#[serde(flatten)]` (tools only): the fields of its struct are the arguments.
    pub(crate) flatten: Option<Span>,
}

/// A function with one of the attributes.
pub(crate) struct Function {
    pub(crate) kind: Kind,
    pub(crate) ident: Ident,
    pub(crate) vis: Visibility,
    pub(crate) is_async: bool,
    pub(crate) receiver: Receiver,
    /// Whether the function sits in an `impl` block marked `#[handlers]`.
    pub(crate) in_impl: bool,
    pub(crate) params: Vec<Param>,
    /// The declared return type (`()` when there is none).
    pub(crate) output: Type,
    pub(crate) docs: Docs,
    pub(crate) common: Common,
    pub(crate) options: Options,
    /// The path of the `mcp-sdk` crate.
    pub(crate) krate: syn::Path,
}

/// The options all kinds share.
#[derive(Default)]
pub(crate) struct Common {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    /// The OAuth scopes a request needs (`scopes = ["a", "b"]`).
    pub(crate) scopes: Vec<LitStr>,
    /// `icon = "..."` and `icon(...)`, in order.
    pub(crate) icons: Vec<Icon>,
    /// `meta(key = value, ...)`.
    pub(crate) meta: Vec<MetaEntry>,
}

/// The attribute's options, by kind.
pub(crate) enum Options {
    Tool(ToolOptions),
    Prompt(PromptOptions),
    Resource(ResourceOptions),
}

#[derive(Default)]
pub(crate) struct ToolOptions {
    pub(crate) read_only: Option<bool>,
    pub(crate) destructive: Option<bool>,
    pub(crate) idempotent: Option<bool>,
    pub(crate) open_world: Option<bool>,
    pub(crate) output_schema: Option<bool>,
    /// `task = "optional"`: `TaskSupport::Optional` (or `required`, `forbidden`).
    pub(crate) task: Option<Ident>,
    /// `deferred_task`: `ToolDef::deferred_task()` (the key, for the check's span).
    pub(crate) deferred_task: Option<(syn::Path, bool)>,
    /// `elicits(A, B)`: `ToolDef::elicits::<A>()`, then `B`.
    pub(crate) elicits: Vec<Type>,
    /// `ui = "ui://..."`: `ToolDef::ui`, the MCP App view of the tool.
    pub(crate) ui: Option<LitStr>,
    /// `visibility = ["model", "app"]`: `ToolDef::ui_visibility` (the key, for the check's span).
    pub(crate) visibility: Option<(syn::Path, Vec<LitStr>)>,
}

pub(crate) struct PromptOptions {
    pub(crate) complete: Vec<(Ident, syn::Path)>,
}

pub(crate) struct ResourceOptions {
    pub(crate) uri: LitStr,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) annotations: Option<Annotations>,
    /// `size = 1024`, fixed resources only.
    pub(crate) size: Option<syn::LitInt>,
    pub(crate) complete: Vec<(Ident, syn::Path)>,
    /// The URI template's variables, filled in by the checks.
    pub(crate) variables: Vec<String>,
}

const TOOL_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "icon",
    "output_schema",
    "task",
    "deferred_task",
    "elicits",
    "ui",
    "visibility",
    "scopes",
    "meta",
    "crate",
];
const PROMPT_KEYS: &[&str] = &["name", "title", "description", "icon", "meta", "complete", "scopes", "crate"];
/// Keys of resources that prompts do not have, for a better message than "unknown".
const NOT_FOR_PROMPTS: &[&str] = &["annotations", "size", "mime_type"];
const RESOURCE_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "mime_type",
    "icon",
    "annotations",
    "size",
    "meta",
    "complete",
    "scopes",
    "crate",
];

/// The default path of the facade crate.
pub(crate) fn default_crate() -> syn::Path {
    syn::parse_quote!(::mcp_sdk)
}

impl Function {
    /// Reads a function. `krate` is the crate path given to an enclosing `#[handlers]`.
    pub(crate) fn read(
        cx: &mut Ctxt,
        kind: Kind,
        args: TokenStream,
        attrs: &[syn::Attribute],
        vis: &Visibility,
        sig: &Signature,
        krate: Option<&syn::Path>,
    ) -> Option<Function> {
        signature(cx, kind, sig);
        let in_impl = krate.is_some();
        let mut krate = krate.cloned().unwrap_or_else(default_crate);
        let args = match Args::parse_tokens(args) {
            Ok(args) => args,
            Err(e) => {
                cx.push(e);
                return None;
            }
        };
        let mut common = Common::default();
        let options = read_options(cx, kind, &args, sig.ident.span(), &mut common, &mut krate);
        let receiver = receiver(cx, kind, sig, in_impl);
        let params = params(cx, kind, sig);
        let output = match &sig.output {
            ReturnType::Default => syn::parse_quote!(()),
            ReturnType::Type(_, ty) => (**ty).clone(),
        };
        Some(Function {
            kind,
            ident: sig.ident.clone(),
            vis: vis.clone(),
            is_async: sig.asyncness.is_some(),
            receiver,
            in_impl,
            params,
            output,
            docs: attr::docs(attrs),
            common,
            options: options?,
            krate,
        })
    }

    /// The name as listed: the option `name`, else the function's name.
    pub(crate) fn name(&self) -> (String, Span) {
        match &self.common.name {
            Some(name) => (name.value(), name.span()),
            None => (unraw(&self.ident), self.ident.span()),
        }
    }

    /// The description: the option `description`, else the doc comment.
    pub(crate) fn description(&self) -> Option<String> {
        self.common.description.as_ref().map(LitStr::value).or_else(|| self.docs.description.clone())
    }
}

/// An identifier without its `r#`.
pub(crate) fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

fn read_options(
    cx: &mut Ctxt,
    kind: Kind,
    args: &Args,
    fn_span: Span,
    common: &mut Common,
    krate: &mut syn::Path,
) -> Option<Options> {
    let (expected, repeatable): (&[&str], &[&str]) = match kind {
        Kind::Tool => (TOOL_KEYS, &["icon"]),
        Kind::Prompt => (PROMPT_KEYS, &["icon"]),
        Kind::Resource => (RESOURCE_KEYS, &["icon"]),
    };
    let mut positional = args.positional.iter();
    let uri = positional.next().cloned();
    if kind != Kind::Resource {
        if let Some(s) = &uri {
            cx.error_at(s, format!("`#[{}]` takes no string here; expected `key = value`", kind.attribute()));
        }
    } else {
        for s in positional {
            cx.error_at(s, "expected one URI; the other arguments are `key = value`");
        }
    }
    let mut tool = ToolOptions::default();
    let (mut mime_type, mut complete, mut annotations, mut size) = (None, Vec::new(), None, None);
    let filtered;
    let args = if kind == Kind::Prompt {
        filtered = without_resource_keys(cx, args);
        &filtered
    } else {
        args
    };
    for (key, meta) in args.keyed(cx, expected, repeatable) {
        match key.as_str() {
            "crate" => {
                if let Some(p) = attr::path(cx, "crate", meta) {
                    *krate = p;
                }
            }
            "name" => common.name = attr::string(cx, &key, meta),
            "title" => common.title = attr::string(cx, &key, meta),
            "description" => common.description = attr::string(cx, &key, meta),
            "mime_type" => mime_type = attr::string(cx, &key, meta),
            "scopes" => common.scopes = attr::strings(cx, &key, meta, r#"scopes = ["files:read"]"#),
            "complete" => complete.extend(attr::completions(cx, meta)),
            "read_only" => tool.read_only = attr::flag(cx, &key, meta),
            "destructive" => tool.destructive = attr::flag(cx, &key, meta),
            "idempotent" => tool.idempotent = attr::flag(cx, &key, meta),
            "open_world" => tool.open_world = attr::flag(cx, &key, meta),
            "output_schema" => tool.output_schema = attr::flag(cx, &key, meta),
            "icon" => common.icons.extend(attr::icon(cx, meta)),
            "meta" => common.meta = attr::meta_entries(cx, meta),
            "annotations" => annotations = attr::annotations(cx, meta),
            "size" => size = attr::size(cx, meta),
            "task" => tool.task = task(cx, meta),
            "deferred_task" => tool.deferred_task = attr::flag(cx, &key, meta).map(|on| (meta.path().clone(), on)),
            "elicits" => tool.elicits = elicits(cx, meta),
            "ui" => tool.ui = attr::string(cx, &key, meta),
            "visibility" => {
                let values = attr::strings(cx, &key, meta, r#"visibility = ["app"]"#);
                tool.visibility = Some((meta.path().clone(), values));
            }
            _ => {}
        }
    }
    Some(match kind {
        Kind::Tool => Options::Tool(tool),
        Kind::Prompt => Options::Prompt(PromptOptions { complete }),
        Kind::Resource => {
            let Some(uri) = uri else {
                cx.error(
                    fn_span,
                    "`#[resource]` needs the resource's URI or URI template first, as in `#[resource(\"notes://{id}\")]`",
                );
                return None;
            };
            Options::Resource(ResourceOptions { uri, mime_type, annotations, size, complete, variables: Vec::new() })
        }
    })
}

/// `task = "optional"`: the `TaskSupport` variant.
fn task(cx: &mut Ctxt, meta: &syn::Meta) -> Option<Ident> {
    let value = attr::string(cx, "task", meta)?;
    let variant = match value.value().as_str() {
        "forbidden" => "Forbidden",
        "optional" => "Optional",
        "required" => "Required",
        _ => {
            cx.error_at(&value, r#"`task` is "optional", "required" or "forbidden""#);
            return None;
        }
    };
    Some(Ident::new(variant, value.span()))
}

/// `elicits(Form, Other)`: the types a tool elicits.
fn elicits(cx: &mut Ctxt, meta: &syn::Meta) -> Vec<Type> {
    let parsed = match meta {
        syn::Meta::List(list) => {
            list.parse_args_with(syn::punctuated::Punctuated::<Type, syn::Token![,]>::parse_terminated)
        }
        _ => Err(syn::Error::new_spanned(meta, "")),
    };
    match parsed {
        Ok(types) if !types.is_empty() => types.into_iter().collect(),
        _ => {
            cx.error_at(meta, "`elicits` expects the types the tool elicits, as in `elicits(Booking)`");
            Vec::new()
        }
    }
}

/// The arguments of a prompt without those only resources have, each reported.
fn without_resource_keys(cx: &mut Ctxt, args: &Args) -> Args {
    let (wrong, items): (Vec<_>, Vec<_>) =
        args.items.iter().cloned().partition(|m| NOT_FOR_PROMPTS.iter().any(|k| m.path().is_ident(k)));
    for m in wrong {
        let key = m.path().get_ident().map(ToString::to_string).unwrap_or_default();
        cx.error_at(m.path(), format!("prompts have no `{key}` in any MCP revision (resources do)"));
    }
    Args { positional: args.positional.clone(), items }
}

/// What the signature may not be.
fn signature(cx: &mut Ctxt, kind: Kind, sig: &Signature) {
    let attribute = kind.attribute();
    if !sig.generics.params.is_empty() {
        cx.error_at(&sig.generics, format!("a `#[{attribute}]` function cannot be generic"));
    }
    if let Some(unsafety) = &sig.unsafety {
        cx.error_at(unsafety, format!("a `#[{attribute}]` function cannot be `unsafe`"));
    }
    for input in &sig.inputs {
        if let syn::FnArg::Typed(arg) = input
            && mentions_impl(arg.ty.to_token_stream())
        {
            cx.error_at(&arg.ty, format!("a `#[{attribute}]` function cannot be generic; name the type"));
        }
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output
        && mentions_impl(ty.to_token_stream())
    {
        cx.error_at(
            ty,
            format!("the return type of a `#[{attribute}]` function cannot be `impl Trait`; name the type"),
        );
    }
}

fn mentions_impl(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "impl",
        TokenTree::Group(g) => mentions_impl(g.stream()),
        _ => false,
    })
}

fn receiver(cx: &mut Ctxt, kind: Kind, sig: &Signature, in_impl: bool) -> Receiver {
    let Some(FnArg::Receiver(r)) = sig.inputs.first() else {
        return Receiver::None;
    };
    if !in_impl {
        cx.error_at(r, format!("a `#[{}]` method needs `#[mcp_sdk::handlers]` on its `impl` block", kind.attribute()));
        return Receiver::None;
    }
    let is_arc = |ty: &Type| match ty {
        Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Arc"),
        _ => false,
    };
    if r.colon_token.is_none() && r.reference.is_some() && r.mutability.is_none() {
        Receiver::Ref
    } else if r.colon_token.is_some() && r.reference.is_none() && is_arc(&r.ty) {
        Receiver::Arc
    } else {
        cx.error_at(
            r,
            "handlers share their value: take `&self` or `self: Arc<Self>` (and use interior mutability for state)",
        );
        Receiver::None
    }
}

fn params(cx: &mut Ctxt, kind: Kind, sig: &Signature) -> Vec<Param> {
    let mut out = Vec::new();
    for (i, input) in sig.inputs.iter().enumerate() {
        let FnArg::Typed(arg) = input else {
            continue;
        };
        let attrs = attr::param_attrs(cx, &arg.attrs);
        let ident = match &*arg.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            other => {
                cx.error_at(other, "expected a parameter name; patterns cannot name an argument");
                continue;
            }
        };
        if kind != Kind::Tool
            && let Some(default) = &attrs.default
        {
            cx.error(default.span(), "`default` applies to tool parameters only; use `Option<String>`");
        }
        if let Some(span) = attrs.flatten {
            if kind != Kind::Tool {
                let what = match kind {
                    Kind::Prompt => "a prompt's struct parameter gives its fields as the arguments without it",
                    _ => "a resource's parameters are its URI's variables",
                };
                cx.error(span, format!("`flatten` applies to tool parameters only: {what}"));
            } else if let Some(rename) = &attrs.rename {
                cx.error_at(rename, "a `flatten` parameter has no name of its own: its fields are the arguments");
            } else if let Some(default) = &attrs.default {
                cx.error(default.span(), "a `flatten` parameter takes no `default`: give its fields defaults");
            }
        }
        let (name, name_span) = match &attrs.rename {
            Some(r) => (r.value(), r.span()),
            None => (unraw(&ident), ident.span()),
        };
        out.push(Param {
            binding: format_ident!("__mcp_p{}", i),
            ident,
            ty: (*arg.ty).clone(),
            name,
            name_span,
            default: attrs.default,
            flatten: attrs.flatten,
        });
    }
    out
}

/// An `impl` block marked `#[handlers]`.
pub(crate) struct Handlers {
    pub(crate) krate: syn::Path,
    pub(crate) functions: Vec<Function>,
}

/// Reads an `impl` block: takes the `#[tool]`, `#[prompt]` and `#[resource]` attributes off
/// its methods and reads those methods.
pub(crate) fn read_handlers(cx: &mut Ctxt, args: TokenStream, item: &mut syn::ItemImpl) -> Handlers {
    let mut krate = default_crate();
    match Args::parse_tokens(args) {
        Ok(args) => {
            for s in &args.positional {
                cx.error_at(s, "expected `crate = \"...\"`");
            }
            for (_, meta) in args.keyed(cx, &["crate"], &[]) {
                if let Some(p) = attr::path(cx, "crate", meta) {
                    krate = p;
                }
            }
        }
        Err(e) => cx.push(e),
    }
    if let Some((_, path, _)) = &item.trait_ {
        cx.error_at(path, "`#[handlers]` goes on an inherent `impl` block, not a trait implementation");
    }
    let mut functions = Vec::new();
    let mut marked = false;
    for impl_item in &mut item.items {
        let syn::ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let (marks, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut method.attrs).into_iter().partition(|a| {
            a.path().segments.last().is_some_and(|s| Kind::from_attribute(&s.ident.to_string()).is_some())
        });
        method.attrs = rest;
        marked |= !marks.is_empty();
        for mark in marks {
            let Some(kind) = mark.path().segments.last().and_then(|s| Kind::from_attribute(&s.ident.to_string()))
            else {
                continue;
            };
            let args = match &mark.meta {
                syn::Meta::Path(_) => TokenStream::new(),
                syn::Meta::List(list) => list.tokens.clone(),
                syn::Meta::NameValue(nv) => {
                    cx.error_at(nv, format!("expected `#[{0}]` or `#[{0}(...)]`", kind.attribute()));
                    continue;
                }
            };
            let f = Function::read(cx, kind, args, &method.attrs, &method.vis, &method.sig, Some(&krate));
            functions.extend(f);
        }
        strip_param_attrs(&mut method.sig);
    }
    if !marked && item.trait_.is_none() {
        cx.error_at(&item.self_ty, "`#[handlers]` found no `#[tool]`, `#[prompt]` or `#[resource]` method here");
    }
    Handlers { krate, functions }
}

/// Takes the `#[serde(...)]` attributes off the parameters, which the compiler would refuse.
pub(crate) fn strip_param_attrs(sig: &mut Signature) {
    for input in &mut sig.inputs {
        if let FnArg::Typed(arg) = input {
            arg.attrs.retain(|a| !a.path().is_ident("serde"));
        }
    }
}
