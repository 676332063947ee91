//! Revision 2026-07-28 served beside the session revisions, as transcripts over the in-memory
//! transport: no handshake, `server/discover`, per-request `_meta`, input-required round trips
//! with sealed state, and the errors of the revision. Every result is validated against the
//! official schema of the revision it was answered in.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_jsonrpc::transport::memory;
use mcp_server::{
    CacheTarget, ChangeEvent, Completion, Context, InMemoryBus, PromptDef, ResourceDef, Server, SubscriptionBus,
    TemplateDef, ToolDef, ToolError,
};
use mcp_test_support::{Wire, validate};
use mcp_types::{
    AnyResourceContents, CacheScope, CallToolResult, ContentBlock, CreateMessageRequestParams, ElicitRequestFormParams,
    ElicitRequestParams, LoggingLevel, Role, SamplingContent, SamplingMessage, TextContent, TextResourceContents,
};
use serde_json::{Value, json};
use tokio::sync::broadcast;

fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

fn full_caps() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {}})
}

/// The test's end of a connection, with the requests numbered.
struct Raw {
    wire: Wire,
    next: i64,
}

impl std::ops::Deref for Raw {
    type Target = Wire;
    fn deref(&self) -> &Wire {
        &self.wire
    }
}

impl std::ops::DerefMut for Raw {
    fn deref_mut(&mut self) -> &mut Wire {
        &mut self.wire
    }
}

impl Raw {
    /// Sends a request and returns its response (skipping notifications before it).
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        loop {
            let answer = self.recv().await;
            if answer.get("id") == Some(&json!(id)) {
                return answer;
            }
            assert!(
                answer.get("method").is_some_and(|m| m.as_str().unwrap().starts_with("notifications/")),
                "{answer}"
            );
        }
    }
    async fn stateless(&mut self, method: &str, mut params: Value, def: &str) -> Value {
        if params.get("_meta").is_none() {
            params["_meta"] = meta(full_caps());
        }
        let answer = self.call(method, params).await;
        let result = answer.get("result").cloned().unwrap_or_else(|| panic!("{method}: {answer}"));
        validate("2026-07-28", def, &result);
        assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "stateless-test", "{result}");
        result
    }
    async fn stateless_error(&mut self, method: &str, params: Value) -> Value {
        let answer = self.call(method, params).await;
        answer.get("error").cloned().unwrap_or_else(|| panic!("{method} should fail: {answer}"))
    }
}

fn elicit_name() -> ElicitRequestParams {
    let schema: mcp_types::ElicitRequestFormParamsRequestedSchema =
        serde_json::from_value(json!({"type": "object", "properties": {"name": {"type": "string"}}})).unwrap();
    ElicitRequestParams::ElicitRequestForm(ElicitRequestFormParams::new("What is your name?", schema))
}

fn server() -> Server {
    builder().build().unwrap()
}

fn server_with_keys(keys: Vec<Vec<u8>>) -> Server {
    builder().request_state_keys(keys).build().unwrap()
}

fn builder() -> mcp_server::ServerBuilder {
    builder_named("stateless-test")
}

fn builder_named(name: &str) -> mcp_server::ServerBuilder {
    let greet = ToolDef::new("greet", json!({"type": "object"}), |_args, ctx: Context| async move {
        let answer = ctx.elicit_raw_as("user_name", elicit_name()).await?;
        let name = answer.content.and_then(|c| c.get("name").map(|v| format!("{v:?}"))).unwrap_or_default();
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!("hello {name}"))]))
    })
    .unwrap();
    let two_rounds = ToolDef::new("two_rounds", json!({"type": "object"}), |_args, ctx: Context| async move {
        let first = ctx.elicit_raw(elicit_name()).await?;
        let msg = SamplingMessage::new(Role::User, SamplingContent::Text(TextContent::new("hi")));
        let second = ctx.create_message(CreateMessageRequestParams::new(10, vec![msg])).await?;
        let roots = ctx.list_roots().await?;
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!(
            "{:?} / {} / {}",
            first.action,
            second.model,
            roots.roots.len()
        ))]))
    })
    .unwrap();
    let chatty = ToolDef::new("chatty", json!({"type": "object"}), |_args, ctx: Context| async move {
        ctx.log(LoggingLevel::Info, json!("hello")).await;
        Ok::<_, ToolError>(CallToolResult::success(vec![]))
    })
    .unwrap();
    Server::builder(name, "1.0.0").instructions("be nice").tool(greet).tool(two_rounds).tool(chatty)
}

fn connect(server: &Server) -> Raw {
    let (ours, theirs) = memory(64);
    server.connect(theirs);
    Raw { wire: Wire::new(ours), next: 0 }
}

#[tokio::test]
async fn discover_and_lists_without_a_handshake() {
    let server = server();
    let mut c = connect(&server);
    let discover = c.stateless("server/discover", json!({}), "DiscoverResult").await;
    assert_eq!(
        discover["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
    );
    assert_eq!(discover["instructions"], "be nice");
    assert_eq!(discover["resultType"], "complete");
    let tools = c.stateless("tools/list", json!({}), "ListToolsResult").await;
    assert_eq!(tools["tools"].as_array().unwrap().len(), 3);
    assert_eq!((tools["ttlMs"].clone(), tools["cacheScope"].clone()), (json!(0), json!("private")));
    let names: Vec<Value> = tools["tools"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect();
    let again = c.stateless("tools/list", json!({}), "ListToolsResult").await;
    let names2: Vec<Value> = again["tools"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect();
    assert_eq!(names, names2, "deterministic order");
}

#[tokio::test]
async fn the_revisions_errors() {
    let server = server();
    let mut c = connect(&server);
    let e = c.stateless_error("server/discover", json!({})).await;
    assert_eq!(e["code"], -32602, "discover without _meta");
    let mut m = meta(full_caps());
    m.as_object_mut().unwrap().remove("io.modelcontextprotocol/clientCapabilities");
    let e = c.stateless_error("tools/list", json!({"_meta": m})).await;
    assert_eq!(e["code"], -32602, "no clientCapabilities");
    let mut m = meta(full_caps());
    m["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let e = c.stateless_error("tools/list", json!({"_meta": m})).await;
    assert_eq!(e["code"], -32022);
    assert_eq!(e["data"]["requested"], "v999.0.0");
    assert_eq!(e["data"]["supported"][0], "2026-07-28");
    for removed in ["ping", "logging/setLevel", "resources/subscribe", "initialize"] {
        let e = c.stateless_error(removed, json!({"_meta": meta(full_caps())})).await;
        assert_eq!(e["code"], -32601, "{removed}");
    }
    let e = c.stateless_error("tools/call", json!({"name": "greet", "_meta": meta(json!({"sampling": {}}))})).await;
    assert_eq!(e["code"], -32021, "elicitation not declared");
    assert_eq!(e["data"]["requiredCapabilities"], json!({"elicitation": {}}));
    // A client that declared URL mode only has no form mode to ask in.
    let url_only = meta(json!({"elicitation": {"url": {}}}));
    let e = c.stateless_error("tools/call", json!({"name": "greet", "_meta": url_only})).await;
    assert_eq!(e["code"], -32021, "form mode not declared");
    assert_eq!(e["data"]["requiredCapabilities"], json!({"elicitation": {"form": {}}}));
}

#[tokio::test]
async fn an_elicitation_round_trip_with_sealed_state() {
    let server = server();
    let mut c = connect(&server);
    let first = c.stateless("tools/call", json!({"name": "greet", "arguments": {}}), "InputRequiredResult").await;
    assert_eq!(first["resultType"], "input_required");
    assert_eq!(first["inputRequests"]["user_name"]["method"], "elicitation/create");
    let state = first["requestState"].as_str().unwrap().to_owned();
    let answer = json!({"user_name": {"action": "accept", "content": {"name": "Alice"}}});
    let done = c
        .stateless(
            "tools/call",
            json!({"name": "greet", "arguments": {}, "inputResponses": answer, "requestState": state}),
            "CallToolResult",
        )
        .await;
    assert_eq!(done["content"][0]["text"], "hello String(\"Alice\")");
    assert_eq!(done["resultType"], "complete");

    // Without state the answer alone is enough for a one-input tool.
    let done = c.stateless("tools/call", json!({"name": "greet", "inputResponses": answer}), "CallToolResult").await;
    assert!(done["content"][0]["text"].as_str().unwrap().contains("Alice"));

    let tampered = format!("{state}-TAMPERED");
    let e = c
        .stateless_error("tools/call", json!({"name": "greet", "requestState": tampered, "_meta": meta(full_caps())}))
        .await;
    assert_eq!(e["code"], -32602);
    assert_eq!(e["data"]["reason"], "invalid_request_state");
    // State issued for another request does not open this one.
    let e = c
        .stateless_error("tools/call", json!({"name": "two_rounds", "requestState": state, "_meta": meta(full_caps())}))
        .await;
    assert_eq!(e["code"], -32602);
    // Another instance with other keys does not open it; one with the same keys does.
    let mut foreign = connect(&server_with_keys(vec![b"other".to_vec()]));
    let params = json!({"name": "greet", "requestState": state, "inputResponses": answer, "_meta": meta(full_caps())});
    assert_eq!(foreign.stateless_error("tools/call", params.clone()).await["code"], -32602);
    let keyed = server_with_keys(vec![b"shared".to_vec()]);
    let first = connect(&keyed).stateless("tools/call", json!({"name": "greet"}), "InputRequiredResult").await;
    let mut params = params;
    params["requestState"] = first["requestState"].clone();
    let sibling = server_with_keys(vec![b"newer".to_vec(), b"shared".to_vec()]);
    let done = connect(&sibling).stateless("tools/call", params, "CallToolResult").await;
    assert!(done["content"][0]["text"].as_str().unwrap().contains("Alice"), "a rotated sibling continues it");
}

#[tokio::test]
async fn several_rounds_carry_earlier_answers_in_the_state() {
    let server = server();
    let mut c = connect(&server);
    let mut params = json!({"name": "two_rounds", "arguments": {}});
    let mut answers = json!({});
    let mut states = Vec::new();
    let result = loop {
        let answer = c
            .call("tools/call", {
                let mut p = params.clone();
                p["_meta"] = meta(full_caps());
                p
            })
            .await;
        let result = answer["result"].clone();
        validate(
            "2026-07-28",
            if result["resultType"] == "input_required" { "InputRequiredResult" } else { "CallToolResult" },
            &result,
        );
        if result["resultType"] != "input_required" {
            break result;
        }
        let requests = result["inputRequests"].as_object().unwrap();
        assert_eq!(requests.len(), 1, "one input per round: {result}");
        let (key, request) = requests.iter().next().unwrap();
        let response = match request["method"].as_str().unwrap() {
            "elicitation/create" => json!({"action": "accept", "content": {"name": "Bob"}}),
            "sampling/createMessage" => {
                json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m7"})
            }
            "roots/list" => json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}),
            other => panic!("{other}"),
        };
        answers = json!({key.clone(): response});
        states.push(result["requestState"].as_str().unwrap().to_owned());
        params["inputResponses"] = answers.clone();
        params["requestState"] = json!(states.last().unwrap());
    };
    assert_eq!(states.len(), 3);
    assert!(states[0] != states[1] && states[1] != states[2], "each round has its own state");
    assert_eq!(result["content"][0]["text"], "Accept / m7 / 2");
}

#[tokio::test]
async fn logs_only_when_the_request_asks() {
    let server = server();
    let mut c = connect(&server);
    c.stateless("tools/call", json!({"name": "chatty"}), "CallToolResult").await;
    // The response came without a log before it (call() would have skipped one: check by
    // asking with a level and seeing the log first).
    let mut m = meta(full_caps());
    m["io.modelcontextprotocol/logLevel"] = json!("info");
    c.next += 1;
    let id = c.next;
    c.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "chatty", "_meta": m}})).await;
    assert_eq!(c.recv().await["method"], "notifications/message");
    assert_eq!(c.recv().await["id"], id);
    c.next += 1;
    let id = c.next;
    c.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "chatty", "_meta": meta(full_caps())}}))
        .await;
    assert_eq!(c.recv().await["id"], id, "no log without logLevel");
}

#[tokio::test]
async fn one_connection_serves_a_session_and_stateless_requests_side_by_side() {
    let server = server();
    let mut c = connect(&server);
    let init = c
        .call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}),
        )
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let old = c.call("tools/list", json!({})).await;
    validate("2025-06-18", "ListToolsResult", &old["result"]);
    assert!(old["result"].get("resultType").is_none() && old["result"].get("ttlMs").is_none());
    let new = c.stateless("tools/list", json!({}), "ListToolsResult").await;
    assert_eq!(new["resultType"], "complete");
    assert_eq!(c.call("ping", json!({})).await["result"], json!({}), "the session still has ping");
}

#[tokio::test]
async fn subscriptions_listen_acknowledges_then_streams_what_was_asked() {
    let server = server();
    let mut c = connect(&server);
    let params =
        json!({"_meta": meta(json!({})), "notifications": {"toolsListChanged": true, "promptsListChanged": true}});
    c.send(json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": params})).await;
    let ack = c.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}), "no prompts here: not honoured");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen-1");
    validate("2026-07-28", "SubscriptionsAcknowledgedNotification", &ack);
    server.remove_tool("chatty").await;
    let changed = c.recv().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen-1");
    validate("2026-07-28", "ToolListChangedNotification", &changed);
    // The client ends it (stdio: a cancellation); nothing more comes.
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "listen-1"}})).await;
    let tools = c.stateless("tools/list", json!({}), "ListToolsResult").await;
    assert_eq!(tools["tools"].as_array().unwrap().len(), 2);
    server.remove_tool("greet").await;
    c.send(json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {"_meta": meta(json!({}))}})).await;
    let after = c.recv().await;
    assert_eq!(after["id"], 99, "no notification after the cancellation: {after}");
    assert_eq!(after["result"]["tools"].as_array().unwrap().len(), 1);
}

/// Every official 2026-07-28 example request, sent to a server with a `get_weather` tool, a
/// resource and a prompt: each gets a response valid for its method in that revision's schema
/// (or, for a long-lived listen, its acknowledgement).
#[tokio::test]
async fn the_official_example_requests_get_valid_answers() {
    use mcp_server::{PromptDef, ResourceDef};
    let weather = ToolDef::new("get_weather", json!({"type": "object"}), |_args, _ctx| async {
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text("sunny")]))
    })
    .unwrap();
    let server = builder()
        .tool(weather)
        .resource(
            ResourceDef::new("main.rs", "file:///project/src/main.rs", |uri: String, _vars, _ctx| async move {
                Ok::<_, mcp_types::ErrorObject>(vec![mcp_types::AnyResourceContents::TextResourceContents(
                    mcp_types::TextResourceContents::new(uri, "fn main() {}"),
                )])
            })
            .cache_hints(Duration::from_secs(60), mcp_types::CacheScope::Public),
        )
        .cache_hints(Duration::from_secs(5), mcp_types::CacheScope::Private)
        .prompt(PromptDef::new("code_review", |_args, _ctx| async {
            Ok::<_, mcp_types::ErrorObject>(mcp_types::GetPromptResult::new(vec![mcp_types::PromptMessage::new(
                Role::User,
                ContentBlock::text("review this"),
            )]))
        }))
        .build()
        .unwrap();
    let dir = format!("{}/../mcp-types/schema/2026-07-28/examples", env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if !name.ends_with("Request")
            || ["ListRootsRequest", "CreateMessageRequest", "ElicitRequest"].contains(&name.as_str())
        {
            continue; // Requests a server receives only.
        }
        for file in std::fs::read_dir(entry.path()).unwrap() {
            let request: Value = serde_json::from_str(&std::fs::read_to_string(file.unwrap().path()).unwrap()).unwrap();
            let mut c = connect(&server);
            c.send(request.clone()).await;
            let answer = c.recv().await;
            let method = request["method"].as_str().unwrap();
            if method == "subscriptions/listen" {
                assert_eq!(answer["method"], "notifications/subscriptions/acknowledged", "{answer}");
                validate("2026-07-28", "SubscriptionsAcknowledgedNotification", &answer);
            } else {
                assert_eq!(answer["id"], request["id"]);
                let result = answer.get("result").unwrap_or_else(|| panic!("{name}: {answer}"));
                let def = format!("{}Result", name.trim_end_matches("Request"));
                let def = if def == "CompleteResult" || result["resultType"] != "input_required" {
                    def
                } else {
                    "InputRequiredResult".into()
                };
                validate("2026-07-28", &def, result);
                let hints = (&result["ttlMs"], &result["cacheScope"]);
                match method {
                    "resources/read" => assert_eq!(hints, (&json!(60000), &json!("public")), "per resource"),
                    m if m.ends_with("/list") => assert_eq!(hints, (&json!(5000), &json!("private")), "per server"),
                    _ => {}
                }
            }
            seen += 1;
        }
    }
    assert!(seen >= 9, "only {seen} example requests");
}

#[tokio::test]
async fn replacing_a_tool_keeps_the_list_order() {
    let server = server();
    let before: Vec<String> = server.tools().into_iter().map(|t| t.name).collect();
    let greet = ToolDef::new("greet", json!({"type": "object"}), |_args, _ctx| async {
        Ok::<_, ToolError>(CallToolResult::success(vec![]))
    })
    .unwrap()
    .description("replaced");
    server.add_tool(greet).await.unwrap();
    let after: Vec<String> = server.tools().into_iter().map(|t| t.name).collect();
    assert_eq!(before, after);
    assert_eq!(server.tool("greet").unwrap().description.as_deref(), Some("replaced"));
}

#[tokio::test]
async fn expired_state_is_refused() {
    let server = builder().request_state_ttl(Duration::ZERO).build().unwrap();
    let mut c = connect(&server);
    let first = c.stateless("tools/call", json!({"name": "greet"}), "InputRequiredResult").await;
    let params = json!({
        "name": "greet",
        "requestState": first["requestState"],
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Al"}}},
        "_meta": meta(full_caps()),
    });
    let e = c.stateless_error("tools/call", params).await;
    assert_eq!(e["code"], -32602);
    assert!(e["message"].as_str().unwrap().contains("expired"), "{e}");
}

#[tokio::test]
async fn request_state_is_bound_to_the_name_of_the_server_that_issued_it() {
    let keys = vec![b"shared between instances".to_vec()];
    let issuer = builder().request_state_keys(keys.clone()).build().unwrap();
    let first = connect(&issuer).stateless("tools/call", json!({"name": "greet"}), "InputRequiredResult").await;
    let params = json!({
        "name": "greet",
        "requestState": first["requestState"],
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ann"}}},
        "_meta": meta(full_caps()),
    });
    // Another server holding the same keys, under another name: the state is not its own.
    let other = builder_named("another-server").request_state_keys(keys.clone()).build().unwrap();
    let e = connect(&other).stateless_error("tools/call", params.clone()).await;
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(e["data"]["reason"], "invalid_request_state");
    assert!(e["message"].as_str().unwrap().contains("issued by another server"), "{e}");
    // An instance of the same server (same name, same keys) continues it.
    let sibling = builder().request_state_keys(keys).build().unwrap();
    let done = connect(&sibling).stateless("tools/call", params, "CallToolResult").await;
    assert!(done["content"][0]["text"].as_str().unwrap().contains("Ann"), "{done}");
}

/// Sends `subscriptions/listen` with `filter` as request `id` and returns the acknowledgement.
async fn listen(c: &mut Raw, id: &str, filter: Value) -> Value {
    let params = json!({"_meta": meta(json!({})), "notifications": filter});
    c.send(json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params})).await;
    let ack = c.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    ack
}

#[tokio::test]
async fn servers_sharing_a_subscription_bus_reach_each_others_listeners() {
    let bus: Arc<dyn SubscriptionBus> = Arc::new(InMemoryBus::default());
    let first = builder().subscription_bus(bus.clone()).build().unwrap();
    let second = builder().subscription_bus(bus).build().unwrap();
    let alone = builder().build().unwrap();
    let mut on_second = connect(&second);
    listen(&mut on_second, "s-1", json!({"toolsListChanged": true})).await;
    let mut on_alone = connect(&alone);
    listen(&mut on_alone, "a-1", json!({"toolsListChanged": true})).await;

    // A change on the first server reaches the listener of the second ...
    assert!(first.remove_tool("chatty").await);
    let changed = on_second.recv().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed", "{changed}");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "s-1");
    validate("2026-07-28", "ToolListChangedNotification", &changed);
    // ... and not one of a server with a bus of its own: its next message answers a request.
    let params = json!({"_meta": meta(json!({}))});
    on_alone.send(json!({"jsonrpc": "2.0", "id": "next", "method": "tools/list", "params": params})).await;
    let next = on_alone.recv().await;
    assert_eq!(next["id"], "next", "{next}");
    assert_eq!(next["result"]["tools"].as_array().unwrap().len(), 3, "each server keeps its own tools");
}

#[tokio::test]
async fn a_listener_that_fell_behind_hears_of_every_kind_it_follows() {
    // A bus that keeps one event: three published at once (nothing runs in between on this
    // single-threaded runtime) leave the listener two behind.
    let bus = Arc::new(InMemoryBus::new(1));
    let server = builder().enable_prompts().enable_resources().subscription_bus(bus.clone()).build().unwrap();
    let mut c = connect(&server);
    let ack = listen(
        &mut c,
        "lag",
        json!({"promptsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": ["file:///a"]}),
    )
    .await;
    assert_eq!(ack["params"]["notifications"]["promptsListChanged"], true, "{ack}");
    bus.publish(ChangeEvent::ToolsListChanged);
    bus.publish(ChangeEvent::ToolsListChanged);
    bus.publish(ChangeEvent::ResourceUpdated("file:///b".into()));
    let mut got = Vec::new();
    for _ in 0..3 {
        let n = c.recv().await;
        assert_eq!(n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "lag", "{n}");
        got.push((n["method"].as_str().unwrap().to_owned(), n["params"]["uri"].as_str().map(str::to_owned)));
    }
    assert_eq!(
        got,
        [
            ("notifications/prompts/list_changed".to_owned(), None),
            ("notifications/resources/list_changed".to_owned(), None),
            ("notifications/resources/updated".to_owned(), Some("file:///a".to_owned())),
        ],
        "no tools/list_changed (not asked for), and no update of file:///b (not followed)"
    );
    // And then the stream goes on as before.
    bus.publish(ChangeEvent::PromptsListChanged);
    assert_eq!(c.recv().await["method"], "notifications/prompts/list_changed");
}

#[tokio::test]
async fn a_resync_from_the_bus_announces_every_kind_followed() {
    // What a bus shared by a fleet sends when it may have missed events (Redis was away).
    let bus = Arc::new(InMemoryBus::default());
    let server = builder().enable_prompts().enable_resources().subscription_bus(bus.clone()).build().unwrap();
    let mut c = connect(&server);
    listen(&mut c, "resync", json!({"promptsListChanged": true, "resourceSubscriptions": ["file:///a"]})).await;
    bus.publish(ChangeEvent::Resync);
    let methods: Vec<Value> = [c.recv().await, c.recv().await].iter().map(|n| n["method"].clone()).collect();
    assert_eq!(methods, [json!("notifications/prompts/list_changed"), json!("notifications/resources/updated")]);
    bus.publish(ChangeEvent::PromptsListChanged);
    assert_eq!(c.recv().await["method"], "notifications/prompts/list_changed", "and then on as before");
}

#[tokio::test]
async fn a_template_added_at_runtime_reaches_resource_list_listeners() {
    let server = builder().enable_resources().build().unwrap();
    let mut c = connect(&server);
    listen(&mut c, "templates", json!({"resourcesListChanged": true})).await;
    let note = mcp_server::TemplateDef::new("note", "test://notes/{n}", |_uri: String, _vars, _ctx| async {
        Ok::<_, mcp_types::ErrorObject>(vec![])
    })
    .unwrap();
    server.add_resource_template(note).await.unwrap();
    let changed = c.recv().await;
    assert_eq!(changed["method"], "notifications/resources/list_changed", "{changed}");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "templates");
    validate("2026-07-28", "ResourceListChangedNotification", &changed);
    let list = c.stateless("resources/templates/list", json!({}), "ListResourceTemplatesResult").await;
    assert_eq!(list["resourceTemplates"][0]["uriTemplate"], "test://notes/{n}");
    assert!(server.remove_resource_template("test://notes/{n}").await);
    assert_eq!(c.recv().await["method"], "notifications/resources/list_changed");
}

/// A bus whose channel can be closed (as a distributed one whose connection to its broker
/// ended for good).
struct ClosingBus(Mutex<Option<broadcast::Sender<ChangeEvent>>>);

impl SubscriptionBus for ClosingBus {
    fn publish(&self, event: ChangeEvent) {
        if let Some(tx) = &*self.0.lock().unwrap() {
            let _ = tx.send(event);
        }
    }
    fn subscribe(&self) -> broadcast::Receiver<ChangeEvent> {
        match &*self.0.lock().unwrap() {
            Some(tx) => tx.subscribe(),
            None => broadcast::channel(1).1,
        }
    }
}

#[tokio::test]
async fn a_closed_bus_ends_each_listen_gracefully() {
    let bus = Arc::new(ClosingBus(Mutex::new(Some(broadcast::channel(16).0))));
    let server = builder().subscription_bus(bus.clone()).build().unwrap();
    let mut c = connect(&server);
    listen(&mut c, "graceful", json!({"toolsListChanged": true})).await;
    server.remove_tool("chatty").await;
    assert_eq!(c.recv().await["method"], "notifications/tools/list_changed");
    bus.0.lock().unwrap().take();
    let end = c.recv().await;
    assert_eq!(end["id"], "graceful", "the listen request is answered: {end}");
    let result = end.get("result").unwrap_or_else(|| panic!("a result, not an error: {end}"));
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/subscriptionId"], "graceful");
    validate("2026-07-28", "SubscriptionsListenResult", result);
}

/// A server whose completer asks the client for input: in a session it may; in 2026-07-28
/// only `tools/call`, `prompts/get` and `resources/read` can.
fn asking_completer() -> Server {
    let prompt = PromptDef::new("review", |_args, _ctx| async {
        Ok::<_, mcp_types::ErrorObject>(mcp_types::GetPromptResult::new(vec![]))
    })
    .argument(mcp_types::PromptArgument::new("language").with_required(false))
    .complete("language", |_req, ctx: Context| async move {
        let answer = ctx.elicit_raw(elicit_name()).await?;
        Ok(Completion { values: vec![format!("{:?}", answer.action)] })
    });
    builder().prompt(prompt).build().unwrap()
}

fn complete_params() -> Value {
    json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "language", "value": "r"}})
}

#[tokio::test]
async fn a_2026_completion_handler_cannot_ask_the_client_and_a_session_one_can() {
    let server = asking_completer();
    let mut c = connect(&server);
    let mut params = complete_params();
    params["_meta"] = meta(full_caps());
    // Nothing is sent to the client (`call` fails on a request from the server): an error.
    let answer = c.call("completion/complete", params).await;
    let e = answer.get("error").unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(e["code"], -32603, "{e}");
    assert!(e["message"].as_str().unwrap().contains("only tools/call, prompts/get and resources/read"), "{e}");

    // The same handler in a 2025-11-25 session asks the client.
    let init = c
        .call(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "old", "version": "1"}}),
        )
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    c.send(json!({"jsonrpc": "2.0", "id": "c-1", "method": "completion/complete", "params": complete_params()})).await;
    let ask = c.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    c.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}})).await;
    let done = c.recv().await;
    assert_eq!(done["id"], "c-1");
    assert_eq!(done["result"]["completion"]["values"], json!(["Decline"]), "{done}");
}

fn text_contents(uri: String, text: &str) -> Result<Vec<AnyResourceContents>, mcp_types::ErrorObject> {
    Ok(vec![AnyResourceContents::TextResourceContents(TextResourceContents::new(uri, text))])
}

#[tokio::test]
async fn cache_hints_per_list_for_discover_and_per_resource_or_template() {
    let secs = Duration::from_secs;
    let server = builder()
        .cache_hints(secs(5), CacheScope::Private)
        .cache_hints_for(CacheTarget::Discover, secs(3600), CacheScope::Public)
        .cache_hints_for(CacheTarget::ToolsList, secs(60), CacheScope::Public)
        .cache_hints_for(CacheTarget::ResourceTemplatesList, secs(120), CacheScope::Public)
        .cache_hints_for(CacheTarget::ResourcesRead, secs(1), CacheScope::Private)
        .resource(ResourceDef::new("plain", "mem://plain", |uri: String, _vars, _ctx| async move {
            text_contents(uri, "plain")
        }))
        .resource(
            ResourceDef::new("own", "mem://own", |uri: String, _vars, _ctx| async move { text_contents(uri, "own") })
                .cache_hints(secs(7), CacheScope::Public),
        )
        .resource_template(
            TemplateDef::new("notes", "mem://notes/{id}", |uri: String, _vars, _ctx| async move {
                text_contents(uri, "note")
            })
            .unwrap()
            .cache_hints(secs(30), CacheScope::Public),
        )
        .resource_template(
            TemplateDef::new(
                "logs",
                "mem://logs/{id}",
                |uri: String, _vars, _ctx| async move { text_contents(uri, "log") },
            )
            .unwrap(),
        )
        .prompt(PromptDef::new("p", |_args, _ctx| async {
            Ok::<_, mcp_types::ErrorObject>(mcp_types::GetPromptResult::new(vec![]))
        }))
        .build()
        .unwrap();
    let mut c = connect(&server);
    let hints = |r: &Value| (r["ttlMs"].as_i64().unwrap(), r["cacheScope"].as_str().unwrap().to_owned());
    let expect = |ms: i64, scope: &str| (ms, scope.to_owned());
    let d = c.stateless("server/discover", json!({}), "DiscoverResult").await;
    assert_eq!(hints(&d), expect(3_600_000, "public"), "discover");
    let r = c.stateless("tools/list", json!({}), "ListToolsResult").await;
    assert_eq!(hints(&r), expect(60_000, "public"), "tools/list");
    let r = c.stateless("prompts/list", json!({}), "ListPromptsResult").await;
    assert_eq!(hints(&r), expect(5_000, "private"), "prompts/list: the setting for all");
    let r = c.stateless("resources/list", json!({}), "ListResourcesResult").await;
    assert_eq!(hints(&r), expect(5_000, "private"), "resources/list");
    let r = c.stateless("resources/templates/list", json!({}), "ListResourceTemplatesResult").await;
    assert_eq!(hints(&r), expect(120_000, "public"), "resources/templates/list");
    let read = |uri: &str| json!({"uri": uri});
    let r = c.stateless("resources/read", read("mem://plain"), "ReadResourceResult").await;
    assert_eq!(hints(&r), expect(1_000, "private"), "a resource without hints: the server's for reads");
    let r = c.stateless("resources/read", read("mem://own"), "ReadResourceResult").await;
    assert_eq!(hints(&r), expect(7_000, "public"), "a resource's own hints");
    let r = c.stateless("resources/read", read("mem://notes/12"), "ReadResourceResult").await;
    assert_eq!(hints(&r), expect(30_000, "public"), "a template's own hints");
    assert_eq!(r["contents"][0]["text"], "note");
    let r = c.stateless("resources/read", read("mem://logs/3"), "ReadResourceResult").await;
    assert_eq!(hints(&r), expect(1_000, "private"), "a template without hints: the server's for reads");

    // One setting for all still sets discover too.
    let server = builder().cache_hints(secs(9), CacheScope::Public).build().unwrap();
    let d = connect(&server).stateless("server/discover", json!({}), "DiscoverResult").await;
    assert_eq!(hints(&d), expect(9_000, "public"));
}

#[tokio::test]
async fn an_unknown_resource_is_invalid_params_in_2026_and_resource_not_found_in_a_session() {
    // A template's handler says "not found" once, in the session revisions' code; the server
    // answers in the request's.
    let gone = TemplateDef::new("gone", "mem://gone/{id}", |uri: String, _vars, _ctx| async move {
        Err::<Vec<mcp_types::AnyResourceContents>, _>(mcp_types::ErrorObject::resource_not_found(&uri))
    });
    let server = builder()
        .resource(ResourceDef::new("here", "mem://here", |uri: String, _vars, _ctx| async move {
            text_contents(uri, "here")
        }))
        .resource_template(gone.unwrap())
        .build()
        .unwrap();
    let mut c = connect(&server);
    let e = c.stateless_error("resources/read", json!({"uri": "mem://gone", "_meta": meta(json!({}))})).await;
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(e["data"]["uri"], "mem://gone");
    let init = c
        .call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}),
        )
        .await;
    assert!(init.get("result").is_some(), "{init}");
    let e = c.stateless_error("resources/read", json!({"uri": "mem://gone"})).await;
    assert_eq!(e["code"], -32002, "{e}");
    let e = c.stateless_error("resources/read", json!({"uri": "mem://gone/1"})).await;
    assert_eq!((&e["code"], &e["data"]["uri"]), (&json!(-32002), &json!("mem://gone/1")), "{e}");
    let mut c = connect(&server);
    let e = c.stateless_error("resources/read", json!({"uri": "mem://gone/1", "_meta": meta(json!({}))})).await;
    assert_eq!((&e["code"], &e["data"]["uri"]), (&json!(-32602), &json!("mem://gone/1")), "{e}");
}

/// What a stateless request's `_meta` declares reaches the handler: the client's info (read only
/// when asked for), and the tool's name and arguments read through the params' index, escapes
/// included.
#[tokio::test]
async fn a_handler_sees_the_envelope_of_its_request() {
    let whoami = ToolDef::new("whoami", json!({"type": "object"}), |args, ctx: Context| async move {
        let info = ctx.client_info().map(|i| format!("{} {}", i.name, i.version)).unwrap_or_default();
        let said = args.get("say").and_then(Value::as_str).unwrap_or_default().to_owned();
        Ok::<_, ToolError>(CallToolResult::success(vec![ContentBlock::text(format!("{info}: {said}"))]))
    })
    .unwrap();
    let server = Server::builder("stateless-test", "1").tool(whoami).build().unwrap();
    let mut c = connect(&server);
    let mut envelope = meta(json!({}));
    envelope["io.modelcontextprotocol/clientInfo"] = json!({"name": "caf\u{e9} \"client\"", "version": "2.0"});
    let params = json!({"name": "whoami", "arguments": {"say": "hi\nthere"}, "_meta": envelope});
    let result = c.stateless("tools/call", params, "CallToolResult").await;
    assert_eq!(result["content"][0]["text"], "caf\u{e9} \"client\" 2.0: hi\nthere", "{result}");
    // The name and a `_meta` key with escapes, as a client may write them.
    let frame = r#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"who\u0061mi","arguments":{"say":"esc"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/client\u0049nfo":{"name":"e","version":"3"}}}}"#;
    c.send_text(frame).await;
    let answer = c.recv().await;
    assert_eq!(answer["result"]["content"][0]["text"], "e 3: esc", "{answer}");
    // Without clientInfo, none.
    let mut envelope = meta(json!({}));
    envelope.as_object_mut().unwrap().remove("io.modelcontextprotocol/clientInfo");
    let params = json!({"name": "whoami", "arguments": {"say": "x"}, "_meta": envelope});
    let result = c.stateless("tools/call", params, "CallToolResult").await;
    assert_eq!(result["content"][0]["text"], ": x", "{result}");
    // A name that is no string is bad params.
    let e = c.stateless_error("tools/call", json!({"name": 7, "_meta": meta(json!({}))})).await;
    assert_eq!(e["code"], -32602, "{e}");
}
