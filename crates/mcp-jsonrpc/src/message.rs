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
    pub fn params_object(&self) -> Option<Object<'_>> {
        self.index().map(|(index, text)| index.object(text))
    }

    /// The JSON text of the params' member `key`, if the params are an object that has it.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params_object()?.get(key)
    }

    /// The params' `_meta`, if it is a JSON object, read through the params' index (built
    /// once, in the same pass).
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
            return Parsed::Invalid { id: None, error: classify(&e) };
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

fn classify(e: &serde_json::Error) -> ErrorObject {
    match e.classify() {
        serde_json::error::Category::Data => ErrorObject::invalid_request(e),
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
            let id = serde_json::from_slice::<IdOnly>(frame).ok().and_then(|i| i.id);
            return Err(InvalidMessage { id, error: classify(&e) });
        }
    };
    let id = env.id.clone().flatten();
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
        out.extend_from_slice(br#","params":"#);
        p.write_json(&mut out)?;
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
}
