//! A `tracing` layer that records every span (its name, its parent and the text of its fields,
//! those recorded later included) and the span each event is logged in, for tests of the spans
//! a crate opens.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

/// The fields of a span, as text (a `&str` as it is, anything else by its `Debug`).
pub type Fields = BTreeMap<String, String>;

/// A span as recorded: its id, name, fields and parent (its place in the record: ids are
/// reused once a span closes).
type Recorded = (Id, &'static str, Fields, Option<usize>);

/// Records the spans of the thread it is the default subscriber of (see [`Spans::install`]).
#[derive(Clone, Default)]
pub struct Spans(Arc<Mutex<Vec<Recorded>>>, Arc<Mutex<Vec<Event>>>);

/// An event as recorded: its message, its other fields and the place of its span.
type Event = (String, Fields, Option<usize>);

/// The place in `spans` of the open span `id` (the last recorded with it).
fn place(spans: &[Recorded], id: Option<&Id>) -> Option<usize> {
    let id = id?;
    spans.iter().rposition(|(i, _, _, _)| i == id)
}

struct Visitor<'a>(&'a mut Fields);

impl Visit for Visitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        attrs.record(&mut Visitor(&mut fields));
        let parent = match attrs.parent() {
            Some(parent) => Some(parent.clone()),
            None if attrs.is_contextual() => ctx.current_span().id().cloned(),
            None => None,
        };
        let mut spans = self.0.lock().unwrap();
        let parent = place(&spans, parent.as_ref());
        spans.push((id.clone(), attrs.metadata().name(), fields, parent));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some((_, _, fields, _)) = spans.iter_mut().rev().find(|(i, _, _, _)| i == id) {
            values.record(&mut Visitor(fields));
        }
    }
    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        event.record(&mut Visitor(&mut fields));
        let span = match event.parent() {
            Some(parent) => Some(parent.clone()),
            None if event.is_contextual() => ctx.current_span().id().cloned(),
            None => None,
        };
        let message = fields.remove("message").unwrap_or_default();
        fields.insert("level".to_owned(), event.metadata().level().to_string());
        let span = place(&self.0.lock().unwrap(), span.as_ref());
        self.1.lock().unwrap().push((message, fields, span));
    }
}

impl Spans {
    /// A recorder, installed as this thread's default subscriber until the guard is dropped
    /// (a single-threaded runtime's tasks all run on it).
    ///
    /// The first call also makes a bare registry the process's global default. `tracing`
    /// caches each callsite's interest process-wide, computed against the subscriber of the
    /// thread that reaches it first: a sibling test with no subscriber would cache `never`,
    /// and this recorder would miss that callsite's events (a test that passes alone and
    /// fails beside others). With a global registry every thread has a subscriber that wants
    /// everything, so no callsite is ever cached as `never`.
    pub fn install() -> (Spans, tracing::subscriber::DefaultGuard) {
        static GLOBAL: std::sync::Once = std::sync::Once::new();
        GLOBAL.call_once(|| {
            // Another global default (a test binary's own) serves as well: it is a subscriber.
            let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry());
        });
        let spans = Spans::default();
        let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
        (spans, guard)
    }

    /// The fields of the spans named `name`, in the order they were opened.
    pub fn named(&self, name: &str) -> Vec<Fields> {
        let spans = self.0.lock().unwrap();
        spans.iter().filter(|(_, n, _, _)| *n == name).map(|(_, _, fields, _)| fields.clone()).collect()
    }

    /// The parents (name and fields) of the spans named `name`, in the order they were opened.
    pub fn parents(&self, name: &str) -> Vec<Option<(&'static str, Fields)>> {
        let spans = self.0.lock().unwrap();
        let find = |at: &usize| spans.get(*at).map(|(_, n, f, _)| (*n, f.clone()));
        spans.iter().filter(|(_, n, _, _)| *n == name).map(|(_, _, _, parent)| parent.as_ref().and_then(find)).collect()
    }

    /// The spans (name and fields) the events whose message is `message` were logged in.
    pub fn events(&self, message: &str) -> Vec<Option<(&'static str, Fields)>> {
        let spans = self.0.lock().unwrap();
        let find = |at: &usize| spans.get(*at).map(|(_, n, f, _)| (*n, f.clone()));
        let events = self.1.lock().unwrap();
        events.iter().filter(|(m, _, _)| m == message).map(|(_, _, span)| span.as_ref().and_then(find)).collect()
    }

    /// The fields (but the message) of the events whose message is `message`, in order, and
    /// their `level` (`INFO`, `WARN`, ...).
    pub fn event_fields(&self, message: &str) -> Vec<Fields> {
        let events = self.1.lock().unwrap();
        events.iter().filter(|(m, _, _)| m == message).map(|(_, fields, _)| fields.clone()).collect()
    }
}

/// Asserts that `span` has each of these fields with this value.
pub fn assert_fields(span: &Fields, expected: &[(&str, &str)]) {
    for (key, value) in expected {
        assert_eq!(span.get(*key).map(String::as_str), Some(*value), "{key} in {span:?}");
    }
}
