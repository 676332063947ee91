//! The tool arguments mirrored into `Mcp-Param-*` headers (2026-07-28, feature `http`): read
//! from a tool's input schema (`x-mcp-header`) once, when the tool is defined, and each checked
//! against its header when a call comes (`serve::param_headers`).

use std::borrow::Cow;

use axum::http::{HeaderMap, HeaderName};
use mcp_jsonrpc::raw::{self as json, Index, Object};
use mcp_transport_http::headers::{MCP_PARAM_PREFIX, mirrored_value};
use mcp_transport_http::server::Rejection;

/// A tool argument mirrored into a `Mcp-Param-{header}` header (its schema property has
/// `x-mcp-header`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeaderParam {
    /// The chain of `properties` keys from the arguments' root to the value.
    path: Vec<String>,
    /// The header's name part, as the schema spells it (`Region` for `Mcp-Param-Region`).
    header: String,
    /// The header's name (`mcp-param-region`); `None` when it makes no valid header name, so
    /// that no request can carry it.
    name: Option<HeaderName>,
}

impl HeaderParam {
    /// The `x-mcp-header` annotations of a tool's input schema reachable through `properties`
    /// alone, read once when the tool is defined.
    pub(crate) fn from_schema_object(schema: &serde_json::Map<String, serde_json::Value>) -> Vec<HeaderParam> {
        type JsonObject = serde_json::Map<String, serde_json::Value>;
        fn walk(schema: &JsonObject, path: &mut Vec<String>, out: &mut Vec<HeaderParam>) {
            let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) else { return };
            for (key, property) in properties {
                let Some(property) = property.as_object() else { continue };
                let header = property.get(mcp_types::X_MCP_HEADER).and_then(|h| h.as_str());
                if header.is_none() && !property.contains_key("properties") {
                    continue;
                }
                path.push(key.clone());
                if let Some(header) = header {
                    out.push(HeaderParam::new(path.clone(), header));
                }
                walk(property, path, out);
                path.pop();
            }
        }
        let mut out = Vec::new();
        walk(schema, &mut Vec::new(), &mut out);
        out
    }

    fn new(path: Vec<String>, header: &str) -> HeaderParam {
        // `from_bytes` lowers the case: header names compare case-insensitively.
        let name = HeaderName::from_bytes(format!("{MCP_PARAM_PREFIX}{header}").as_bytes()).ok();
        HeaderParam { path, header: header.to_owned(), name }
    }

    /// The header agrees with the argument: both absent (a `null` argument counts as absent),
    /// or the header's (decoded) value is the argument's string, boolean or number, numbers
    /// compared as numbers (`42.0` and `42` agree).
    pub(crate) fn check(&self, arguments: Option<Object<'_>>, headers: &HeaderMap) -> Result<(), Rejection> {
        let value = self.value_in(arguments).filter(|v| *v != "null");
        let numeric = value.is_some_and(|v| v.starts_with(|c: char| c == '-' || c.is_ascii_digit()));
        let expected: Option<Cow<'_, str>> = match value {
            Some(v) if v.starts_with('"') => json::str_text(v),
            Some(v @ ("true" | "false")) => Some(Cow::Borrowed(v)),
            Some(v) if numeric => Some(Cow::Borrowed(v)),
            // Objects and arrays are not mirrored.
            Some(_) | None => None,
        };
        let got = self.name.as_ref().and_then(|name| mirrored_value(headers, name));
        let agrees = match (got, expected) {
            (None, None) => true,
            (Some(Ok(got)), Some(want)) => {
                got == want
                    || (numeric && matches!((got.parse::<f64>(), want.parse::<f64>()), (Ok(a), Ok(b)) if a == b))
            }
            _ => false,
        };
        if agrees {
            return Ok(());
        }
        Err(Rejection::header_mismatch(format_args!(
            "Mcp-Param-{} does not agree with argument `{}`",
            self.header,
            self.path.join(".")
        )))
    }

    /// The JSON text of the argument at [`HeaderParam::path`], if every step is an object
    /// that has the next key.
    fn value_in<'a>(&self, arguments: Option<Object<'a>>) -> Option<&'a str> {
        let (first, rest) = self.path.split_first()?;
        let mut value = arguments?.get(first)?;
        for key in rest {
            value = member(value, key)?;
        }
        Some(value)
    }
}

/// Member `key` of the JSON object `text` (valid JSON), borrowed from `text`.
fn member<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let index = Index::of_valid(text)?;
    let value = index.object(text).get(key)?;
    // `value` lies within `text`: re-borrow it from there, past the index's life.
    let start = (value.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    text.get(start..start + value.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(schema: serde_json::Value) -> Vec<HeaderParam> {
        HeaderParam::from_schema_object(schema.as_object().unwrap())
    }

    fn check(param: &HeaderParam, arguments: &str, header: Option<&str>) -> bool {
        let mut headers = HeaderMap::new();
        if let Some(v) = header {
            headers.insert(param.name.clone().unwrap(), v.parse().unwrap());
        }
        let index = Index::of_valid(arguments);
        param.check(index.as_ref().map(|i| i.object(arguments)), &headers).is_ok()
    }

    #[test]
    fn the_annotations_are_found_through_properties() {
        let found = params(serde_json::json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "plain": {"type": "string"},
            "nested": {"type": "object", "properties": {"zone": {"x-mcp-header": "Zone"}}},
        }}));
        let found: Vec<(Vec<String>, &str, &str)> =
            found.iter().map(|p| (p.path.clone(), p.header.as_str(), p.name.as_ref().unwrap().as_str())).collect();
        assert_eq!(
            found,
            [
                (vec!["nested".to_owned(), "zone".to_owned()], "Zone", "mcp-param-zone"),
                (vec!["region".to_owned()], "Region", "mcp-param-region"),
            ]
        );
    }

    #[test]
    fn headers_agree_with_arguments_as_the_spec_says() {
        let p = &params(serde_json::json!({"properties": {"n": {"x-mcp-header": "N"}}}))[0];
        assert!(check(p, r#"{"n":"a b"}"#, Some("a b")));
        assert!(check(p, r#"{"n":"a\u0020b"}"#, Some("a b")), "escapes are read");
        assert!(check(p, r#"{"n":" padded "}"#, Some("=?base64?IHBhZGRlZCA=?=")));
        assert!(check(p, r#"{"n":42}"#, Some("42.0")), "numbers compare as numbers");
        assert!(check(p, r#"{"n":true}"#, Some("true")));
        assert!(check(p, r#"{"n":null}"#, None), "null: no header");
        assert!(check(p, r#"{}"#, None));
        assert!(!check(p, r#"{"n":"x"}"#, None), "a value without its header");
        assert!(!check(p, r#"{}"#, Some("x")), "a header without its value");
        assert!(!check(p, r#"{"n":"42"}"#, Some("42.0")), "strings compare as text");
        assert!(!check(p, r#"{"n":{"a":1}}"#, Some("{}")), "objects are not mirrored");
        let nested = &params(serde_json::json!({"properties": {"a": {"properties": {"b": {"x-mcp-header": "B"}}}}}))[0];
        assert!(check(nested, r#"{"a":{"c":1,"b":"deep"}}"#, Some("deep")));
        assert!(!check(nested, r#"{"a":{"b":"deep"}}"#, Some("other")));
        assert!(check(nested, r#"{"a":"no object"}"#, None));
    }
}
