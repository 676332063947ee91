//! Every method marker carries the method name, revisions and direction the schemas give it.

use std::collections::BTreeSet;

use mcp_types::__registry::lookup;
use mcp_types::{
    CallToolRequest, CancelledNotification, CreateMessageRequest, Direction, InitializeRequest, METHODS, MethodKind,
    Notification, ProtocolVersion, Request,
};

fn schema(rev: ProtocolVersion) -> serde_json::Value {
    let path = format!("{}/schema/{}/schema.json", env!("CARGO_MANIFEST_DIR"), rev.as_str());
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn definitions(doc: &serde_json::Value) -> &serde_json::Map<String, serde_json::Value> {
    doc.get("definitions").or_else(|| doc.get("$defs")).and_then(|d| d.as_object()).unwrap()
}

/// The members of a union definition of the schema (`ClientRequest`, ...).
fn members(doc: &serde_json::Value, union: &str) -> BTreeSet<String> {
    let Some(def) = definitions(doc).get(union) else {
        return BTreeSet::new();
    };
    let refs = def.get("anyOf").and_then(|a| a.as_array()).cloned().unwrap_or_else(|| vec![def.clone()]);
    refs.iter().filter_map(|r| r.get("$ref")?.as_str()?.rsplit('/').next().map(str::to_owned)).collect()
}

#[test]
fn every_schema_method_has_a_marker_with_its_name() {
    let mut seen = BTreeSet::new();
    let mut failures = Vec::new();
    for rev in ProtocolVersion::ALL {
        let doc = schema(rev);
        let from_client: BTreeSet<String> =
            members(&doc, "ClientRequest").into_iter().chain(members(&doc, "ClientNotification")).collect();
        let from_server: BTreeSet<String> = ["ServerRequest", "ServerNotification", "InputRequest"]
            .into_iter()
            .flat_map(|u| members(&doc, u))
            .collect();
        for (name, def) in definitions(&doc) {
            let Some(method) = def.pointer("/properties/method/const").and_then(|m| m.as_str()) else {
                continue;
            };
            // The generic envelopes, and 2026-07-28's `ClientNotification`, which its schema
            // writes out as its only member (cancellation), are not methods of their own.
            if ["JSONRPCRequest", "JSONRPCNotification", "ClientNotification"].contains(&name.as_str()) {
                continue;
            }
            let rust = lookup(name, rev).map(|t| t.rust_type).unwrap_or(name);
            let Some(info) = METHODS.iter().find(|m| m.type_name == rust) else {
                failures.push(format!("{rev}: {name} ({method}) has no method marker"));
                continue;
            };
            seen.insert(info.type_name);
            if info.method != method {
                failures.push(format!("{rev}: {name} says {method}, marker says {}", info.method));
            }
            if !info.revisions.contains(rev) {
                failures.push(format!("{rev}: {name} exists, marker revisions are {:?}", info.revisions));
            }
            let kind = if name.ends_with("Request") { MethodKind::Request } else { MethodKind::Notification };
            if info.kind != kind {
                failures.push(format!("{rev}: {name} is a {kind:?}, marker says {:?}", info.kind));
            }
            if from_client.contains(name) && !info.direction.from_client() {
                failures.push(format!("{rev}: the client sends {name}, marker says {:?}", info.direction));
            }
            if from_server.contains(name) && !info.direction.from_server() {
                failures.push(format!("{rev}: the server sends {name}, marker says {:?}", info.direction));
            }
        }
    }
    for m in METHODS {
        if !seen.contains(m.type_name) {
            failures.push(format!("marker {} ({}) matches no schema definition", m.type_name, m.method));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn marker_types_carry_params_and_results() {
    fn method<R: Request>() -> &'static str {
        R::METHOD
    }
    assert_eq!(method::<CallToolRequest>(), "tools/call");
    assert_eq!(method::<InitializeRequest>(), "initialize");
    assert_eq!(CreateMessageRequest::DIRECTION, Direction::ServerToClient);
    assert_eq!(CancelledNotification::DIRECTION, Direction::Both);
    assert_eq!(<CancelledNotification as Notification>::METHOD, "notifications/cancelled");
    assert!(!InitializeRequest::REVISIONS.contains(ProtocolVersion::V2026_07_28));
    let params: <CallToolRequest as Request>::Params =
        serde_json::from_value(serde_json::json!({"name": "add", "arguments": {"a": 1}})).unwrap();
    assert_eq!(params.name, "add");
    let result: <CallToolRequest as Request>::Result =
        serde_json::from_value(serde_json::json!({"content": [{"type": "text", "text": "2"}]})).unwrap();
    assert_eq!(result.content[0].as_text(), Some("2"));
}
