//! What handlers may return: conversions from plain Rust values to tool results, prompt
//! messages, resource contents and completions, and from strings to prompt arguments and URI
//! variables.
//!
//! The `#[tool]`, `#[prompt]` and `#[resource]` macros of `mcp-macros` convert return values
//! with these traits (after taking a `Result` apart themselves, so that any `E: Display` can be
//! the error type). Implement them for your own types to return those.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mcp_types::{
    AnyResourceContents, BlobResourceContents, CallToolResult, ContentBlock, ErrorObject, GetPromptResult,
    PromptMessage, Role, TextResourceContents,
};

use super::completion::Completion;
use crate::error::ToolError;

/// A value a tool can return.
///
/// | type | result |
/// |---|---|
/// | `CallToolResult` | as is |
/// | `String`, `&str`, `ContentBlock`, `Vec<ContentBlock>` | that content |
/// | `()` | empty content |
/// | [`Json<T>`] with `T: Serialize` | `structuredContent` (any JSON value) and its JSON as text |
/// | `Result<T, E>` with `E: Into<ToolError>` | `Err` fails the call (a `String` error becomes an `isError` result) |
///
/// Macro-defined tools may also return any `T: Serialize + JsonSchema`, which becomes
/// `structuredContent` with a derived `outputSchema`, and `Result<T, E>` for any `E: Display`.
///
/// ```
/// use mcp_server::IntoToolResult;
///
/// let result = "done".into_tool_result().unwrap();
/// assert_eq!(result.content[0].as_text(), Some("done"));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "not a tool result",
    note = "return a type that implements `Serialize + JsonSchema` (structured output), `Json<T>`, `String`, `&str`, \
            `ContentBlock`, `Vec<ContentBlock>`, `CallToolResult` or `()`, or a `Result` of one of these \
            with an error that implements `Display`"
)]
pub trait IntoToolResult {
    /// Converts the value into a tool result.
    fn into_tool_result(self) -> Result<CallToolResult, ToolError>;
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(vec![ContentBlock::text(self)]))
    }
}

impl IntoToolResult for &str {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(vec![ContentBlock::text(self)]))
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(vec![self]))
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(self))
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(Vec::new()))
    }
}

impl<T: IntoToolResult, E: Into<ToolError>> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        self.map_err(Into::into)?.into_tool_result()
    }
}

/// Structured output: `T` as the result's `structuredContent`, with its JSON as text content too
/// (for clients that read only content, as the specification recommends).
///
/// `T` may be any JSON value: an object, which every revision allows, or (protocol revision
/// 2026-07-28) an array, a string, a number, ... For clients of older revisions a value that is
/// not an object is sent as `{"result": value}` (see [`ToolDef::output_schema`]).
///
/// A `#[tool]` that returns `Json<T>` with `T: JsonSchema` gets `T`'s schema as its output
/// schema, whatever `T` is (a `String` returned bare is text content instead).
///
/// ```
/// use mcp_server::{IntoToolResult, Json};
///
/// let result = Json(vec![1, 2, 3]).into_tool_result().unwrap();
/// assert_eq!(result.structured_content, Some(serde_json::json!([1, 2, 3])));
/// assert_eq!(result.content[0].as_text(), Some("[1,2,3]"));
/// ```
///
/// [`ToolDef::output_schema`]: crate::ToolDef::output_schema
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

impl<T: serde::Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        let failed = |e: serde_json::Error| ToolError::Tool(format!("the result could not be serialized: {e}"));
        let text = serde_json::to_string(&self.0).map_err(failed)?;
        let structured = serde_json::to_value(&self.0).map_err(failed)?;
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).with_structured_content(structured))
    }
}

/// A value a prompt can return: its messages.
///
/// | type | messages |
/// |---|---|
/// | `GetPromptResult` | as is |
/// | `Vec<PromptMessage>`, `PromptMessage` | those |
/// | `String`, `&str` | one user message with that text |
/// | `Result<T, E>` with `E: Into<ErrorObject>` | `Err` fails the request |
///
/// ```
/// use mcp_server::IntoPromptResult;
///
/// let result = "Review this code".into_prompt_result().unwrap();
/// assert_eq!(result.messages[0].content.as_text(), Some("Review this code"));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt",
    label = "not prompt messages",
    note = "return `String`, `&str`, `PromptMessage`, `Vec<PromptMessage>` or `GetPromptResult`, or a `Result` \
            of one of these with an error that implements `Display`"
)]
pub trait IntoPromptResult {
    /// Converts the value into the result of `prompts/get`.
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        PromptMessage::new(Role::User, ContentBlock::text(self)).into_prompt_result()
    }
}

impl IntoPromptResult for &str {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        self.to_owned().into_prompt_result()
    }
}

impl<T: IntoPromptResult, E: Into<ErrorObject>> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        self.map_err(Into::into)?.into_prompt_result()
    }
}

/// A value a resource can return: its contents.
///
/// | type | contents |
/// |---|---|
/// | `String`, `&str` | text contents at the URI read |
/// | `Vec<u8>` | binary contents (base64-encoded) at the URI read |
/// | `TextResourceContents`, `BlobResourceContents`, `AnyResourceContents`, `Vec<AnyResourceContents>` | as is |
/// | `Result<T, E>` with `E: Into<ErrorObject>` | `Err` fails the request |
///
/// Text and binary contents carry the resource's MIME type when it has one.
///
/// ```
/// use mcp_server::IntoResourceContents;
///
/// let contents = "# Notes".into_contents("notes://all", Some("text/markdown")).unwrap();
/// let json = serde_json::to_value(&contents).unwrap();
/// assert_eq!(json, serde_json::json!([{"uri": "notes://all", "mimeType": "text/markdown", "text": "# Notes"}]));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource",
    label = "not resource contents",
    note = "return `String`, `&str`, `Vec<u8>`, `TextResourceContents`, `BlobResourceContents`, \
            `AnyResourceContents` or `Vec<AnyResourceContents>`, or a `Result` of one of these with an error \
            that implements `Display`"
)]
pub trait IntoResourceContents {
    /// Converts the value into the contents of `uri`, of type `mime_type` if known.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<AnyResourceContents>, ErrorObject>;
}

impl IntoResourceContents for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<AnyResourceContents>, ErrorObject> {
        let mut contents = TextResourceContents::new(uri, self);
        contents.mime_type = mime_type.map(str::to_owned);
        contents.into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for &str {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<AnyResourceContents>, ErrorObject> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<AnyResourceContents>, ErrorObject> {
        let mut contents = BlobResourceContents::new(uri, STANDARD.encode(self));
        contents.mime_type = mime_type.map(str::to_owned);
        contents.into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for TextResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<AnyResourceContents>, ErrorObject> {
        Ok(vec![AnyResourceContents::TextResourceContents(self)])
    }
}

impl IntoResourceContents for BlobResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<AnyResourceContents>, ErrorObject> {
        Ok(vec![AnyResourceContents::BlobResourceContents(self)])
    }
}

impl IntoResourceContents for AnyResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<AnyResourceContents>, ErrorObject> {
        Ok(vec![self])
    }
}

impl IntoResourceContents for Vec<AnyResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<AnyResourceContents>, ErrorObject> {
        Ok(self)
    }
}

impl<T: IntoResourceContents, E: Into<ErrorObject>> IntoResourceContents for Result<T, E> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<AnyResourceContents>, ErrorObject> {
        self.map_err(Into::into)?.into_contents(uri, mime_type)
    }
}

/// A value a completion function can return: the candidate values, best first.
///
/// Implemented for [`Completion`], `Vec<String>`, `Vec<&str>` and `Result<T, E>` with
/// `E: Into<ErrorObject>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a completion function",
    label = "not completion values",
    note = "return `Vec<String>`, `Vec<&str>` or `Completion`, or a `Result` of one of these with an error \
            that implements `Display`"
)]
pub trait IntoCompletion {
    /// Converts the value into completion candidates.
    fn into_completion(self) -> Result<Completion, ErrorObject>;
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Result<Completion, ErrorObject> {
        Ok(self)
    }
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Result<Completion, ErrorObject> {
        Ok(Completion { values: self })
    }
}

impl IntoCompletion for Vec<&str> {
    fn into_completion(self) -> Result<Completion, ErrorObject> {
        Ok(Completion { values: self.into_iter().map(str::to_owned).collect() })
    }
}

impl<T: IntoCompletion, E: Into<ErrorObject>> IntoCompletion for Result<T, E> {
    fn into_completion(self) -> Result<Completion, ErrorObject> {
        self.map_err(Into::into)?.into_completion()
    }
}

/// The type of a prompt argument or a URI-template variable: `String` when it is required,
/// `Option<String>` when it is optional.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a prompt argument or a URI variable",
    label = "prompt arguments and URI variables are strings",
    note = "use `String`, or `Option<String>` for an optional one"
)]
pub trait StringArgument: Sized {
    /// Whether the argument may be left out.
    const OPTIONAL: bool;
    /// The value from the argument `name`, if given.
    fn from_argument(name: &str, value: Option<String>) -> Result<Self, ErrorObject>;
}

impl StringArgument for String {
    const OPTIONAL: bool = false;
    fn from_argument(name: &str, value: Option<String>) -> Result<Self, ErrorObject> {
        value.ok_or_else(|| ErrorObject::invalid_params(format!("missing argument `{name}`")))
    }
}

impl StringArgument for Option<String> {
    const OPTIONAL: bool = true;
    fn from_argument(_: &str, value: Option<String>) -> Result<Self, ErrorObject> {
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_meaning_of_their_errors() {
        let failed: Result<String, &str> = Err("no such city");
        assert!(matches!(failed.into_tool_result(), Err(ToolError::Tool(m)) if m == "no such city"));
        let protocol: Result<(), ErrorObject> = Err(ErrorObject::invalid_params("bad"));
        assert!(matches!(protocol.into_tool_result(), Err(ToolError::Protocol(_))));
        assert_eq!(().into_tool_result().unwrap().content, vec![]);
        let contents = vec![1u8, 2].into_contents("x://b", None).unwrap();
        assert_eq!(serde_json::to_value(&contents).unwrap(), serde_json::json!([{"uri": "x://b", "blob": "AQI="}]));
        assert_eq!(vec!["a"].into_completion().unwrap().values, ["a"]);
    }

    #[test]
    fn string_arguments_are_required_unless_optional() {
        assert_eq!(String::from_argument("a", Some("x".into())).unwrap(), "x");
        let missing = String::from_argument("a", None).unwrap_err();
        assert!(missing.to_string().contains("missing argument `a`"), "{missing}");
        assert_eq!(<Option<String>>::from_argument("a", None).unwrap(), None);
        const { assert!(!String::OPTIONAL && <Option<String>>::OPTIONAL) };
    }
}
