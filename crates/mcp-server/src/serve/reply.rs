//! How a request is answered in its revision: the [`Era`] of a request (its revision, and for
//! the stateless revision its result decoration and round trips), the encoding of a result for
//! it ([`respond`]; `serverInfo` and cache hints for 2026-07-28), and the rewriting of results
//! for older revisions (content blocks they lack, structured content that is not an object).

use std::sync::Arc;

use mcp_jsonrpc::raw::has_keys;
use mcp_jsonrpc::{Reply, RequestContext};
use mcp_types::{ContentBlock, ForRevision, ProtocolVersion, WireSerialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::shared::ServerShared;
use crate::context::rounds::InputRounds;
use crate::def::cache::CacheHints;

/// The `_meta` key of the server's `Implementation` in a 2026-07-28 result.
const SERVER_INFO: &str = mcp_types::meta::SERVER_INFO;

/// How one request is answered: in which revision, and for a request of the stateless
/// revision (2026-07-28) with which result decoration and input-required round trips.
pub(crate) struct Era {
    pub(crate) version: ProtocolVersion,
    pub(crate) decoration: Option<Decoration>,
    /// The answers the request carries and the input it asks for (the methods that may answer
    /// with an input-required result).
    pub(crate) input_rounds: Option<Arc<InputRounds>>,
}

impl Era {
    /// A request of a session revision (after the handshake): no decoration, no round trips.
    pub(crate) fn session(version: ProtocolVersion) -> Self {
        Era { version, decoration: None, input_rounds: None }
    }
    /// Whether the request is of the stateless revision (its results are decorated).
    pub(crate) fn is_stateless(&self) -> bool {
        self.decoration.is_some()
    }
}

/// Encodes a result for the request's revision (decorated for the stateless revision).
pub(crate) fn respond<T: WireSerialize>(ctx: &RequestContext, result: &T, era: &Era) -> Reply {
    match &era.decoration {
        Some(decoration) => respond_stateless(ctx, result, era.version, decoration),
        None => ctx.encode_result(&ForRevision::new(result, era.version)),
    }
}

/// Content blocks a revision lacks, rewritten to ones it has (a link becomes text naming the
/// resource, audio before 2025-03-26 becomes a note), so that an older client can read the
/// result.
pub(crate) fn downgrade_content(content: &mut [ContentBlock], version: ProtocolVersion) {
    for block in content.iter_mut() {
        let replacement = match block {
            ContentBlock::ResourceLink(link) if version < ProtocolVersion::V2025_06_18 => {
                Some(format!("resource: {} ({})", link.name, link.uri))
            }
            ContentBlock::Audio(audio) if version < ProtocolVersion::V2025_03_26 => Some(format!(
                "[audio content of type {} omitted: this client's protocol revision has no audio]",
                audio.mime_type
            )),
            _ => None,
        };
        if let Some(text) = replacement {
            *block = ContentBlock::text(text);
        }
    }
}

/// A tool's result as a client of `version` can read it: its content downgraded (see
/// [`downgrade_content`]) and, for revisions before 2026-07-28 (whose schemas demand an object),
/// structured content that is not an object, or that answers to an output schema that is not
/// an object schema (`wraps_output`), wrapped as `{"result": ...}`, as the tool's listed schema is (see
/// `legacy_output_schema` of `def::tool_schema`).
#[inline]
pub(crate) fn downgrade_tool_result(
    result: &mut mcp_types::CallToolResult,
    wraps_output: bool,
    version: ProtocolVersion,
) {
    downgrade_content(&mut result.content, version);
    if version < ProtocolVersion::V2026_07_28
        && let Some(structured) = &mut result.structured_content
        && (wraps_output || !structured.is_object())
    {
        let value = std::mem::take(structured);
        *structured = serde_json::Value::Object(std::iter::once(("result".to_owned(), value)).collect());
    }
}

/// How requests of the stateless revision are answered: the result decoration of one request.
pub(crate) struct Decoration {
    /// The server's `Implementation`, as JSON.
    pub(crate) server_info: Arc<RawValue>,
    pub(crate) cache: Option<CacheHints>,
}

impl Decoration {
    /// The decoration of `server`'s results, with these cache hints.
    pub(crate) fn new(server: &ServerShared, cache: Option<CacheHints>) -> Self {
        Decoration { server_info: server.info_json.clone(), cache }
    }
}

/// Encodes a result for a request of the stateless revision: `serverInfo` in `_meta`, cache
/// hints where due.
pub(crate) fn respond_stateless<T: WireSerialize>(
    rctx: &RequestContext,
    result: &T,
    version: ProtocolVersion,
    decoration: &Decoration,
) -> Reply {
    rctx.encode_result(&Decorated { result, version, decoration })
}

/// A result encoded for a request of the stateless revision, decorated as it is written: the
/// result's own JSON, then the members the decoration adds (those the result does not have),
/// without going through a `serde_json::Value`.
struct Decorated<'a, T: ?Sized> {
    result: &'a T,
    version: ProtocolVersion,
    decoration: &'a Decoration,
}

impl<T: WireSerialize + ?Sized> mcp_jsonrpc::message::Body for Decorated<'_, T> {
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let start = out.len();
        serde_json::to_writer(&mut *out, &ForRevision::new(self.result, self.version))?;
        let written = std::str::from_utf8(&out[start..]).map_err(serde::ser::Error::custom)?;
        // What serde_json wrote is valid JSON: a quick scan finds its members.
        let Some(([meta, result_type, ttl, scope], len)) =
            has_keys(written, &["_meta", "resultType", "ttlMs", "cacheScope"])
        else {
            // Not an object: nothing to decorate.
            return Ok(());
        };
        if meta {
            // The result has `_meta` of its own: merge into it.
            let mut value: Value = serde_json::from_str(written)?;
            out.truncate(start);
            decorate(&mut value, self.decoration);
            return serde_json::to_writer(out, &value);
        }
        // Compact JSON of an object ends with its `}`: reopen it.
        out.pop();
        if len > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#""_meta":{""#);
        out.extend_from_slice(SERVER_INFO.as_bytes());
        out.extend_from_slice(br#"":"#);
        out.extend_from_slice(self.decoration.server_info.get().as_bytes());
        out.push(b'}');
        if !result_type {
            out.extend_from_slice(br#","resultType":"complete""#);
        }
        if let Some(cache) = &self.decoration.cache {
            if !ttl {
                out.extend_from_slice(br#","ttlMs":"#);
                serde_json::to_writer(&mut *out, &cache.ttl_ms)?;
            }
            if !scope {
                out.extend_from_slice(br#","cacheScope":"#);
                serde_json::to_writer(&mut *out, cache.scope.as_str())?;
            }
        }
        out.push(b'}');
        Ok(())
    }
}

pub(crate) fn decorate(value: &mut Value, decoration: &Decoration) {
    let Value::Object(object) = value else { return };
    object.entry("resultType").or_insert_with(|| json!("complete"));
    if let Some(cache) = &decoration.cache {
        object.entry("ttlMs").or_insert_with(|| json!(cache.ttl_ms));
        object.entry("cacheScope").or_insert_with(|| json!(cache.scope.as_str()));
    }
    let meta = object.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.entry(SERVER_INFO)
            .or_insert_with(|| serde_json::from_str(decoration.server_info.get()).unwrap_or_default());
    }
}
