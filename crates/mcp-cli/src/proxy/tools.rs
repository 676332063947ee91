//! What `mcp proxy URL` learns of the tools a server lists in the stateless revision
//! (2026-07-28): their `x-mcp-header` declarations (SEP-2243), so that a `tools/call` it POSTs
//! for the client carries the `Mcp-Param-{Name}` headers the server asks for; and a tool whose
//! declarations are invalid is left out of the listing the client gets, as the specification
//! asks of a client over Streamable HTTP. The declarations are read by `mcp-client`'s
//! [`ToolHeaders`], the rules our own client follows.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use bytes::Bytes;
use mcp_sdk::client::ToolHeaders;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Tools whose declarations are remembered at most: a first page starts afresh, and a page that
/// would pass the bound too (the tools it does not fit in get no headers).
const MAX_TOOLS: usize = 4096;

/// `tools/list` requests awaiting their answer that are followed at most (beyond: the ones
/// followed are forgotten, their answers pass unread).
const MAX_LISTINGS: usize = 64;

/// The declarations of the tools listed so far, and the listings awaited.
#[derive(Default)]
pub(super) struct Declarations {
    /// Tools that mirror arguments, and how.
    tools: Mutex<HashMap<String, ToolHeaders>>,
    /// The numbers of the stateless `tools/list` requests sent and not answered yet, each with
    /// whether it asks for the first page (no cursor).
    listings: Mutex<HashMap<i64, bool>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Declarations {
    /// A stateless `tools/list` goes to the server as request `number`.
    pub(super) fn listing(&self, number: i64, first_page: bool) {
        let mut listings = lock(&self.listings);
        if listings.len() >= MAX_LISTINGS {
            listings.clear();
        }
        listings.insert(number, first_page);
    }

    /// Request `number` failed: no answer will come.
    pub(super) fn forget(&self, number: i64) {
        lock(&self.listings).remove(&number);
    }

    /// An answer of the server to request `number`, on its way to the client: if it answers a
    /// listing, the declarations of its tools are learnt, and the tools with invalid ones are
    /// left out (the frame re-encoded then; otherwise it goes as it came).
    pub(super) fn answer(&self, number: i64, frame: Bytes) -> Bytes {
        let first_page = {
            let mut listings = lock(&self.listings);
            if listings.is_empty() {
                return frame;
            }
            match listings.remove(&number) {
                Some(first_page) => first_page,
                None => return frame,
            }
        };
        let Ok(mut message) = serde_json::from_slice::<Value>(&frame) else { return frame };
        let Some(tools) = message.pointer_mut("/result/tools").and_then(Value::as_array_mut) else { return frame };
        let listed = tools.len();
        self.learn(tools, first_page);
        if tools.len() == listed {
            return frame;
        }
        serde_json::to_vec(&message).map(Bytes::from).unwrap_or(frame)
    }

    /// Learns the declarations of a page of tools, leaving out (with a warning) the tools
    /// whose declarations break the rules.
    fn learn(&self, tools: &mut Vec<Value>, first_page: bool) {
        let mut declared = lock(&self.tools);
        if first_page || declared.len() + tools.len() > MAX_TOOLS {
            declared.clear();
        }
        tools.retain(|tool| {
            let Some(name) = tool.get("name").and_then(Value::as_str) else { return true };
            let Some(schema) = tool.get("inputSchema").and_then(Value::as_object) else {
                declared.remove(name);
                return true;
            };
            match ToolHeaders::from_schema(schema) {
                Ok(headers) if headers.is_empty() => {
                    declared.remove(name);
                    true
                }
                Ok(headers) => {
                    if declared.len() < MAX_TOOLS || declared.contains_key(name) {
                        declared.insert(name.to_owned(), headers);
                    }
                    true
                }
                Err(e) => {
                    tracing::warn!(tool = name, "leaving out a tool with invalid x-mcp-header declarations: {e}");
                    declared.remove(name);
                    false
                }
            }
        });
    }

    /// The `Mcp-Param-{Name}` headers (name after the prefix, lowercase; value as text) of a
    /// call of `tool` with these arguments (their raw JSON).
    pub(super) fn headers(&self, tool: &str, arguments: Option<&RawValue>) -> Vec<(String, String)> {
        let declared = lock(&self.tools);
        let Some(headers) = declared.get(tool) else { return Vec::new() };
        let arguments = arguments.and_then(|a| serde_json::from_str::<Map<String, Value>>(a.get()).ok());
        headers.headers(arguments.as_ref()).into_iter().map(|(name, value)| (name.to_owned(), value)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(tools: &str) -> Bytes {
        Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{"tools":[{tools}]}}}}"#))
    }

    const REGION: &str = r#"{"name":"sql","inputSchema":{"type":"object","properties":{
        "region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}}"#;
    const PLAIN: &str = r#"{"name":"echo","inputSchema":{"type":"object"}}"#;
    const INVALID: &str =
        r#"{"name":"bad","inputSchema":{"type":"object","properties":{"x":{"type":"number","x-mcp-header":"X"}}}}"#;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    #[test]
    fn a_listing_teaches_the_headers_of_its_tools() {
        let declarations = Declarations::default();
        declarations.listing(3, true);
        let frame = listing(&format!("{REGION},{PLAIN}"));
        assert_eq!(declarations.answer(3, frame.clone()), frame, "a valid listing passes as it came");
        let mut headers = declarations.headers("sql", Some(&raw(r#"{"region":"us-west1","n":7}"#)));
        headers.sort();
        assert_eq!(headers, [("n".to_owned(), "7".to_owned()), ("region".to_owned(), "us-west1".to_owned())]);
        assert!(declarations.headers("echo", Some(&raw(r#"{"region":"x"}"#))).is_empty());
        assert!(declarations.headers("unknown", None).is_empty());
        // An answer to anything else is not read.
        let other = listing(INVALID);
        assert_eq!(declarations.answer(4, other.clone()), other);
    }

    #[test]
    fn invalid_tools_are_left_out_and_a_first_page_starts_afresh() {
        let declarations = Declarations::default();
        declarations.listing(3, true);
        let frame = declarations.answer(3, listing(&format!("{REGION},{INVALID},{PLAIN}")));
        let message: Value = serde_json::from_slice(&frame).unwrap();
        let names: Vec<&str> =
            message["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["sql", "echo"]);
        // A next page adds; a first page forgets what the server no longer lists.
        declarations.listing(5, false);
        declarations.answer(5, listing(PLAIN));
        assert!(!declarations.headers("sql", Some(&raw(r#"{"region":"a"}"#))).is_empty());
        declarations.listing(6, true);
        declarations.answer(6, listing(PLAIN));
        assert!(declarations.headers("sql", Some(&raw(r#"{"region":"a"}"#))).is_empty());
    }

    #[test]
    fn listings_and_tools_are_bounded() {
        let declarations = Declarations::default();
        for n in 0..(MAX_LISTINGS as i64 * 3) {
            declarations.listing(n, false);
        }
        assert!(lock(&declarations.listings).len() <= MAX_LISTINGS);
        let many: Vec<String> =
            (0..MAX_TOOLS + 10).map(|i| REGION.replacen(r#""name":"sql""#, &format!(r#""name":"t{i}""#), 1)).collect();
        declarations.listing(1, true);
        declarations.answer(1, listing(&many.join(",")));
        assert_eq!(lock(&declarations.tools).len(), MAX_TOOLS);
    }
}
