//! Typed and URL-mode elicitation as transcripts over the in-memory transport: the
//! `elicitation/create` request a type becomes in each revision (checked against the official
//! schema), what is refused before anything is sent, the typed outcomes, the completion
//! notification and the -32042 error.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_jsonrpc::transport::memory;
use mcp_server::{Context, DefinitionError, Server, ToolDef, ToolError, UrlElicitation};
use mcp_test_support::schema::validate;
use mcp_test_support::{Session, Wire};
use mcp_types::CallToolResult;
use serde_json::{Value, json};

#[allow(dead_code)]
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Large,
}

#[allow(dead_code)]
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
enum Crust {
    /// Thin and crispy
    Thin,
    /// Deep dish
    Deep,
}

/// A pizza order.
#[allow(dead_code)]
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Order {
    /// Your name
    #[schemars(length(min = 1, max = 40))]
    name: String,
    /// How many
    #[schemars(range(min = 1, max = 5))]
    count: u8,
    /// Extra cheese
    #[serde(default = "yes")]
    cheese: bool,
    size: Size,
    /// The crust
    crust: Option<Crust>,
    /// Delivery date
    #[schemars(extend("format" = "date"))]
    date: Option<String>,
}

fn yes() -> bool {
    true
}

/// Toppings: a multi-select, which 2025-06-18 cannot express.
#[allow(dead_code)]
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Toppings {
    #[schemars(length(min = 1))]
    toppings: Vec<Crust>,
}

#[allow(dead_code)]
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Address {
    street: String,
}

#[allow(dead_code)]
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Nested {
    address: Address,
}

fn text(s: String) -> Result<CallToolResult, ToolError> {
    Ok(CallToolResult::success(vec![mcp_types::ContentBlock::text(s)]))
}

fn tool<F, Fut>(name: &str, f: F) -> ToolDef
where
    F: Fn(Context) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
{
    ToolDef::new(name, json!({"type": "object"}), move |_args, ctx| f(ctx)).unwrap()
}

/// The URL elicitations the `connect` tool made, for the test to complete.
type Pending = Arc<Mutex<Vec<UrlElicitation>>>;

fn server(pending: Pending) -> Server {
    let order = tool("order", |ctx| async move { text(format!("{:?}", ctx.elicit::<Order>("Your order").await?)) })
        .elicits::<Order>()
        .unwrap();
    let toppings =
        tool("toppings", |ctx| async move { text(format!("{:?}", ctx.elicit::<Toppings>("Toppings?").await?)) })
            .elicits::<Toppings>()
            .unwrap();
    let connect = tool("connect", move |ctx| {
        let pending = pending.clone();
        async move {
            let elicitation = ctx.url_elicitation();
            let url = format!("https://example.com/connect?state={}", elicitation.id());
            pending.lock().unwrap().push(elicitation.clone());
            text(format!("{:?}", ctx.elicit_url(&elicitation, "Sign in to Example Co", url).await?))
        }
    });
    let files = tool("files", |ctx| async move {
        let elicitation = ctx.url_elicitation();
        Err(elicitation.required("Sign in to Example Co first", "https://example.com/connect"))
    });
    Server::builder("elicit", "1.0").tool(order).tool(toppings).tool(connect).tool(files).build().unwrap()
}

async fn connect(server: &Server, rev: &str, capabilities: Value) -> Session {
    let (a, b) = memory(64);
    server.connect(a);
    let mut c = Session::new(Wire::new(b).with_timeout(Duration::from_secs(600)), rev);
    let init = c
        .result(
            "initialize",
            json!({"protocolVersion": rev, "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    assert_eq!(init["protocolVersion"], rev);
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    c
}

/// Calls `tool` and returns the elicitation request it makes (checked against the schema).
async fn call_and_get_request(c: &mut Session, tool: &str) -> Value {
    c.next += 1;
    c.send(json!({"jsonrpc": "2.0", "id": c.next, "method": "tools/call", "params": {"name": tool}})).await;
    let request = c.recv().await;
    assert_eq!(request["method"], "elicitation/create", "{request}");
    validate(&c.rev.clone(), "ElicitRequest", &request);
    request
}

/// Answers `request` with `answer` and returns the text of the tool's result.
async fn answer(c: &mut Session, request: &Value, answer: Value) -> String {
    c.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": answer})).await;
    let response = c.recv().await;
    assert_eq!(response["id"], c.next, "{response}");
    validate(&c.rev.clone(), "CallToolResult", &response["result"]);
    response["result"]["content"][0]["text"].as_str().unwrap().to_owned()
}

/// What both dialects share.
fn common_properties() -> Value {
    json!({
        "name": {"type": "string", "description": "Your name", "minLength": 1, "maxLength": 40},
        "count": {"type": "integer", "description": "How many", "minimum": 1, "maximum": 5},
        "cheese": {"type": "boolean", "description": "Extra cheese", "default": true},
        "size": {"type": "string", "enum": ["small", "large"]},
        "date": {"type": "string", "description": "Delivery date", "format": "date"},
    })
}

#[tokio::test]
async fn a_type_becomes_the_form_of_2025_06_18() {
    let server = server(Pending::default());
    let mut c = connect(&server, "2025-06-18", json!({"elicitation": {}})).await;
    let request = call_and_get_request(&mut c, "order").await;
    let mut properties = common_properties();
    properties["crust"] = json!({
        "type": "string", "description": "The crust",
        "enum": ["Thin", "Deep"], "enumNames": ["Thin and crispy", "Deep dish"],
    });
    assert_eq!(
        request["params"],
        json!({
            "message": "Your order",
            "requestedSchema": {"type": "object", "properties": properties, "required": ["name", "count", "size"]},
        })
    );
    let content = json!({"name": "Ann", "count": 2, "size": "small", "crust": "Deep"});
    let got = answer(&mut c, &request, json!({"action": "accept", "content": content})).await;
    assert_eq!(
        got,
        "Accepted(Order { name: \"Ann\", count: 2, cheese: true, size: Small, crust: Some(Deep), date: None })"
    );

    // A multi-select needs 2025-11-25: refused before anything is sent (the answer is the
    // very next frame).
    let result = c.result("tools/call", json!({"name": "toppings"})).await;
    assert_eq!(result["isError"], true);
    let message = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        message,
        "cannot elicit `Toppings` (field `toppings`): a multi-select needs protocol revision 2025-11-25 or later \
         (the session speaks 2025-06-18)"
    );
    // URL mode too.
    let result = c.result("tools/call", json!({"name": "connect"})).await;
    assert_eq!(result["content"][0]["text"], "URL-mode elicitation does not exist in protocol revision 2025-06-18");
}

#[tokio::test]
async fn a_type_becomes_the_form_of_2025_11_25() {
    let server = server(Pending::default());
    let mut c = connect(&server, "2025-11-25", json!({"elicitation": {"form": {}}})).await;
    let request = call_and_get_request(&mut c, "order").await;
    let mut properties = common_properties();
    properties["crust"] = json!({
        "type": "string", "description": "The crust",
        "oneOf": [{"const": "Thin", "title": "Thin and crispy"}, {"const": "Deep", "title": "Deep dish"}],
    });
    assert_eq!(
        request["params"],
        json!({
            "mode": "form",
            "message": "Your order",
            "requestedSchema": {"type": "object", "properties": properties, "required": ["name", "count", "size"]},
        })
    );
    let got = answer(&mut c, &request, json!({"action": "decline"})).await;
    assert_eq!(got, "Declined");
    let request = call_and_get_request(&mut c, "order").await;
    assert_eq!(answer(&mut c, &request, json!({"action": "cancel"})).await, "Cancelled");

    // A multi-select, and content that breaks the schema: an error result, not a panic.
    let request = call_and_get_request(&mut c, "toppings").await;
    assert_eq!(
        request["params"]["requestedSchema"]["properties"]["toppings"],
        json!({"type": "array", "minItems": 1, "items": {"anyOf": [
            {"const": "Thin", "title": "Thin and crispy"}, {"const": "Deep", "title": "Deep dish"},
        ]}})
    );
    let got = answer(&mut c, &request, json!({"action": "accept", "content": {"toppings": ["Thin", "Deep"]}})).await;
    assert_eq!(got, "Accepted(Toppings { toppings: [Thin, Deep] })");
    let request = call_and_get_request(&mut c, "toppings").await;
    let got = answer(&mut c, &request, json!({"action": "accept", "content": {"toppings": []}})).await;
    assert_eq!(
        got,
        "invalid elicitation content: it does not match the requested schema: /toppings: [] has less than 1 item"
    );
    let request = call_and_get_request(&mut c, "order").await;
    let content = json!({"name": "Ann", "count": 9, "size": "medium"});
    let got = answer(&mut c, &request, json!({"action": "accept", "content": content})).await;
    assert!(got.starts_with("invalid elicitation content: it does not match the requested schema: "), "{got}");
    assert!(got.contains("/count: 9 is greater than the maximum of 5") && got.contains("/size: \"medium\""), "{got}");
}

#[tokio::test]
async fn older_revisions_and_missing_capabilities_send_nothing() {
    let server = server(Pending::default());
    let mut c = connect(&server, "2025-03-26", json!({"elicitation": {}})).await;
    let result = c.result("tools/call", json!({"name": "order"})).await;
    assert_eq!(result["content"][0]["text"], "elicitation does not exist in protocol revision 2025-03-26");
    let mut c = connect(&server, "2025-11-25", json!({})).await;
    let e = c.error("tools/call", json!({"name": "order"})).await;
    assert_eq!(e["code"], -32021, "{e}");
}

#[test]
fn a_type_that_is_no_form_stops_the_tool_definition() {
    let handler = |_args, _ctx: Context| async { Ok::<_, ToolError>(CallToolResult::success(vec![])) };
    let err = ToolDef::new("ship", json!({"type": "object"}), handler).unwrap().elicits::<Nested>().unwrap_err();
    let DefinitionError::InvalidElicitation { name, error } = &err else { panic!("{err}") };
    assert_eq!(name, "ship");
    assert_eq!(error.field.as_deref(), Some("address"));
    assert_eq!(
        err.to_string(),
        "tool `ship` elicits a type that is not a form: cannot elicit `Nested` (field `address`): nested objects \
         are not allowed: a form is flat"
    );
}

#[tokio::test]
async fn url_mode_with_its_completion_and_the_32042_error() {
    let pending = Pending::default();
    let server = server(pending.clone());
    let mut c = connect(&server, "2025-11-25", json!({"elicitation": {"form": {}, "url": {}}})).await;
    let request = call_and_get_request(&mut c, "connect").await;
    let id = pending.lock().unwrap()[0].id().to_owned();
    assert!(id.len() >= 16, "an unguessable id: {id}");
    assert_eq!(
        request["params"],
        json!({
            "mode": "url",
            "elicitationId": id,
            "message": "Sign in to Example Co",
            "url": format!("https://example.com/connect?state={id}"),
        })
    );
    assert_eq!(answer(&mut c, &request, json!({"action": "accept"})).await, "Accepted(())");

    // Later, out of band, after the call ended: the completion reaches the session.
    let handle = pending.lock().unwrap()[0].clone();
    tokio::spawn(async move { handle.complete().await }).await.unwrap().unwrap();
    let note = c.recv().await;
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": id}})
    );
    validate("2025-11-25", "ElicitationCompleteNotification", &note);

    // -32042, as the official schema defines it.
    c.next += 1;
    c.send(json!({"jsonrpc": "2.0", "id": c.next, "method": "tools/call", "params": {"name": "files"}})).await;
    let response = c.recv().await;
    validate("2025-11-25", "URLElicitationRequiredError", &response);
    let elicitations = &response["error"]["data"]["elicitations"];
    assert_eq!(response["error"]["code"], -32042);
    assert_eq!(response["error"]["message"], "Sign in to Example Co first");
    assert_eq!(elicitations[0]["mode"], "url");
    assert_eq!(elicitations[0]["url"], "https://example.com/connect");
    assert!(elicitations[0]["elicitationId"].as_str().is_some_and(|id| id.len() >= 16), "{response}");

    // A client without URL mode is not asked.
    let mut c = connect(&server, "2025-11-25", json!({"elicitation": {"form": {}}})).await;
    let e = c.error("tools/call", json!({"name": "connect"})).await;
    assert_eq!(e["code"], -32021, "{e}");
    assert_eq!(e["data"]["requiredCapabilities"], json!({"elicitation": {"url": {}}}));
}

#[tokio::test]
async fn in_2026_07_28_the_form_and_the_url_are_input_requests() {
    let pending = Pending::default();
    let server = server(pending.clone());
    let (a, b) = memory(64);
    server.connect(a);
    let mut wire = Wire::new(b).with_timeout(Duration::from_secs(600));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
    });
    let call = |id: i64, name: &str, extra: Value| {
        let mut params = json!({"name": name, "_meta": meta});
        params.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    wire.send(call(1, "toppings", json!({}))).await;
    let first = wire.recv().await["result"].clone();
    validate("2026-07-28", "InputRequiredResult", &first);
    let request = &first["inputRequests"]["elicitation-1"];
    validate("2026-07-28", "ElicitRequest", request);
    assert_eq!(request["params"]["mode"], "form");
    assert_eq!(request["params"]["requestedSchema"]["properties"]["toppings"]["type"], "array");
    let answers = json!({"elicitation-1": {"action": "accept", "content": {"toppings": ["Deep"]}}});
    let state = first["requestState"].clone();
    wire.send(call(2, "toppings", json!({"inputResponses": answers, "requestState": state}))).await;
    let done = wire.recv().await["result"].clone();
    assert_eq!(done["content"][0]["text"], "Accepted(Toppings { toppings: [Deep] })");

    // URL mode: no elicitationId in this revision, and no completion notification.
    wire.send(call(3, "connect", json!({}))).await;
    let first = wire.recv().await["result"].clone();
    let request = &first["inputRequests"]["elicitation-1"];
    validate("2026-07-28", "ElicitRequest", request);
    assert_eq!(request["params"]["mode"], "url");
    assert!(request["params"].get("elicitationId").is_none(), "{request}");
    let handle = pending.lock().unwrap()[0].clone();
    let e = handle.complete().await.unwrap_err();
    assert!(matches!(e, mcp_jsonrpc::CallError::NotInRevision { .. }), "{e}");
}

/// The raw text of the next frame (a `Value` would sort the members whose order is checked).
async fn recv_text(c: &mut Session) -> String {
    use mcp_jsonrpc::TransportRead as _;
    let frame = tokio::time::timeout(Duration::from_secs(60), c.wire.read.read())
        .await
        .expect("a frame within 60 s")
        .expect("the connection open")
        .unwrap();
    String::from_utf8(frame.frame.to_vec()).unwrap()
}

#[tokio::test]
async fn a_typed_form_lists_its_fields_in_struct_order_on_the_wire() {
    let server = server(Pending::default());
    for (rev, caps) in
        [("2025-06-18", json!({"elicitation": {}})), ("2025-11-25", json!({"elicitation": {"form": {}}}))]
    {
        let mut c = connect(&server, rev, caps).await;
        c.next += 1;
        c.send(json!({"jsonrpc": "2.0", "id": c.next, "method": "tools/call", "params": {"name": "order"}})).await;
        let text = recv_text(&mut c).await;
        let request: Value = serde_json::from_str(&text).unwrap();
        validate(rev, "ElicitRequest", &request);
        // `Order`'s fields, as declared (alphabetically they would be cheese, count, crust, ...).
        let fields = ["name", "count", "cheese", "size", "crust", "date"];
        let properties = &text[text.find("\"properties\":").expect("properties")..];
        let at: Vec<usize> = fields
            .iter()
            .map(|f| properties.find(&format!("\"{f}\":{{")).unwrap_or_else(|| panic!("{f} not in {text}")))
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{rev}: not in struct order: {text}");
        // A client of this SDK decodes them in that order too.
        #[derive(serde::Deserialize)]
        struct Frame {
            params: mcp_types::ElicitRequestParams,
        }
        let Frame { params: mcp_types::ElicitRequestParams::ElicitRequestForm(form) } =
            serde_json::from_str(&text).unwrap()
        else {
            panic!("not a form")
        };
        assert_eq!(form.requested_schema.properties.keys().collect::<Vec<_>>(), fields);
        answer(&mut c, &request, json!({"action": "decline"})).await;
    }
}
