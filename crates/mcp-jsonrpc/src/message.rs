//! The JSON-RPC 2.0 envelope: parsing incoming frames and encoding outgoing ones.
//!
//! Parsing makes one pass over the frame: the envelope members are read, and `params` and
//! `result` are kept as raw JSON text to be decoded once, straight into their target types.
//!
//! ```
//! use mcp_jsonrpc::message::{Message, Parsed, parse};
//!
//! let Parsed::Single(Message::Request(req)) =
//!     parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#)
//! else { panic!() };
//! assert_eq!(req.method, "tools/list");
//! assert_eq!(req.params.unwrap().get(), "{}");
//!
//! let Parsed::Invalid { error, .. } = parse(b"{oops") else { panic!() };
//! assert_eq!(error.code, -32700);
//! ```

use std::borrow::Cow;
use std::sync::OnceLock;

use bytes::Bytes;
use mcp_types::{ErrorObject, RequestId};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

use crate::raw::{Index, Object};

/// An incoming request.
///
/// Its params stay raw JSON text; [`Request::param`] and [`Request::meta`] read single members
/// of them (and of their `_meta`) through an index built on first use, so that the transport's
/// routing checks, the server's envelope and the handler do not each scan them again.
#[derive(Debug, Clone)]
pub struct Request {
    /// The request id, never null.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The raw `params` member.
    pub params: Option<Box<RawValue>>,
    /// The members of `params` and of their `_meta`, indexed on first use (`None`: no params,
    /// or not an object).
    index: OnceLock<Option<Index>>,
}

impl Request {
    /// A request with these members.
    pub fn new(id: RequestId, method: impl Into<String>, params: Option<Box<RawValue>>) -> Self {
        Request { id, method: method.into(), params, index: OnceLock::new() }
    }

    /// The params' index and text: the index is built on the first call.
    fn index(&self) -> Option<(&Index, &str)> {
        let params = self.params.as_deref()?;
        Some((self.index.get_or_init(|| Index::new(params)).as_ref()?, params.get()))
    }

    /// The params, if they are a JSON object, read through their index (built once, on the
    /// first call).
    // Internal to the SDK (`mcp-server` reads params through it): it returns a type of the
    // hidden `raw` module, so it is hidden too.
    #[doc(hidden)]
    pub fn params_object(&self) -> Option<Object<'_>> {
        self.index().map(|(index, text)| index.object(text))
    }

    /// The JSON text of the params' member `key`, if the params are an object that has it.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params_object()?.get(key)
    }

    /// The params' `_meta`, if it is a JSON object, read through the params' index (built
    /// once, in the same pass).
    // Internal to the SDK (`mcp-server` reads `_meta` through it), as `params_object`.
    #[doc(hidden)]
    pub fn meta_object(&self) -> Option<Object<'_>> {
        self.index().and_then(|(index, text)| index.meta(text))
    }

    /// Whether the params' index was built already (by an earlier reader): reading through it
    /// costs lookups only.
    pub fn is_indexed(&self) -> bool {
        self.index.get().is_some()
    }

    /// The JSON text of member `key` of the params' `_meta`, if it has it.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta_object()?.get(key)
    }

    /// Whether the params' `_meta` names the 2026-07-28 protocol version
    /// ([`raw::PROTOCOL_VERSION_KEY`](crate::raw::PROTOCOL_VERSION_KEY)): a quick search of the
    /// text first, and the index (built then, for later readers) only when the key appears, so
    /// that the key quoted in an argument does not count.
    pub fn carries_protocol_version(&self) -> bool {
        self.params.as_deref().is_some_and(|p| crate::raw::names_protocol_version(p.get()))
            && self.meta(crate::raw::PROTOCOL_VERSION_KEY).is_some()
    }
}

/// An incoming notification.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The raw `params` member.
    pub params: Option<Box<RawValue>>,
}

/// An incoming response.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request it answers; `None` when the peer could not tell (`"id": null`).
    pub id: Option<RequestId>,
    /// The raw `result`, or the error.
    pub outcome: Result<Box<RawValue>, ErrorObject>,
}

/// One JSON-RPC message.
#[derive(Debug, Clone)]
pub enum Message {
    /// A request, expecting a response.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response to one of our requests.
    Response(Response),
}

/// An element of a batch that is not a valid message: what to answer it with.
#[derive(Debug, Clone)]
pub struct InvalidMessage {
    /// The id, when one could be read.
    pub id: Option<RequestId>,
    /// The error to answer with.
    pub error: ErrorObject,
}

/// The result of parsing one frame.
#[derive(Debug, Clone)]
pub enum Parsed {
    /// One message.
    Single(Message),
    /// A batch (a JSON array of messages), in order.
    Batch(Vec<Result<Message, InvalidMessage>>),
    /// Not a message: malformed JSON (-32700) or not a JSON-RPC message (-32600).
    Invalid {
        /// The id, when one could be read.
        id: Option<RequestId>,
        /// The error to answer with.
        error: ErrorObject,
    },
}

/// Parses one frame (one line of stdio, one HTTP body).
pub fn parse(frame: &[u8]) -> Parsed {
    // JSON text is UTF-8 (RFC 8259), and serde_json checks that only in the strings it reads: a
    // member it skips could hold any bytes, and the frame was taken as a message (found by the
    // fuzz target `frame`).
    if let Err(e) = std::str::from_utf8(frame) {
        return Parsed::Invalid { id: None, error: ErrorObject::parse_error(e) };
    }
    let first = frame.iter().copied().find(|b| !b.is_ascii_whitespace());
    match first {
        Some(b'[') => parse_batch(frame),
        Some(b'{') => match parse_object(frame) {
            Ok(m) => Parsed::Single(m),
            Err(InvalidMessage { id, error }) => Parsed::Invalid { id, error },
        },
        _ => {
            // Not an object or array: malformed JSON, or JSON that is no message.
            let error = match serde_json::from_slice::<serde::de::IgnoredAny>(frame) {
                Ok(_) => ErrorObject::invalid_request("a message must be a JSON object"),
                Err(e) => ErrorObject::parse_error(e),
            };
            Parsed::Invalid { id: None, error }
        }
    }
}

fn parse_batch(frame: &[u8]) -> Parsed {
    let items: Vec<&RawValue> = match serde_json::from_slice(frame) {
        Ok(items) => items,
        Err(e) => {
            return Parsed::Invalid { id: None, error: classify(frame, &e) };
        }
    };
    if items.is_empty() {
        return Parsed::Invalid { id: None, error: ErrorObject::invalid_request("empty batch") };
    }
    Parsed::Batch(
        items
            .into_iter()
            .map(|raw| {
                if raw.get().starts_with('{') {
                    parse_object(raw.get().as_bytes())
                } else {
                    Err(InvalidMessage {
                        id: None,
                        error: ErrorObject::invalid_request("a batch element must be a JSON object"),
                    })
                }
            })
            .collect(),
    )
}

/// The error for a frame that did not read as what it had to be: a member of the wrong type
/// (-32600) stops serde before the end of the frame, so the rest is checked for being JSON at
/// all (-32700 when it is not). serde_json calls some valid JSON a syntax error where it reads
/// a value: a number past `f64` or `i64` (`"id": 1e400`), which the JSON grammar allows; such a
/// frame is JSON that is no valid message, -32600 (found by the fuzz target `frame`).
fn classify(frame: &[u8], e: &serde_json::Error) -> ErrorObject {
    use serde_json::error::Category;
    match e.classify() {
        Category::Data | Category::Syntax => match serde_json::from_slice::<serde::de::IgnoredAny>(frame) {
            Ok(_) => ErrorObject::invalid_request(e),
            Err(syntax) => ErrorObject::parse_error(syntax),
        },
        _ => ErrorObject::parse_error(e),
    }
}

/// `"id": null` and an absent id differ: this records presence.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<RequestId>>, D::Error> {
    Option::<RequestId>::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Option<RequestId>>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    // `"result": null` is a result (of null), not an absent member.
    #[serde(borrow, default, deserialize_with = "crate::raw::present")]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<ErrorObject>,
}

fn parse_object(frame: &[u8]) -> Result<Message, InvalidMessage> {
    let env: Envelope<'_> = match serde_json::from_slice(frame) {
        Ok(env) => env,
        Err(e) => {
            // Salvage the id for the error response when the rest is malformed.
            let id = serde_json::from_slice::<IdOnly>(frame).ok().and_then(IdOnly::request_id);
            return Err(InvalidMessage { id, error: classify(frame, &e) });
        }
    };
    // The error answers with the id of a request only: an invalid response's id names a
    // request of the other side's, which our error would look like the answer to.
    let id = if env.method.is_some() { env.id.clone().flatten() } else { None };
    let invalid = |msg: &str| InvalidMessage { id: id.clone(), error: ErrorObject::invalid_request(msg) };
    if env.jsonrpc.as_deref() != Some("2.0") {
        return Err(invalid("`jsonrpc` must be \"2.0\""));
    }
    if let Some(method) = env.method {
        if env.result.is_some() || env.error.is_some() {
            return Err(invalid("a message cannot have both `method` and `result`/`error`"));
        }
        let params = env.params.map(RawValue::to_owned);
        return match env.id {
            None => Ok(Message::Notification(Notification { method: method.into_owned(), params })),
            Some(None) => Err(invalid("a request id must not be null")),
            Some(Some(id)) => Ok(Message::Request(Request::new(id, method, params))),
        };
    }
    let outcome = match (env.result, env.error) {
        (Some(r), None) => Ok(r.to_owned()),
        (None, Some(e)) => Err(e),
        _ => {
            return Err(invalid("a response must have exactly one of `result` and `error`"));
        }
    };
    match env.id {
        None => Err(invalid("a response must have an `id`")),
        Some(id) => Ok(Message::Response(Response { id, outcome })),
    }
}

#[derive(Deserialize)]
struct IdOnly {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
}

impl IdOnly {
    /// The id, if the frame is a request (see `parse_object`).
    fn request_id(self) -> Option<RequestId> {
        self.method.and(self.id)
    }
}

/// Anything that can be written as the `params` or `result` member.
pub trait Body {
    /// Writes the JSON of the member into `out`.
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()>;
}

impl<T: Serialize + ?Sized> Body for T {
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        serde_json::to_writer(out, self)
    }
}

fn write_id(out: &mut Vec<u8>, id: Option<&RequestId>) {
    match id {
        None => out.extend_from_slice(b"null"),
        Some(RequestId::Integer(n)) => {
            // serde_json writes integers with itoa, without the formatting machinery of
            // `write!` (~200 instructions a frame); writing to a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Some(RequestId::String(s)) => {
            // Writing a string to a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, s);
        }
    }
}

/// Encodes a request frame.
pub fn encode_request(id: &RequestId, method: &str, params: Option<&dyn Body>) -> serde_json::Result<Bytes> {
    encode_call(Some(id), method, params)
}

/// Encodes a notification frame.
pub fn encode_notification(method: &str, params: Option<&dyn Body>) -> serde_json::Result<Bytes> {
    encode_call(None, method, params)
}

/// A request (with an id) or a notification (without).
fn encode_call(id: Option<&RequestId>, method: &str, params: Option<&dyn Body>) -> serde_json::Result<Bytes> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","#);
    if let Some(id) = id {
        out.extend_from_slice(br#""id":"#);
        write_id(&mut out, Some(id));
        out.push(b',');
    }
    out.extend_from_slice(br#""method":"#);
    serde_json::to_writer(&mut out, method)?;
    if let Some(p) = params {
        let before = out.len();
        out.extend_from_slice(br#","params":"#);
        p.write_json(&mut out)?;
        // JSON-RPC params are an object or an array: params that write `null` (a custom
        // method's `()`, `Option::None`) are no params.
        if out.ends_with(br#""params":null"#) {
            out.truncate(before);
        }
    }
    out.push(b'}');
    Ok(out.into())
}

/// Encodes a successful response frame.
pub fn encode_result(id: &RequestId, result: &dyn Body) -> serde_json::Result<Bytes> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_id(&mut out, Some(id));
    out.extend_from_slice(br#","result":"#);
    result.write_json(&mut out)?;
    out.push(b'}');
    Ok(out.into())
}

/// Encodes an error response frame (`id` is `null` when the request's id is unknown).
pub fn encode_error(id: Option<&RequestId>, error: &ErrorObject) -> Bytes {
    let mut out = Vec::with_capacity(96);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_id(&mut out, id);
    out.extend_from_slice(br#","error":"#);
    // An error object always serializes.
    if serde_json::to_writer(&mut out, error).is_err() {
        out.extend_from_slice(br#"{"code":-32603,"message":"unencodable error"}"#);
    }
    out.push(b'}');
    out.into()
}

/// Joins response frames into one batch response frame.
pub fn encode_batch(frames: &[Bytes]) -> Bytes {
    let mut out = Vec::with_capacity(frames.iter().map(|f| f.len() + 1).sum::<usize>() + 2);
    out.push(b'[');
    for (i, f) in frames.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(f);
    }
    out.push(b']');
    out.into()
}

/// Decodes raw `params` (or their absence) into a typed value; absent params decode as `{}`.
pub fn decode_params<T: serde::de::DeserializeOwned>(params: Option<&RawValue>) -> Result<T, ErrorObject> {
    let text = params.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(ErrorObject::invalid_params)
}

/// Decodes the params of a custom method (see [`CustomRequest`](mcp_types::CustomRequest)) as
/// `T`: absent params read as `{}`, or as `null` for a type that takes no object (`()`,
/// `Option<_>`). Params that do not decode are -32602.
pub fn decode_custom_params<T: serde::de::DeserializeOwned>(params: Option<&RawValue>) -> Result<T, ErrorObject> {
    match params {
        Some(params) => serde_json::from_str(params.get()).map_err(ErrorObject::invalid_params),
        None => serde_json::from_str("{}")
            .or_else(|e| serde_json::from_str("null").map_err(|_| e))
            .map_err(ErrorObject::invalid_params),
    }
}

/// Reads a raw JSON value as `T`, for decoding a response's result.
pub fn decode_result<T: serde::de::DeserializeOwned>(raw: &RawValue) -> Result<T, serde_json::Error> {
    serde_json::from_str(raw.get())
}

impl From<InvalidMessage> for ErrorObject {
    fn from(m: InvalidMessage) -> Self {
        m.error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(frame: &str) -> Result<Message, ErrorObject> {
        match parse(frame.as_bytes()) {
            Parsed::Single(m) => Ok(m),
            Parsed::Invalid { error, .. } => Err(error),
            Parsed::Batch(_) => panic!("batch"),
        }
    }

    #[test]
    fn params_that_write_null_are_no_params() {
        let id = RequestId::Integer(1);
        let frame =
            |params: Option<&dyn Body>| String::from_utf8(encode_request(&id, "acme/ping", params).unwrap().to_vec());
        assert_eq!(frame(Some(&())).unwrap(), r#"{"jsonrpc":"2.0","id":1,"method":"acme/ping"}"#);
        assert_eq!(frame(Some(&None::<u8>)).unwrap(), r#"{"jsonrpc":"2.0","id":1,"method":"acme/ping"}"#);
        assert_eq!(frame(None).unwrap(), r#"{"jsonrpc":"2.0","id":1,"method":"acme/ping"}"#);
        assert_eq!(
            frame(Some(&serde_json::json!({"a": null}))).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"method":"acme/ping","params":{"a":null}}"#
        );
        let note = encode_notification("acme/pinged", Some(&())).unwrap();
        assert_eq!(&note[..], br#"{"jsonrpc":"2.0","method":"acme/pinged"}"#);
    }

    /// Found by the fuzz target `frame` (fuzz/artifacts/frame/): bytes that are not UTF-8 in a
    /// member serde_json skips made a message of a frame that is not JSON.
    #[test]
    fn a_frame_that_is_not_utf8_is_a_parse_error() {
        let frame = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":{\"\xe2i\":1}}";
        let Parsed::Invalid { id: None, error } = parse(frame) else {
            panic!("a message from a frame that is no JSON")
        };
        assert_eq!(error.code, mcp_types::ErrorCode::PARSE_ERROR.code());
        let batch = b"[{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"x\":\"\xff\"}]";
        assert!(matches!(parse(batch), Parsed::Invalid { .. }));
    }

    #[test]
    fn classifies_messages() {
        assert!(matches!(single(r#"{"jsonrpc":"2.0","id":"a","method":"m"}"#), Ok(Message::Request(_))));
        assert!(matches!(single(r#"{"jsonrpc":"2.0","method":"m"}"#), Ok(Message::Notification(_))));
        let Ok(Message::Response(r)) = single(r#"{"jsonrpc":"2.0","id":7,"result":{"x":1}}"#) else { panic!() };
        assert_eq!(r.id, Some(RequestId::Integer(7)));
        assert_eq!(r.outcome.unwrap().get(), r#"{"x":1}"#);
        let Ok(Message::Response(r)) = single(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#)
        else {
            panic!()
        };
        assert_eq!(r.id, None);
        assert_eq!(r.outcome.unwrap_err().code, -32700);
    }

    #[test]
    fn rejects_what_is_not_a_message() {
        for (frame, code) in [
            ("{", -32700),
            ("nonsense", -32700),
            ("42", -32600),
            ("\"x\"", -32600),
            ("[]", -32600),
            (r#"{"id":1,"method":"m"}"#, -32600),
            (r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#, -32600),
            (r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#, -32600),
            (r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#, -32600),
            (r#"{"jsonrpc":"2.0","id":1,"method":5}"#, -32600),
            (r#"{"jsonrpc":"2.0","id":1}"#, -32600),
            (r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}"#, -32600),
        ] {
            let err = single(frame).expect_err(frame);
            assert_eq!(err.code, code, "{frame}: {err}");
        }
    }

    #[test]
    fn keeps_the_id_of_an_invalid_request() {
        let Parsed::Invalid { id, error } = parse(br#"{"jsonrpc":"1.0","id":9,"method":"m"}"#) else { panic!() };
        assert_eq!(id, Some(RequestId::Integer(9)));
        assert_eq!(error.code, -32600);
    }

    #[test]
    fn parses_batches_element_by_element() {
        let Parsed::Batch(items) =
            parse(br#"[{"jsonrpc":"2.0","id":1,"method":"a"}, 3, {"jsonrpc":"2.0","method":"n"}]"#)
        else {
            panic!()
        };
        assert_eq!(items.len(), 3);
        assert!(matches!(items[0], Ok(Message::Request(_))));
        assert_eq!(items[1].as_ref().unwrap_err().error.code, -32600);
        assert!(matches!(items[2], Ok(Message::Notification(_))));
    }

    #[test]
    fn a_number_past_the_range_of_an_id_is_an_invalid_request() {
        // JSON by the grammar, which puts no bound on numbers; no id can hold it.
        for id in ["1e400", "123456789012345678901234567890", "-1e99999"] {
            let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let Parsed::Invalid { error, .. } = parse(frame.as_bytes()) else { panic!("{frame} is no message") };
            assert_eq!(error.code, mcp_types::ErrorCode::INVALID_REQUEST.code(), "{frame}: {}", error.message);
        }
        let truncated = br#"{"jsonrpc":"2.0","id":1e400"#;
        let Parsed::Invalid { error, .. } = parse(truncated) else { panic!("a truncated frame is no message") };
        assert_eq!(error.code, mcp_types::ErrorCode::PARSE_ERROR.code());
    }

    #[test]
    fn depth_bombs_are_parse_errors_not_crashes() {
        // Valid JSON, deeply nested: a batch whose one element is not a message.
        let bomb = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        match parse(bomb.as_bytes()) {
            Parsed::Batch(items) => assert!(items.iter().all(Result::is_err)),
            Parsed::Invalid { .. } => {}
            Parsed::Single(_) => panic!("a bomb is no message"),
        }
        let unclosed = "{".repeat(100_000);
        assert!(matches!(parse(unclosed.as_bytes()), Parsed::Invalid { .. }));
        let obj = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{}1{}}}"#,
            "[".repeat(50_000),
            "]".repeat(50_000)
        );
        // Deep params are kept raw; decoding them into a type hits serde_json's depth limit.
        let Parsed::Single(Message::Request(req)) = parse(obj.as_bytes()) else { panic!("a request") };
        let err = decode_params::<serde_json::Value>(req.params.as_deref()).unwrap_err();
        assert_eq!(err.code, -32602);
    }

    #[test]
    fn encodes_envelopes() {
        let id = RequestId::Integer(3);
        let f = encode_request(&id, "tools/call", Some(&serde_json::json!({"name": "x"}))).unwrap();
        assert_eq!(&f[..], br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}"#);
        let f = encode_result(&RequestId::String("a\"b".into()), &serde_json::json!({})).unwrap();
        assert_eq!(&f[..], br#"{"jsonrpc":"2.0","id":"a\"b","result":{}}"#);
        let f = encode_error(None, &ErrorObject::new(-32700, "bad"));
        assert_eq!(&f[..], br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#);
        let f = encode_notification("notifications/initialized", None).unwrap();
        assert_eq!(&f[..], br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(&encode_batch(&[Bytes::from_static(b"1"), Bytes::from_static(b"2")])[..], b"[1,2]");
    }

    #[test]
    fn integer_ids_round_trip_at_their_edges() {
        for n in [0, -1, 7, 1 << 53, -(1 << 53), i64::MIN, i64::MAX] {
            let id = RequestId::Integer(n);
            let f = encode_result(&id, &serde_json::json!(null)).unwrap();
            assert_eq!(std::str::from_utf8(&f).unwrap(), format!(r#"{{"jsonrpc":"2.0","id":{n},"result":null}}"#));
            let Parsed::Single(Message::Response(r)) = parse(&f) else { panic!("a response") };
            assert_eq!(r.id, Some(id.clone()));
            // A null result is a result.
            assert_eq!(r.outcome.unwrap().get(), "null");
            let f = encode_error(Some(&id), &ErrorObject::new(-32600, "x"));
            let Parsed::Single(Message::Response(r)) = parse(&f) else { panic!("a response") };
            assert_eq!(r.id, Some(id));
        }
    }

    /// What a parse yields, in a form two parsers can be compared on.
    #[derive(Debug, PartialEq)]
    enum Seen {
        Request(RequestId, String),
        Notification(String),
        Response(Option<RequestId>, Result<serde_json::Value, i64>),
        Invalid(Option<RequestId>, i64),
    }

    fn seen(m: Result<Message, InvalidMessage>) -> Seen {
        match m {
            Ok(Message::Request(r)) => Seen::Request(r.id, r.method),
            Ok(Message::Notification(n)) => Seen::Notification(n.method),
            Ok(Message::Response(r)) => {
                Seen::Response(r.id, r.outcome.map(|raw| serde_json::from_str(raw.get()).unwrap()).map_err(|e| e.code))
            }
            Err(e) => Seen::Invalid(e.id, e.error.code),
        }
    }

    fn observed(frame: &str) -> Vec<Seen> {
        match parse(frame.as_bytes()) {
            Parsed::Single(m) => vec![seen(Ok(m))],
            Parsed::Invalid { id, error } => vec![Seen::Invalid(id, error.code)],
            Parsed::Batch(items) => items.into_iter().map(seen).collect(),
        }
    }

    /// The oracle: JSON-RPC 2.0's rules applied to serde_json's `Value` of the frame.
    fn expected(frame: &str) -> Vec<Seen> {
        use serde_json::Value;
        fn id_of(v: &Value) -> Result<Option<RequestId>, ()> {
            match v {
                Value::Null => Ok(None),
                Value::String(s) => Ok(Some(RequestId::String(s.clone()))),
                Value::Number(n) => n
                    .as_i64()
                    .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 2f64.powi(53)).map(|f| f as i64))
                    .map(|n| Some(RequestId::Integer(n)))
                    .ok_or(()),
                _ => Err(()),
            }
        }
        fn one(v: &Value) -> Seen {
            let Some(o) = v.as_object() else { return Seen::Invalid(None, -32600) };
            let id = o.get("id").map(id_of);
            // Only a request's id is answered (an invalid response's id is the other side's).
            let is_request = o.get("method").is_some_and(|m| !m.is_null());
            let invalid = Seen::Invalid(id.clone().and_then(Result::ok).flatten().filter(|_| is_request), -32600);
            let method = match o.get("method") {
                None | Some(Value::Null) => None,
                Some(Value::String(m)) => Some(m.clone()),
                Some(_) => return invalid,
            };
            let error = match o.get("error") {
                None | Some(Value::Null) => None,
                Some(Value::Object(e)) => match (e.get("code").and_then(Value::as_i64), e.get("message")) {
                    (Some(code), Some(Value::String(_))) => Some(code),
                    _ => return invalid,
                },
                Some(_) => return invalid,
            };
            let result = o.get("result");
            if o.get("jsonrpc") != Some(&Value::from("2.0")) || matches!(id, Some(Err(()))) {
                return invalid;
            }
            let id = id.map(Result::unwrap);
            if let Some(method) = method {
                return match (result.is_some() || error.is_some(), id) {
                    (true, _) | (false, Some(None)) => invalid,
                    (false, None) => Seen::Notification(method),
                    (false, Some(Some(id))) => Seen::Request(id, method),
                };
            }
            match (result, error, id) {
                (Some(r), None, Some(id)) => Seen::Response(id, Ok(r.clone())),
                (None, Some(code), Some(id)) => Seen::Response(id, Err(code)),
                _ => invalid,
            }
        }
        match serde_json::from_str::<Value>(frame) {
            Err(_) => vec![Seen::Invalid(None, -32700)],
            Ok(Value::Array(items)) if items.is_empty() => vec![Seen::Invalid(None, -32600)],
            Ok(Value::Array(items)) => items.iter().map(one).collect(),
            Ok(v) => vec![one(&v)],
        }
    }

    /// Random message-like frames (members of every kind, in any order, whole, cut short or
    /// followed by junk, alone or in batches): the parser agrees with the oracle on each.
    #[test]
    fn parsing_agrees_with_the_rules_on_random_frames() {
        const MEMBERS: [(&str, &[&str]); 6] = [
            ("jsonrpc", &[r#""2.0""#, r#""2\u002e0""#, r#""1.0""#, "2", "null"]),
            (
                "id",
                &["1", "-3", r#""a""#, r#""\u0041""#, "1.0", "1.5", "18446744073709551615", "{}", "[]", "true", "null"],
            ),
            ("method", &[r#""m""#, r#""tools/call""#, "5", "null"]),
            ("params", &["{}", r#"{"a":[1,{"b":null}]}"#, "[]", "null", "1"]),
            ("result", &["null", "{}", r#"{"x":1}"#, "1", r#""s""#]),
            (
                "error",
                &[
                    r#"{"code":-1,"message":"x"}"#,
                    r#"{"code":2,"message":"y","data":[1]}"#,
                    "null",
                    r#"{"code":"x","message":"y"}"#,
                    "{}",
                    "1",
                ],
            ),
        ];
        struct Gen(u64);
        impl Gen {
            fn next(&mut self, n: usize) -> usize {
                self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((self.0 >> 33) % n as u64) as usize
            }
            fn object(&mut self) -> String {
                let mut members = Vec::new();
                for (key, values) in MEMBERS {
                    if self.next(3) != 0 {
                        members.push(format!(r#""{key}":{}"#, values[self.next(values.len())]));
                    }
                }
                if self.next(4) == 0 {
                    members.push(r#""extra":{"id":9}"#.into());
                }
                for i in (1..members.len()).rev() {
                    let j = self.next(i + 1);
                    members.swap(i, j);
                }
                let gap = [" ", "", "\n\t"][self.next(3)];
                format!("{{{gap}{}{gap}}}", members.join(&format!(",{gap}")))
            }
            fn spoil(&mut self, mut text: String) -> String {
                match self.next(8) {
                    0 => {
                        text.truncate(self.next(text.len()));
                        text
                    }
                    1 => text + [" x", "}", ",", "]"][self.next(4)],
                    _ => text,
                }
            }
        }
        let mut g = Gen(11);
        for _ in 0..20_000 {
            let frame = if g.next(5) == 0 {
                let items: Vec<String> = (0..g.next(4))
                    .map(|_| {
                        let o = g.object();
                        g.spoil(o)
                    })
                    .collect();
                g.spoil(format!("[{}]", items.join(",")))
            } else {
                let o = g.object();
                g.spoil(o)
            };
            assert_eq!(observed(&frame), expected(&frame), "{frame}");
        }
    }
}
