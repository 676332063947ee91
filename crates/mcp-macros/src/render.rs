//! Rendering: the definitions (`ToolDef`, `PromptDef`, `ResourceDef`, `TemplateDef`) as
//! expressions, and the items that hand them out. `quote!` only; every runtime path goes
//! through `mcp_sdk::__private`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::attr::{Annotations, DefaultValue, Icon, MetaEntry};
use crate::model::{Function, Handlers, Kind, Options, PromptOptions, Receiver, ResourceOptions, ToolOptions, unraw};

/// Next to a free function: a braced unit struct of the same name (types and functions live in
/// different namespaces) whose associated function returns the definition.
pub(crate) fn free_function(f: &Function) -> TokenStream {
    let p = private(f);
    let ident = &f.ident;
    let vis = &f.vis;
    let (ctor, def_type) = constructor(f);
    let definition = definition(f);
    let (name, _) = f.name();
    let what = what(f);
    let struct_doc = format!("The MCP {what} `{name}`: `{}::{ctor}()` gives its definition.", unraw(ident));
    let fn_doc = format!("The definition of the MCP {what} `{name}`, to register with the server builder.");
    quote! {
        #[allow(non_camel_case_types)]
        #[doc = #struct_doc]
        #vis struct #ident {}

        const _: () = {
            impl #ident {
                #[doc = #fn_doc]
                #[allow(clippy::all, clippy::pedantic, clippy::nursery)]
                #vis fn #ctor() -> #p::#def_type {
                    #definition
                }
            }
        };
    }
}

/// After an `impl` block marked `#[handlers]`: methods returning the definitions of its
/// marked methods, and the `Handlers` trait.
pub(crate) fn handlers(h: &Handlers, item: &syn::ItemImpl) -> TokenStream {
    let p = &h.krate;
    let p = quote!(#p::__private);
    let (impl_generics, _, where_clause) = item.generics.split_for_impl();
    let self_ty = &item.self_ty;
    // (method, definition type, what it returns), indexed by `group`.
    let groups = [
        ("tools", "ToolDef", "tools of the `#[tool]` methods"),
        ("prompts", "PromptDef", "prompts of the `#[prompt]` methods"),
        ("resources", "ResourceDef", "fixed resources of the `#[resource]` methods"),
        ("resource_templates", "TemplateDef", "resource templates of the `#[resource]` methods"),
    ];
    let mut methods = Vec::new();
    let mut trait_methods = Vec::new();
    for (i, (method, def_type, what)) in groups.into_iter().enumerate() {
        let definitions: Vec<TokenStream> = h.functions.iter().filter(|f| group(f) == i).map(definition).collect();
        if definitions.is_empty() {
            continue;
        }
        let method = format_ident!("{}", method);
        let def_type = format_ident!("{}", def_type);
        let doc = format!("The {what} of this type, sharing `self`.");
        methods.push(quote! {
            #[doc = #doc]
            #[allow(clippy::all, clippy::pedantic, clippy::nursery)]
            pub fn #method(self: &#p::Arc<Self>) -> #p::Vec<#p::#def_type> {
                #p::vec![#(#definitions),*]
            }
        });
        trait_methods.push(quote! {
            fn #method(self: &#p::Arc<Self>) -> #p::Vec<#p::#def_type> {
                <#self_ty>::#method(self)
            }
        });
    }
    quote! {
        #item

        const _: () = {
            impl #impl_generics #self_ty #where_clause {
                #(#methods)*
            }

            impl #impl_generics #p::Handlers for #self_ty #where_clause {
                #(#trait_methods)*
            }
        };
    }
}

/// Which `Handlers` method hands out the definition.
fn group(f: &Function) -> usize {
    match f.kind {
        Kind::Tool => 0,
        Kind::Prompt => 1,
        Kind::Resource if is_fixed_resource(f) => 2,
        Kind::Resource => 3,
    }
}

fn private(f: &Function) -> TokenStream {
    let krate = &f.krate;
    quote!(#krate::__private)
}

fn what(f: &Function) -> &'static str {
    match f.kind {
        Kind::Tool => "tool",
        Kind::Prompt => "prompt",
        Kind::Resource if is_fixed_resource(f) => "resource",
        Kind::Resource => "resource template",
    }
}

fn is_fixed_resource(f: &Function) -> bool {
    matches!(&f.options, Options::Resource(o) if o.variables.is_empty())
}

fn constructor(f: &Function) -> (syn::Ident, syn::Ident) {
    let (ctor, def_type) = match f.kind {
        Kind::Tool => ("tool", "ToolDef"),
        Kind::Prompt => ("prompt", "PromptDef"),
        Kind::Resource if is_fixed_resource(f) => ("resource", "ResourceDef"),
        Kind::Resource => ("template", "TemplateDef"),
    };
    (format_ident!("{}", ctor), format_ident!("{}", def_type))
}

/// An expression that evaluates to the definition.
fn definition(f: &Function) -> TokenStream {
    match &f.options {
        Options::Tool(o) => tool(f, o),
        Options::Prompt(o) => prompt(f, o),
        Options::Resource(o) => resource(f, o),
    }
}

/// `__mcp_this`, the shared value, taken once for the definition and once per call.
fn this(f: &Function) -> (TokenStream, TokenStream) {
    let p = private(f);
    if f.receiver == Receiver::None {
        return (TokenStream::new(), TokenStream::new());
    }
    (quote!(let __mcp_this = #p::Arc::clone(self);), quote!(let __mcp_this = #p::Arc::clone(&__mcp_this);))
}

/// The call of the user's function with the bindings of its parameters.
fn call(f: &Function) -> TokenStream {
    let p = private(f);
    let ident = &f.ident;
    let args = f.params.iter().map(|p| &p.binding);
    let call = match (f.in_impl, f.receiver) {
        (false, _) => quote!(#ident(#(#args),*)),
        (true, Receiver::None) => quote!(Self::#ident(#(#args),*)),
        (true, Receiver::Ref) => quote!(Self::#ident(&*__mcp_this, #(#args),*)),
        (true, Receiver::Arc) => quote!(Self::#ident(#p::Arc::clone(&__mcp_this), #(#args),*)),
    };
    if f.is_async { quote!(#call.await) } else { call }
}

/// `let __mcp_handler = move |#params| ...;`: the closure a definition is built from, which
/// takes the parameters out (`extractions`), calls the user's function and converts what it
/// returns (`convert`), inside `#p::#future(async move { .. })`; for a method, preceded by the
/// handlers' `Arc` it clones. The probe traits (`autoref`) must be in scope.
fn handler(
    f: &Function,
    params: TokenStream,
    future: &str,
    extractions: impl Iterator<Item = TokenStream>,
    convert: TokenStream,
) -> TokenStream {
    let p = private(f);
    let (this_def, this_clone) = this(f);
    let future = format_ident!("{future}");
    let call = call(f);
    quote! {
        #this_def
        #[allow(unused_mut, unused_variables)]
        let __mcp_handler = move |#params| {
            #this_clone
            #p::#future(async move {
                #(#extractions)*
                let __mcp_ret = #call;
                #convert
            })
        };
    }
}

fn option_str(p: &TokenStream, value: Option<&str>) -> TokenStream {
    match value {
        Some(v) => quote!(#p::Some(#v)),
        None => quote!(#p::None),
    }
}

/// The setters of what all kinds share: description, title, scopes, icons, `_meta`.
fn common_setters(f: &Function) -> TokenStream {
    let p = private(f);
    let description = f.description().map(|d| quote!(__mcp_def = __mcp_def.description(#d);));
    let title = f.common.title.as_ref().map(|t| quote!(__mcp_def = __mcp_def.title(#t);));
    let scopes = &f.common.scopes;
    let scopes = (!scopes.is_empty()).then(|| quote!(__mcp_def = __mcp_def.scopes([#(#scopes),*]);));
    let icons = icons(&p, &f.common.icons);
    let meta = meta(&p, &f.common.meta);
    quote!(#description #title #scopes #icons #meta)
}

/// Sets `_meta`, if the attribute gave entries: each value through `serde_json::json!`.
fn meta(p: &TokenStream, entries: &[MetaEntry]) -> Option<TokenStream> {
    (!entries.is_empty()).then(|| {
        let entries = entries.iter().map(|e| {
            let (key, value) = (&e.key, &e.value);
            quote_spanned!(value.span()=> (#key, #p::serde_json::json!(#value)))
        });
        quote!(__mcp_def = __mcp_def.meta(#p::meta([#(#entries),*]));)
    })
}

/// Sets a resource's annotations, if given.
fn resource_annotations(p: &TokenStream, annotations: Option<&Annotations>) -> Option<TokenStream> {
    annotations.map(|a| {
        let audience = &a.audience;
        let priority = match a.priority {
            Some(v) => quote!(#p::Some(#v)),
            None => quote!(#p::None),
        };
        let last_modified = option_str(p, a.last_modified.as_ref().map(|m| m.value()).as_deref());
        quote! {
            __mcp_def = __mcp_def.annotations(#p::resource_annotations(&[#(#audience),*], #priority, #last_modified));
        }
    })
}

/// Splits the return value into `Ok` and `Err` whether or not it is a `Result`, then turns the
/// error into what `error_method` gives.
fn split_result(
    f: &Function,
    span: Span,
    value: TokenStream,
    ok: TokenStream,
    error_method: TokenStream,
) -> TokenStream {
    let p = private(f);
    quote_spanned! {span=>
        match (&&#p::probe(&#value)).__mcp_outcome().split(#value) {
            #p::Ok(__mcp_v) => #ok,
            #p::Err(__mcp_e) => #p::Err((&&&#p::probe(&__mcp_e)).#error_method().convert(__mcp_e)),
        }
    }
}

fn tool(f: &Function, o: &ToolOptions) -> TokenStream {
    let p = private(f);
    let (name, _) = f.name();
    let schema_steps = tool_schema_steps(f, &p);
    let output = &f.output;
    let spec = quote_spanned! {output.span()=>
        (&&&&(&&#p::Probe::<#output>::new()).__mcp_outcome().ok()).__mcp_tool_output().spec()
    };
    let convert = split_result(
        f,
        output.span(),
        quote!(__mcp_ret),
        quote!((&&&&#p::probe(&__mcp_v)).__mcp_tool_output().convert(__mcp_v, __mcp_wrap)),
        quote!(__mcp_tool_error),
    );
    let output_schema = match o.output_schema {
        Some(false) => quote!(#p::None),
        _ => quote!(__mcp_out.schema),
    };
    let annotations = tool_annotations(&p, o);
    let task = o.task.as_ref().map(|v| quote!(__mcp_def = __mcp_def.task_support(#p::TaskSupport::#v);));
    let deferred = matches!(o.deferred_task, Some((_, true))).then(|| quote!(__mcp_def = __mcp_def.deferred_task();));
    let elicits = o.elicits.iter().map(|ty| quote_spanned!(ty.span()=> __mcp_def = #p::elicits::<#ty>(__mcp_def);));
    let ui = o.ui.as_ref().map(|uri| quote!(__mcp_def = __mcp_def.ui(#uri);));
    let visibility = o.visibility.as_ref().map(|(_, values)| {
        let values = values.iter().map(|v| match v.value().as_str() {
            "model" => quote!(#p::Visibility::Model),
            _ => quote!(#p::Visibility::App),
        });
        quote!(__mcp_def = __mcp_def.ui_visibility([#(#values),*]);)
    });
    let setters = common_setters(f);
    let params = quote!(mut __mcp_args: #p::JsonObject, __mcp_ctx: #p::Context);
    let handler = handler(f, params, "tool_future", tool_extractions(f, &p), convert);
    quote! {{
        use #p::autoref::*;
        let mut __mcp_schema = #p::InputSchema::new();
        #(#schema_steps)*
        let __mcp_out = #spec;
        let __mcp_wrap = __mcp_out.wrap;
        #handler
        #[allow(unused_mut)]
        let mut __mcp_def = #p::tool(#name, __mcp_schema.finish(), #output_schema, __mcp_handler);
        #setters
        #annotations
        #task
        #deferred
        #(#elicits)*
        #ui
        #visibility
        __mcp_def
    }}
}

/// For each parameter of a tool, the statements that add it to the input schema (nothing for a
/// context parameter).
fn tool_schema_steps<'a>(f: &'a Function, p: &'a TokenStream) -> impl Iterator<Item = TokenStream> + 'a {
    f.params.iter().map(move |param| {
        let ty = &param.ty;
        let wire = &param.name;
        if param.flatten.is_some() {
            return quote_spanned! {ty.span()=> __mcp_schema.flatten::<#ty>(#wire); };
        }
        let description = f.docs.argument(&unraw(&param.ident)).or_else(|| f.docs.argument(&param.name));
        let description = option_str(p, description);
        let optional = match &param.default {
            Some(_) => quote!(true),
            None => quote_spanned!(ty.span()=> (&&&#p::Probe::<#ty>::new()).__mcp_tool_param().optional()),
        };
        quote_spanned! {ty.span()=>
            let __mcp_s = (&&&#p::Probe::<#ty>::new()).__mcp_tool_param().schema(&mut __mcp_schema);
            __mcp_schema.add(#wire, #description, __mcp_s, #optional);
        }
    })
}

/// For each parameter of a tool, the statement that binds it: taken from the arguments (or its
/// default) or from the context. A `flatten` parameter comes last: it takes the arguments the
/// others left.
fn tool_extractions<'a>(f: &'a Function, p: &'a TokenStream) -> impl Iterator<Item = TokenStream> + 'a {
    let (flat, others): (Vec<_>, Vec<_>) = f.params.iter().partition(|param| param.flatten.is_some());
    others.into_iter().chain(flat).map(move |param| {
        let (ty, wire, binding) = (&param.ty, &param.name, &param.binding);
        if param.flatten.is_some() {
            return quote_spanned! {ty.span()=> let #binding = #p::flat_argument::<#ty>(&mut __mcp_args)?; };
        }
        let default = match &param.default {
            None => quote!(#p::None),
            Some(DefaultValue::Trait(_)) => quote!(#p::Some(<#ty as #p::Default>::default)),
            Some(DefaultValue::Path(path)) => quote!(#p::Some(#path)),
        };
        quote_spanned! {ty.span()=>
            let #binding = (&&&#p::Probe::<#ty>::new())
                .__mcp_tool_param()
                .take(&mut __mcp_args, #wire, &__mcp_ctx, #default)?;
        }
    })
}

/// Sets the tool's annotations, if any hint was given.
fn tool_annotations(p: &TokenStream, o: &ToolOptions) -> TokenStream {
    let flag = |v: Option<bool>| match v {
        Some(b) => quote!(#p::Some(#b)),
        None => quote!(#p::None),
    };
    let (read_only, destructive, idempotent, open_world) =
        (flag(o.read_only), flag(o.destructive), flag(o.idempotent), flag(o.open_world));
    quote! {
        if let #p::Some(__mcp_a) = #p::annotations(#read_only, #destructive, #idempotent, #open_world) {
            __mcp_def = __mcp_def.annotations(__mcp_a);
        }
    }
}

/// Sets the icons, if there are any.
fn icons(p: &TokenStream, icons: &[Icon]) -> Option<TokenStream> {
    (!icons.is_empty()).then(|| {
        let icons = icons.iter().map(|i| {
            let src = &i.src;
            let mime_type = option_str(p, i.mime_type.as_ref().map(|m| m.value()).as_deref());
            let theme = option_str(p, i.theme.as_ref().map(|t| t.value()).as_deref());
            let sizes = &i.sizes;
            quote!(#p::icon(#src, #mime_type, &[#(#sizes),*], #theme))
        });
        quote!(__mcp_def = __mcp_def.icons(#p::vec![#(#icons),*]);)
    })
}

fn prompt(f: &Function, o: &PromptOptions) -> TokenStream {
    let p = private(f);
    let (name, _) = f.name();
    // Five rungs: context parameter, string, scalar (refused), struct of arguments, neither.
    let extractions = f.params.iter().map(|param| {
        let (ty, wire, binding) = (&param.ty, &param.name, &param.binding);
        quote_spanned! {ty.span()=>
            let #binding = (&&&&&#p::Probe::<#ty>::new())
                .__mcp_prompt_param()
                .take(&mut __mcp_args, #wire, &__mcp_ctx)?;
        }
    });
    let arguments = f.params.iter().map(|param| {
        let (ty, wire) = (&param.ty, &param.name);
        let description = f.docs.argument(&unraw(&param.ident)).or_else(|| f.docs.argument(&param.name));
        let description = option_str(&p, description);
        quote_spanned! {ty.span()=>
            __mcp_def = (&&&&&#p::Probe::<#ty>::new()).__mcp_prompt_param().add_to(__mcp_def, #wire, #description);
        }
    });
    let output_span = f.output.span();
    let convert = split_result(
        f,
        output_span,
        quote!(__mcp_ret),
        quote_spanned!(output_span=> #p::IntoPromptResult::into_prompt_result(__mcp_v)),
        quote!(__mcp_rpc_error),
    );
    let completions = completions(f, &o.complete);
    let setters = common_setters(f);
    let handler = handler(
        f,
        quote!(mut __mcp_args: #p::PromptArguments, __mcp_ctx: #p::Context),
        "prompt_future",
        extractions,
        convert,
    );
    quote! {{
        use #p::autoref::*;
        #handler
        #[allow(unused_mut)]
        let mut __mcp_def = #p::PromptDef::new(#name, __mcp_handler);
        #(#arguments)*
        #setters
        #(#completions)*
        __mcp_def
    }}
}

fn resource(f: &Function, o: &ResourceOptions) -> TokenStream {
    let p = private(f);
    let (name, _) = f.name();
    let extractions = f.params.iter().map(|param| {
        let (ty, wire, binding) = (&param.ty, &param.name, &param.binding);
        if o.variables.contains(&param.name) {
            quote_spanned!(ty.span()=> let #binding = #p::uri_variable::<#ty>(&mut __mcp_vars, #wire)?;)
        } else {
            quote_spanned!(ty.span()=> let #binding = #p::context_param::<#ty>(&__mcp_ctx)?;)
        }
    });
    let output_span = f.output.span();
    let mime_type = option_str(&p, o.mime_type.as_ref().map(|m| m.value()).as_deref());
    let convert = split_result(
        f,
        output_span,
        quote!(__mcp_ret),
        quote_spanned!(output_span=> #p::IntoResourceContents::into_contents(__mcp_v, &__mcp_uri, #mime_type)),
        quote!(__mcp_rpc_error),
    );
    let uri = &o.uri;
    let new = if o.variables.is_empty() {
        quote!(#p::ResourceDef::new(#name, #uri, __mcp_handler))
    } else {
        quote!(#p::template(#name, #uri, __mcp_handler))
    };
    let mime_setter = o.mime_type.as_ref().map(|m| quote!(__mcp_def = __mcp_def.mime_type(#m);));
    let annotations = resource_annotations(&p, o.annotations.as_ref());
    let size = o.size.as_ref().map(|size| quote!(__mcp_def = __mcp_def.size(#size);));
    let completions = completions(f, &o.complete);
    let setters = common_setters(f);
    let handler = handler(
        f,
        quote!(__mcp_uri: #p::String, mut __mcp_vars: #p::UriVariables, __mcp_ctx: #p::Context),
        "resource_future",
        extractions,
        convert,
    );
    quote! {{
        use #p::autoref::*;
        #handler
        #[allow(unused_mut)]
        let mut __mcp_def = #new;
        #setters
        #mime_setter
        #annotations
        #size
        #(#completions)*
        __mcp_def
    }}
}

/// `__mcp_def = __mcp_def.complete("name", completer);` for each `complete(name = path)`.
fn completions(f: &Function, complete: &[(syn::Ident, syn::Path)]) -> Vec<TokenStream> {
    let p = private(f);
    complete
        .iter()
        .map(|(target, path)| {
            let target = target.to_string();
            let convert = split_result(
                f,
                path.span(),
                quote!(__mcp_v),
                quote_spanned!(path.span()=> #p::IntoCompletion::into_completion(__mcp_v)),
                quote!(__mcp_rpc_error),
            );
            quote! {
                __mcp_def = __mcp_def.complete(#target, |__mcp_req: #p::CompletionRequest, _: #p::Context| {
                    #p::completion_future(async move {
                        let __mcp_v = #path(__mcp_req);
                        let __mcp_v = (&&#p::probe(&__mcp_v)).__mcp_maybe_async().resolve(__mcp_v).await;
                        #convert
                    })
                });
            }
        })
        .collect()
}
