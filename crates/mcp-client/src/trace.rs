//! Tracing of the requests a client sends: one `mcp.client.request` span per request, with
//! the attributes of OpenTelemetry's semantic conventions for MCP, and (feature
//! `opentelemetry`) the W3C trace context of that span carried in the request's `_meta`
//! (`traceparent`, `tracestate`, `baggage`), so that the server's span of the request is its
//! child.
//!
//! A span no subscriber wants is [`Span::none`]: then nothing is formatted, recorded or
//! allocated for it.

use std::sync::Arc;

use mcp_jsonrpc::{CallError, CallOptions};
use mcp_types::{ErrorObject, ProtocolVersion, RequestId};
use tracing::Span;
use tracing::field::{Empty, display};

use crate::error::ClientError;

/// What a request is about, for its span's name and attributes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target<'a> {
    /// Nothing in particular (a list, a ping, a request this API does not cover).
    None,
    /// `tools/call`: the tool's name.
    Tool(&'a str),
    /// `prompts/get`: the prompt's name.
    Prompt(&'a str),
    /// `resources/read`, `resources/subscribe`, `resources/unsubscribe`: the resource's URI.
    Resource(&'a str),
}

/// Where the HTTP session id of a connection comes from, if it has one.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionSource {
    /// The HTTP transport's view of its connection.
    #[cfg(feature = "http")]
    pub(crate) http: Option<mcp_transport_http::client::HttpClientHandle>,
}

impl SessionSource {
    /// The session id the server issued, if any.
    fn session_id(&self) -> Option<String> {
        #[cfg(feature = "http")]
        if let Some(handle) = &self.http {
            return handle.session_id();
        }
        None
    }
}

/// The span of one outgoing request: `mcp.client.request`, at level INFO (target
/// `mcp_client::trace`), a child of the caller's current span.
///
/// Fields (OpenTelemetry's MCP semantic conventions): `mcp.method.name`, `jsonrpc.request.id`
/// (once assigned; the last one, when a 2026-07-28 request is sent again), `mcp.protocol.version`,
/// `mcp.session.id` (over HTTP, in a session), `gen_ai.tool.name` and `gen_ai.operation.name`
/// (`tools/call`), `gen_ai.prompt.name` (`prompts/get`), `mcp.resource.uri`, `error.type` and
/// `rpc.response.status_code` (a failed call); `traceparent` (the one the request carries,
/// feature `opentelemetry`); `otel.name`, `otel.kind` and `otel.status_description`, which
/// `tracing-opentelemetry` reads.
pub(crate) fn request_span(
    method: &str,
    version: ProtocolVersion,
    target: Target<'_>,
    session: &SessionSource,
) -> Span {
    let span = tracing::info_span!(
        "mcp.client.request",
        otel.name = Empty,
        otel.kind = "client",
        otel.status_description = Empty,
        mcp.method.name = method,
        jsonrpc.request.id = Empty,
        mcp.protocol.version = version.as_str(),
        mcp.session.id = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.prompt.name = Empty,
        mcp.resource.uri = Empty,
        traceparent = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    if !span.is_disabled() {
        describe(&span, method, target, session);
    }
    span
}

/// Records what an enabled span says of its request beyond its method and revision.
#[cold]
fn describe(span: &Span, method: &str, target: Target<'_>, session: &SessionSource) {
    match target {
        Target::Tool(name) => {
            span.record("gen_ai.tool.name", name);
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("otel.name", format!("{method} {name}").as_str());
        }
        Target::Prompt(name) => {
            span.record("gen_ai.prompt.name", name);
            span.record("otel.name", format!("{method} {name}").as_str());
        }
        // A URI is not a low-cardinality name: the span is named after the method alone.
        Target::Resource(uri) => {
            span.record("mcp.resource.uri", uri);
            span.record("otel.name", method);
        }
        Target::None => {
            span.record("otel.name", method);
        }
    }
    if let Some(session) = session.session_id() {
        span.record("mcp.session.id", session.as_str());
    }
}

/// Prepares the options of a call made in `span`: the request's id recorded on the span once
/// it is assigned, and (feature `opentelemetry`) the span's trace context added to the
/// request's `_meta` (a member the caller put there is kept). Nothing for a disabled span
/// (without the feature).
pub(crate) fn prepare(span: &Span, options: &mut CallOptions) {
    #[cfg(feature = "opentelemetry")]
    otel::inject(span, options);
    if span.is_disabled() {
        return;
    }
    let recorder = span.clone();
    let earlier = options.on_id.take();
    options.on_id = Some(Arc::new(move |id: &RequestId| {
        recorder.record("jsonrpc.request.id", display(id.unquoted()));
        if let Some(earlier) = &earlier {
            earlier(id);
        }
    }));
}

/// Records the outcome of a call on its span: a failure's kind (a JSON-RPC error's code).
pub(crate) fn record_outcome<T>(span: &Span, outcome: &Result<T, ClientError>) {
    if let Err(error) = outcome
        && !span.is_disabled()
    {
        let kind = match error {
            ClientError::Remote(e) => return record_remote(span, e),
            ClientError::Timeout { .. } => "timeout",
            ClientError::Cancelled => "cancelled",
            ClientError::Closed(_) => "closed",
            ClientError::Transport(_) => "transport",
            ClientError::Decode { .. } | ClientError::Protocol { .. } => "protocol",
            _ => "_OTHER",
        };
        span.record("error.type", kind);
        span.record("otel.status_description", error.to_string().as_str());
    }
}

/// [`record_outcome`] for a request the client sends through the peer directly (`initialize`,
/// the `server/discover` probe).
pub(crate) fn record_call_outcome<T>(span: &Span, outcome: &Result<T, CallError>) {
    if let Err(error) = outcome
        && !span.is_disabled()
    {
        let kind = match error {
            CallError::Remote(e) => return record_remote(span, e),
            CallError::Timeout { .. } => "timeout",
            CallError::Cancelled => "cancelled",
            CallError::Closed => "closed",
            CallError::Transport(_) => "transport",
            CallError::Decode { .. } => "protocol",
            _ => "_OTHER",
        };
        span.record("error.type", kind);
        span.record("otel.status_description", error.to_string().as_str());
    }
}

/// A JSON-RPC error answer on the span: its code and message.
fn record_remote(span: &Span, error: &ErrorObject) {
    span.record("error.type", display(error.code));
    span.record("rpc.response.status_code", display(error.code));
    span.record("otel.status_description", error.message.as_str());
}

/// The span of a request the client sends through the peer directly (`initialize`, the
/// `server/discover` probe), its options prepared ([`prepare`]).
pub(crate) fn start(method: &'static str, version: ProtocolVersion, options: &mut CallOptions) -> Span {
    let span = request_span(method, version, Target::None, &SessionSource::default());
    prepare(&span, options);
    span
}

/// The W3C trace context of a request's span in its `_meta` (feature `opentelemetry`).
#[cfg(feature = "opentelemetry")]
mod otel {
    use mcp_jsonrpc::CallOptions;
    use mcp_types::JsonObject;
    use opentelemetry::propagation::{Injector, TextMapCompositePropagator, TextMapPropagator};
    use opentelemetry::trace::TraceContextExt as _;
    use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
    use tracing::Span;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    /// W3C Trace Context and W3C Baggage, the formats the specification names (whatever
    /// propagator the application installed globally).
    static PROPAGATOR: std::sync::LazyLock<TextMapCompositePropagator> = std::sync::LazyLock::new(|| {
        TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ])
    });

    /// `_meta` members, as the propagators write them.
    struct MetaCarrier(JsonObject);

    impl Injector for MetaCarrier {
        fn set(&mut self, key: &str, value: String) {
            self.0.insert(key.to_owned(), value.into());
        }
    }

    /// Adds the trace context of `span` (or, if no subscriber wants it, of the caller's
    /// current span) to the members of the request's `_meta`. Nothing when there is no valid
    /// span context (no OpenTelemetry layer, or no trace).
    pub(super) fn inject(span: &Span, options: &mut CallOptions) {
        let source = if span.is_disabled() { Span::current() } else { span.clone() };
        if source.is_disabled() {
            return;
        }
        let context = source.context();
        if !context.span().span_context().is_valid() {
            return;
        }
        let mut carrier = MetaCarrier(JsonObject::new());
        PROPAGATOR.inject_context(&context, &mut carrier);
        if let Some(traceparent) = carrier.0.get(mcp_types::meta::TRACEPARENT).and_then(|v| v.as_str()) {
            span.record("traceparent", traceparent);
        }
        let members = options.meta.get_or_insert_with(JsonObject::new);
        for (key, value) in carrier.0 {
            members.entry(key).or_insert(value);
        }
    }
}
