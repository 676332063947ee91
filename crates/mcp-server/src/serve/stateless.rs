//! The stateless revision (2026-07-28): requests that carry their revision, the client's
//! capabilities and identity in `_meta` instead of a handshake, `server/discover`,
//! input-required round trips with a sealed `requestState`, and result decoration
//! (`serverInfo`, cache hints).
//!
//! A request of the stateless revision is served on any connection, beside sessions of the
//! session revisions: its `_meta` decides, per request.

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_jsonrpc::message::{self, decode_params};
use mcp_jsonrpc::raw::str_text;
use mcp_jsonrpc::{ErrorObject, Reply, RequestContext};
use mcp_types::{ClientCapabilities, DiscoverRequest, ErrorCode, ProtocolVersion, Request as _, WireSerialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::reply::{Decoration, respond_stateless};
use super::shared::ServerShared;
use crate::context::rounds::InputRounds;
use crate::context::session::{Envelope, decode_raw};
use crate::def::cache::CacheTarget;

/// The `_meta` keys of a request of the stateless revision.
pub(crate) const PROTOCOL_VERSION: &str = mcp_types::meta::PROTOCOL_VERSION;
const CLIENT_CAPABILITIES: &str = mcp_types::meta::CLIENT_CAPABILITIES;
const CLIENT_INFO: &str = mcp_types::meta::CLIENT_INFO;
const LOG_LEVEL: &str = mcp_types::meta::LOG_LEVEL;

/// Every revision this server speaks, newest first: the stateless one per request, the
/// session revisions after an `initialize` (a server of both, as the versioning page
/// describes).
fn supported_versions() -> impl Iterator<Item = ProtocolVersion> {
    ProtocolVersion::ALL.into_iter().rev()
}

/// The envelope of a request of the stateless revision, if it has one (`None`: a request of
/// a session revision). `server/discover` exists only in the stateless revision, so it needs
/// the envelope. Asked only of a request that [`may_have_envelope`].
///
/// Only `_meta` is read, and of it only the envelope's keys: the rest of the params (a tool's
/// arguments, say) is the handler's to decode.
pub(crate) fn envelope(req: &message::Request) -> Result<Option<Envelope<'_>>, ErrorObject> {
    // Read through the request's index: the transport may have built it already.
    let meta = req.meta_object();
    let Some(version) = meta.and_then(|m| m.get(PROTOCOL_VERSION)) else {
        if req.method == DiscoverRequest::METHOD {
            let empty = meta.is_none_or(|m| m.is_empty());
            return Err(ErrorObject::missing_request_metadata(if empty { "_meta" } else { PROTOCOL_VERSION }));
        }
        return Ok(None);
    };
    let get = |key| meta.and_then(|m| m.get(key));
    let requested = str_text(version).unwrap_or_default();
    let Some(version) = ProtocolVersion::from_wire(&requested).filter(|v| v.is_stateless()) else {
        let version = serde_json::from_str::<Value>(version).unwrap_or_default();
        return Err(ErrorObject::unsupported_protocol_version(version, supported_versions()));
    };
    let capabilities =
        get(CLIENT_CAPABILITIES).ok_or_else(|| ErrorObject::missing_request_metadata(CLIENT_CAPABILITIES))?;
    let capabilities = decode_raw(capabilities)
        .map_err(|e| ErrorObject::invalid_params(format!("invalid `{CLIENT_CAPABILITIES}`: {e}")))?;
    let client_info = get(CLIENT_INFO).filter(|v| *v != "null");
    let log_level = get(LOG_LEVEL).and_then(|v| decode_raw(v).ok());
    Ok(Some(Envelope { version, capabilities, client_info, log_level }))
}

/// Whether a request may be of the stateless revision, tested before [`envelope`] is asked
/// (whose answer, the client's capabilities in it, is large: a request of a session revision
/// does not build it nor move it).
///
/// Without the version key anywhere in its params a request is not of the stateless revision
/// (the test the engine and the HTTP transport make too): a session revision's request reads
/// nothing more. (A request whose params were indexed already, by the HTTP transport's checks,
/// is read through the index at once.)
#[inline]
pub(crate) fn may_have_envelope(req: &message::Request) -> bool {
    req.method == DiscoverRequest::METHOD
        || req.is_indexed()
        || req.params.as_deref().is_some_and(|p| mcp_jsonrpc::raw::names_protocol_version(p.get()))
}

/// `server/discover`.
pub(crate) fn discover(server: &ServerShared, rctx: &RequestContext, version: ProtocolVersion) -> Reply {
    let hints = server.cache_hints.get(CacheTarget::Discover);
    let mut result = mcp_types::DiscoverResult::new(
        hints.scope.clone(),
        server.capabilities.clone(),
        "complete",
        supported_versions().map(|v| v.as_str().to_owned()).collect::<Vec<_>>(),
        hints.ttl_ms,
    );
    result.instructions = server.instructions.clone();
    respond_stateless(rctx, &result, version, &Decoration::new(server, None))
}

// ---------------------------------------------------------------------------------------------
// Input-required round trips.

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn invalid_state(why: &str) -> ErrorObject {
    ErrorObject::with_data(
        ErrorCode::INVALID_PARAMS,
        format!("Invalid or expired requestState: {why}"),
        json!({"reason": "invalid_request_state"}),
    )
}

/// A digest binding state to the request it was issued for: the method and its salient
/// parameters (name or URI, arguments).
fn request_digest(method: &str, params: &Map<String, Value>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(method.as_bytes());
    for key in ["name", "uri", "arguments"] {
        hasher.update([0]);
        if let Some(v) = params.get(key) {
            hasher.update(v.to_string().as_bytes());
        }
    }
    URL_SAFE_NO_PAD.encode(&hasher.finalize()[..16])
}

impl InputRounds {
    /// Reads `inputResponses` and `requestState` of a request that may carry them.
    pub(crate) fn from_request(
        server: &ServerShared,
        req: &message::Request,
        capabilities: ClientCapabilities,
    ) -> Result<InputRounds, ErrorObject> {
        let mut rounds = InputRounds {
            capabilities,
            answers: BTreeMap::new(),
            pending: Mutex::new(BTreeMap::new()),
            missing: Mutex::new(None),
            counters: Mutex::new(BTreeMap::new()),
            digest: std::sync::OnceLock::new(),
        };
        // The first round of a request carries neither: nothing to read (through the request's
        // index, built already for the envelope).
        let first_round = req
            .params_object()
            .is_none_or(|p| p.non_null("requestState").is_none() && p.non_null("inputResponses").is_none());
        if first_round {
            return Ok(rounds);
        }
        let params: Map<String, Value> =
            decode_params::<Option<Map<String, Value>>>(req.params.as_deref())?.unwrap_or_default();
        let digest = rounds.digest.get_or_init(|| request_digest(&req.method, &params));
        let audience = &server.info.name;
        if let Some(state) = params.get("requestState").filter(|v| !v.is_null()) {
            let state = state.as_str().ok_or_else(|| invalid_state("not a string"))?;
            let payload = server.state_keys.open(state).ok_or_else(|| invalid_state("it failed verification"))?;
            if payload["aud"] != json!(audience) {
                return Err(invalid_state("issued by another server"));
            }
            // Valid strictly before its expiry second: a zero TTL makes state that never opens.
            if payload["exp"].as_u64().is_none_or(|exp| exp <= now_secs()) {
                return Err(invalid_state("it expired"));
            }
            if payload["req"] != json!(digest) {
                return Err(invalid_state("issued for another request"));
            }
            if let Some(Value::Object(earlier)) = payload.get("answers") {
                rounds.answers.extend(earlier.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        match params.get("inputResponses") {
            None | Some(Value::Null) => {}
            Some(Value::Object(responses)) => {
                rounds.answers.extend(responses.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            Some(_) => return Err(ErrorObject::invalid_params("`inputResponses` must be an object")),
        }
        Ok(rounds)
    }

    /// The digest of the request (see [`request_digest`]).
    fn digest(&self, req: &message::Request) -> &str {
        self.digest.get_or_init(|| {
            let params: Map<String, Value> =
                decode_params::<Option<Map<String, Value>>>(req.params.as_deref()).ok().flatten().unwrap_or_default();
            request_digest(&req.method, &params)
        })
    }

    /// What the request must answer instead of its handler's result, if anything: -32021 for
    /// a missing capability, an input-required result for pending input.
    pub(crate) fn outcome(
        &self,
        server: &ServerShared,
        rctx: &RequestContext,
        req: &message::Request,
    ) -> Option<Reply> {
        if let Some(capability) = *self.missing.lock_unpoisoned() {
            return Some(Err(ErrorObject::missing_required_client_capability(capability)));
        }
        let pending = std::mem::take(&mut *self.pending.lock_unpoisoned());
        if pending.is_empty() {
            return None;
        }
        let payload = json!({
            "aud": server.info.name,
            "exp": now_secs() + server.state_keys.ttl.as_secs(),
            "req": self.digest(req),
            "answers": self.answers,
        });
        // Written, not built as a `Value`: the input requests keep their members' order.
        #[derive(serde::Serialize)]
        struct InputRequired<'a> {
            #[serde(rename = "resultType")]
            result_type: &'static str,
            #[serde(rename = "inputRequests")]
            input_requests: &'a BTreeMap<String, Box<RawValue>>,
            #[serde(rename = "requestState")]
            request_state: String,
        }
        impl WireSerialize for InputRequired<'_> {
            fn wire_serialize<S: serde::Serializer>(&self, _: mcp_types::Revisions, s: S) -> Result<S::Ok, S::Error> {
                serde::Serialize::serialize(self, s)
            }
        }
        let result = InputRequired {
            result_type: "input_required",
            input_requests: &pending,
            request_state: server.state_keys.seal(&payload),
        };
        Some(respond_stateless(rctx, &result, ProtocolVersion::V2026_07_28, &Decoration::new(server, None)))
    }
}
