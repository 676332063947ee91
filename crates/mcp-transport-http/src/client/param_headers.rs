//! The request metadata headers of protocol revision 2026-07-28: `Mcp-Method`, `Mcp-Name`, and
//! the `Mcp-Param-{Name}` headers that mirror the tool arguments whose input-schema property
//! carries `x-mcp-header` (SEP-2243).
//!
//! [`ToolHeaders::from_schema`] reads (and validates) a tool's declarations;
//! [`ToolHeaders::headers`] makes the headers of one call; [`encode_header_value`] is the value
//! encoding (plain when the value is a safe ASCII field value, else `=?base64?…?=`).
//!
//! ```
//! use mcp_transport_http::client::ToolHeaders;
//!
//! let schema = serde_json::json!({"type": "object", "properties": {
//!     "region": {"type": "string", "x-mcp-header": "Region"},
//!     "query": {"type": "string"}
//! }});
//! let tool = ToolHeaders::from_schema(schema.as_object().unwrap()).unwrap();
//! let args = serde_json::json!({"region": "Hello, 世界", "query": "SELECT 1"});
//! let headers = tool.headers(args.as_object());
//! assert_eq!(headers.len(), 1);
//! assert_eq!(headers[0].0.as_str(), "mcp-param-region");
//! assert_eq!(headers[0].1, "=?base64?SGVsbG8sIOS4lueVjA==?=");
//!
//! let bad = serde_json::json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}});
//! assert!(ToolHeaders::from_schema(bad.as_object().unwrap()).is_err());
//! ```

use http::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

/// The schema keyword that designates a mirrored argument.
const X_MCP_HEADER: &str = "x-mcp-header";
/// The prefix of mirrored-argument headers.
const PARAM_PREFIX: &str = "mcp-param-";
const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";
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
/// not use the tool (it drops it from `tools/list`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid x-mcp-header: {0}")]
pub struct InvalidToolHeaders(pub String);

/// One mirrored argument: where it is in the arguments, and its header.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Declaration {
    path: Vec<String>,
    header: HeaderName,
}

/// The `x-mcp-header` declarations of one tool's input schema.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolHeaders {
    declarations: Vec<Declaration>,
}

impl ToolHeaders {
    /// Reads the declarations of `input_schema`, checking every constraint of the
    /// specification: a non-empty RFC 9110 token, on a `string`, `integer` or `boolean`
    /// property reachable from the root through `properties` only, unique regardless of case.
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

    /// The `Mcp-Param-{Name}` headers of a call with these arguments: a value that is absent,
    /// `null`, not a primitive, or an integer beyond ±(2^53−1) gets no header.
    pub fn headers(&self, arguments: Option<&Map<String, Value>>) -> Vec<(HeaderName, HeaderValue)> {
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
                Some((d.header.clone(), encode_header_value(&text)))
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
    if let Some(raw) = schema.get(X_MCP_HEADER) {
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
        let header = HeaderName::from_bytes(format!("{PARAM_PREFIX}{lower}").as_bytes())
            .map_err(|_| InvalidToolHeaders(format!("{}: x-mcp-header {name:?} is not an HTTP token", at())))?;
        seen.push(lower);
        out.push(Declaration { path: path.clone(), header });
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

/// Whether `s` can be sent as it is: visible ASCII, spaces and tabs inside, no leading or
/// trailing whitespace, not empty, and not looking like the Base64 sentinel.
fn is_plain(s: &str) -> bool {
    let sentinel = s.starts_with(SENTINEL_PREFIX) && s.ends_with(SENTINEL_SUFFIX);
    !s.is_empty()
        && !sentinel
        && s.trim_matches(|c| c == ' ' || c == '\t') == s
        && s.bytes().all(|b| b == b'\t' || (0x20..=0x7e).contains(&b))
}

/// Encodes a value for `Mcp-Name` or `Mcp-Param-{Name}`: the value itself when it is a safe
/// plain ASCII field value, else `=?base64?{Base64 of its UTF-8}?=` (also for the empty
/// string and for values that look like the sentinel).
///
/// ```
/// use mcp_transport_http::client::encode_header_value;
/// assert_eq!(encode_header_value("us west 1"), "us west 1");
/// assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
/// assert_eq!(encode_header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
/// assert_eq!(encode_header_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
/// ```
pub fn encode_header_value(value: &str) -> HeaderValue {
    if is_plain(value)
        && let Ok(v) = HeaderValue::from_str(value)
    {
        return v;
    }
    let encoded = format!("{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}", base64(value.as_bytes()));
    // Base64 and the sentinel are visible ASCII.
    HeaderValue::from_str(&encoded).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// Standard Base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn base64_matches_rfc_4648() {
        for (plain, encoded) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE=")]
        {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn values_are_encoded_as_the_specification_shows() {
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(encode_header_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode_header_value("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(encode_header_value("a\tb"), "a\tb");
        assert_eq!(encode_header_value("line1\r\nline2"), "=?base64?bGluZTENCmxpbmUy?=");
        assert_eq!(encode_header_value(""), "=?base64??=");
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
        let mut headers: Vec<(String, String)> = tool
            .headers(args.as_object())
            .into_iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
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
