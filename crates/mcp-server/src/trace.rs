//! Tracing of the requests a server serves: one `mcp.server.request` span per request, with
//! the attributes of OpenTelemetry's semantic conventions for MCP, and the W3C trace context
//! the request carries in `_meta` (`traceparent`, `tracestate`, `baggage`) as its parent
//! (feature `opentelemetry`).
//!
//! The span costs next to nothing when no subscriber wants it: the macro's callsite check
//! answers [`Span::none`], and nothing of the request is read (its id is formatted lazily, by a
//! subscriber that records it). Only an enabled span reads the tool name, `_meta` and the
//! session id.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use mcp_jsonrpc::raw::str_text;
use mcp_jsonrpc::{Reply, RequestContext, message};
use mcp_types::{
    CallToolRequest, GetPromptRequest, ReadResourceRequest, Request, SubscribeRequest, UnsubscribeRequest, meta,
};
use tracing::Span;
use tracing::field::{Empty, display};

/// The span of one incoming request: `mcp.server.request`, at level INFO (target
/// `mcp_server::trace`).
///
/// Fields (OpenTelemetry's MCP semantic conventions): `mcp.method.name`, `jsonrpc.request.id`,
/// `mcp.protocol.version`, `mcp.session.id` (over HTTP, in a session), `gen_ai.tool.name` and
/// `gen_ai.operation.name` (`tools/call`), `gen_ai.prompt.name` (`prompts/get`),
/// `mcp.resource.uri` (`resources/read`, `resources/subscribe`, `resources/unsubscribe`),
/// `error.type` and `rpc.response.status_code` (an error response); `traceparent` (the one the
/// request carries in `_meta`); `otel.name` (`{method} {target}`), `otel.kind` and
/// `otel.status_description`, which `tracing-opentelemetry` reads.
pub(crate) fn request_span(req: &message::Request, rctx: &RequestContext) -> Span {
    let span = tracing::info_span!(
        "mcp.server.request",
        otel.name = Empty,
        otel.kind = "server",
        otel.status_description = Empty,
        mcp.method.name = req.method.as_str(),
        jsonrpc.request.id = %req.id.unquoted(),
        mcp.protocol.version = Empty,
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
        describe(&span, req, rctx);
    }
    span
}

/// The span of a task's work: `mcp.server.task`, at level INFO (target `mcp_server::trace`),
/// made where the task is started, in the span of the request that creates it, whose child it
/// is. The handler runs in it after the request was answered, so its logs and its requests to
/// the client (their `traceparent`, feature `opentelemetry`) continue that request's trace.
///
/// Fields: `gen_ai.tool.name`, `mcp.task.id` (recorded once the task exists: a deferred task
/// begins later), `otel.name` (`task {tool}`), `otel.kind` (internal).
pub(crate) fn task_span(tool: &str) -> Span {
    let span = tracing::info_span!(
        "mcp.server.task",
        otel.name = Empty,
        otel.kind = "internal",
        gen_ai.tool.name = Empty,
        mcp.task.id = Empty,
    );
    if !span.is_disabled() {
        span.record("gen_ai.tool.name", bounded(tool));
        span.record("otel.name", format!("task {}", bounded(tool)).as_str());
    }
    span
}

/// Records a task's id on its span.
pub(crate) fn record_task(span: &Span, id: &str) {
    if !span.is_disabled() {
        span.record("mcp.task.id", bounded(id));
    }
}

/// Records what an enabled span says of its request beyond its method and id.
#[cold]
fn describe(span: &Span, req: &message::Request, rctx: &RequestContext) {
    let method = req.method.as_str();
    let target_key = match method {
        CallToolRequest::METHOD => {
            span.record("gen_ai.operation.name", "execute_tool");
            Some(("gen_ai.tool.name", "name"))
        }
        GetPromptRequest::METHOD => Some(("gen_ai.prompt.name", "name")),
        ReadResourceRequest::METHOD | SubscribeRequest::METHOD | UnsubscribeRequest::METHOD => {
            Some(("mcp.resource.uri", "uri"))
        }
        _ => None,
    };
    let target = target_key.and_then(|(field, key)| Some((field, str_text(req.param(key)?)?)));
    match &target {
        Some((field, value)) => {
            span.record(*field, bounded(value));
            // A resource's URI is not a low-cardinality target: the name is the method alone.
            if *field == "mcp.resource.uri" {
                span.record("otel.name", method);
            } else {
                span.record("otel.name", format!("{method} {}", bounded(value)).as_str());
            }
        }
        None => {
            span.record("otel.name", method);
        }
    }
    match req.meta(meta::PROTOCOL_VERSION).and_then(str_text) {
        Some(version) => span.record("mcp.protocol.version", bounded(&version)),
        None => span.record("mcp.protocol.version", rctx.peer().protocol_version().as_str()),
    };
    if let Some(session) = session_id(rctx) {
        span.record("mcp.session.id", session);
    }
    if let Some(traceparent) = req.meta(meta::TRACEPARENT).and_then(str_text) {
        span.record("traceparent", bounded(&traceparent));
    }
    #[cfg(feature = "opentelemetry")]
    otel::set_parent(span, req);
}

/// The most bytes of a value the client chose that a span field holds: a field is no place
/// for a payload (a tool name has at most 128 characters, a `traceparent` 55).
const MAX_FIELD: usize = 256;

/// `text`, cut to [`MAX_FIELD`] bytes at a character boundary.
fn bounded(text: &str) -> &str {
    let mut end = text.len().min(MAX_FIELD);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The HTTP session the request came in (`Mcp-Session-Id`), if any.
fn session_id(rctx: &RequestContext) -> Option<&str> {
    let _ = rctx;
    #[cfg(feature = "http")]
    if let Some(info) = rctx.attachment().and_then(|a| a.downcast_ref::<mcp_transport_http::server::RequestInfo>()) {
        return info.session_id();
    }
    None
}

/// Records the outcome of a request on its span: an error response's code and message.
fn record_outcome(span: &Span, reply: &Reply) {
    if let Err(error) = reply
        && !span.is_disabled()
    {
        span.record("error.type", display(error.code));
        span.record("rpc.response.status_code", display(error.code));
        span.record("otel.status_description", error.message.as_str());
    }
}

pin_project_lite::pin_project! {
    /// A request's future in its span: entered while it is polled, the outcome recorded and
    /// the span closed when it is ready (`tracing::Instrumented` keeps its span until dropped,
    /// and records no outcome).
    pub(crate) struct Traced<F> {
        #[pin]
        inner: F,
        span: Span,
    }
}

impl<F> Traced<F> {
    /// `inner`, run in `span`.
    pub(crate) fn new(inner: F, span: Span) -> Self {
        Traced { inner, span }
    }
}

impl<F: Future<Output = Reply>> Future for Traced<F> {
    type Output = Reply;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        let this = self.project();
        let reply = {
            let _entered = this.span.enter();
            ready!(this.inner.poll(cx))
        };
        record_outcome(this.span, &reply);
        // Closed now, before the engine sends the reply: a client that has its answer finds
        // the server's span ended (and exported).
        drop(std::mem::replace(this.span, Span::none()));
        Poll::Ready(reply)
    }
}

#[cfg(feature = "opentelemetry")]
pub(crate) use otel::with_trace_context;

/// The W3C trace context of `_meta` as the parent of the request's span, and the current
/// span's in the server's requests to the client (feature `opentelemetry`).
#[cfg(feature = "opentelemetry")]
mod otel {
    use std::borrow::Cow;

    use mcp_jsonrpc::message;
    use mcp_jsonrpc::raw::str_text;
    use mcp_types::meta;
    use opentelemetry::propagation::{Extractor, TextMapCompositePropagator, TextMapPropagator};
    use opentelemetry::trace::TraceContextExt as _;
    use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
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
    struct Members(mcp_types::JsonObject);

    impl opentelemetry::propagation::Injector for Members {
        fn set(&mut self, key: &str, value: String) {
            self.0.insert(key.to_owned(), value.into());
        }
    }

    /// `options` with the trace context of the current span (a handler's: the request's span or
    /// one inside it) as members of `_meta`, for a request to the client made on behalf of a
    /// request (sampling, elicitation, roots). Unchanged without a valid span context.
    pub(crate) fn with_trace_context(mut options: mcp_jsonrpc::CallOptions) -> mcp_jsonrpc::CallOptions {
        let current = tracing::Span::current();
        if current.is_disabled() {
            return options;
        }
        let context = current.context();
        if !context.span().span_context().is_valid() {
            return options;
        }
        let mut members = Members(mcp_types::JsonObject::new());
        PROPAGATOR.inject_context(&context, &mut members);
        options.meta = Some(members.0);
        options
    }

    /// The trace context keys of a request's `_meta`, as text.
    struct MetaCarrier<'a> {
        values: [(&'static str, Option<Cow<'a, str>>); 3],
    }

    impl Extractor for MetaCarrier<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.values.iter().find(|(k, _)| *k == key).and_then(|(_, v)| v.as_deref())
        }
        fn keys(&self) -> Vec<&str> {
            self.values.iter().filter(|(_, v)| v.is_some()).map(|(k, _)| *k).collect()
        }
    }

    /// Sets the context the request carries as the parent of `span`. A request without a valid
    /// `traceparent` leaves the span where it is.
    pub(super) fn set_parent(span: &tracing::Span, req: &message::Request) {
        let read = |key: &'static str| (key, req.meta(key).and_then(str_text));
        let carrier = MetaCarrier { values: [read(meta::TRACEPARENT), read(meta::TRACESTATE), read(meta::BAGGAGE)] };
        if carrier.values[0].1.is_none() {
            return;
        }
        let parent = PROPAGATOR.extract_with_context(&opentelemetry::Context::new(), &carrier);
        // A `traceparent` that does not parse leaves the span under its own parent.
        if parent.span().span_context().is_valid() {
            // Without the tracing-opentelemetry layer there is nothing to set.
            let _ = span.set_parent(parent);
        }
    }
}
