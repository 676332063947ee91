//! Output schemas as transcripts over the in-memory transport: structured content checked
//! against the tool's output schema (matching, mismatching, missing, the check turned off), and
//! output schemas that are not object schemas, as revision 2026-07-28 allows them and as
//! clients of older revisions see them. Every result is validated against the official schema
//! of the revision it was answered in.

use std::time::Duration;

use mcp_jsonrpc::transport::memory;
use mcp_server::{DefinitionError, IntoToolResult, Json, Server, ToolDef, ToolError};
use mcp_test_support::{Session, Wire};
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

/// A tool whose handler returns `result` whatever the arguments.
fn returning(name: &str, result: impl Fn() -> Result<CallToolResult, ToolError> + Send + Sync + 'static) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), move |_args, _ctx| std::future::ready(result())).unwrap()
}

fn sum_schema() -> Value {
    json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]})
}

fn users_schema() -> Value {
    json!({"type": "array", "items": {"$ref": "#/$defs/user"}, "$defs": {"user": {
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]
    }}})
}

/// The tools of every test, each with an output schema.
fn tools() -> Vec<ToolDef> {
    let with = |tool: ToolDef, schema: Value| tool.output_schema(schema).unwrap();
    vec![
        with(returning("sum", || Ok(CallToolResult::structured(json!({"sum": 3})))), sum_schema()),
        with(returning("wrong", || Ok(CallToolResult::structured(json!({"sum": "three"})))), sum_schema()),
        with(returning("bare", || Ok(CallToolResult::success(vec![ContentBlock::text("3")]))), sum_schema()),
        with(returning("fails", || Err(ToolError::new("no numbers today"))), sum_schema()),
        with(
            returning("users", || Json(vec![json!({"name": "alice"}), json!({"name": "bob"})]).into_tool_result()),
            users_schema(),
        ),
        with(returning("bad_users", || Json(vec![json!({"nom": "alice"})]).into_tool_result()), users_schema()),
        with(returning("count", || Json(2).into_tool_result()), json!({"type": "integer"})),
    ]
}

fn server(check: bool) -> Server {
    Server::builder("outputs", "1.0.0").check_structured_content(check).tools(tools()).build().unwrap()
}

/// A session of revision `rev` (its results validated against that revision's schema); for
/// 2026-07-28 no handshake, the envelope goes in each request's `_meta` (see [`params`]).
async fn connect(server: &Server, rev: &str) -> Session {
    let (a, b) = memory(64);
    server.connect(a);
    let mut session = Session::new(Wire::new(b).with_timeout(Duration::from_secs(600)), rev);
    if rev != "2026-07-28" {
        let init = json!({"protocolVersion": rev, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        session.result("initialize", init).await;
        session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    }
    session
}

/// `params` as a request of revision `rev` carries them.
fn params(rev: &str, mut params: Value) -> Value {
    if rev == "2026-07-28" {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
    }
    params
}

async fn call(c: &mut Session, rev: &str, tool: &str) -> Value {
    c.call("tools/call", params(rev, json!({"name": tool, "arguments": {}}))).await
}

/// The result of a call without the `_meta` and `resultType` 2026-07-28 adds.
fn bare(mut answer: Value) -> Value {
    assert!(answer.get("result").is_some(), "the call failed: {answer}");
    let object = answer["result"].as_object_mut().unwrap();
    object.remove("_meta");
    object.remove("resultType");
    answer["result"].take()
}

#[tokio::test]
async fn matching_structured_content_is_answered_as_returned() {
    let server = server(true);
    for rev in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        let mut c = connect(&server, rev).await;
        assert_eq!(
            bare(call(&mut c, rev, "sum").await),
            json!({"content": [{"type": "text", "text": "{\"sum\":3}"}], "structuredContent": {"sum": 3}}),
            "{rev}"
        );
        // An error result needs no structured content.
        assert_eq!(
            bare(call(&mut c, rev, "fails").await),
            json!({"content": [{"type": "text", "text": "no numbers today"}], "isError": true}),
            "{rev}"
        );
    }
}

#[tokio::test]
async fn mismatching_or_missing_structured_content_is_an_internal_error() {
    let server = server(true);
    for rev in ["2025-11-25", "2026-07-28"] {
        let mut c = connect(&server, rev).await;
        let answer = call(&mut c, rev, "wrong").await;
        assert_eq!(
            answer["error"],
            json!({
                "code": -32603,
                "message": "internal error: structured content of tool `wrong` does not match its output schema: \
                            /sum: \"three\" is not of type \"number\""
            }),
            "{rev}: {answer}"
        );
        let answer = call(&mut c, rev, "bare").await;
        assert_eq!(
            answer["error"],
            json!({
                "code": -32603,
                "message": "internal error: tool `bare` has an output schema but its result has no structured content"
            }),
            "{rev}: {answer}"
        );
        // Checked against the schema as written, before older revisions see it wrapped (its
        // `$ref` needs the `jsonschema` feature: without it, the schema is not checked).
        if !cfg!(feature = "jsonschema") {
            continue;
        }
        let answer = call(&mut c, rev, "bad_users").await;
        assert_eq!(answer["error"]["code"], -32603, "{rev}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("internal error: structured content of tool `bad_users` does not match"),
            "{message}"
        );
        assert!(message.contains("/0") && message.contains("\"name\""), "{message}");
    }
}

#[tokio::test]
async fn with_the_check_off_results_pass_as_returned() {
    let server = server(false);
    let mut c = connect(&server, "2025-11-25").await;
    assert_eq!(bare(call(&mut c, "2025-11-25", "bare").await), json!({"content": [{"type": "text", "text": "3"}]}));
    let mut c = connect(&server, "2026-07-28").await;
    assert_eq!(bare(call(&mut c, "2026-07-28", "wrong").await)["structuredContent"], json!({"sum": "three"}));
}

#[tokio::test]
async fn the_check_is_on_by_default_in_debug_builds() {
    let server = Server::builder("outputs", "1.0.0").tools(tools()).build().unwrap();
    let mut c = connect(&server, "2025-11-25").await;
    let answer = call(&mut c, "2025-11-25", "wrong").await;
    assert_eq!(answer.get("error").is_some(), cfg!(debug_assertions), "{answer}");
}

#[tokio::test]
async fn tools_added_at_runtime_are_checked_too() {
    let server = server(true);
    let late = returning("late", || Ok(CallToolResult::structured(json!({"sum": null})))).output_schema(sum_schema());
    server.add_tool(late.unwrap()).await.unwrap();
    let mut c = connect(&server, "2026-07-28").await;
    assert_eq!(call(&mut c, "2026-07-28", "late").await["error"]["code"], -32603);
}

#[tokio::test]
async fn an_output_schema_that_does_not_compile_is_refused_when_checked() {
    let broken = || {
        returning("broken", || Ok(CallToolResult::structured(json!({}))))
            .output_schema(json!({"type": "object", "properties": {"a": {"type": "strin"}}}))
            .unwrap()
    };
    // Only jsonschema tells a schema that does not compile (without the feature, a schema the
    // built-in checker does not take is not checked, with a warning).
    let built = Server::builder("outputs", "1.0.0").check_structured_content(true).tool(broken()).build();
    if cfg!(feature = "jsonschema") {
        let err = built.unwrap_err();
        assert!(matches!(&err, DefinitionError::InvalidSchema { which: "outputSchema", .. }), "{err}");
    } else {
        built.unwrap();
    }
    // The same when the tool is added to a running server.
    let running = Server::builder("outputs", "1.0.0").check_structured_content(true).enable_tools().build().unwrap();
    let added = running.add_tool(broken()).await;
    if cfg!(feature = "jsonschema") {
        assert!(matches!(&added, Err(DefinitionError::InvalidSchema { which: "outputSchema", .. })), "{added:?}");
        assert!(running.tool("broken").is_none());
    } else {
        added.unwrap();
    }
    // Unchecked, it is the server's to get right.
    Server::builder("outputs", "1.0.0").check_structured_content(false).tool(broken()).build().unwrap();
    // A schema that is not a JSON object, or whose root type names no JSON type, is refused
    // whatever the check.
    let tool = || returning("t", || Ok(CallToolResult::success(vec![])));
    assert!(tool().output_schema(json!(true)).is_err());
    assert!(tool().output_schema(json!({"type": "list"})).is_err());
    assert!(tool().output_schema(json!({"type": ["array", "null"]})).is_ok());
}

#[tokio::test]
async fn schemas_that_are_not_objects_as_2026_07_28_sees_them() {
    let server = server(true);
    let rev = "2026-07-28";
    let mut c = connect(&server, rev).await;
    let list = c.result("tools/list", params(rev, json!({}))).await;
    let tools = list["tools"].as_array().unwrap();
    let users = tools.iter().find(|t| t["name"] == "users").unwrap();
    assert_eq!(users["outputSchema"], users_schema());
    let count = tools.iter().find(|t| t["name"] == "count").unwrap();
    assert_eq!(count["outputSchema"], json!({"type": "integer"}));
    assert_eq!(
        bare(call(&mut c, rev, "users").await),
        json!({
            "content": [{"type": "text", "text": "[{\"name\":\"alice\"},{\"name\":\"bob\"}]"}],
            "structuredContent": [{"name": "alice"}, {"name": "bob"}]
        })
    );
    assert_eq!(
        bare(call(&mut c, rev, "count").await),
        json!({"content": [{"type": "text", "text": "2"}], "structuredContent": 2})
    );
}

#[tokio::test]
async fn older_revisions_see_them_wrapped_as_result() {
    let server = server(true);
    for rev in ["2025-06-18", "2025-11-25"] {
        let mut c = connect(&server, rev).await;
        // Each result is validated against the revision's schema, whose outputSchema and
        // structuredContent must be objects.
        let list = c.result("tools/list", json!({})).await;
        let tools = list["tools"].as_array().unwrap();
        let users = tools.iter().find(|t| t["name"] == "users").unwrap();
        assert_eq!(
            users["outputSchema"],
            json!({
                "type": "object",
                "properties": {"result": {"type": "array", "items": {"$ref": "#/properties/result/$defs/user"},
                    "$defs": {"user": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}},
                "required": ["result"]
            }),
            "{rev}"
        );
        let count = tools.iter().find(|t| t["name"] == "count").unwrap();
        assert_eq!(
            count["outputSchema"],
            json!({"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]})
        );
        // Object schemas are listed as written.
        assert_eq!(tools.iter().find(|t| t["name"] == "sum").unwrap()["outputSchema"], sum_schema());
        assert_eq!(
            bare(call(&mut c, rev, "users").await),
            json!({
                "content": [{"type": "text", "text": "[{\"name\":\"alice\"},{\"name\":\"bob\"}]"}],
                "structuredContent": {"result": [{"name": "alice"}, {"name": "bob"}]}
            }),
            "{rev}"
        );
        assert_eq!(
            bare(call(&mut c, rev, "count").await),
            json!({"content": [{"type": "text", "text": "2"}], "structuredContent": {"result": 2}})
        );
        // The wrapped schema accepts the wrapped content.
        let validator = jsonschema::validator_for(&users["outputSchema"]).unwrap();
        assert!(validator.is_valid(&json!({"result": [{"name": "alice"}]})));
        assert!(!validator.is_valid(&json!({"result": [{"nom": "alice"}]})));
    }
    // 2025-03-26 has no structured content and no output schemas.
    let mut c = connect(&server, "2025-03-26").await;
    let list = c.result("tools/list", json!({})).await;
    assert!(list["tools"].as_array().unwrap().iter().all(|t| t.get("outputSchema").is_none()), "{list}");
    let result = bare(call(&mut c, "2025-03-26", "count").await);
    assert_eq!(result, json!({"content": [{"type": "text", "text": "2"}]}));
}

#[tokio::test]
async fn structured_content_that_is_not_an_object_without_a_schema_is_wrapped_for_older_revisions() {
    let plain = returning("plain", || Json("just a string").into_tool_result());
    let server = Server::builder("outputs", "1.0.0").tool(plain).build().unwrap();
    let mut c = connect(&server, "2025-11-25").await;
    assert_eq!(
        bare(call(&mut c, "2025-11-25", "plain").await)["structuredContent"],
        json!({"result": "just a string"})
    );
    let mut c = connect(&server, "2026-07-28").await;
    assert_eq!(bare(call(&mut c, "2026-07-28", "plain").await)["structuredContent"], json!("just a string"));
}
