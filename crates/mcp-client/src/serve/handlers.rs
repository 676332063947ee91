//! Handlers for the requests a server sends to the client: sampling, elicitation, roots; the
//! set of them the builder holds ([`InputHandlers`]), and the checks each passes first.

use std::future::Future;
use std::sync::Arc;

use mcp_jsonrpc::{BoxFuture, RequestContext};
use mcp_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult,
    ElicitResultContentValue, ErrorObject, ProtocolVersion, Root,
};

/// Answers `sampling/createMessage`: asks the application's model for a completion.
pub trait SamplingHandler: Send + Sync + 'static {
    /// Produces the completion.
    fn create_message(&self, params: CreateMessageRequestParams)
    -> BoxFuture<Result<CreateMessageResult, ErrorObject>>;
}

impl<F, Fut> SamplingHandler for F
where
    F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
{
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<Result<CreateMessageResult, ErrorObject>> {
        Box::pin(self(params))
    }
}

/// Answers `elicitation/create`: asks the user for input (a form, or a URL to visit).
pub trait ElicitationHandler: Send + Sync + 'static {
    /// Produces the user's answer.
    fn elicit(&self, params: ElicitRequestParams) -> BoxFuture<Result<ElicitResult, ErrorObject>>;
}

impl<F, Fut> ElicitationHandler for F
where
    F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
{
    fn elicit(&self, params: ElicitRequestParams) -> BoxFuture<Result<ElicitResult, ErrorObject>> {
        Box::pin(self(params))
    }
}

/// Answers `roots/list`.
pub trait RootsHandler: Send + Sync + 'static {
    /// The current roots.
    fn roots(&self) -> BoxFuture<Result<Vec<Root>, ErrorObject>>;
}

impl<F, Fut> RootsHandler for F
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<Root>, ErrorObject>> + Send + 'static,
{
    fn roots(&self) -> BoxFuture<Result<Vec<Root>, ErrorObject>> {
        Box::pin(self())
    }
}

/// Fills in, for an accepted form, the fields the user left out that have a `default` in the
/// requested schema (SEP-1034).
///
/// ```
/// use mcp_client::apply_elicitation_defaults;
/// use mcp_types::{ElicitAction, ElicitRequestParams, ElicitResult, ElicitResultContentValue};
///
/// let params: ElicitRequestParams = serde_json::from_value(serde_json::json!({
///     "message": "Your details",
///     "requestedSchema": {"type": "object", "properties": {
///         "name": {"type": "string"},
///         "newsletter": {"type": "boolean", "default": true}
///     }}
/// })).unwrap();
/// let mut result = ElicitResult::new(ElicitAction::Accept)
///     .with_content([("name".to_owned(), ElicitResultContentValue::String("Ann".into()))]);
/// apply_elicitation_defaults(&params, &mut result);
/// assert_eq!(result.content.unwrap()["newsletter"], ElicitResultContentValue::Boolean(true));
/// ```
pub fn apply_elicitation_defaults(params: &ElicitRequestParams, result: &mut ElicitResult) {
    let ElicitRequestParams::ElicitRequestForm(form) = params else { return };
    if result.action != ElicitAction::Accept {
        return;
    }
    let Ok(schema) = serde_json::to_value(&form.requested_schema) else { return };
    let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) else { return };
    let content = result.content.get_or_insert_with(Default::default);
    for (name, property) in properties {
        if content.contains_key(name) {
            continue;
        }
        let Some(default) = property.get("default") else { continue };
        if let Ok(value) = serde_json::from_value::<ElicitResultContentValue>(default.clone()) {
            content.insert(name.clone(), value);
        }
    }
}

/// The handlers that answer a server's input requests.
#[derive(Clone, Default)]
pub(crate) struct InputHandlers {
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) roots: Option<Arc<dyn RootsHandler>>,
    pub(crate) apply_defaults: bool,
    pub(crate) elicitation_url: bool,
    /// The server may make sampling and elicitation requests tasks (2025-11-25).
    pub(crate) tasks: bool,
}

/// A server's request of a session-era kind (sampling, elicitation, roots) is answered only in
/// a session whose revision has it (from `since`): a 2026-07-28 server asks within its results.
pub(crate) fn session_era<R: mcp_types::Request>(
    ctx: &RequestContext,
    since: ProtocolVersion,
) -> Result<(), ErrorObject> {
    let version = ctx.peer().protocol_version();
    if version.is_stateless() || version < since {
        return Err(ErrorObject::method_not_found(R::METHOD));
    }
    Ok(())
}

/// URL-mode elicitation only where it was declared (2025-11-25: else -32602).
pub(crate) fn check_elicitation_mode(params: &ElicitRequestParams, url_mode: bool) -> Result<(), ErrorObject> {
    if matches!(params, ElicitRequestParams::ElicitRequestURL(_)) && !url_mode {
        return Err(ErrorObject::invalid_params("URL-mode elicitation was not declared by this client"));
    }
    Ok(())
}
