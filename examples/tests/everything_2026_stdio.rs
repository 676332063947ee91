//! The 2026-07-28 fixtures of the `everything` example over a real pipe, driven with raw JSON
//! lines (no client library): requests served without `initialize` by their `_meta`,
//! `server/discover`, cache hints, logging only on request, -32021 for an undeclared
//! capability, multi round-trip requests (one input, three inputs in one round, three rounds
//! with evolving `requestState`, a prompt), tampered and misdirected `requestState`, and
//! `subscriptions/listen` told of list changes.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const VERSION: &str = "2026-07-28";

/// How long any one answer may take.
const LIMIT: Duration = Duration::from_secs(10);

/// The `everything` example, which `cargo test` builds next to this test.
fn server_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(|d| d.parent()).unwrap().join("examples").join("everything");
    assert!(bin.exists(), "{} is missing: build the examples (cargo test builds them)", bin.display());
    bin
}

/// The `_meta` of a 2026-07-28 request from a client with `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-json-test", "version": "1"}
    })
}

/// Every capability that input requests need.
fn all_capabilities() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// `everything --stdio`, spoken to in JSON lines.
struct Everything {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    next_id: i64,
}

/// A response and the frames the server wrote before it.
struct Answer {
    response: Value,
    before: Vec<Value>,
}

impl Answer {
    fn result(&self) -> &Value {
        assert!(self.response.get("error").is_none(), "expected a result: {}", self.response);
        &self.response["result"]
    }

    fn error(&self) -> &Value {
        assert!(self.response.get("result").is_none(), "expected an error: {}", self.response);
        &self.response["error"]
    }

    fn notifications(&self, method: &str) -> Vec<&Value> {
        self.before.iter().filter(|f| f["method"] == method).collect()
    }
}

impl Everything {
    fn spawn() -> Self {
        let mut child = Command::new(server_bin())
            .arg("--stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Everything { child, stdin, stdout, next_id: 1 }
    }

    async fn send(&mut self, frame: &Value) {
        let mut line = serde_json::to_vec(frame).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next frame the server writes.
    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(LIMIT, self.stdout.next_line())
            .await
            .expect("no frame from the server in time")
            .unwrap()
            .expect("the server closed its stdout");
        let frame: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        // 2026-07-28 servers ask the client nothing on their own: input goes through results.
        assert!(!(frame.get("method").is_some() && frame.get("id").is_some()), "the server sent a request: {frame}");
        frame
    }

    /// Sends a request and reads until its response.
    async fn request(&mut self, method: &str, params: Value) -> Answer {
        let id = self.start(method, params).await;
        self.answer_to(id).await
    }

    /// Sends a request; returns its id.
    async fn start(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        id
    }

    /// Reads until the response to `id`.
    async fn answer_to(&mut self, id: i64) -> Answer {
        let mut before = Vec::new();
        loop {
            let frame = self.read().await;
            if frame.get("method").is_none() {
                assert_eq!(frame["id"], id, "a response to another request: {frame}");
                return Answer { response: frame, before };
            }
            before.push(frame);
        }
    }

    /// `tools/call` of `name` with `{}` and `extra` params (`inputResponses`, `requestState`),
    /// from a client with every input capability.
    async fn call(&mut self, name: &str, extra: Value) -> Answer {
        let mut params = json!({"name": name, "arguments": {}, "_meta": meta(all_capabilities())});
        params.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        self.request("tools/call", params).await
    }
}

/// An input-required result: its input requests and its `requestState`.
fn input_required(answer: &Answer) -> (&serde_json::Map<String, Value>, &str) {
    let result = answer.result();
    assert_eq!(result["resultType"], "input_required", "{result}");
    let requests = result["inputRequests"].as_object().unwrap_or_else(|| panic!("no inputRequests: {result}"));
    let state = result["requestState"].as_str().unwrap_or_else(|| panic!("no requestState: {result}"));
    (requests, state)
}

/// The text of a complete tool result.
fn text(answer: &Answer) -> &str {
    let result = answer.result();
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_ne!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {result}"))
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[tokio::test]
async fn discovery_lists_and_the_diagnostic_tools() {
    let mut server = Everything::spawn();

    let discover = server.request("server/discover", json!({"_meta": meta(json!({}))})).await;
    let discovered = discover.result();
    assert!(discovered["supportedVersions"].as_array().unwrap().contains(&json!(VERSION)), "{discovered}");
    assert_eq!(discovered["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(discovered["capabilities"]["prompts"]["listChanged"], true);
    assert_eq!(discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcp-rust-everything");

    // No handshake: a request carrying its revision is served at once, with cache hints.
    let list = server.request("tools/list", json!({"_meta": meta(json!({}))})).await;
    let listed = list.result();
    assert_eq!(listed["resultType"], "complete");
    assert!(listed["ttlMs"].is_number() && listed["cacheScope"].is_string(), "{listed}");
    let names: Vec<&str> = listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.first(), Some(&"test_simple_text"), "callable with {{}}, first");
    assert_eq!(names.last(), Some(&"test_trigger_tool_change"), "it re-registers itself, last");
    for fixture in [
        "test_missing_capability",
        "test_streaming_elicitation",
        "test_logging_tool",
        "test_trigger_prompt_change",
        "test_input_required_result_elicitation",
        "test_input_required_result_sampling",
        "test_input_required_result_list_roots",
        "test_input_required_result_request_state",
        "test_input_required_result_multiple_inputs",
        "test_input_required_result_multi_round",
        "test_input_required_result_tampered_state",
        "test_input_required_result_capabilities",
        "test_region_header",
    ] {
        assert!(names.contains(&fixture), "{fixture} is not listed: {names:?}");
    }
    let schema = &listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == "json_schema_2020_12_tool").unwrap()
        ["inputSchema"];
    assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
    assert!(schema["allOf"][0]["anyOf"].is_array() && schema["if"].is_object() && schema["else"].is_object());
    let region = &listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == "test_region_header").unwrap()["inputSchema"]
        ["properties"]["region"];
    assert_eq!(region["x-mcp-header"], "Region");

    let simple = server.call("test_simple_text", json!({})).await;
    assert_eq!(text(&simple), "This is a simple text response for testing.");

    // Sampling the client did not declare: -32021, naming it as a capabilities object.
    let params = json!({"name": "test_missing_capability", "arguments": {}, "_meta": meta(json!({}))});
    let missing = server.request("tools/call", params).await;
    assert_eq!(missing.error()["code"], -32021);
    assert_eq!(missing.error()["data"]["requiredCapabilities"], json!({"sampling": {}}));

    // Logs only when the request asks for a level.
    let quiet = server.call("test_logging_tool", json!({})).await;
    assert_eq!(text(&quiet), "logged");
    assert!(quiet.notifications("notifications/message").is_empty(), "{:?}", quiet.before);
    let mut with_level = meta(json!({}));
    with_level["io.modelcontextprotocol/logLevel"] = json!("info");
    let logged = server.request("tools/call", json!({"name": "test_logging_tool", "_meta": with_level})).await;
    assert_eq!(text(&logged), "logged");
    let [log] = logged.notifications("notifications/message")[..] else { panic!("{:?}", logged.before) };
    assert_eq!(
        (&log["params"]["level"], &log["params"]["data"]),
        (&json!("info"), &json!("hello from test_logging_tool"))
    );

    // Progress: three notifications with the request's token, before the result.
    let mut with_token = meta(json!({}));
    with_token["progressToken"] = json!("p-1");
    let progress = server.request("tools/call", json!({"name": "test_tool_with_progress", "_meta": with_token})).await;
    let reported = progress.notifications("notifications/progress");
    assert_eq!(reported.len(), 3, "{:?}", progress.before);
    assert!(reported.iter().all(|p| p["params"]["progressToken"] == "p-1"));

    // Asking for input is a result, never a request of the server's (`read` checks).
    let streaming = server.call("test_streaming_elicitation", json!({})).await;
    let (requests, _) = input_required(&streaming);
    assert_eq!(requests["q"]["method"], "elicitation/create");
    assert!(streaming.before.is_empty(), "{:?}", streaming.before);

    drop(server.stdin);
    let status = tokio::time::timeout(LIMIT, server.child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "the server exits when its stdin closes: {status}");
}

#[tokio::test]
async fn multi_round_trip_requests() {
    let mut server = Everything::spawn();

    // One input; the retry may come without the state.
    let first = server.call("test_input_required_result_elicitation", json!({})).await;
    let (requests, _) = input_required(&first);
    assert_eq!(requests["user_name"]["method"], "elicitation/create");
    assert_eq!(requests["user_name"]["params"]["message"], "What is your name?");
    assert_eq!(requests["user_name"]["params"]["requestedSchema"]["required"], json!(["name"]));
    let answers = json!({"inputResponses": {"user_name": accept(json!({"name": "Alice"}))}});
    assert_eq!(text(&server.call("test_input_required_result_elicitation", answers).await), "Hello, Alice!");
    // An answer of the wrong shape is refused; answers under other keys are asked again.
    let invalid = json!({"inputResponses": {"user_name": 12345}});
    assert_eq!(server.call("test_input_required_result_elicitation", invalid).await.error()["code"], -32602);
    let wrong_key = json!({"inputResponses": {"wrong_key": accept(json!({"data": "x"}))}});
    let again = server.call("test_input_required_result_elicitation", wrong_key).await;
    assert!(input_required(&again).0.contains_key("user_name"));

    // Three inputs of three kinds in one round, with state.
    let first = server.call("test_input_required_result_multiple_inputs", json!({})).await;
    let (requests, state) = input_required(&first);
    let methods: Vec<(&str, &str)> =
        requests.iter().map(|(k, v)| (k.as_str(), v["method"].as_str().unwrap())).collect();
    assert_eq!(
        methods,
        [("client_roots", "roots/list"), ("greeting", "sampling/createMessage"), ("user_name", "elicitation/create")]
    );
    let answers = json!({
        "inputResponses": {
            "user_name": accept(json!({"name": "Bob"})),
            "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hi!"}, "model": "m", "stopReason": "endTurn"},
            "client_roots": {"roots": [{"uri": "file:///a", "name": "a"}, {"uri": "file:///b"}]}
        },
        "requestState": state
    });
    let done = server.call("test_input_required_result_multiple_inputs", answers).await;
    assert_eq!(text(&done), "all inputs received: name=Bob, greeting=Hi!, roots=2");

    // Three rounds: each state is new and carries the answers so far.
    let round1 = server.call("test_input_required_result_multi_round", json!({})).await;
    let (requests, state1) = input_required(&round1);
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["step1"]);
    let state1 = state1.to_owned();
    let round2 = server
        .call(
            "test_input_required_result_multi_round",
            json!({"inputResponses": {"step1": accept(json!({"name": "Carol"}))}, "requestState": state1}),
        )
        .await;
    let (requests, state2) = input_required(&round2);
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["step2"]);
    assert_eq!(requests["step2"]["params"]["message"], "Step 2: What is your favorite color?");
    assert_ne!(state2, state1, "round 2 has a state of its own");
    let state2 = state2.to_owned();
    let step2 = json!({"step2": accept(json!({"color": "blue"}))});
    let round3 = server
        .call(
            "test_input_required_result_multi_round",
            json!({"inputResponses": step2.clone(), "requestState": state2}),
        )
        .await;
    assert_eq!(text(&round3), "done: Carol likes blue");
    // Without round 2's state, step 1's answer is gone: asked again.
    let stateless = server.call("test_input_required_result_multi_round", json!({"inputResponses": step2})).await;
    assert_eq!(input_required(&stateless).0.keys().collect::<Vec<_>>(), ["step1"]);

    // A state that fails verification, or was issued for another request, is refused.
    let first = server.call("test_input_required_result_tampered_state", json!({})).await;
    let state = input_required(&first).1.to_owned();
    let confirm = json!({"confirm": accept(json!({"ok": true}))});
    let tampered = server
        .call(
            "test_input_required_result_tampered_state",
            json!({"inputResponses": confirm.clone(), "requestState": format!("{state}-TAMPERED")}),
        )
        .await;
    assert_eq!(tampered.error()["code"], -32602, "{}", tampered.response);
    let elsewhere = server
        .call(
            "test_input_required_result_request_state",
            json!({"inputResponses": confirm.clone(), "requestState": state}),
        )
        .await;
    assert_eq!(elsewhere.error()["code"], -32602, "{}", elsewhere.response);
    let verified = server
        .call("test_input_required_result_tampered_state", json!({"inputResponses": confirm, "requestState": state}))
        .await;
    assert!(text(&verified).starts_with("state verified"), "{}", verified.response);

    // Only the capabilities the client declared are asked for.
    let params = json!({
        "name": "test_input_required_result_capabilities",
        "arguments": {},
        "_meta": meta(json!({"sampling": {}}))
    });
    let sampling_only = server.request("tools/call", params).await;
    let (requests, _) = input_required(&sampling_only);
    let methods: Vec<&str> = requests.values().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["sampling/createMessage"]);

    // A prompt asks too.
    let params = |extra: Value| {
        let mut params = json!({"name": "test_input_required_result_prompt", "_meta": meta(all_capabilities())});
        params.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        params
    };
    let first = server.request("prompts/get", params(json!({}))).await;
    let (requests, state) = input_required(&first);
    assert_eq!(requests["user_context"]["method"], "elicitation/create");
    let answers =
        json!({"inputResponses": {"user_context": accept(json!({"context": "tests"}))}, "requestState": state});
    let prompt = server.request("prompts/get", params(answers)).await;
    assert_eq!(prompt.result()["messages"][0]["content"]["text"], "context: tests");
}

#[tokio::test]
async fn listeners_hear_of_list_changes() {
    let mut server = Everything::spawn();
    let listen = server
        .start("subscriptions/listen", json!({"_meta": meta(json!({})), "notifications": {"toolsListChanged": true}}))
        .await;
    let ack = server.read().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}));
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listen);

    // A prompt change is not what it listens to; a tool change is. (The change reaches the
    // stream through the subscription bus: before or after the trigger's own response.)
    let prompts = server.call("test_trigger_prompt_change", json!({})).await;
    assert_eq!(text(&prompts), "prompts changed");
    let tools = server.call("test_trigger_tool_change", json!({})).await;
    assert_eq!(text(&tools), "tools changed");
    let mut heard = [prompts.before, tools.before].concat();
    if !heard.iter().any(|f| f["method"] == "notifications/tools/list_changed") {
        heard.push(server.read().await);
    }
    let [changed] = &heard[..] else { panic!("one change, of the tool list: {heard:?}") };
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listen);

    // The list is the same, in the same order.
    let list = server.request("tools/list", json!({"_meta": meta(json!({}))})).await;
    let names: Vec<&str> =
        list.result()["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!((names[0], names[names.len() - 1]), ("test_simple_text", "test_trigger_tool_change"));
}
