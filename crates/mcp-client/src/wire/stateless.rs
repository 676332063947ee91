//! The stateless revision (2026-07-28) on the wire: what every request carries in its `_meta`
//! ([`RequestMeta`]), params encoded for the revision, and results read as JSON ([`Json`],
//! [`Answer`]) to look at their `resultType` before they are decoded.

use mcp_jsonrpc::sync::MutexExt as _;
use std::marker::PhantomData;
use std::sync::Arc;

use mcp_jsonrpc::FrameHints;
use mcp_types::{
    ClientCapabilities, Direction, ErrorCode, ErrorObject, Implementation, JsonObject, LoggingLevel,
    PaginatedRequestParams, ProtocolVersion, Request, Revisions, meta,
};
use serde_json::Value;

use crate::error::ClientError;
use crate::wire::tool_headers::HeaderRules;

/// The stateless revision this client speaks.
pub(crate) const STATELESS: ProtocolVersion = ProtocolVersion::V2026_07_28;

/// A request sent as JSON: the params encoded for 2026-07-28 with the `_meta` filled in, the
/// result read as JSON (a `Value`, or an [`Answer`]) to look at its `resultType` before
/// decoding it.
pub(crate) struct Json<R, O = Value>(PhantomData<fn() -> (R, O)>);

impl<R, O> Request for Json<R, O>
where
    R: Request,
    O: serde::Serialize + mcp_types::WireSerialize + serde::de::DeserializeOwned + Send + 'static,
{
    const METHOD: &'static str = R::METHOD;
    const DIRECTION: Direction = R::DIRECTION;
    const REVISIONS: Revisions = R::REVISIONS;
    type Params = JsonObject;
    type Result = O;
}

/// A result read as JSON, but for its `inputRequests`, kept as the server wrote them: a
/// `serde_json::Value` sorts an object's members, and the fields of an elicitation form are to
/// be asked in the server's order.
pub(crate) struct Answer {
    /// The result's other members.
    pub(crate) value: JsonObject,
    /// Its `inputRequests`, as the server wrote them.
    pub(crate) input_requests: Option<Box<serde_json::value::RawValue>>,
}

impl Answer {
    /// The whole result as JSON.
    pub(crate) fn into_value(self) -> Value {
        let mut value = self.value;
        if let Some(raw) = self.input_requests {
            value.insert("inputRequests".to_owned(), serde_json::from_str(raw.get()).unwrap_or_default());
        }
        Value::Object(value)
    }
}

impl serde::Serialize for Answer {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in &self.value {
            map.serialize_entry(key, value)?;
        }
        if let Some(raw) = &self.input_requests {
            map.serialize_entry("inputRequests", raw)?;
        }
        map.end()
    }
}

impl mcp_types::WireSerialize for Answer {
    fn wire_serialize<S: serde::Serializer>(&self, _: Revisions, serializer: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(self, serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Answer {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Answer;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a result object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Answer, A::Error> {
                let mut answer = Answer { value: JsonObject::new(), input_requests: None };
                while let Some(key) = map.next_key::<String>()? {
                    if key == "inputRequests" {
                        answer.input_requests = Some(map.next_value()?);
                    } else {
                        let value = map.next_value()?;
                        answer.value.insert(key, value);
                    }
                }
                Ok(answer)
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// What every stateless request carries in its `_meta`.
#[derive(Debug)]
pub(crate) struct RequestMeta {
    pub(crate) info: Implementation,
    pub(crate) capabilities: ClientCapabilities,
    /// Set by `set_logging_level`: the server logs for each request at this level.
    pub(crate) log_level: std::sync::Mutex<Option<LoggingLevel>>,
    /// Over HTTP: the headers of each request, handed to the transport.
    pub(crate) header_rules: Option<Arc<HeaderRules>>,
}

impl RequestMeta {
    /// Sets the level every later request asks the server to log at.
    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        *self.log_level.lock_unpoisoned() = Some(level);
    }

    /// The `_meta` protocol fields, merged into `params`.
    pub(crate) fn apply(&self, params: &mut JsonObject, version: &str) {
        let meta = params.entry("_meta").or_insert_with(|| Value::Object(JsonObject::new()));
        if !meta.is_object() {
            *meta = Value::Object(JsonObject::new());
        }
        let Value::Object(meta) = meta else { return };
        meta.insert(meta::PROTOCOL_VERSION.to_owned(), Value::from(version));
        meta.insert(meta::CLIENT_INFO.to_owned(), encode(&self.info));
        meta.insert(meta::CLIENT_CAPABILITIES.to_owned(), encode(&self.capabilities));
        let level = self.log_level.lock_unpoisoned().clone();
        if let Some(level) = level {
            meta.insert(meta::LOG_LEVEL.to_owned(), encode(&level));
        }
    }

    /// The transport's hints for a stateless request of `method` with `params` (over HTTP:
    /// its headers; `None` over other transports).
    pub(crate) fn hints(&self, method: &str, params: &JsonObject) -> Option<FrameHints> {
        self.header_rules.as_ref()?.hints(STATELESS.as_str(), method, params)
    }
}

/// A value encoded for 2026-07-28 (`null` if it cannot be, which the generated types never do).
pub(crate) fn encode<T: mcp_types::WireSerialize + ?Sized>(value: &T) -> Value {
    mcp_types::to_value_for(value, STATELESS).unwrap_or(Value::Null)
}

/// Params encoded for 2026-07-28, as an object.
pub(crate) fn params_object<T: mcp_types::WireSerialize>(params: &T) -> Result<JsonObject, ClientError> {
    match mcp_types::to_value_for(params, STATELESS) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(Value::Null) => Ok(JsonObject::new()),
        Ok(other) => {
            Err(ClientError::Encode(serde::ser::Error::custom(format!("params must be a JSON object, not {other}"))))
        }
        Err(e) => Err(ClientError::Encode(e)),
    }
}

/// The versions of an `UnsupportedProtocolVersion` error, if it lists any.
pub(crate) fn supported_versions(error: &ErrorObject) -> Option<Vec<String>> {
    if error.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.code() {
        return None;
    }
    let list = error.data.as_ref()?.get("supported")?.as_array()?;
    let versions: Vec<String> = list.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect();
    (!versions.is_empty()).then_some(versions)
}

/// The notification filter of a subscription, for the `_meta`-less params.
pub(crate) fn listen_params(filter: &mcp_types::SubscriptionFilter) -> JsonObject {
    let mut params = JsonObject::new();
    params.insert("notifications".to_owned(), encode(filter));
    params
}

/// The params of a list page.
pub(crate) fn page_params(cursor: Option<String>) -> PaginatedRequestParams {
    PaginatedRequestParams { cursor, ..Default::default() }
}

/// A result decoded from JSON.
pub(crate) fn decode_result<R: Request>(value: Value) -> Result<R::Result, ClientError> {
    serde_json::from_value(value).map_err(|e| ClientError::decode(R::METHOD, e))
}
