//! The few decisions the schemas cannot make for the generator, in one place.
//!
//! Everything else (names of inline types, which revisions have a field, which are required)
//! comes from the schemas themselves.

use super::model::Ty;

/// Definitions that one revision names differently from the others, mapped to the one Rust
/// name they share. `rev` is the revision index (0 = 2024-11-05).
pub fn canonical_name(name: &str, rev: usize) -> String {
    let renamed = match (name, rev) {
        // Same shape, renamed in 2025-06-18.
        ("ResourceReference", _) => "ResourceTemplateReference",
        // Same shape, renamed in 2025-11-25 (where `JSONRPCResponse` became the union).
        ("JSONRPCError", _) => "JSONRPCErrorResponse",
        ("JSONRPCResponse", 0..=2) => "JSONRPCResultResponse",
        // 2025-06-18's single enum schema is what 2025-11-25 calls the legacy titled one.
        ("EnumSchema", 2) => "LegacyTitledEnumSchema",
        // Base shapes whose schema names would shadow `std::result::Result` and this crate's
        // `Request`/`Notification` traits.
        ("Request", _) => "GenericRequest",
        ("Notification", _) => "GenericNotification",
        ("Result", _) => "GenericResult",
        ("Error", _) => "ErrorObject",
        // 2025-06-18 only has the form mode, inline; 2025-11-25 made the params a union.
        ("ElicitRequestParams", 0..=2) => "ElicitRequestFormParams",
        _ => name,
    };
    renamed.to_owned()
}

/// Definitions that are plain JSON in Rust.
pub fn builtin(name: &str) -> Option<Ty> {
    match name {
        "JSONValue" => Some(Ty::Any),
        "JSONObject" => Some(Ty::Object),
        "JSONArray" => Some(Ty::Array(Box::new(Ty::Any))),
        _ => None,
    }
}

/// Field types fixed by hand.
pub fn field_type(owner: &str, field: &str) -> Option<Ty> {
    match (owner, field) {
        // A tool's schemas are arbitrary JSON Schema objects: keep every keyword.
        ("Tool", "inputSchema" | "outputSchema") => Some(Ty::Object),
        _ => None,
    }
}

/// Maps whose members keep the order they come in on the wire (an `IndexMap`) instead of being
/// sorted (a `BTreeMap`), because the order means something to the reader.
pub fn ordered_map(owner: &str, field: &str) -> bool {
    // The fields of an elicitation form, in the order the server asks them (every revision
    // with elicitation: 2025-06-18 and later).
    matches!((owner, field), ("ElicitRequestFormParamsRequestedSchema", "properties"))
}

/// Names for inline types that several places share, or that read better shorter.
pub fn hoist_name(owner: &str, field: &str) -> Option<String> {
    let name = match (owner, field) {
        // Inline `_meta` objects are the shared meta objects of later revisions.
        (o, "_meta") if o.contains("Request") => "RequestMetaObject",
        (o, "_meta") if o.contains("Notification") => "NotificationMetaObject",
        (o, "_meta") if o.contains("Result") => "ResultMetaObject",
        (_, "_meta") => "MetaObject",
        ("EmbeddedResource", "resource") => "AnyResourceContents",
        ("CompleteRequestParams", "ref") => "CompletionReference",
        ("CreateMessageResult" | "SamplingMessage", "content") => "SamplingContent",
        ("Annotated", "annotations") => "Annotations",
        (_, "cacheScope") => "CacheScope",
        ("ElicitResult", "action") => "ElicitAction",
        ("CreateMessageRequestParams", "includeContext") => "IncludeContext",
        _ => return None,
    };
    Some(name.to_owned())
}

/// Structs that keep unknown keys (beyond those whose schema allows additional properties).
pub fn keeps_extra(name: &str) -> bool {
    // Capability objects were free-form in early revisions and grow in every one.
    name.contains("Capabilities")
}

/// Types whose `WireSerialize` is written by hand because revisions disagree on their shape.
pub fn manual_wire(name: &str) -> bool {
    matches!(name, "SamplingContent")
}

/// The result type of a request definition.
pub fn result_of(request: &str, model: &super::model::Model) -> String {
    let by_name = request.strip_suffix("Request").map(|base| format!("{base}Result"));
    match by_name {
        Some(r) if model.defs.contains_key(&r) => r,
        _ => "EmptyResult".to_owned(),
    }
}

/// Where a field refers to a struct in one revision and to a union holding it in another,
/// the union is the field's type.
pub fn widen_named(a: &str, b: &str) -> Option<&'static str> {
    match (a, b) {
        // Plain `_meta` objects met a specialised one at the same place: all keep unknown keys.
        ("MetaObject", "RequestMetaObject") | ("RequestMetaObject", "MetaObject") => Some("RequestMetaObject"),
        ("ElicitRequestFormParams", "ElicitRequestParams") | ("ElicitRequestParams", "ElicitRequestFormParams") => {
            Some("ElicitRequestParams")
        }
        _ => None,
    }
}

/// Unions that one revision wrote out as their only member.
pub fn single_variant_union(name: &str, rev: usize) -> Option<&'static str> {
    match (name, rev) {
        // 2026-07-28: the client's only notification is cancellation.
        ("ClientNotification", 4) => Some("CancelledNotification"),
        _ => None,
    }
}

/// The name of an inline type in array-item position, `hoist` being the array's name.
pub fn item_name(hoist: &str) -> String {
    match hoist {
        "ReadResourceResultContents" => "AnyResourceContents".to_owned(),
        // 2025-03-26's batches, written inline in `JSONRPCMessage`.
        "JSONRPCMessageVariant2" => "JSONRPCBatchRequestItem".to_owned(),
        "JSONRPCMessageVariant5" => "JSONRPCBatchResponseItem".to_owned(),
        _ => format!("{hoist}Item"),
    }
}

/// Schema names that get no `pub type` alias to their Rust name.
pub fn no_alias(schema_name: &str) -> bool {
    matches!(
        schema_name,
        "Request" | "Notification" | "Result" | "Error" | "JSONRPCResponse" | "EnumSchema" | "ElicitRequestParams"
    )
}

/// The value written for a field that a revision requires when the Rust value leaves it unset.
pub fn wire_default(json: &str) -> Option<&'static str> {
    match json {
        // 2026-07-28: a result without `resultType` is a complete one.
        "resultType" => Some("complete"),
        _ => None,
    }
}

/// Variants added to a union beyond what the schemas list.
pub fn extra_variants(name: &str) -> Vec<Ty> {
    match name {
        // The schema's `integer` for elicited values contradicts its own number fields
        // (`NumberSchema` allows `type: "number"`, with decimal defaults) and the official
        // TypeScript SDK, which accepts any number: decimals decode as `Number`.
        "ElicitResultContentValue" => vec![Ty::Number],
        _ => Vec::new(),
    }
}

/// Structs that get a `with_<field>` setter for each optional member: the params and results of
/// requests and the objects inside them (`CompleteResultCompletion`, ...), the request `_meta`,
/// and the definitions users build themselves (tools, prompts, resources, content). Every other
/// struct (JSON-RPC envelopes, capabilities, schemas) is left without, to keep `types.rs` (and
/// its compile time) in check.
pub fn has_setters(name: &str) -> bool {
    let envelope = name.starts_with("JSONRPC") || name.starts_with("Generic") || name.ends_with("Response");
    let message_part = name.contains("Params") || name.contains("Result");
    (message_part && !envelope)
        || matches!(
            name,
            "RequestMetaObject"
                | "Tool"
                | "ToolAnnotations"
                | "Prompt"
                | "PromptArgument"
                | "Resource"
                | "ResourceTemplate"
                | "Implementation"
                | "Root"
                | "Icon"
                | "TextResourceContents"
                | "BlobResourceContents"
                | "TextContent"
                | "ImageContent"
                | "AudioContent"
                | "EmbeddedResource"
                | "ResourceLink"
                | "ToolUseContent"
                | "ToolResultContent"
                | "Annotations"
        )
}
