//! The client in protocol revision 2026-07-28 (stateless MCP), against a server played by
//! hand over the in-memory transport (which behaves like stdio: one channel, cancellation by
//! `notifications/cancelled`): era negotiation with `server/discover` and its fallbacks, the
//! per-request `_meta`, multi round-trip requests, `subscriptions/listen`, the mapping of the
//! calls 2026-07-28 removed, and the list cache.

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_client::{Client, ClientBuilder, ClientError, ServerEvent, SubscriptionEnd, Violation};
use mcp_jsonrpc::transport::{MemoryRead, MemoryTransport, MemoryWrite, memory};
use mcp_jsonrpc::{PeerConfig, Transport, TransportRead, TransportWrite};
use mcp_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult,
    ElicitResultContentValue, ErrorObject, LoggingLevel, ProtocolVersion, Role, Root, SamplingContent,
    SubscriptionFilter, TextContent,
};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// The server's end of the connection, played by the test.
struct Script {
    rx: MemoryRead,
    tx: MemoryWrite,
}

impl Script {
    fn new(end: MemoryTransport) -> Script {
        let (rx, tx) = end.split();
        Script { rx, tx }
    }

    /// The next message from the client (at most 10 s).
    async fn recv(&mut self) -> Value {
        let frame = tokio::time::timeout(Duration::from_secs(10), self.rx.read())
            .await
            .expect("the client sent nothing within 10 s")
            .expect("the client closed the connection")
            .unwrap();
        serde_json::from_slice(&frame.frame).unwrap()
    }

    /// The next message, which must be a request of `method` carrying the 2026-07-28 `_meta`.
    async fn request(&mut self, method: &str) -> Value {
        let message = self.recv().await;
        assert_eq!(message["method"], method, "{message}");
        assert!(message.get("id").is_some(), "a request: {message}");
        let meta = &message["params"]["_meta"];
        assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28", "{message}");
        assert_eq!(meta["io.modelcontextprotocol/clientInfo"], json!({"name": "cli", "version": "1"}), "{message}");
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object(), "{message}");
        message
    }

    async fn send(&mut self, message: Value) {
        self.tx.write(&[bytes::Bytes::from(message.to_string()).into()]).await.unwrap();
    }

    async fn reply(&mut self, request: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result})).await;
    }

    async fn fail(&mut self, request: &Value, error: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "error": error})).await;
    }

    /// Answers `init` as a server of session revision `version` named "old", and takes the
    /// client's `notifications/initialized`.
    async fn accept_initialize(&mut self, init: &Value, version: &str, capabilities: Value) {
        let result = json!({"protocolVersion": version, "capabilities": capabilities,
            "serverInfo": {"name": "old", "version": "1"}});
        self.reply(init, result).await;
        assert_eq!(self.recv().await["method"], "notifications/initialized");
    }

    /// Answers the probe as a 2026-07-28 server with these capabilities.
    async fn discover(&mut self, capabilities: Value) -> Value {
        let probe = self.request("server/discover").await;
        let result = json!({
            "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
            "supportedVersions": ["2026-07-28"], "capabilities": capabilities,
            "instructions": "be kind",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hand", "version": "9"}}
        });
        self.reply(&probe, result).await;
        probe
    }
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("cli", "1")
}

fn connecting(builder: ClientBuilder) -> (JoinHandle<Result<Client, ClientError>>, Script) {
    let (a, b) = memory(64);
    (tokio::spawn(builder.connect(b)), Script::new(a))
}

/// A client connected to a 2026-07-28 server with tools, prompts, resources, logging.
async fn stateless(builder: ClientBuilder) -> (Client, Script) {
    let (client, mut server) = connecting(builder);
    server
        .discover(json!({"tools": {"listChanged": true}, "prompts": {}, "resources": {"subscribe": true},
            "logging": {}, "completions": {}}))
        .await;
    (client.await.unwrap().unwrap(), server)
}

fn text_result(text: &str) -> Value {
    json!({"resultType": "complete", "content": [{"type": "text", "text": text}]})
}

fn text(result: &mcp_types::CallToolResult) -> &str {
    result.content[0].as_text().unwrap()
}

#[tokio::test]
async fn discover_makes_a_stateless_connection_and_every_request_carries_meta() {
    let (client, mut server) = stateless(builder()).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.server_info().name, "hand");
    assert_eq!(client.instructions(), Some("be kind"));
    assert!(client.server_capabilities().tools.is_some());
    assert_eq!(client.discover_result().unwrap().supported_versions, ["2026-07-28"]);
    assert!(client.initialize_result().is_none());

    let call = tokio::spawn(async move {
        let tools = client.list_tools(None).await.unwrap();
        let r = client.call_tool("echo", json!({"text": "hi"})).await.unwrap();
        (client, tools, r)
    });
    let list = server.request("tools/list").await;
    assert_eq!(list["params"].as_object().unwrap().len(), 1, "only `_meta`: {list}");
    server
        .reply(
            &list,
            json!({"resultType": "complete", "ttlMs": 5000, "cacheScope": "public",
            "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        )
        .await;
    let tool = server.request("tools/call").await;
    assert_eq!(tool["params"]["name"], "echo");
    assert_eq!(tool["params"]["arguments"], json!({"text": "hi"}));
    assert_eq!(tool["params"].get("inputResponses"), None);
    server.reply(&tool, text_result("hi")).await;
    let (client, tools, r) = call.await.unwrap();
    assert_eq!(tools.ttl_ms, Some(5000), "cache hints are in the results");
    assert_eq!(tools.cache_scope, Some(mcp_types::CacheScope::Public));
    assert_eq!(text(&r), "hi");
    client.close().await.unwrap();
}

/// A client that answers input requests: elicitation ("Name?" gets "Ann", with the schema's
/// defaults filled in), sampling (5 tokens asked, "4" answered), roots (`file:///work`).
fn answering_builder() -> ClientBuilder {
    builder()
        .on_elicitation(|params: ElicitRequestParams| async move {
            let ElicitRequestParams::ElicitRequestForm(form) = params else { panic!("not a form") };
            assert_eq!(form.message, "Name?");
            let mut r = ElicitResult::new(ElicitAction::Accept);
            r.content = Some(BTreeMap::from([("name".to_owned(), ElicitResultContentValue::String("Ann".into()))]));
            Ok::<_, ErrorObject>(r)
        })
        .apply_elicitation_defaults()
        .on_sampling(|params: CreateMessageRequestParams| async move {
            assert_eq!(params.max_tokens, 5);
            Ok::<_, ErrorObject>(CreateMessageResult::new(
                Role::Assistant,
                SamplingContent::Text(TextContent::new("4")),
                "m",
            ))
        })
        .on_roots(|| async { Ok::<_, ErrorObject>(vec![Root::new("file:///work")]) })
}

#[tokio::test]
async fn input_required_is_answered_and_the_call_sent_again() {
    let (client, mut server) = connecting(answering_builder());
    let probe = server.discover(json!({"tools": {}, "prompts": {}, "resources": {}})).await;
    let caps = &probe["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert!(caps["elicitation"].is_object() && caps["sampling"].is_object() && caps["roots"].is_object(), "{caps}");
    let client = client.await.unwrap().unwrap();

    let call = tokio::spawn(async move {
        let r = client.call_tool("ask", json!({"q": 1})).await;
        (client, r)
    });
    // Round 1: an elicitation, with state.
    let first = server.request("tools/call").await;
    server
        .reply(
            &first,
            json!({"resultType": "input_required", "requestState": "opaque\"state\u{e9}",
            "inputRequests": {"who": {"method": "elicitation/create", "params": {"mode": "form", "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"},
                    "color": {"type": "string", "default": "blue"}}}}}}}),
        )
        .await;
    // Round 2: the same call, a new id, the answers and the exact state; now sampling and roots,
    // without state.
    let second = server.request("tools/call").await;
    assert_ne!(second["id"], first["id"], "a retry is a new request");
    assert_eq!(second["params"]["name"], "ask");
    assert_eq!(second["params"]["arguments"], json!({"q": 1}));
    assert_eq!(second["params"]["requestState"], "opaque\"state\u{e9}");
    assert_eq!(second["params"]["inputResponses"]["who"]["action"], "accept");
    assert_eq!(second["params"]["inputResponses"]["who"]["content"], json!({"name": "Ann", "color": "blue"}));
    server
        .reply(
            &second,
            json!({"resultType": "input_required", "inputRequests": {
            "llm": {"method": "sampling/createMessage", "params": {"maxTokens": 5,
                "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}]}},
            "dirs": {"method": "roots/list", "params": {}}}}),
        )
        .await;
    let third = server.request("tools/call").await;
    assert_eq!(third["params"].get("requestState"), None, "no state was given: none is sent");
    let responses = &third["params"]["inputResponses"];
    assert_eq!(responses.as_object().unwrap().len(), 2, "only this round's answers: {responses}");
    assert_eq!(responses["llm"]["content"], json!({"type": "text", "text": "4"}));
    assert_eq!(responses["dirs"]["roots"][0]["uri"], "file:///work");
    server.reply(&third, text_result("done")).await;
    let (client, r) = call.await.unwrap();
    assert_eq!(text(&r.unwrap()), "done");
    client.close().await.unwrap();
}

#[tokio::test]
async fn untyped_results_are_complete_and_prompts_take_input_rounds_too() {
    let (client, mut server) = stateless(builder()).await;
    // A result without `resultType` (a server of an earlier revision) is complete.
    let call = tokio::spawn(async move {
        let r = client.call_tool("old", json!({})).await;
        (client, r)
    });
    let req = server.request("tools/call").await;
    server.reply(&req, json!({"content": [{"type": "text", "text": "no type"}]})).await;
    let (client, r) = call.await.unwrap();
    assert_eq!(text(&r.unwrap()), "no type");

    // prompts/get and resources/read go through the same rounds.
    let call = tokio::spawn(async move {
        let p = client.get_prompt("p", BTreeMap::new()).await;
        (client, p)
    });
    let req = server.request("prompts/get").await;
    server.reply(&req, json!({"resultType": "input_required", "requestState": "s"})).await;
    let again = server.request("prompts/get").await;
    assert_eq!(again["params"]["requestState"], "s");
    assert_eq!(again["params"].get("inputResponses"), None, "no input was asked: none is sent");
    server.reply(&again, json!({"resultType": "complete", "messages": []})).await;
    let (client, p) = call.await.unwrap();
    assert!(p.unwrap().messages.is_empty());
    client.close().await.unwrap();
}

#[tokio::test]
async fn input_rounds_are_bounded_and_results_checked() {
    let (client, mut server) = stateless(builder().max_input_rounds(2)).await;
    let call = tokio::spawn(async move {
        let r = client.call_tool("forever", json!({})).await;
        (client, r)
    });
    for _ in 0..3 {
        let req = server.request("tools/call").await;
        server.reply(&req, json!({"resultType": "input_required", "requestState": "again"})).await;
    }
    let (client, r) = call.await.unwrap();
    assert!(matches!(r, Err(ClientError::TooManyRounds { rounds: 2, .. })), "{r:?}");

    // An input request the client has no handler for fails the call, clearly.
    let call = tokio::spawn(async move {
        let r = client.call_tool("ask", json!({})).await;
        (client, r)
    });
    let req = server.request("tools/call").await;
    server
        .reply(
            &req,
            json!({"resultType": "input_required",
            "inputRequests": {"x": {"method": "roots/list", "params": {}}}}),
        )
        .await;
    let (client, r) = call.await.unwrap();
    match r {
        Err(ClientError::Input { method, error }) => assert_eq!((method.as_str(), error.code), ("roots/list", -32601)),
        other => panic!("{other:?}"),
    }

    // input_required on a request that cannot have it, and unknown result types, are errors.
    let call = tokio::spawn(async move {
        let r = client.list_tools(None).await;
        (client, r)
    });
    let req = server.request("tools/list").await;
    server.reply(&req, json!({"resultType": "input_required", "requestState": "x"})).await;
    let (client, r) = call.await.unwrap();
    assert!(matches!(r, Err(ClientError::Protocol { violation: Violation::UnknownResultType(_), .. })), "{r:?}");
    let call = tokio::spawn(async move {
        let r = client.call_tool("t", json!({})).await;
        (client, r)
    });
    let req = server.request("tools/call").await;
    server.reply(&req, json!({"resultType": "task", "content": []})).await;
    let (_client, r) = call.await.unwrap();
    assert!(matches!(r, Err(ClientError::Protocol { violation: Violation::UnknownResultType(_), .. })), "{r:?}");
}

#[tokio::test]
async fn the_calls_2026_removed_are_mapped_or_refused() {
    let (client, mut server) = stateless(builder()).await;
    let call = tokio::spawn(async move {
        client.ping().await.unwrap();
        client.set_logging_level(LoggingLevel::Debug).await.unwrap();
        client.notify_roots_changed().await.unwrap();
        let r = client.call_tool("t", json!({})).await.unwrap();
        (client, r)
    });
    // ping is a discover; the log level goes into the `_meta` of later requests, and the log
    // messages of a request come before its answer; the roots notification does not exist
    // (nothing is sent).
    let ping = server.request("server/discover").await;
    server
        .reply(
            &ping,
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
            "supportedVersions": ["2026-07-28"], "capabilities": {}}),
        )
        .await;
    let req = server.request("tools/call").await;
    assert_eq!(req["params"]["_meta"]["io.modelcontextprotocol/logLevel"], "debug");
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "working"}}))
        .await;
    server.reply(&req, text_result("logged")).await;
    let (client, r) = call.await.unwrap();
    assert_eq!(text(&r), "logged");
    assert!(matches!(client.reinitialize().await, Err(ClientError::NotInRevision { .. })));
    // Raw calls of removed methods fail in the engine, without a round trip.
    let e = client.send_request::<mcp_types::PingRequest>(Default::default(), Default::default()).await;
    assert!(matches!(e, Err(ClientError::NotInRevision { .. })), "{e:?}");
    client.close().await.unwrap();
}

#[tokio::test]
async fn log_messages_of_a_request_are_events() {
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let (client, mut server) = connecting(builder().on_event(move |e| drop(events_tx.send(e))));
    // No list changes declared: no background subscription is opened.
    server.discover(json!({"tools": {}, "logging": {}})).await;
    let client = client.await.unwrap().unwrap();
    let call = tokio::spawn(async move {
        client.set_logging_level(LoggingLevel::Info).await.unwrap();
        let r = client.call_tool("t", json!({})).await.unwrap();
        (client, r)
    });
    let req = server.request("tools/call").await;
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "working"}}))
        .await;
    server.reply(&req, text_result("ok")).await;
    let (_client, _r) = call.await.unwrap();
    match events.recv().await.unwrap() {
        ServerEvent::Log(log) => assert_eq!(log.data, json!("working")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_server_of_an_earlier_revision_is_spoken_to_with_initialize() {
    let (client, mut server) = connecting(builder());
    let probe = server.request("server/discover").await;
    server.fail(&probe, json!({"code": -32601, "message": "Method not found"})).await;
    let init = server.recv().await;
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["params"].get("_meta"), None, "no 2026-07-28 metadata in a session");
    server.accept_initialize(&init, "2025-11-25", json!({"tools": {}})).await;
    let client = client.await.unwrap().unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.server_info().name, "old");
    assert!(client.discover_result().is_none());
    assert!(matches!(client.listen(SubscriptionFilter::default()).await, Err(ClientError::NotInRevision { .. })));
    let call = tokio::spawn(async move { client.ping().await });
    let ping = server.recv().await;
    assert_eq!(ping["method"], "ping");
    assert_eq!(ping["params"].get("_meta"), None);
    server.reply(&ping, json!({})).await;
    call.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_silent_server_is_one_of_an_earlier_revision() {
    let (client, mut server) = connecting(builder().discover_timeout(Duration::from_secs(3)));
    server.request("server/discover").await;
    // No answer: once the probe's time is up (the paused clock jumps), `initialize` comes,
    // after the probe's cancellation.
    let cancelled = server.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    let init = server.recv().await;
    assert_eq!(init["method"], "initialize");
    server.accept_initialize(&init, "2025-06-18", json!({})).await;
    assert_eq!(client.await.unwrap().unwrap().protocol_version(), ProtocolVersion::V2025_06_18);
}

#[tokio::test]
async fn an_unsupported_version_error_listing_ours_is_answered_by_asking_again() {
    let (client, mut server) = connecting(builder());
    let probe = server.request("server/discover").await;
    server
        .fail(
            &probe,
            json!({"code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}),
        )
        .await;
    let again = server.discover(json!({"tools": {}})).await;
    assert_ne!(again["id"], probe["id"]);
    let client = client.await.unwrap().unwrap();
    assert!(client.protocol_version().is_stateless());

    // Later requests too: once.
    let call = tokio::spawn(async move {
        let r = client.call_tool("t", json!({})).await;
        (client, r)
    });
    let req = server.request("tools/call").await;
    let unsupported = json!({"code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}});
    server.fail(&req, unsupported.clone()).await;
    let req = server.request("tools/call").await;
    server.fail(&req, unsupported).await;
    let (_client, r) = call.await.unwrap();
    match r {
        Err(ClientError::Remote(e)) => assert_eq!(e.code, -32022),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_server_listing_only_earlier_revisions_gets_initialize_unless_pinned() {
    let (client, mut server) = connecting(builder());
    let probe = server.request("server/discover").await;
    server
        .fail(
            &probe,
            json!({"code": -32022, "message": "no",
            "data": {"supported": ["2025-11-25", "2025-06-18"], "requested": "2026-07-28"}}),
        )
        .await;
    assert_eq!(server.recv().await["method"], "initialize");
    drop(client);

    // Pinned to 2026-07-28: no fallback, an error that names what the server speaks.
    let (client, mut server) = connecting(builder().protocol_version(ProtocolVersion::V2026_07_28));
    let probe = server.request("server/discover").await;
    server.fail(&probe, json!({"code": -32601, "message": "Method not found"})).await;
    match client.await.unwrap() {
        Err(ClientError::UnsupportedVersion(why)) => assert!(why.contains("Method not found"), "{why}"),
        other => panic!("{other:?}"),
    }

    // Session revisions only: no probe at all.
    let (client, mut server) = connecting(builder().session_revisions_only());
    let init = server.recv().await;
    assert_eq!(init["method"], "initialize");
    drop(client);
}

/// The next message, which must be `initialize` (a session revision's: no `_meta`).
async fn expect_initialize(server: &mut Script) -> Value {
    let init = server.recv().await;
    assert_eq!(init["method"], "initialize", "{init}");
    assert_eq!(init["params"].get("_meta"), None, "{init}");
    init
}

/// The connection ended with nothing more sent.
async fn expect_closed(server: &mut Script) {
    match tokio::time::timeout(Duration::from_secs(10), server.rx.read()).await {
        Ok(None) => {}
        Ok(Some(frame)) => panic!("unexpected {}", String::from_utf8_lossy(&frame.unwrap().frame)),
        Err(_) => panic!("the client did not close the connection"),
    }
}

#[tokio::test]
async fn initialize_first_falls_forward_to_discover_for_a_server_without_initialize() {
    // A 2026-07-28-only server names the revisions it speaks in its refusal (as the
    // specification asks of it): the client asks with `server/discover` and speaks 2026-07-28.
    let (client, mut server) = connecting(builder().initialize_first());
    let init = expect_initialize(&mut server).await;
    server
        .fail(
            &init,
            json!({"code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}),
        )
        .await;
    server.discover(json!({"tools": {}})).await;
    let client = client.await.unwrap().unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.server_info().name, "hand");
    assert!(client.initialize_result().is_none());
    let call = tokio::spawn(async move { client.list_tools(None).await });
    let list = server.request("tools/list").await;
    server.reply(&list, json!({"resultType": "complete", "tools": []})).await;
    call.await.unwrap().unwrap();

    // `initialize` unknown (method not found): the same.
    let (client, mut server) = connecting(builder().initialize_first());
    let init = expect_initialize(&mut server).await;
    server.fail(&init, json!({"code": -32601, "message": "Method not found: initialize"})).await;
    server.discover(json!({})).await;
    assert!(client.await.unwrap().unwrap().protocol_version().is_stateless());

    // A server of a session revision answers `initialize`: no probe at all.
    let (client, mut server) = connecting(builder().initialize_first());
    let init = expect_initialize(&mut server).await;
    server.accept_initialize(&init, "2025-06-18", json!({})).await;
    assert_eq!(client.await.unwrap().unwrap().protocol_version(), ProtocolVersion::V2025_06_18);
}

#[tokio::test]
async fn a_probe_that_failed_transiently_is_sent_again_when_initialize_is_refused() {
    let (client, mut server) = connecting(builder());
    let probe = server.request("server/discover").await;
    server.fail(&probe, json!({"code": -32603, "message": "warming up, try again"})).await;
    let init = expect_initialize(&mut server).await;
    server.fail(&init, json!({"code": -32602, "message": "invalid request metadata: `_meta` is missing"})).await;
    let again = server.discover(json!({"tools": {}})).await;
    assert_ne!(again["id"], probe["id"]);
    let client = client.await.unwrap().unwrap();
    assert!(client.protocol_version().is_stateless());
    assert!(client.discover_result().is_some());
}

#[tokio::test(start_paused = true)]
async fn a_slow_2026_server_whose_probe_timed_out_is_found_after_initialize() {
    let (client, mut server) = connecting(builder().discover_timeout(Duration::from_secs(3)));
    let probe = server.request("server/discover").await;
    // The probe's time runs out (the paused clock jumps): cancelled, then `initialize`.
    let cancelled = server.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    let init = expect_initialize(&mut server).await;
    // The late answer to the probe is dropped (its request is over) ...
    server
        .reply(
            &probe,
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
            "supportedVersions": ["2026-07-28"], "capabilities": {}}),
        )
        .await;
    // ... and the refusal of `initialize` has the client ask again, without the probe's
    // short time limit: the paused clock would run out a 3 s limit while nobody answers.
    server.fail(&init, json!({"code": -32601, "message": "Method not found"})).await;
    let again = server.request("server/discover").await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    server
        .reply(
            &again,
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
            "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "slow", "version": "1"}}}),
        )
        .await;
    let client = client.await.unwrap().unwrap();
    assert!(client.protocol_version().is_stateless());
    assert_eq!(client.server_info().name, "slow");
}

#[tokio::test]
async fn a_refused_initialize_is_the_error_when_the_server_is_not_a_2026_one_either() {
    // The probe said: a server of the session revisions only. Its refusal of `initialize` is
    // the error; no second probe.
    let (client, mut server) = connecting(builder());
    let probe = server.request("server/discover").await;
    server
        .fail(
            &probe,
            json!({"code": -32022, "message": "no", "data": {"supported": ["2025-11-25"], "requested": "2026-07-28"}}),
        )
        .await;
    let init = expect_initialize(&mut server).await;
    server.fail(&init, json!({"code": -32603, "message": "database down"})).await;
    match client.await.unwrap() {
        Err(ClientError::Remote(e)) => assert_eq!((e.code, e.message.as_str()), (-32603, "database down")),
        other => panic!("{other:?}"),
    }
    expect_closed(&mut server).await;

    // Asked again, the server is not a 2026-07-28 one: the refusal of `initialize` stands.
    let (client, mut server) = connecting(builder().initialize_first());
    let init = expect_initialize(&mut server).await;
    server.fail(&init, json!({"code": -32603, "message": "database down"})).await;
    let probe = server.request("server/discover").await;
    server.fail(&probe, json!({"code": -32601, "message": "Method not found"})).await;
    match client.await.unwrap() {
        Err(ClientError::Remote(e)) => assert_eq!((e.code, e.message.as_str()), (-32603, "database down")),
        other => panic!("{other:?}"),
    }

    // Session revisions only: never a probe, before `initialize` or after.
    let (client, mut server) = connecting(builder().session_revisions_only());
    let init = expect_initialize(&mut server).await;
    server.fail(&init, json!({"code": -32601, "message": "Method not found"})).await;
    assert!(matches!(client.await.unwrap(), Err(ClientError::Remote(e)) if e.code == -32601));
    expect_closed(&mut server).await;
}

#[tokio::test]
async fn subscriptions_listen_streams_notifications_until_dropped() {
    let (client, mut server) = stateless(builder()).await;
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        prompts_list_changed: Some(true),
        resource_subscriptions: Some(vec!["file:///a".into()]),
        ..Default::default()
    };
    let opening = tokio::spawn(async move {
        let s = client.listen(filter).await;
        (client, s)
    });
    let listen = server.request("subscriptions/listen").await;
    assert_eq!(
        listen["params"]["notifications"],
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["file:///a"]})
    );
    let id = listen["id"].clone();
    // Another subscription's notification, and one of no subscription, before the
    // acknowledgment: not for this one.
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "someone-else"}}}))
        .await;
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]},
                "_meta": {"io.modelcontextprotocol/subscriptionId": id}}}))
        .await;
    let (client, subscription) = opening.await.unwrap();
    let mut subscription = subscription.unwrap();
    assert_eq!(subscription.id(), &serde_json::from_value(id.clone()).unwrap());
    assert_eq!(subscription.acknowledged().prompts_list_changed, None, "what the server agreed to");
    let mut others = client.events();
    for (method, params) in [
        ("notifications/tools/list_changed", json!({})),
        ("notifications/resources/updated", json!({"uri": "file:///a"})),
    ] {
        let mut params = params;
        params["_meta"] = json!({"io.modelcontextprotocol/subscriptionId": id});
        server.send(json!({"jsonrpc": "2.0", "method": method, "params": params})).await;
    }
    assert_eq!(subscription.next().await, Some(ServerEvent::ToolListChanged));
    assert_eq!(subscription.next().await, Some(ServerEvent::ResourceUpdated { uri: "file:///a".into() }));
    assert!(subscription.ended().is_none());
    assert!(others.try_recv().is_err(), "a subscription's notifications are its own");

    // Dropping it cancels the request (the stdio way).
    drop(subscription);
    let cancelled = server.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], id);
    client.close().await.unwrap();
}

#[tokio::test]
async fn the_server_may_end_a_subscription() {
    let (client, mut server) = stateless(builder()).await;
    // Gracefully (its answer), or by cancelling it.
    for graceful in [true, false] {
        let opening = {
            let filter = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
            let listen = client.listen(filter);
            let script = async {
                let req = server.request("subscriptions/listen").await;
                let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                    "params": {"notifications": {"toolsListChanged": true},
                        "_meta": {"io.modelcontextprotocol/subscriptionId": req["id"]}}});
                server.send(ack).await;
                req
            };
            tokio::join!(listen, script)
        };
        let (subscription, req) = opening;
        let mut subscription = subscription.unwrap();
        if graceful {
            server
                .reply(
                    &req,
                    json!({"resultType": "complete",
                    "_meta": {"io.modelcontextprotocol/subscriptionId": req["id"]}}),
                )
                .await;
            assert_eq!(subscription.next().await, None);
            assert_eq!(subscription.ended(), Some(SubscriptionEnd::Completed));
        } else {
            server
                .send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": req["id"], "reason": "shutting down"}}))
                .await;
            assert_eq!(subscription.next().await, None);
            assert_eq!(subscription.ended(), Some(SubscriptionEnd::Cancelled));
        }
    }
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_refused_subscription_is_an_error() {
    let (client, mut server) = stateless(builder()).await;
    let opening = tokio::spawn(async move { client.listen(SubscriptionFilter::default()).await.map(|_| ()) });
    let req = server.request("subscriptions/listen").await;
    server.fail(&req, json!({"code": -32602, "message": "empty filter"})).await;
    match opening.await.unwrap() {
        Err(ClientError::Remote(e)) => assert_eq!(e.code, -32602),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_subscription_answered_before_its_acknowledgment_is_a_protocol_error() {
    let (client, mut server) = stateless(builder()).await;
    let opening = tokio::spawn(async move { client.listen(SubscriptionFilter::default()).await.map(|_| ()) });
    let req = server.request("subscriptions/listen").await;
    server.reply(&req, json!({"resultType": "complete"})).await;
    match opening.await.unwrap() {
        Err(ClientError::Protocol { method, violation: Violation::UnacknowledgedSubscription }) => {
            assert_eq!(method, "subscriptions/listen");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn malformed_input_required_results_are_protocol_errors() {
    let (mut client, mut server) = stateless(builder()).await;
    for (result, field) in [
        (json!({"resultType": "input_required", "inputRequests": ["not", "an", "object"]}), "inputRequests"),
        (json!({"resultType": "input_required", "requestState": 7}), "requestState"),
    ] {
        let call = tokio::spawn(async move { (client.call_tool("t", json!({})).await, client) });
        let req = server.request("tools/call").await;
        server.reply(&req, result).await;
        let (r, back) = call.await.unwrap();
        client = back;
        match r {
            Err(ClientError::Protocol { method, violation: Violation::MalformedInputRequired(f) }) => {
                assert_eq!((method.as_str(), f), ("tools/call", field));
            }
            other => panic!("{field}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn subscribe_keeps_a_listen_subscription_whose_notifications_are_events() {
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let (client, mut server) = connecting(builder().on_event(move |e| drop(events_tx.send(e))));
    server.discover(json!({"tools": {"listChanged": true}, "resources": {"subscribe": true}})).await;
    // on_event: a subscription to the list changes the server declares opens at once.
    let first = server.request("subscriptions/listen").await;
    assert_eq!(first["params"]["notifications"], json!({"toolsListChanged": true}));
    let ack = |req: &Value, filter: Value| {
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": filter, "_meta": {"io.modelcontextprotocol/subscriptionId": req["id"]}}})
    };
    server.send(ack(&first, json!({"toolsListChanged": true}))).await;
    let client = client.await.unwrap().unwrap();

    let subscribing = tokio::spawn(async move {
        client.subscribe("file:///b").await.unwrap();
        client
    });
    let second = server.request("subscriptions/listen").await;
    assert_eq!(
        second["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///b"]})
    );
    server.send(ack(&second, second["params"]["notifications"].clone())).await;
    let client = subscribing.await.unwrap();
    // The old one is closed once the new one is acknowledged.
    let cancelled = server.recv().await;
    assert_eq!(
        (cancelled["method"].as_str(), &cancelled["params"]["requestId"]),
        (Some("notifications/cancelled"), &first["id"])
    );
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": "file:///b", "_meta": {"io.modelcontextprotocol/subscriptionId": second["id"]}}}))
        .await;
    assert_eq!(events.recv().await, Some(ServerEvent::ResourceUpdated { uri: "file:///b".into() }));
    client.close().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn list_pages_are_cached_while_fresh_and_dropped_on_change() {
    let (events_tx, _events) = tokio::sync::mpsc::unbounded_channel();
    let (client, mut server) = connecting(
        builder()
            .cache_lists()
            .on_event(move |e| drop(events_tx.send(e)))
            .peer_config(PeerConfig { request_timeout: Some(Duration::from_secs(3600)), ..PeerConfig::default() }),
    );
    server.discover(json!({"tools": {"listChanged": true}})).await;
    let listen = server.request("subscriptions/listen").await;
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": {"toolsListChanged": true},
                "_meta": {"io.modelcontextprotocol/subscriptionId": listen["id"]}}}))
        .await;
    let client = std::sync::Arc::new(client.await.unwrap().unwrap());
    let page = |names: &[&str], ttl: i64| {
        let tools: Vec<Value> = names.iter().map(|n| json!({"name": n, "inputSchema": {"type": "object"}})).collect();
        json!({"resultType": "complete", "ttlMs": ttl, "cacheScope": "private", "tools": tools})
    };
    let list = |client: std::sync::Arc<Client>| {
        tokio::spawn(async move { client.list_tools(None).await.unwrap().tools.len() })
    };
    let first = list(client.clone());
    let req = server.request("tools/list").await;
    server.reply(&req, page(&["a"], 60_000)).await;
    assert_eq!(first.await.unwrap(), 1);
    // Fresh: from the cache, no request.
    assert_eq!(list(client.clone()).await.unwrap(), 1);
    // Stale after its ttlMs.
    tokio::time::advance(Duration::from_secs(61)).await;
    let third = list(client.clone());
    let req = server.request("tools/list").await;
    server.reply(&req, page(&["a", "b"], 60_000)).await;
    assert_eq!(third.await.unwrap(), 2);
    assert_eq!(list(client.clone()).await.unwrap(), 2);
    // A list change drops it (the event is reported after the cache dropped the page).
    let mut changes = client.events();
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": listen["id"]}}}))
        .await;
    assert_eq!(changes.recv().await.unwrap(), ServerEvent::ToolListChanged);
    let fourth = list(client.clone());
    let req = server.request("tools/list").await;
    server.reply(&req, page(&["a", "b", "c"], 0)).await;
    assert_eq!(fourth.await.unwrap(), 3);
    // ttlMs 0: never kept.
    let again = list(client.clone());
    let req = server.request("tools/list").await;
    server.reply(&req, page(&["a"], 0)).await;
    assert_eq!(again.await.unwrap(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_subscription_outlives_every_request_timeout() {
    let config = PeerConfig {
        request_timeout: Some(Duration::from_secs(1)),
        max_request_timeout: Duration::from_secs(2),
        ..PeerConfig::default()
    };
    let (client, mut server) = stateless(builder().peer_config(config)).await;
    let opening = tokio::spawn(async move {
        let s = client.listen(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() }).await;
        (client, s)
    });
    let req = server.request("subscriptions/listen").await;
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": {"toolsListChanged": true},
                "_meta": {"io.modelcontextprotocol/subscriptionId": req["id"]}}}))
        .await;
    let (_client, subscription) = opening.await.unwrap();
    let mut subscription = subscription.unwrap();
    tokio::time::advance(Duration::from_secs(3600)).await;
    assert_eq!(subscription.ended(), None, "still open an hour later");
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": req["id"]}}}))
        .await;
    assert_eq!(subscription.next().await, Some(ServerEvent::ToolListChanged));
}

#[tokio::test]
async fn a_2026_server_cannot_call_the_client_outside_its_results() {
    // 2026-07-28 has no server-to-client requests: the server asks in `input_required`.
    let builder = builder()
        .on_roots(|| async { panic!("the roots handler must not run") })
        .on_elicitation(|_params: ElicitRequestParams| async { panic!("the elicitation handler must not run") });
    let (client, mut server) = stateless(builder).await;
    for (id, method) in [(9, "roots/list"), (10, "elicitation/create")] {
        let params = json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}});
        server.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let answer = server.recv().await;
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
    }
    client.close().await.unwrap();
}

#[tokio::test]
async fn input_handlers_that_panic_or_are_not_declared_refuse_and_rounds_are_bounded() {
    let builder = builder()
        .on_roots(|| async { panic!("no roots today") })
        .on_elicitation(|_params: ElicitRequestParams| async { Ok(ElicitResult::new(ElicitAction::Decline)) });
    let (client, mut server) = stateless(builder).await;
    let ask = |requests: Value| json!({"resultType": "input_required", "inputRequests": requests});
    // A panicking handler refuses its input request (-32603); the caller gets an error.
    let call = tokio::spawn(async move { (client.call_tool("t", json!({})).await, client) });
    let req = server.request("tools/call").await;
    server.reply(&req, ask(json!({"r": {"method": "roots/list"}}))).await;
    let (r, client) = call.await.unwrap();
    match r {
        Err(ClientError::Input { method, error }) => assert_eq!((method.as_str(), error.code), ("roots/list", -32603)),
        other => panic!("{other:?}"),
    }
    // URL mode was not declared (form mode only): -32602, and the handler is not asked.
    let call = tokio::spawn(async move { (client.call_tool("t", json!({})).await, client) });
    let req = server.request("tools/call").await;
    let url = json!({"mode": "url", "message": "Sign in", "url": "https://example.com", "elicitationId": "e1"});
    server.reply(&req, ask(json!({"u": {"method": "elicitation/create", "params": url}}))).await;
    let (r, client) = call.await.unwrap();
    match r {
        Err(ClientError::Input { method, error }) => {
            assert_eq!((method.as_str(), error.code), ("elicitation/create", -32602))
        }
        other => panic!("{other:?}"),
    }
    // At most 16 input requests in one result.
    let call = tokio::spawn(async move { (client.call_tool("t", json!({})).await, client) });
    let req = server.request("tools/call").await;
    let many: serde_json::Map<String, Value> =
        (0..17).map(|i| (format!("k{i}"), json!({"method": "elicitation/create", "params": {}}))).collect();
    server.reply(&req, ask(Value::Object(many))).await;
    let (r, _client) = call.await.unwrap();
    assert!(
        matches!(
            r,
            Err(ClientError::Protocol { violation: Violation::TooManyInputRequests { count: 17, limit: 16 }, .. })
        ),
        "{r:?}"
    );
}

#[tokio::test]
async fn a_pinned_client_takes_no_newer_revision_than_it_offered() {
    let (client, mut server) =
        connecting(builder().protocol_version(ProtocolVersion::V2025_03_26).session_revisions_only());
    let init = expect_initialize(&mut server).await;
    assert_eq!(init["params"]["protocolVersion"], "2025-03-26");
    let result =
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "new", "version": "1"}});
    server.reply(&init, result).await;
    match client.await.unwrap() {
        Err(ClientError::UnsupportedVersion(v)) => assert_eq!(v, "2025-11-25"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn session_servers_are_answered_only_what_their_revision_and_our_capabilities_have() {
    let elicit = |_params: ElicitRequestParams| async { Ok(ElicitResult::new(ElicitAction::Decline)) };
    let url = json!({"mode": "url", "message": "Sign in", "url": "https://example.com", "elicitationId": "e1"});
    // 2025-03-26 has no elicitation.
    let (client, mut server) = connecting(builder().session_revisions_only().on_elicitation(elicit));
    let init = expect_initialize(&mut server).await;
    server.accept_initialize(&init, "2025-03-26", json!({})).await;
    let client = client.await.unwrap().unwrap();
    let form = json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}});
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": form})).await;
    assert_eq!(server.recv().await["error"]["code"], -32601);
    drop(client);
    // 2025-11-25 has it, in form mode only unless URL mode was declared.
    let (client, mut server) = connecting(builder().session_revisions_only().on_elicitation(elicit));
    let init = expect_initialize(&mut server).await;
    server.accept_initialize(&init, "2025-11-25", json!({})).await;
    let client = client.await.unwrap().unwrap();
    server.send(json!({"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": url})).await;
    assert_eq!(server.recv().await["error"]["code"], -32602);
    server.send(json!({"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": form})).await;
    assert_eq!(server.recv().await["result"]["action"], "decline");
    drop(client);
}
