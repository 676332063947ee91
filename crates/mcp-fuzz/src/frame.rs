//! The JSON-RPC frame parser (`mcp_jsonrpc::message::parse`) and the raw member index
//! (`mcp_jsonrpc::raw`).

use mcp_jsonrpc::message::{self, Message, Parsed};
use mcp_jsonrpc::raw::{self, Index};
use mcp_types::ErrorCode;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

/// Parses `data` as one frame: never a panic; an invalid frame is -32700 exactly when it is not
/// JSON (-32600 otherwise); a message agrees with serde_json's reading of the frame, and every
/// accessor of a request works on it.
pub fn frame(data: &[u8]) {
    // JSON by the grammar: UTF-8 (RFC 8259), numbers of any size (serde_json's `Value` refuses
    // those past `f64`, a message's members need not).
    let is_json = std::str::from_utf8(data).is_ok() && serde_json::from_slice::<IgnoredAny>(data).is_ok();
    let json: Option<Value> = serde_json::from_slice(data).ok();
    match message::parse(data) {
        Parsed::Single(m) => {
            assert!(is_json, "a message from a frame that is not JSON");
            if let Some(json) = json {
                check_message(&m, &json);
            }
        }
        Parsed::Batch(items) => {
            assert!(is_json, "a batch from a frame that is not JSON");
            let Some(json) = json else { return };
            let elements = json.as_array().expect("a batch is an array");
            assert_eq!(elements.len(), items.len(), "one outcome per batch element");
            for (item, element) in items.iter().zip(elements) {
                match item {
                    Ok(m) => check_message(m, element),
                    Err(invalid) => assert_eq!(invalid.error.code, ErrorCode::INVALID_REQUEST.code(), "{element}"),
                }
            }
        }
        Parsed::Invalid { error, .. } => {
            let expected = if is_json { ErrorCode::INVALID_REQUEST } else { ErrorCode::PARSE_ERROR };
            // Valid JSON past serde_json's nesting limit reads as malformed to both.
            assert_eq!(error.code, expected.code(), "{}", error.message);
        }
    }
}

/// Whether an id as we read it is the frame's: the same JSON value, or the same number (`-0`
/// reads as the integer 0, which equals it in every JSON reader: JavaScript's `Map` keys,
/// Python's `json`).
fn same_id(ours: Option<&Value>, theirs: Option<&Value>) -> bool {
    match (ours, theirs) {
        (Some(Value::Number(a)), Some(Value::Number(b))) => a == b || (b.is_f64() && a.as_f64() == b.as_f64()),
        (a, b) => a == b,
    }
}

fn check_message(m: &Message, json: &Value) {
    assert_eq!(json["jsonrpc"], "2.0", "{json}");
    match m {
        Message::Request(req) => {
            assert_eq!(json["method"], req.method.as_str());
            assert!(same_id(serde_json::to_value(&req.id).ok().as_ref(), json.get("id")), "{json}");
            check_params(req.params.as_deref(), json.get("params"));
            let _ = (req.is_indexed(), req.carries_protocol_version(), req.param("name"), req.meta("progressToken"));
            if let (Some(object), Some(Value::Object(params))) = (req.params_object(), json.get("params")) {
                for (key, value) in params {
                    let text = object.get(key).unwrap_or_else(|| panic!("params member {key:?} not found"));
                    assert_eq!(&serde_json::from_str::<Value>(text).unwrap(), value);
                }
            }
        }
        Message::Notification(n) => {
            assert_eq!(json["method"], n.method.as_str());
            assert!(json.get("id").is_none(), "a notification with an id: {json}");
            check_params(n.params.as_deref(), json.get("params"));
        }
        Message::Response(r) => {
            let id = r.id.as_ref().map(|id| serde_json::to_value(id).unwrap());
            assert!(
                same_id(Some(id.as_ref().unwrap_or(&Value::Null)), Some(json.get("id").unwrap_or(&Value::Null))),
                "{json}"
            );
            match &r.outcome {
                Ok(result) => assert_eq!(&serde_json::from_str::<Value>(result.get()).unwrap(), &json["result"]),
                Err(error) => assert_eq!(json["error"]["code"], error.code),
            }
        }
    }
}

fn check_params(raw: Option<&RawValue>, json: Option<&Value>) {
    match raw {
        Some(raw) => assert_eq!(Some(&serde_json::from_str::<Value>(raw.get()).unwrap()), json),
        None => assert!(json.is_none_or(Value::is_null), "params dropped: {json:?}"),
    }
}

/// Indexes `data` (as text) with `raw::Index` and `raw::has_keys`: any text, valid JSON or not,
/// never panics; for valid JSON, the index is there exactly for an object, and finds every
/// member (the last one of a repeated key) and every member of `_meta` as serde_json reads
/// them.
pub fn raw(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // Text that is not valid JSON: no panic, whatever comes back.
    if let Some(index) = Index::of_valid(text) {
        let object = index.object(text);
        let _ = (object.get("_meta"), object.get("a"), object.non_null("id"), object.len());
        let _ = index.meta(text).map(|m| m.get("progressToken"));
    }
    let _ = raw::has_keys(text, &["method", "_meta"]);
    let _ = (raw::str_text(text), raw::names_protocol_version(text));

    let Ok(json) = serde_json::from_str::<&RawValue>(text) else { return };
    // Numbers past `f64` are JSON, but no `Value`.
    let Ok(value) = serde_json::from_str::<Value>(json.get()) else { return };
    let index = Index::new(json);
    let Value::Object(map) = &value else {
        assert!(index.is_none(), "an index of a non-object: {text}");
        assert!(raw::has_keys(json.get(), &["a"]).is_none());
        if let Value::String(s) = &value {
            assert_eq!(raw::str_text(json.get()).as_deref(), Some(s.as_str()));
        }
        return;
    };
    let index = index.unwrap_or_else(|| panic!("an object not indexed: {text}"));
    let object = index.object(json.get());
    check_members(&object, map);
    match map.get("_meta") {
        Some(Value::Object(meta)) => check_members(&index.meta(json.get()).expect("_meta indexed"), meta),
        _ => assert!(index.meta(json.get()).is_none(), "_meta is no object: {text}"),
    }
    let first = map.keys().next().map_or("", String::as_str);
    let (found, len) = raw::has_keys(json.get(), &[first, "_meta", "\u{0}absent"]).expect("an object");
    assert_eq!(found, [!map.is_empty(), map.contains_key("_meta"), map.contains_key("\u{0}absent")]);
    assert_eq!(len, object.len());
    assert!(len >= map.len());
}

fn check_members(object: &raw::Object<'_>, map: &serde_json::Map<String, Value>) {
    for (key, value) in map {
        let text = object.get(key).unwrap_or_else(|| panic!("member {key:?} not found"));
        assert_eq!(&serde_json::from_str::<Value>(text).unwrap(), value, "member {key:?}");
        if let Value::String(s) = value {
            assert_eq!(raw::str_text(text).as_deref(), Some(s.as_str()));
        }
    }
    if !map.contains_key("\u{0}absent") {
        assert!(object.get("\u{0}absent").is_none());
    }
}
