//! Typed elicitation: the form a Rust type describes ([`Context::elicit`]), and URL-mode
//! elicitation with its completion notification and the -32042 error
//! ([`Context::url_elicitation`]).
//!
//! # The form of a type
//!
//! `elicitation/create` in form mode carries a *restricted* JSON Schema (`requestedSchema`): a
//! flat object whose properties are primitives. [`Context::elicit::<T>`](Context::elicit)
//! derives it from `T`'s [`JsonSchema`] (schemars, with doc comments as descriptions) once per
//! type and protocol revision, and lowers it to the revision's `PrimitiveSchemaDefinition`:
//!
//! | Rust field (schemars)                             | 2025-06-18            | 2025-11-25, 2026-07-28                     |
//! |---------------------------------------------------|-----------------------|--------------------------------------------|
//! | `String` (`length(..)`, `email`, `url`, chrono)   | `StringSchema`        | `StringSchema` (+ `default`)               |
//! | integers, floats (`range(..)`)                    | `NumberSchema`        | `NumberSchema` (+ `default`)               |
//! | `bool`                                            | `BooleanSchema`       | `BooleanSchema`                            |
//! | unit-variant enum                                 | `EnumSchema`          | untitled single-select (+ `default`)       |
//! | unit-variant enum with documented/titled variants | `EnumSchema` with `enumNames` | titled single-select (`oneOf` `const`/`title`) |
//! | `Vec<E>`, `HashSet<E>` of such an enum            | refused               | multi-select (`items`; `minItems`/`maxItems`) |
//!
//! The form lists the fields in `T`'s declaration order, as serde's derive names them
//! (schemars' schema has them sorted; a type that does not deserialize as a plain struct, such
//! as one with `#[serde(flatten)]`, keeps that alphabetical order).
//! `Option<_>` and `#[serde(default)]` fields are optional, the others `required`. A
//! variant's title is its `#[schemars(title = "..")]`, else its doc comment. A default is sent
//! only where the revision has one (2025-06-18: booleans only); a client may fill it in
//! (`mcp_client::apply_elicitation_defaults`).
//!
//! What a revision cannot express is refused with an [`ElicitSchemaError`] naming the field:
//! nested objects, arrays of anything but an enum, non-string enums, mixed types, and
//! constraints the form cannot carry (`pattern`, `exclusiveMinimum`, `multipleOf`, ...). Pure
//! annotations the form has no room for are left out (`format` of numbers such as `int32`,
//! string formats other than `date`, `date-time`, `email` and `uri`, `examples`, `uniqueItems`
//! of a multi-select): decoding the answer into `T` still checks what they say.
//!
//! Where the refusal happens: schemars describes a type at run time, so no trait bound can
//! tell at compile time whether it is a flat form. [`ToolDef::elicits`](crate::ToolDef::elicits)
//! checks it when the tool is defined (a [`DefinitionError`](crate::DefinitionError) that stops
//! the server from being built), against the newest revision; what only an older revision
//! cannot express (a multi-select asked of a 2025-06-18 client) is refused when
//! [`Context::elicit`] is called, before anything is sent.
//!
//! # The answer
//!
//! An accepted answer's `content` is checked against the requested schema and decoded into
//! `T`; content that does neither is [`ClientRequestError::InvalidContent`], never a panic.

use std::sync::Arc;

use mcp_jsonrpc::{CallError, Peer};
use mcp_types::{
    ElicitAction, ElicitRequestParams, ElicitRequestURLParams, ElicitResult, ElicitationCompleteNotification,
    ElicitationCompleteNotificationParams, Notification as _, ProtocolVersion,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::Context;
use crate::error::ClientRequestError;
pub use crate::schema::form::{ContentError, ElicitSchemaError, FormProblem};
use crate::schema::form::{Form, form_for};

/// What the user did with an elicitation: accepted it (with the content, decoded), declined
/// it, or dismissed it.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicitation<T> {
    /// The user submitted the form (or, in URL mode, agreed to open the URL).
    Accepted(T),
    /// The user explicitly declined.
    Declined,
    /// The user dismissed the request without choosing.
    Cancelled,
}

impl<T> Elicitation<T> {
    /// The accepted value, if any.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accepted(value) => Some(value),
            _ => None,
        }
    }
}

/// What the user did, as an outcome without content (an action the revision does not name is
/// an error).
fn answered(action: ElicitAction) -> Result<Elicitation<()>, ClientRequestError> {
    match action {
        ElicitAction::Accept => Ok(Elicitation::Accepted(())),
        ElicitAction::Decline => Ok(Elicitation::Declined),
        ElicitAction::Cancel => Ok(Elicitation::Cancelled),
        ElicitAction::Other(action) => {
            Err(ClientRequestError::InvalidInput(format!("unknown elicitation action `{action}`")))
        }
    }
}

/// The typed outcome of an answer to a form.
impl Form {
    /// The typed outcome of the client's answer.
    fn outcome<T: DeserializeOwned>(&self, result: ElicitResult) -> Result<Elicitation<T>, ClientRequestError> {
        match answered(result.action)? {
            Elicitation::Accepted(()) => {}
            Elicitation::Declined => return Ok(Elicitation::Declined),
            Elicitation::Cancelled => return Ok(Elicitation::Cancelled),
        }
        let content = match result.content {
            Some(content) => serde_json::to_value(content),
            None => Ok(Value::Object(Map::new())),
        }
        .map_err(|e| ClientRequestError::InvalidContent(ContentError::Decode(e)))?;
        if let Some(check) = &self.check
            && !check.is_valid(&content)
        {
            return Err(ClientRequestError::InvalidContent(ContentError::Schema(check.problems(&content, 8))));
        }
        serde_json::from_value(content)
            .map(Elicitation::Accepted)
            .map_err(|e| ClientRequestError::InvalidContent(ContentError::Decode(e)))
    }
}

impl Context {
    /// Asks the client's user to fill in the form `T` describes (`elicitation/create`, form
    /// mode): accepted content comes back decoded as `T`. The form is derived from `T`'s
    /// [`JsonSchema`] once per type and revision (see [the module](crate::elicit) for what a
    /// form can hold); a type the session's revision cannot express, or a revision without
    /// elicitation (2024-11-05, 2025-03-26), fails before anything is sent. Like
    /// [`elicit_raw`](Self::elicit_raw) in every other respect: a round trip for a 2026-07-28
    /// request (keys `elicitation-1`, ...), the capability checked first.
    ///
    /// ```
    /// use mcp_server::{Context, Elicitation, ToolError};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Booking {
    ///     /// Your e-mail address
    ///     #[schemars(email)]
    ///     email: String,
    ///     /// How many seats
    ///     #[schemars(range(min = 1, max = 8))]
    ///     seats: u8,
    ///     /// Window seats if possible
    ///     #[serde(default)]
    ///     window: bool,
    /// }
    ///
    /// async fn book(ctx: Context) -> Result<String, ToolError> {
    ///     Ok(match ctx.elicit::<Booking>("Your booking").await? {
    ///         Elicitation::Accepted(b) => format!("{} seats for {}", b.seats, b.email),
    ///         Elicitation::Declined | Elicitation::Cancelled => "no booking".to_owned(),
    ///     })
    /// }
    /// ```
    pub async fn elicit<T: DeserializeOwned + JsonSchema + 'static>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ClientRequestError> {
        let form = self.form::<T>()?;
        let answer = self.elicit_raw(form.params(message.into(), self.version)).await?;
        form.outcome(answer)
    }

    /// [`elicit`](Self::elicit) whose input is named `key` in a 2026-07-28 round trip (in a
    /// session, the same as `elicit`).
    pub async fn elicit_as<T: DeserializeOwned + JsonSchema + 'static>(
        &self,
        key: &str,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ClientRequestError> {
        let form = self.form::<T>()?;
        let answer = self.elicit_raw_as(key, form.params(message.into(), self.version)).await?;
        form.outcome(answer)
    }

    fn form<T: DeserializeOwned + JsonSchema + 'static>(&self) -> Result<Arc<Form>, ClientRequestError> {
        form_for::<T>(self.version)?
            .ok_or(ClientRequestError::NotInRevision { what: "elicitation", version: self.version })
    }

    /// A new URL-mode elicitation of this session (2025-11-25 and later): a fresh, unguessable
    /// `elicitationId`, to put in the URL the user will visit (or the server's own records),
    /// and the handle that announces its completion later. Pass it to
    /// [`elicit_url`](Self::elicit_url) to ask the client to open the URL, or to
    /// [`UrlElicitation::required`] for the -32042 error.
    pub fn url_elicitation(&self) -> UrlElicitation {
        UrlElicitation {
            id: Arc::from(crate::tasks::new_task_id()),
            peer: self.peer.clone(),
            version: self.version,
            layers: self.layers.clone(),
        }
    }

    /// Asks the client to have its user open `url` (`elicitation/create`, URL mode), for an
    /// interaction that must not pass through the client (signing in to a third party, a
    /// payment). [`Elicitation::Accepted`] means the user agreed to open it, not that the
    /// interaction is done: the server learns that out of band (at the URL) and tells the
    /// client with [`UrlElicitation::complete`]. Needs the client's `elicitation.url`
    /// capability and protocol revision 2025-11-25 or later. For a 2026-07-28 request this is
    /// an input-required round trip (keys `elicitation-1`, ...), without an id: the revision
    /// has neither `elicitationId` nor the completion notification, and the client retries
    /// the request once the user is done.
    ///
    /// ```
    /// use mcp_server::{Context, Elicitation, ToolError};
    ///
    /// async fn connect(ctx: Context) -> Result<String, ToolError> {
    ///     let pending = ctx.url_elicitation();
    ///     let url = format!("https://example.com/connect?state={}", pending.id());
    ///     match ctx.elicit_url(&pending, "Sign in to Example Co", url).await? {
    ///         // Keep `pending` (it is `Clone + Send`): the HTTP callback calls
    ///         // `pending.complete().await` when the user has signed in.
    ///         Elicitation::Accepted(()) => Ok("waiting for the sign-in".into()),
    ///         _ => Ok("not connected".into()),
    ///     }
    /// }
    /// ```
    pub async fn elicit_url(
        &self,
        elicitation: &UrlElicitation,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<Elicitation<()>, ClientRequestError> {
        if self.version < ProtocolVersion::V2025_11_25 {
            return Err(ClientRequestError::NotInRevision { what: "URL-mode elicitation", version: self.version });
        }
        let params = elicitation.params(message, url);
        let answer = self.elicit_raw(ElicitRequestParams::ElicitRequestURL(params)).await?;
        answered(answer.action)
    }
}

/// A URL-mode elicitation made by [`Context::url_elicitation`]: its `elicitationId`, and the
/// way to tell the session that asked that the interaction is done
/// ([`complete`](Self::complete)). Cheap to clone, `Send + Sync + 'static`: hand it to
/// whatever learns of the completion (an HTTP callback, say), which usually happens after the
/// request that asked has ended.
#[derive(Clone)]
pub struct UrlElicitation {
    id: Arc<str>,
    peer: Peer,
    version: ProtocolVersion,
    layers: Option<crate::middleware::outgoing::Layers>,
}

impl std::fmt::Debug for UrlElicitation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UrlElicitation").field("id", &self.id).finish_non_exhaustive()
    }
}

impl UrlElicitation {
    /// The `elicitationId` (unique within the server; the client treats it as opaque).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The URL-mode `elicitation/create` params for this elicitation: what
    /// [`Context::elicit_url`] sends, and an entry of the -32042 error's list
    /// ([`required`](Self::required)).
    pub fn params(&self, message: impl Into<String>, url: impl Into<String>) -> ElicitRequestURLParams {
        ElicitRequestURLParams::new(message, url).with_elicitation_id(&*self.id)
    }

    /// A tool's failure with the -32042 "URL elicitation required" error (2025-11-25): the
    /// request cannot go on until the user has visited `url`; the client is expected to
    /// present it and retry the request afterwards. To list several, build the error with
    /// [`ToolError::url_elicitation_required`](crate::error::ToolError::url_elicitation_required).
    ///
    /// ```
    /// use mcp_server::{Context, ToolError};
    ///
    /// async fn files(ctx: Context, signed_in: bool) -> Result<String, ToolError> {
    ///     if !signed_in {
    ///         let pending = ctx.url_elicitation();
    ///         let url = format!("https://example.com/connect?state={}", pending.id());
    ///         return Err(pending.required("Sign in to Example Co to list your files", url));
    ///     }
    ///     Ok("...".into())
    /// }
    /// ```
    pub fn required(&self, message: impl Into<String>, url: impl Into<String>) -> crate::error::ToolError {
        let message = message.into();
        let params = self.params(message.clone(), url);
        crate::error::ToolError::url_elicitation_required(message, vec![params])
    }

    /// Tells the client that the out-of-band interaction is done
    /// (`notifications/elicitation/complete` with this id, 2025-11-25): it may retry what
    /// waited for it. Sent to the session that asked, whenever it is called; fails with
    /// [`CallError::NotInRevision`] in a revision without the notification (2026-07-28, where
    /// the client learns the outcome by retrying), and when the session is gone.
    pub async fn complete(&self) -> Result<(), CallError> {
        if self.version.is_stateless() {
            return Err(CallError::NotInRevision {
                method: ElicitationCompleteNotification::METHOD,
                version: self.version,
            });
        }
        let params = ElicitationCompleteNotificationParams::new(self.id.to_string());
        let layers = self.layers.as_ref();
        crate::middleware::outgoing::notify::<ElicitationCompleteNotification>(layers, &self.peer, params, None).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(action: &str, content: Value) -> ElicitResult {
        serde_json::from_value(json!({"action": action, "content": content})).unwrap()
    }

    #[derive(Debug, PartialEq, serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Seats {
        #[schemars(range(min = 1, max = 8))]
        seats: u8,
        #[serde(default)]
        window: bool,
    }

    #[test]
    fn answers_become_typed_outcomes() {
        let form = form_for::<Seats>(ProtocolVersion::V2025_11_25).unwrap().unwrap();
        let outcome = |r| form.outcome::<Seats>(r);
        assert_eq!(
            outcome(answer("accept", json!({"seats": 2}))).unwrap(),
            Elicitation::Accepted(Seats { seats: 2, window: false })
        );
        assert_eq!(outcome(answer("decline", json!({}))).unwrap(), Elicitation::Declined);
        assert_eq!(outcome(answer("cancel", json!({}))).unwrap(), Elicitation::Cancelled);
        let e = outcome(answer("accept", json!({"seats": 9, "window": "yes"}))).unwrap_err();
        let ClientRequestError::InvalidContent(ContentError::Schema(problems)) = &e else { panic!("{e}") };
        assert_eq!(problems.len(), 2, "{problems:?}");
        let e = outcome(answer("accept", json!({"seats": 1, "aisle": true}))).unwrap_err();
        assert!(matches!(e, ClientRequestError::InvalidContent(ContentError::Decode(_))), "{e}");
        assert!(
            e.to_string().starts_with("invalid elicitation content: it does not decode: unknown field `aisle`"),
            "{e}"
        );
        let e = outcome(ElicitResult::new(ElicitAction::Accept)).unwrap_err();
        assert!(e.to_string().contains("\"seats\" is a required property"), "{e}");
        let e = outcome(answer("maybe", json!({}))).unwrap_err();
        assert!(matches!(&e, ClientRequestError::InvalidInput(m) if m == "unknown elicitation action `maybe`"), "{e}");
    }
}
