//! The checks of our client against the `everything` example (the server of the conformance
//! suite's server scenarios), shared by the runs over a pipe (`everything_stdio.rs`) and over
//! Streamable HTTP (`everything_http.rs`): every tool, resource, prompt and completion, with the
//! contents the conformance checks look for, sampling and elicitation answered by client
//! handlers.

#![allow(dead_code)] // each test file uses part of it

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_sdk::client::{CallOptions, Client, ClientBuilder, ServerEvent};
use mcp_sdk::types::{
    CallToolRequestParams, CallToolResult, CompleteRequestParamsArgument, CompletionReference, ContentBlock,
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult,
    ElicitResultContentValue, ErrorObject, LoggingLevel, PromptReference, ResourceTemplateReference, Role,
    SamplingContent, TextContent,
};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The 1×1 red PNG the conformance suite's reference server sends, base64-encoded.
pub const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// What the client's handlers saw.
#[derive(Default)]
pub struct Seen {
    pub sampling: Vec<CreateMessageRequestParams>,
    pub elicitation: Vec<Value>,
    pub events: Vec<ServerEvent>,
    /// Told of each event.
    pub event: Arc<Notify>,
}

/// The answer of a user who fills in each form the server sends.
pub fn answer(params: &Value) -> ElicitResult {
    use ElicitResultContentValue::{Array, String as Text};
    let properties = &params["requestedSchema"]["properties"];
    let fields = if properties.get("username").is_some() {
        vec![("username", Text("testuser".into())), ("email", Text("test@example.com".into()))]
    } else if properties.get("untitledSingle").is_some() {
        vec![
            ("untitledSingle", Text("option1".into())),
            ("titledSingle", Text("value1".into())),
            ("legacyEnum", Text("opt1".into())),
            ("untitledMulti", Array(vec!["option1".into(), "option2".into()])),
            ("titledMulti", Array(vec!["value1".into(), "value2".into()])),
        ]
    } else {
        // The SEP-1034 form: the user changes nothing, the defaults fill it in.
        Vec::new()
    };
    let mut result = ElicitResult::new(ElicitAction::Accept);
    result.content = Some(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect());
    result
}

/// A client with handlers that answer every request of `everything`, recording in `seen`.
pub fn builder(seen: &Arc<Mutex<Seen>>) -> ClientBuilder {
    let (sampling, elicitation, events) = (seen.clone(), seen.clone(), seen.clone());
    let event = seen.lock().unwrap().event.clone();
    ClientBuilder::new("everything-test", "1")
        .on_sampling(move |params: CreateMessageRequestParams| {
            sampling.lock().unwrap().sampling.push(params);
            async {
                let text = TextContent::new("This is a test response from the client");
                Ok::<_, ErrorObject>(CreateMessageResult::new(
                    Role::Assistant,
                    SamplingContent::Text(text),
                    "test-model",
                ))
            }
        })
        .on_elicitation(move |params: ElicitRequestParams| {
            let params = serde_json::to_value(&params).unwrap();
            let result = answer(&params);
            elicitation.lock().unwrap().elicitation.push(params);
            async move { Ok::<_, ErrorObject>(result) }
        })
        .apply_elicitation_defaults()
        .on_event(move |e| {
            events.lock().unwrap().events.push(e);
            event.notify_one();
        })
}

/// The one text block of a successful result.
pub fn text(result: &CallToolResult) -> &str {
    assert!(!result.is_error(), "{result:?}");
    match result.content.as_slice() {
        [ContentBlock::Text(t)] => &t.text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

/// Waits (at most 10 s) until an event `matches` has been seen.
pub async fn wait_for_event(seen: &Arc<Mutex<Seen>>, what: &str, matches: impl Fn(&ServerEvent) -> bool) {
    let wait = async {
        loop {
            let event = {
                let seen = seen.lock().unwrap();
                if seen.events.iter().any(&matches) {
                    return;
                }
                seen.event.clone()
            };
            // An event pushed since the check left a permit: this returns at once.
            event.notified().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait).await.unwrap_or_else(|_| panic!("no {what} within 10 s"));
}

pub async fn tools(client: &Client, seen: &Arc<Mutex<Seen>>) {
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "test_simple_text",
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
            "test_tool_with_logging",
            "test_tool_with_progress",
            "test_error_handling",
            "test_reconnection",
            "test_sampling",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
            "json_schema_2020_12_tool",
            // The 2026-07-28 fixtures (`everything_2026_stdio.rs`).
            "test_missing_capability",
            "test_streaming_elicitation",
            "test_logging_tool",
            "test_input_required_result_elicitation",
            "test_input_required_result_sampling",
            "test_input_required_result_list_roots",
            "test_input_required_result_request_state",
            "test_input_required_result_multiple_inputs",
            "test_input_required_result_multi_round",
            "test_input_required_result_tampered_state",
            "test_input_required_result_capabilities",
            "test_region_header",
            // The tasks extension fixtures (SEP-2663, the `tasks-*` scenarios).
            "greet",
            "slow_compute",
            "failing_job",
            "protocol_error_job",
            "confirm_delete",
            "multi_input",
            "test_tool_with_task",
            // For `cargo xtask fleet`: a long call with progress.
            "count_down",
            // MCP Apps (SEP-1865): the counter app's tools.
            "counter",
            "counter_increment",
            "test_trigger_prompt_change",
            "test_trigger_tool_change",
        ]
    );
    for tool in &tools {
        assert!(tool.description.as_ref().is_some_and(|d| !d.is_empty()), "{} has no description", tool.name);
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
    }
    // SEP-1613, SEP-2106: listed exactly as written, 2020-12 keywords included.
    let schema = &tools.iter().find(|t| t.name == "json_schema_2020_12_tool").unwrap().input_schema;
    assert_eq!(
        Value::Object(schema.clone()),
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }},
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        })
    );
    let sampling_schema = &tools.iter().find(|t| t.name == "test_sampling").unwrap().input_schema;
    assert_eq!(sampling_schema["required"], json!(["prompt"]));
    assert_eq!(sampling_schema["properties"]["prompt"]["description"], "The prompt to send to the LLM");

    let simple = client.call_tool("test_simple_text", json!({})).await.unwrap();
    assert_eq!(text(&simple), "This is a simple text response for testing.");

    let image = client.call_tool("test_image_content", json!({})).await.unwrap();
    match image.content.as_slice() {
        [ContentBlock::Image(i)] => assert_eq!((i.data.as_str(), i.mime_type.as_str()), (RED_PIXEL_PNG, "image/png")),
        other => panic!("{other:?}"),
    }

    let audio = client.call_tool("test_audio_content", json!({})).await.unwrap();
    match audio.content.as_slice() {
        [ContentBlock::Audio(a)] => {
            assert_eq!(a.mime_type, "audio/wav");
            assert!(a.data.starts_with("UklGR"), "a RIFF file: {}", a.data); // "RIFF" in base64
        }
        other => panic!("{other:?}"),
    }

    let embedded = client.call_tool("test_embedded_resource", json!({})).await.unwrap();
    let embedded = serde_json::to_value(&embedded.content).unwrap();
    assert_eq!(
        embedded,
        json!([{"type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."
        }}])
    );

    let mixed = client.call_tool("test_multiple_content_types", json!({})).await.unwrap();
    let mixed = serde_json::to_value(&mixed.content).unwrap();
    assert_eq!(
        mixed,
        json!([
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png"},
            {"type": "resource", "resource": {
                "uri": "test://mixed-content-resource", "mimeType": "application/json", "text": r#"{"test":"data","value":123}"#
            }}
        ])
    );

    // Logging: three messages at info, sent before the result on the same pipe.
    client.set_logging_level(LoggingLevel::Debug).await.unwrap();
    let logged = client.call_tool("test_tool_with_logging", json!({})).await.unwrap();
    assert_eq!(text(&logged), "Tool with logging executed successfully");
    let logs: Vec<(LoggingLevel, Value)> = seen
        .lock()
        .unwrap()
        .events
        .iter()
        .filter_map(|e| match e {
            ServerEvent::Log(l) => Some((l.level.clone(), l.data.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        logs,
        [
            (LoggingLevel::Info, json!("Tool execution started")),
            (LoggingLevel::Info, json!("Tool processing data")),
            (LoggingLevel::Info, json!("Tool execution completed")),
        ]
    );
    // Above the level the client set: not sent.
    client.set_logging_level(LoggingLevel::Warning).await.unwrap();
    client.call_tool("test_tool_with_logging", json!({})).await.unwrap();
    let log_count = seen.lock().unwrap().events.iter().filter(|e| matches!(e, ServerEvent::Log(_))).count();
    assert_eq!(log_count, 3);

    // Progress: 0, 50, 100 out of 100, only when asked for.
    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = progress.clone();
    let options = CallOptions::default()
        .timeout(Duration::from_secs(30))
        .on_progress(move |p| sink.lock().unwrap().push((p.progress, p.total)));
    let reported = client.call_tool_with(CallToolRequestParams::new("test_tool_with_progress"), options).await.unwrap();
    assert_eq!(text(&reported), "Progress reported: 0, 50, 100 of 100");
    assert_eq!(*progress.lock().unwrap(), [(0.0, Some(100.0)), (50.0, Some(100.0)), (100.0, Some(100.0))]);
    let unreported = client.call_tool("test_tool_with_progress", json!({})).await.unwrap();
    assert_eq!(text(&unreported), "Progress reported: not requested");

    let error = client.call_tool("test_error_handling", json!({})).await.unwrap();
    assert!(error.is_error());
    assert_eq!(error.content[0].as_text(), Some("This tool intentionally returns an error for testing"));

    // Over stdio there is no SSE stream to close: the result comes on the pipe. Over HTTP the
    // client resumes the stream the server closed, with `Last-Event-ID`.
    let reconnection = client.call_tool("test_reconnection", json!({})).await.unwrap();
    assert!(text(&reconnection).starts_with("Reconnection test completed successfully."));

    let sampled = client.call_tool("test_sampling", json!({"prompt": "Test prompt for sampling"})).await.unwrap();
    assert_eq!(text(&sampled), "LLM response: This is a test response from the client");
    {
        let seen = seen.lock().unwrap();
        let [request] = seen.sampling.as_slice() else { panic!("{} sampling requests", seen.sampling.len()) };
        assert_eq!(request.max_tokens, 100);
        let messages = serde_json::to_value(&request.messages).unwrap();
        assert_eq!(
            messages,
            json!([{"role": "user", "content": {"type": "text", "text": "Test prompt for sampling"}}])
        );
    }
    let no_prompt = client.call_tool("test_sampling", json!({})).await.unwrap();
    assert!(no_prompt.is_error(), "the prompt is required: {no_prompt:?}");

    elicitation(client, seen).await;

    // Calls are checked against the 2020-12 schema ($ref resolved, no extra members, a phone
    // or an email, the one the contact method names).
    let args = json!({"name": "Ann", "address": {"street": "1 Main St", "city": "Oslo"}, "email": "ann@example.com"});
    let called = client.call_tool("json_schema_2020_12_tool", args.clone()).await.unwrap();
    assert_eq!(text(&called), format!("JSON Schema 2020-12 tool called with: {args}"));
    let extra =
        client.call_tool("json_schema_2020_12_tool", json!({"email": "a@b.c", "name": "Ann", "age": 3})).await.unwrap();
    assert!(extra.is_error(), "additionalProperties is false: {extra:?}");
    let bad_ref =
        client.call_tool("json_schema_2020_12_tool", json!({"email": "a@b.c", "address": {"city": 7}})).await.unwrap();
    assert!(bad_ref.is_error(), "address.city must be a string: {bad_ref:?}");
    let no_contact = client.call_tool("json_schema_2020_12_tool", json!({"name": "Ann"})).await.unwrap();
    assert!(no_contact.is_error(), "allOf/anyOf: a phone or an email: {no_contact:?}");
    let wrong_contact = client
        .call_tool("json_schema_2020_12_tool", json!({"contactMethod": "phone", "email": "a@b.c"}))
        .await
        .unwrap();
    assert!(wrong_contact.is_error(), "if/then: the phone the contact method names: {wrong_contact:?}");

    // The 2026-07-28 fixtures in a 2025 session: input is asked with a request to the client,
    // and a list change reaches the session.
    let sampled = client.call_tool("test_missing_capability", json!({})).await.unwrap();
    assert_eq!(text(&sampled), "sampled: This is a test response from the client");
    let changed = client.call_tool("test_trigger_tool_change", json!({})).await.unwrap();
    assert_eq!(text(&changed), "tools changed");
    wait_for_event(seen, "notifications/tools/list_changed", |e| matches!(e, ServerEvent::ToolListChanged)).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.last().map(|t| t.name.as_str()), Some("test_trigger_tool_change"), "the order is kept");
}

pub async fn elicitation(client: &Client, seen: &Arc<Mutex<Seen>>) {
    let answered =
        client.call_tool("test_elicitation", json!({"message": "Please provide your information"})).await.unwrap();
    assert_eq!(
        text(&answered),
        r#"User response: action=accept, content={"email":"test@example.com","username":"testuser"}"#
    );
    let defaults = client.call_tool("test_elicitation_sep1034_defaults", json!({})).await.unwrap();
    if client.protocol_version() < mcp_sdk::types::ProtocolVersion::V2025_11_25 {
        // Before 2025-11-25 only boolean fields have a default: the others are left out of the
        // form the client sees, so the client's defaults fill in only `verified`.
        assert_eq!(text(&defaults), r#"Elicitation completed: action=accept, content={"verified":true}"#);
        return;
    }
    assert_eq!(
        text(&defaults),
        r#"Elicitation completed: action=accept, content={"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}"#
    );
    let enums = client.call_tool("test_elicitation_sep1330_enums", json!({})).await.unwrap();
    assert_eq!(
        text(&enums),
        "Elicitation completed: action=accept, content={\"legacyEnum\":\"opt1\",\"titledMulti\":[\"value1\",\"value2\"],\
         \"titledSingle\":\"value1\",\"untitledMulti\":[\"option1\",\"option2\"],\"untitledSingle\":\"option1\"}"
    );

    // The forms as sent, with what each conformance check looks for.
    let seen = seen.lock().unwrap();
    let [basic, sep1034, sep1330] = seen.elicitation.as_slice() else {
        panic!("{} elicitation requests", seen.elicitation.len())
    };
    assert_eq!(basic["message"], "Please provide your information");
    assert_eq!(
        basic["requestedSchema"],
        json!({
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"}
            },
            "required": ["username", "email"]
        })
    );
    let p = &sep1034["requestedSchema"]["properties"];
    assert_eq!((&p["name"]["type"], &p["name"]["default"]), (&json!("string"), &json!("John Doe")));
    assert_eq!((&p["age"]["type"], &p["age"]["default"]), (&json!("integer"), &json!(30)));
    assert_eq!((&p["score"]["type"], &p["score"]["default"]), (&json!("number"), &json!(95.5)));
    assert_eq!((&p["status"]["type"], &p["status"]["default"]), (&json!("string"), &json!("active")));
    assert_eq!(p["status"]["enum"], json!(["active", "inactive", "pending"]));
    assert_eq!((&p["verified"]["type"], &p["verified"]["default"]), (&json!("boolean"), &json!(true)));
    let p = &sep1330["requestedSchema"]["properties"];
    assert_eq!(
        p["untitledSingle"],
        json!({"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]})
    );
    assert_eq!(p["titledSingle"]["type"], "string");
    assert_eq!(p["titledSingle"]["oneOf"][2], json!({"const": "value3", "title": "Third Option"}));
    assert!(p["titledSingle"].get("enum").is_none());
    assert_eq!(p["legacyEnum"]["enum"], json!(["opt1", "opt2", "opt3"]));
    assert_eq!(p["legacyEnum"]["enumNames"], json!(["Option One", "Option Two", "Option Three"]));
    assert_eq!(p["untitledMulti"]["type"], "array");
    assert_eq!(p["untitledMulti"]["items"], json!({"type": "string", "enum": ["option1", "option2", "option3"]}));
    assert_eq!((&p["untitledMulti"]["minItems"], &p["untitledMulti"]["maxItems"]), (&json!(1), &json!(3)));
    assert_eq!(p["titledMulti"]["type"], "array");
    assert_eq!(p["titledMulti"]["items"]["anyOf"][0], json!({"const": "value1", "title": "First Choice"}));
    assert!(p["titledMulti"]["items"].get("enum").is_none());
}

pub async fn resources(client: &Client) {
    let resources = client.list_all_resources().await.unwrap();
    let listed: Vec<(&str, &str, Option<&str>)> =
        resources.iter().map(|r| (r.uri.as_str(), r.name.as_str(), r.mime_type.as_deref())).collect();
    assert_eq!(
        listed,
        [
            ("test://static-text", "static-text", Some("text/plain")),
            ("test://static-binary", "static-binary", Some("image/png")),
            ("test://watched-resource", "watched-resource", Some("text/plain")),
            // The skills of examples/skills (the Skills extension), a resource a file.
            ("skill://acme/changelog/SKILL.md", "changelog", Some("text/markdown")),
            ("skill://acme/changelog/examples/entry.md", "entry.md", Some("text/markdown")),
            ("skill://greeting/SKILL.md", "greeting", Some("text/markdown")),
            ("skill://greeting/references/TONE.md", "TONE.md", Some("text/markdown")),
            ("skill://greeting/scripts/greet.py", "greet.py", Some("text/x-python")),
            // The counter app's view (MCP Apps).
            ("ui://everything/counter", "counter", Some("text/html;profile=mcp-app")),
        ]
    );
    let test = resources.iter().filter(|r| r.uri.starts_with("test://"));
    assert!(test.clone().count() == 3 && test.into_iter().all(|r| r.description.is_some() && r.title.is_some()));
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 1);
    assert_eq!(
        (templates[0].uri_template.as_str(), templates[0].name.as_str(), templates[0].mime_type.as_deref()),
        ("test://template/{id}/data", "template", Some("application/json"))
    );

    let read = |uri: &'static str| async move {
        let result = client.read_resource(uri).await.unwrap();
        assert_eq!(result.contents.len(), 1, "{uri}");
        serde_json::to_value(&result.contents[0]).unwrap()
    };
    assert_eq!(
        read("test://static-text").await,
        json!({"uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource."})
    );
    assert_eq!(
        read("test://static-binary").await,
        json!({"uri": "test://static-binary", "mimeType": "image/png", "blob": RED_PIXEL_PNG})
    );
    assert_eq!(
        read("test://watched-resource").await,
        json!({"uri": "test://watched-resource", "mimeType": "text/plain", "text": "Watched resource content"})
    );
    let data = read("test://template/123/data").await;
    assert_eq!((&data["uri"], &data["mimeType"]), (&json!("test://template/123/data"), &json!("application/json")));
    let data: Value = serde_json::from_str(data["text"].as_str().unwrap()).unwrap();
    assert_eq!(data, json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"}));
    let missing = client.read_resource("test://nothing-here").await;
    assert!(missing.is_err(), "{missing:?}");

    client.subscribe("test://watched-resource").await.unwrap();
    client.unsubscribe("test://watched-resource").await.unwrap();
}

pub async fn prompts(client: &Client) {
    let prompts = client.list_all_prompts().await.unwrap();
    let listed: Vec<Value> = prompts
        .iter()
        .map(|p| {
            assert!(p.description.as_ref().is_some_and(|d| !d.is_empty()), "{} has no description", p.name);
            let arguments: Vec<Value> = p.arguments.iter().flatten().map(|a| json!([a.name, a.required])).collect();
            json!({"name": p.name, "arguments": arguments})
        })
        .collect();
    assert_eq!(
        Value::Array(listed),
        json!([
            {"name": "test_simple_prompt", "arguments": []},
            {"name": "test_prompt_with_arguments", "arguments": [["arg1", true], ["arg2", true]]},
            {"name": "test_prompt_with_embedded_resource", "arguments": [["resourceUri", true]]},
            {"name": "test_prompt_with_image", "arguments": []},
            {"name": "test_input_required_result_prompt", "arguments": []}
        ])
    );

    let get = |name: &'static str, arguments: &[(&str, &str)]| {
        let arguments: BTreeMap<String, String> =
            arguments.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        async move { serde_json::to_value(client.get_prompt(name, arguments).await.unwrap().messages).unwrap() }
    };
    assert_eq!(
        get("test_simple_prompt", &[]).await,
        json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
    );
    assert_eq!(
        get("test_prompt_with_arguments", &[("arg1", "testValue1"), ("arg2", "testValue2")]).await,
        json!([{"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='testValue1', arg2='testValue2'"}}])
    );
    assert_eq!(
        get("test_prompt_with_embedded_resource", &[("resourceUri", "test://example-resource")]).await,
        json!([
            {"role": "user", "content": {"type": "resource", "resource": {
                "uri": "test://example-resource", "mimeType": "text/plain", "text": "Embedded resource content for testing."
            }}},
            {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}}
        ])
    );
    assert_eq!(
        get("test_prompt_with_image", &[]).await,
        json!([
            {"role": "user", "content": {"type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png"}},
            {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}
        ])
    );
    let missing = client.get_prompt("test_prompt_with_arguments", BTreeMap::new()).await;
    assert!(missing.is_err(), "arg1 and arg2 are required: {missing:?}");
}

pub async fn completions(client: &Client) {
    let complete = |reference: CompletionReference, argument: &'static str, value: &'static str| async move {
        let argument = CompleteRequestParamsArgument::new(argument, value);
        client.complete(reference, argument).await.unwrap().completion.values
    };
    let prompt = || CompletionReference::PromptReference(PromptReference::new("test_prompt_with_arguments"));
    // What `completion-complete` asks: no candidate, but an answer.
    assert!(complete(prompt(), "arg1", "test").await.is_empty());
    assert_eq!(complete(prompt(), "arg1", "par").await, ["paris", "park", "party"]);
    assert_eq!(complete(prompt(), "arg2", "PARI").await, ["paris"]);
    let template =
        || CompletionReference::ResourceTemplateReference(ResourceTemplateReference::new("test://template/{id}/data"));
    assert_eq!(complete(template(), "id", "1").await, ["1", "123"]);
}

/// The custom method `example/reverse`, typed and raw; its custom notification, which the
/// client has no handler for, reported as an event; params that do not decode (-32602) and a
/// custom method nobody serves (-32601); the server's declarations of it.
pub async fn custom_methods(client: &Client, seen: &Arc<Mutex<Seen>>) {
    use mcp_examples::reverse::{EXPERIMENTAL, EXTENSION, Reverse, Text};
    let reversed = client.request::<Reverse>(Text { text: "stressed".into() }).await.unwrap();
    assert_eq!(reversed, Text { text: "desserts".into() });
    let raw = client.request_raw("example/reverse", Some(json!({"text": "abc"}))).await.unwrap();
    assert_eq!(raw["text"], "cba");
    wait_for_event(seen, "example/reversing", |e| {
        matches!(e, ServerEvent::Notification { method, params: Some(p) }
            if method == "example/reversing" && p["text"] == "stressed")
    })
    .await;
    let code = |e: mcp_sdk::client::ClientError| match e {
        mcp_sdk::client::ClientError::Remote(e) => e.code,
        other => panic!("not the server's error: {other}"),
    };
    assert_eq!(code(client.request_raw("example/reverse", Some(json!({"text": 1}))).await.unwrap_err()), -32602);
    assert_eq!(code(client.request_raw("example/nope", None).await.unwrap_err()), -32601);
    assert!(client.server_experimental(EXPERIMENTAL).is_some());
    // `extensions` is 2026-07-28's: a session's server declares none.
    let stateless = client.protocol_version().is_stateless();
    assert_eq!(client.server_extension(EXTENSION).is_some(), stateless);
}
