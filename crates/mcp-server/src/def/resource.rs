//! Resources: fixed ones (listed by `resources/list`) and templates (RFC 6570 URI templates,
//! listed by `resources/templates/list`), whose reads are routed by matching the URI.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use mcp_jsonrpc::BoxFuture;
use mcp_types::{AnyResourceContents, ErrorObject, Resource, ResourceTemplate};

use super::cache::CacheHints;
use super::completion::{Completer, Completion, CompletionRequest};
use super::uri_template::{Part, TemplateError, UriTemplate, UriVariables, uri_scheme_len};
use crate::context::Context;

/// The code behind a resource or a template: reads the contents of a URI.
pub trait ResourceHandler: Send + Sync + 'static {
    /// Reads `uri`; `variables` holds what the template matched (empty for fixed resources).
    fn read(
        &self,
        uri: String,
        variables: UriVariables,
        ctx: Context,
    ) -> BoxFuture<Result<Vec<AnyResourceContents>, ErrorObject>>;
}

impl<F, Fut> ResourceHandler for F
where
    F: Fn(String, UriVariables, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<AnyResourceContents>, ErrorObject>> + Send + 'static,
{
    fn read(
        &self,
        uri: String,
        variables: UriVariables,
        ctx: Context,
    ) -> BoxFuture<Result<Vec<AnyResourceContents>, ErrorObject>> {
        Box::pin(self(uri, variables, ctx))
    }
}

/// A fixed resource.
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) resource: Resource,
    pub(crate) handler: Arc<dyn ResourceHandler>,
    pub(crate) cache: Option<CacheHints>,
    /// The OAuth scopes a `resources/read` needs (see [`ResourceDef::scopes`]).
    pub(crate) scopes: Vec<String>,
}

impl std::fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceDef").field("resource", &self.resource).finish_non_exhaustive()
    }
}

impl ResourceDef {
    /// A resource named `name` at `uri`: name first, as in [`Resource::new`].
    ///
    /// The URI must start with a scheme (`file:`, `https:`, ...);
    /// [`ServerBuilder::build`](crate::ServerBuilder::build) and
    /// [`Server::add_resource`](crate::Server::add_resource) refuse one without, which is also
    /// how a name and URI given the wrong way round show up.
    ///
    /// ```
    /// use mcp_server::{ResourceDef, Server};
    /// use mcp_types::{ErrorObject, TextResourceContents};
    ///
    /// let readme = ResourceDef::new("readme", "file:///README.md", |uri, _vars, _ctx| async move {
    ///     Ok::<_, ErrorObject>(vec![TextResourceContents::new(uri, "# Hello").into()])
    /// });
    /// assert!(Server::builder("demo", "1.0").resource(readme).build().is_ok());
    ///
    /// let swapped = ResourceDef::new("file:///README.md", "readme", |uri, _vars, _ctx| async move {
    ///     Ok::<_, ErrorObject>(vec![TextResourceContents::new(uri, "# Hello").into()])
    /// });
    /// assert!(Server::builder("demo", "1.0").resource(swapped).build().is_err());
    /// ```
    pub fn new<F, Fut>(name: impl Into<String>, uri: impl Into<String>, handler: F) -> Self
    where
        F: Fn(String, UriVariables, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<AnyResourceContents>, ErrorObject>> + Send + 'static,
    {
        ResourceDef { resource: Resource::new(name, uri), handler: Arc::new(handler), cache: None, scopes: Vec::new() }
    }
    /// A resource from a complete definition.
    pub fn from_resource(resource: Resource, handler: impl ResourceHandler) -> Self {
        ResourceDef { resource, handler: Arc::new(handler), cache: None, scopes: Vec::new() }
    }
    /// The OAuth scopes a `resources/read` of it needs (feature `auth` of the HTTP endpoint): a request whose
    /// token lacks one is refused with 403 `insufficient_scope` naming them, before the
    /// handler runs. Requests without a token (stdio, HTTP without `auth`) are not checked.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The OAuth scopes a `resources/read` of it needs (see [`Self::scopes`]).
    pub fn required_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Refuses a URI without a scheme.
    pub(crate) fn check_uri(&self) -> Result<(), crate::error::DefinitionError> {
        match uri_scheme_len(&self.resource.uri) {
            Some(_) => Ok(()),
            None => Err(crate::error::DefinitionError::InvalidUri {
                name: self.resource.name.clone(),
                uri: self.resource.uri.clone(),
            }),
        }
    }
    /// The definition as listed.
    pub fn definition(&self) -> &Resource {
        &self.resource
    }
    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.resource.description = Some(description.into());
        self
    }
    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.resource.mime_type = Some(mime_type.into());
        self
    }
    /// Cache hints of this resource's `resources/read` results for 2026-07-28 clients,
    /// instead of the server's ([`ServerBuilder::cache_hints`](crate::ServerBuilder::cache_hints)).
    pub fn cache_hints(mut self, ttl: std::time::Duration, scope: mcp_types::CacheScope) -> Self {
        self.cache = Some(CacheHints::new(ttl, scope));
        self
    }
    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.resource.title = Some(title.into());
        self
    }
    /// Sets the icons a client may show for the resource.
    pub fn icons(mut self, icons: Vec<mcp_types::Icon>) -> Self {
        self.resource.icons = Some(icons);
        self
    }
    /// Sets the annotations: who the resource is for, how important it is, when it last
    /// changed.
    ///
    /// ```
    /// use mcp_server::ResourceDef;
    /// use mcp_types::{Annotations, ErrorObject, Role, TextResourceContents};
    ///
    /// let log = ResourceDef::new("log", "file:///var/log/app.log", |uri, _vars, _ctx| async move {
    ///     Ok::<_, ErrorObject>(vec![TextResourceContents::new(uri, "started").into()])
    /// })
    /// .annotations(
    ///     Annotations::default()
    ///         .with_audience(vec![Role::Assistant])
    ///         .with_priority(0.2)
    ///         .with_last_modified("2025-01-12T15:00:58Z"),
    /// )
    /// .size(7);
    /// assert_eq!(log.definition().annotations.as_ref().unwrap().priority, Some(0.2));
    /// assert_eq!(log.definition().size, Some(7));
    /// ```
    pub fn annotations(mut self, annotations: mcp_types::Annotations) -> Self {
        self.resource.annotations = Some(annotations);
        self
    }
    /// Sets the size of the raw contents in bytes (before base64 encoding), if known: clients
    /// show it and estimate context use with it.
    pub fn size(mut self, bytes: u64) -> Self {
        self.resource.size = Some(i64::try_from(bytes).unwrap_or(i64::MAX));
        self
    }
    /// Sets `_meta`.
    pub fn meta(mut self, meta: mcp_types::JsonObject) -> Self {
        self.resource.meta = Some(mcp_types::MetaObject { extra: meta });
        self
    }
}

/// A resource template.
#[derive(Clone)]
pub struct TemplateDef {
    pub(crate) template: ResourceTemplate,
    pub(crate) pattern: UriTemplate,
    pub(crate) handler: Arc<dyn ResourceHandler>,
    pub(crate) completers: BTreeMap<String, Arc<dyn Completer>>,
    pub(crate) cache: Option<CacheHints>,
    /// The OAuth scopes a `resources/read` needs (see [`ResourceDef::scopes`]).
    pub(crate) scopes: Vec<String>,
}

impl std::fmt::Debug for TemplateDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TemplateDef").field("template", &self.template).finish_non_exhaustive()
    }
}

impl TemplateDef {
    /// A template named `name` such as `file:///{path}`: name first, as in
    /// [`ResourceTemplate::new`]. Refused if it does not parse, or if it starts with neither a
    /// scheme (`file:`) nor an expression (so a name and template given the wrong way round
    /// are refused here).
    pub fn new<F, Fut>(
        name: impl Into<String>,
        uri_template: impl Into<String>,
        handler: F,
    ) -> Result<Self, TemplateError>
    where
        F: Fn(String, UriVariables, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<AnyResourceContents>, ErrorObject>> + Send + 'static,
    {
        let uri_template = uri_template.into();
        let pattern = UriTemplate::parse(&uri_template)?;
        let starts_well = match pattern.parts.first() {
            Some(Part::Literal(lit)) => uri_scheme_len(lit).is_some(),
            Some(_) => true,
            None => false,
        };
        if !starts_well {
            return Err(TemplateError {
                template: uri_template,
                reason: "it starts with no scheme such as `file:` (are the name and template swapped?)",
            });
        }
        Ok(TemplateDef {
            template: ResourceTemplate::new(name, uri_template),
            pattern,
            handler: Arc::new(handler),
            completers: BTreeMap::new(),
            cache: None,
            scopes: Vec::new(),
        })
    }
    /// The OAuth scopes a `resources/read` of its resources needs (feature `auth` of the HTTP
    /// endpoint): a request whose token lacks one is refused with 403 `insufficient_scope`
    /// naming them, before the handler runs. Requests without a token are not checked.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
    /// The OAuth scopes a `resources/read` of its resources needs (see [`Self::scopes`]).
    pub fn required_scopes(&self) -> &[String] {
        &self.scopes
    }
    /// The definition as listed.
    pub fn definition(&self) -> &ResourceTemplate {
        &self.template
    }
    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.template.description = Some(description.into());
        self
    }
    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.template.mime_type = Some(mime_type.into());
        self
    }
    /// Cache hints of `resources/read` results of this template's resources for 2026-07-28
    /// clients, instead of the server's.
    pub fn cache_hints(mut self, ttl: std::time::Duration, scope: mcp_types::CacheScope) -> Self {
        self.cache = Some(CacheHints::new(ttl, scope));
        self
    }
    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.template.title = Some(title.into());
        self
    }
    /// Sets the icons a client may show for the template's resources.
    pub fn icons(mut self, icons: Vec<mcp_types::Icon>) -> Self {
        self.template.icons = Some(icons);
        self
    }
    /// Sets the annotations of the template's resources (audience, priority, last change).
    pub fn annotations(mut self, annotations: mcp_types::Annotations) -> Self {
        self.template.annotations = Some(annotations);
        self
    }
    /// Sets `_meta`.
    pub fn meta(mut self, meta: mcp_types::JsonObject) -> Self {
        self.template.meta = Some(mcp_types::MetaObject { extra: meta });
        self
    }
    /// Completes values of a variable.
    pub fn complete<F, Fut>(mut self, variable: impl Into<String>, completer: F) -> Self
    where
        F: Fn(CompletionRequest, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Completion, ErrorObject>> + Send + 'static,
    {
        self.completers.insert(variable.into(), Arc::new(completer));
        self
    }
    pub(crate) fn completer(&self, variable: &str) -> Option<&Arc<dyn Completer>> {
        self.completers.get(variable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn a_scheme_or_an_expression_starts_a_template() {
        let handler = |_uri: String, _vars: UriVariables, _ctx: Context| async { Ok(vec![]) };
        assert!(TemplateDef::new("item", "test://items/{id}", handler).is_ok());
        assert!(TemplateDef::new("any", "{+uri}", handler).is_ok());
        let swapped = TemplateDef::new("test://items/{id}", "item", handler).unwrap_err();
        assert!(swapped.to_string().contains("swapped"), "{swapped}");
        assert!(TemplateDef::new("item", "items/{id}", handler).is_err());
        assert_eq!(uri_scheme_len("file:///a"), Some(4));
        assert_eq!(uri_scheme_len("urn:x"), Some(3));
        for no_scheme in ["readme", "1x:y", ":x", "a b:c"] {
            assert_eq!(uri_scheme_len(no_scheme), None, "{no_scheme}");
        }
    }
}
