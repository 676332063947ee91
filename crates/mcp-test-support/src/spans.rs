//! A `tracing` layer that records every span (its name and the text of its fields, those
//! recorded later included), for tests of the spans a crate opens.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

/// The fields of a span, as text (a `&str` as it is, anything else by its `Debug`).
pub type Fields = BTreeMap<String, String>;

/// A span as recorded: its id, name and fields.
type Recorded = (Id, &'static str, Fields);

/// Records the spans of the thread it is the default subscriber of (see [`Spans::install`]).
#[derive(Clone, Default)]
pub struct Spans(Arc<Mutex<Vec<Recorded>>>);

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
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        attrs.record(&mut Visitor(&mut fields));
        self.0.lock().unwrap().push((id.clone(), attrs.metadata().name(), fields));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some((_, _, fields)) = spans.iter_mut().rev().find(|(i, _, _)| i == id) {
            values.record(&mut Visitor(fields));
        }
    }
}

impl Spans {
    /// A recorder, installed as this thread's default subscriber until the guard is dropped
    /// (a single-threaded runtime's tasks all run on it).
    pub fn install() -> (Spans, tracing::subscriber::DefaultGuard) {
        let spans = Spans::default();
        let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
        (spans, guard)
    }

    /// The fields of the spans named `name`, in the order they were opened.
    pub fn named(&self, name: &str) -> Vec<Fields> {
        let spans = self.0.lock().unwrap();
        spans.iter().filter(|(_, n, _)| *n == name).map(|(_, _, fields)| fields.clone()).collect()
    }
}

/// Asserts that `span` has each of these fields with this value.
pub fn assert_fields(span: &Fields, expected: &[(&str, &str)]) {
    for (key, value) in expected {
        assert_eq!(span.get(*key).map(String::as_str), Some(*value), "{key} in {span:?}");
    }
}
