//! What the client knows of the HTTP headers of its messages, handed to the HTTP transport as
//! per-message hints (`mcp_transport_http::client::RequestHeaders`): which message begins a
//! session and which completes its handshake, and for each stateless (2026-07-28) request its
//! `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-{Name}` headers of the arguments a tool
//! mirrors with `x-mcp-header` (SEP-2243), from the declarations of the tools it listed.
//!
//! [`ToolHeaders::from_schema`] reads (and validates) a tool's declarations;
//! [`ToolHeaders::headers`] makes the headers of one call; [`HeaderRules`] keeps them per tool
//! (and the tools rejected for invalid ones) for a connection over HTTP. The first two are
//! public (re-exported at the crate's root), for whoever POSTs a 2026-07-28 `tools/call` of
//! their own (the `mcp proxy` command does).

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::HashMap;
use std::sync::Mutex;

use mcp_jsonrpc::FrameHints;
use mcp_types::{ErrorCode, JsonObject, Tool};
use serde_json::{Map, Value};

/// Tools whose declarations are remembered at most (beyond: the list starts afresh).
const MAX_TOOLS: usize = 16_384;

/// JSON-RPC errors only a server of the stateless revision sends (header mismatch, missing
/// client capability, unsupported protocol version): in the body of a refusal of
/// `initialize`, they say the server is not an HTTP+SSE one.
const STATELESS_ERROR_CODES: [i64; 3] = [
    ErrorCode::HEADER_MISMATCH.code(),
    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY.code(),
    ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.code(),
];

/// The hints of `initialize` (a new session begins; a refusal with a stateless-revision error
/// is the server's answer, not a reason to fall back to HTTP+SSE).
#[cfg(feature = "http")]
pub(crate) fn initialize() -> Option<FrameHints> {
    Some(crate::http::RequestHeaders::initialize().final_errors(&STATELESS_ERROR_CODES).into_hints())
}

#[cfg(not(feature = "http"))]
pub(crate) fn initialize() -> Option<FrameHints> {
    let _ = STATELESS_ERROR_CODES;
    None
}

/// The hints of `notifications/initialized` (the handshake is complete).
#[cfg(feature = "http")]
pub(crate) fn initialized() -> Option<FrameHints> {
    Some(crate::http::RequestHeaders::initialized().into_hints())
}

#[cfg(not(feature = "http"))]
pub(crate) fn initialized() -> Option<FrameHints> {
    None
}

/// The `x-mcp-header` declarations of the tools a connection over HTTP listed, and the tools
/// rejected for invalid ones.
#[derive(Debug, Default)]
pub(crate) struct HeaderRules {
    /// Tools that mirror arguments, and how.
    declared: Mutex<HashMap<String, ToolHeaders>>,
    /// Tools left out of `tools/list`, and why.
    rejected: Mutex<HashMap<String, String>>,
}

impl HeaderRules {
    /// Reads the declarations of a page of tools, leaving out (with a warning in the log) the
    /// tools whose declarations break the rules. A listing from its first page (`fresh`)
    /// starts afresh: tools the server dropped are forgotten.
    pub(crate) fn learn(&self, tools: &mut Vec<Tool>, fresh: bool) {
        let mut declared = self.declared.lock_unpoisoned();
        let mut rejected = self.rejected.lock_unpoisoned();
        if fresh || declared.len() + tools.len() > MAX_TOOLS {
            declared.clear();
        }
        if fresh {
            rejected.clear();
        }
        tools.retain(|tool| match ToolHeaders::from_schema(&tool.input_schema) {
            Ok(headers) => {
                rejected.remove(&tool.name);
                if headers.is_empty() {
                    declared.remove(&tool.name);
                } else {
                    declared.insert(tool.name.clone(), headers);
                }
                true
            }
            Err(e) => {
                tracing::warn!(tool = %tool.name, "leaving out a tool with invalid x-mcp-header declarations: {e}");
                declared.remove(&tool.name);
                rejected.insert(tool.name.clone(), e.to_string());
                false
            }
        });
    }

    /// Why `tool` was left out of `tools/list`, if it was.
    pub(crate) fn rejected(&self, tool: &str) -> Option<String> {
        self.rejected.lock_unpoisoned().get(tool).cloned()
    }

    /// The hints of a stateless request of `method` with these (already encoded) params:
    /// revision `version`, `Mcp-Method`, `Mcp-Name` (`tools/call`, `prompts/get`:
    /// `params.name`; `resources/read`: `params.uri`; the tasks extension's `tasks/get`,
    /// `tasks/update`, `tasks/cancel`: `params.taskId`), and for `tools/call` the headers of the
    /// arguments the tool mirrors.
    #[cfg(feature = "http")]
    pub(crate) fn hints(&self, version: &str, method: &str, params: &JsonObject) -> Option<FrameHints> {
        let mut headers = crate::http::RequestHeaders::stateless(version, method);
        let name = match method {
            "tools/call" | "prompts/get" => params.get("name"),
            "resources/read" => params.get("uri"),
            // The tasks extension's methods name their task.
            "tasks/get" | "tasks/update" | "tasks/cancel" => params.get("taskId"),
            _ => None,
        };
        if let Some(name) = name.and_then(Value::as_str) {
            headers = headers.name(name);
            if method == "tools/call"
                && let Some(tool) = self.declared.lock_unpoisoned().get(name)
            {
                for (header, value) in tool.headers(params.get("arguments").and_then(Value::as_object)) {
                    headers = headers.param(header, &value);
                }
            }
        }
        Some(headers.into_hints())
    }

    #[cfg(not(feature = "http"))]
    pub(crate) fn hints(&self, _version: &str, _method: &str, _params: &JsonObject) -> Option<FrameHints> {
        None
    }
}

/// The largest integer JavaScript represents exactly; larger ones are not mirrored.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Keywords whose subschemas are not statically reachable through `properties`: an
/// `x-mcp-header` under one of them makes the tool invalid.
const UNREACHABLE: [&str; 18] = [
    "items",
    "prefixItems",
    "contains",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "patternProperties",
    "dependentSchemas",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$defs",
    "definitions",
];
/// Of [`UNREACHABLE`], the keywords whose value maps names to subschemas.
const NAMED_SUBSCHEMAS: [&str; 4] = ["patternProperties", "dependentSchemas", "$defs", "definitions"];

/// Why a tool's `x-mcp-header` declarations are invalid: a client over Streamable HTTP must
/// not use the tool (it drops it from `tools/list`). Its text says which property and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid x-mcp-header: {0}")]
pub struct InvalidToolHeaders(String);

/// One mirrored argument: where it is in the arguments, and its header's name (the part after
/// `Mcp-Param-`, lowercase).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Declaration {
    path: Vec<String>,
    header: String,
}

/// The `x-mcp-header` declarations of one tool's input schema (SEP-2243, revision 2026-07-28):
/// which arguments a call over Streamable HTTP mirrors in `Mcp-Param-{Name}` headers.
///
/// [`Client`](crate::Client) does this by itself for the tools it listed; this is for a
/// program that sends `tools/call` over HTTP by other means (a proxy). The header values are
/// text as the specification writes them; the HTTP client transport's `RequestHeaders::param`
/// encodes them for the wire (Base64 where plain text would not do).
///
/// ```
/// use mcp_client::ToolHeaders;
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {
///     "region": {"type": "string", "x-mcp-header": "Region"},
///     "query": {"type": "string"}
/// }});
/// let tool = ToolHeaders::from_schema(schema.as_object().unwrap()).unwrap();
/// let arguments = json!({"region": "us-west1", "query": "SELECT 1"});
/// // `Mcp-Param-Region: us-west1` (names come lowercase).
/// assert_eq!(tool.headers(arguments.as_object()), [("region", "us-west1".to_owned())]);
///
/// let invalid = json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}});
/// assert!(ToolHeaders::from_schema(invalid.as_object().unwrap()).is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolHeaders {
    declarations: Vec<Declaration>,
}

impl ToolHeaders {
    /// Reads the declarations of `input_schema` (a tool's `inputSchema`), checking every
    /// constraint of the specification: a non-empty RFC 9110 token, on a `string`, `integer`
    /// or `boolean` property reachable from the root through `properties` only, unique
    /// regardless of case. An error means the tool must be left out of `tools/list`.
    pub fn from_schema(input_schema: &Map<String, Value>) -> Result<ToolHeaders, InvalidToolHeaders> {
        let mut declarations = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        visit(input_schema, &mut Vec::new(), true, &mut declarations, &mut seen)?;
        Ok(ToolHeaders { declarations })
    }

    /// Whether the tool mirrors no argument.
    pub fn is_empty(&self) -> bool {
        self.declarations.is_empty()
    }

    /// The `Mcp-Param-{Name}` headers of a call with these arguments, as (name, value text),
    /// the name being the part after `Mcp-Param-`, lowercase: a value that is absent, `null`,
    /// not a primitive, or an integer beyond ±(2^53−1) gets no header.
    pub fn headers(&self, arguments: Option<&Map<String, Value>>) -> Vec<(&str, String)> {
        let Some(arguments) = arguments else { return Vec::new() };
        self.declarations
            .iter()
            .filter_map(|d| {
                let (first, rest) = d.path.split_first()?;
                let mut value = arguments.get(first)?;
                for key in rest {
                    value = value.as_object()?.get(key)?;
                }
                let text = primitive_text(value)?;
                Some((d.header.as_str(), text))
            })
            .collect()
    }
}

fn visit(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    reachable: bool,
    out: &mut Vec<Declaration>,
    seen: &mut Vec<String>,
) -> Result<(), InvalidToolHeaders> {
    let at = || if path.is_empty() { "<root>".to_owned() } else { path.join(".") };
    if let Some(raw) = schema.get(mcp_types::X_MCP_HEADER) {
        if !reachable || path.is_empty() {
            return Err(InvalidToolHeaders(format!(
                "{}: x-mcp-header is only allowed on properties reached from the root through `properties`",
                at()
            )));
        }
        let name = raw.as_str().unwrap_or_default();
        if name.is_empty() {
            return Err(InvalidToolHeaders(format!("{}: x-mcp-header must be a non-empty string", at())));
        }
        if !name.bytes().all(is_tchar) {
            return Err(InvalidToolHeaders(format!("{}: x-mcp-header {name:?} is not an HTTP token", at())));
        }
        let ty = schema.get("type").and_then(Value::as_str);
        if !matches!(ty, Some("string" | "integer" | "boolean")) {
            return Err(InvalidToolHeaders(format!(
                "{}: x-mcp-header is only allowed on string, integer and boolean properties, not {}",
                at(),
                ty.unwrap_or("<untyped>")
            )));
        }
        let lower = name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(InvalidToolHeaders(format!("x-mcp-header {name:?} is declared twice (ignoring case)")));
        }
        seen.push(lower.clone());
        out.push(Declaration { path: path.clone(), header: lower });
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (key, child) in properties {
            if let Value::Object(child) = child {
                path.push(key.clone());
                let r = visit(child, path, reachable, out, seen);
                path.pop();
                r?;
            }
        }
    }
    for keyword in UNREACHABLE {
        let Some(sub) = schema.get(keyword) else { continue };
        let branches: Vec<&Value> = match sub {
            Value::Array(items) => items.iter().collect(),
            Value::Object(named) if NAMED_SUBSCHEMAS.contains(&keyword) => named.values().collect(),
            other => vec![other],
        };
        for branch in branches {
            if let Value::Object(branch) = branch {
                path.push(format!("<{keyword}>"));
                let r = visit(branch, path, false, out, seen);
                path.pop();
                r?;
            }
        }
    }
    Ok(())
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The header text of a primitive argument (strings as they are, integers in decimal, booleans
/// as `true`/`false`); `None` for anything else.
fn primitive_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                return ((i as f64).abs() <= MAX_SAFE_INTEGER).then(|| i.to_string());
            }
            if let Some(u) = n.as_u64() {
                return ((u as f64) <= MAX_SAFE_INTEGER).then(|| u.to_string());
            }
            let f = n.as_f64()?;
            if !f.is_finite() {
                return None;
            }
            if f.fract() == 0.0 {
                // `42.0` is the integer 42, written as JavaScript would.
                return (f.abs() <= MAX_SAFE_INTEGER).then(|| format!("{}", f as i64));
            }
            Some(f.to_string())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn primitives_become_text_and_the_rest_no_header() {
        let tool = ToolHeaders::from_schema(&schema(json!({"type": "object", "properties": {
            "s": {"type": "string", "x-mcp-header": "S"},
            "i": {"type": "integer", "x-mcp-header": "I"},
            "b": {"type": "boolean", "x-mcp-header": "B"},
            "n": {"type": "object", "properties": {"deep": {"type": "integer", "x-mcp-header": "Deep"}}},
            "big": {"type": "integer", "x-mcp-header": "Big"},
            "nil": {"type": "string", "x-mcp-header": "Nil"},
            "obj": {"type": "string", "x-mcp-header": "Obj"}
        }})))
        .unwrap();
        let args = json!({"s": "x", "i": -7, "b": false, "n": {"deep": 42.0}, "big": 9_007_199_254_740_993u64,
            "nil": null, "obj": {"a": 1}});
        let mut headers: Vec<(String, String)> =
            tool.headers(args.as_object()).into_iter().map(|(n, v)| (format!("mcp-param-{n}"), v)).collect();
        headers.sort();
        assert_eq!(
            headers,
            [
                ("mcp-param-b".to_owned(), "false".to_owned()),
                ("mcp-param-deep".to_owned(), "42".to_owned()),
                ("mcp-param-i".to_owned(), "-7".to_owned()),
                ("mcp-param-s".to_owned(), "x".to_owned()),
            ]
        );
    }

    /// The tasks extension's methods name their task in `Mcp-Name`, as a server of 2026-07-28
    /// checks (a request without it is refused with -32020).
    #[cfg(feature = "http")]
    #[test]
    fn task_methods_name_their_task() {
        let rules = HeaderRules::default();
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let params = schema(json!({"taskId": "t-1"}));
            let hints = rules.hints("2026-07-28", method, &params);
            let headers = hints.as_ref().and_then(|h| h.downcast_ref::<crate::http::RequestHeaders>()).unwrap();
            assert_eq!(headers.header("mcp-name").unwrap(), "t-1", "{method}");
        }
    }

    #[test]
    fn invalid_declarations_are_rejected() {
        let prop = |p: Value| schema(json!({"type": "object", "properties": {"v": p}}));
        for (case, s) in [
            ("empty", prop(json!({"type": "string", "x-mcp-header": ""}))),
            ("object", prop(json!({"type": "object", "x-mcp-header": "D"}))),
            ("array", prop(json!({"type": "array", "items": {"type": "string"}, "x-mcp-header": "D"}))),
            ("null", prop(json!({"type": "null", "x-mcp-header": "D"}))),
            ("number", prop(json!({"type": "number", "x-mcp-header": "D"}))),
            ("untyped", prop(json!({"x-mcp-header": "D"}))),
            ("space", prop(json!({"type": "string", "x-mcp-header": "My Region"}))),
            ("colon", prop(json!({"type": "string", "x-mcp-header": "Region:Primary"}))),
            ("non-ascii", prop(json!({"type": "string", "x-mcp-header": "Région"}))),
            ("control", prop(json!({"type": "string", "x-mcp-header": "Region\t1"}))),
            ("not a string", prop(json!({"type": "string", "x-mcp-header": 5}))),
            (
                "duplicate",
                schema(json!({"type": "object", "properties": {
                    "a": {"type": "string", "x-mcp-header": "MyField"},
                    "b": {"type": "string", "x-mcp-header": "myfield"}}})),
            ),
            ("under items", prop(json!({"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}))),
            ("under anyOf", prop(json!({"anyOf": [{"type": "string", "x-mcp-header": "A"}]}))),
            ("under $defs", schema(json!({"$defs": {"x": {"type": "string", "x-mcp-header": "X"}}}))),
            ("at the root", schema(json!({"type": "string", "x-mcp-header": "Root"}))),
        ] {
            assert!(ToolHeaders::from_schema(&s).is_err(), "{case} should be rejected");
        }
        let fine = schema(json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}},
            "$defs": {"x": {"type": "string"}}}));
        assert!(!ToolHeaders::from_schema(&fine).unwrap().is_empty());
    }
}
