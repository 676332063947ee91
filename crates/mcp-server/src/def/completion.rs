//! Completion of prompt arguments and resource-template variables (`completion/complete`).

use std::collections::BTreeMap;
use std::future::Future;

use mcp_jsonrpc::BoxFuture;
use mcp_types::{CompleteResultCompletion, ErrorObject};

use crate::context::Context;

/// At most this many values go into one answer (the specification's limit).
pub const MAX_COMPLETIONS: usize = 100;

/// What a completer is asked: the value typed so far, and the other arguments already given.
#[derive(Debug, Clone)]
pub struct CompletionRequest {
    /// The argument or variable being completed.
    pub name: String,
    /// Its value so far.
    pub value: String,
    /// Values of the other arguments (`context.arguments`).
    pub context: BTreeMap<String, String>,
}

/// Candidate values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    /// The values, best first.
    pub values: Vec<String>,
}

impl Completion {
    /// The answer: at most [`MAX_COMPLETIONS`] values, with the total and whether more exist.
    pub(crate) fn into_wire(self) -> CompleteResultCompletion {
        let total = self.values.len();
        let mut values = self.values;
        values.truncate(MAX_COMPLETIONS);
        CompleteResultCompletion::new(values).with_total(total as i64).with_has_more(total > MAX_COMPLETIONS)
    }

    /// The candidates among `options` that start with `prefix` (case-insensitively).
    pub fn matching<'a>(prefix: &str, options: impl IntoIterator<Item = &'a str>) -> Self {
        let prefix = prefix.to_lowercase();
        Completion {
            values: options.into_iter().filter(|o| o.to_lowercase().starts_with(&prefix)).map(str::to_owned).collect(),
        }
    }
}

/// Completes one argument or variable.
pub trait Completer: Send + Sync + 'static {
    /// The candidates for `request`.
    fn complete(&self, request: CompletionRequest, ctx: Context) -> BoxFuture<Result<Completion, ErrorObject>>;
}

impl<F, Fut> Completer for F
where
    F: Fn(CompletionRequest, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Completion, ErrorObject>> + Send + 'static,
{
    fn complete(&self, request: CompletionRequest, ctx: Context) -> BoxFuture<Result<Completion, ErrorObject>> {
        Box::pin(self(request, ctx))
    }
}
