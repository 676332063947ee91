//! Hand-written helpers on the generated content and result types.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::{
    AnyResourceContents, AudioContent, BlobResourceContents, CallToolResult, ContentBlock, EmbeddedResource,
    ImageContent, ResourceLink, TextContent, TextResourceContents,
};

impl ContentBlock {
    /// Text content.
    ///
    /// ```
    /// let c = mcp_types::ContentBlock::text("hello");
    /// assert_eq!(serde_json::to_value(&c).unwrap(), serde_json::json!({"type": "text", "text": "hello"}));
    /// ```
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// An image from its bytes (base64-encoded here) and MIME type.
    ///
    /// ```
    /// let c = mcp_types::ContentBlock::image(b"\x89PNG", "image/png");
    /// assert_eq!(serde_json::to_value(&c).unwrap()["data"], "iVBORw==");
    /// ```
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent::new(STANDARD.encode(bytes), mime_type))
    }

    /// Audio from its bytes (base64-encoded here) and MIME type. Revisions: 2025-03-26 on.
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(AudioContent::new(STANDARD.encode(bytes), mime_type))
    }

    /// An embedded text resource.
    ///
    /// ```
    /// let c = mcp_types::ContentBlock::embedded_text("file:///a.txt", "text/plain", "hi");
    /// assert_eq!(serde_json::to_value(&c).unwrap()["resource"]["text"], "hi");
    /// ```
    pub fn embedded_text(uri: impl Into<String>, mime_type: impl Into<String>, text: impl Into<String>) -> Self {
        let contents = TextResourceContents::new(uri, text).with_mime_type(mime_type);
        ContentBlock::EmbeddedResource(EmbeddedResource::new(AnyResourceContents::TextResourceContents(contents)))
    }

    /// An embedded binary resource from its bytes (base64-encoded here).
    pub fn embedded_blob(uri: impl Into<String>, mime_type: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        let contents = BlobResourceContents::new(uri, STANDARD.encode(bytes)).with_mime_type(mime_type);
        ContentBlock::EmbeddedResource(EmbeddedResource::new(AnyResourceContents::BlobResourceContents(contents)))
    }

    /// A link to a resource the client can read. Revisions: 2025-06-18 on.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ContentBlock::ResourceLink(ResourceLink::new(name, uri))
    }

    /// The text, if this is text content.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl From<String> for ContentBlock {
    fn from(s: String) -> Self {
        ContentBlock::text(s)
    }
}

impl From<&str> for ContentBlock {
    fn from(s: &str) -> Self {
        ContentBlock::text(s)
    }
}

impl CallToolResult {
    /// A successful result with the given content.
    ///
    /// ```
    /// use mcp_types::{CallToolResult, ContentBlock};
    /// let r = CallToolResult::success(vec![ContentBlock::text("42")]);
    /// assert_eq!(r.is_error, None);
    /// ```
    pub fn success(content: impl Into<Vec<ContentBlock>>) -> Self {
        CallToolResult::new(content)
    }

    /// A tool error: the model sees the message and can correct itself (`isError: true`).
    ///
    /// ```
    /// let r = mcp_types::CallToolResult::error("city not found");
    /// assert_eq!(r.is_error, Some(true));
    /// assert_eq!(r.content[0].as_text(), Some("city not found"));
    /// ```
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult::new(vec![ContentBlock::text(message)]).with_is_error(true)
    }

    /// A structured result: `structuredContent` for clients that read it, and the same JSON as
    /// text content for those that do not (as the specification recommends).
    ///
    /// ```
    /// let r = mcp_types::CallToolResult::structured(serde_json::json!({"sum": 3}));
    /// assert_eq!(r.structured_content, Some(serde_json::json!({"sum": 3})));
    /// assert_eq!(r.content[0].as_text(), Some(r#"{"sum":3}"#));
    /// ```
    pub fn structured(value: serde_json::Value) -> Self {
        CallToolResult::new(vec![ContentBlock::text(value.to_string())]).with_structured_content(value)
    }

    /// Whether this result reports a tool error.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
}
