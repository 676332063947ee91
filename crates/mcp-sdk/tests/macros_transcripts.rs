//! Tools, prompts and resources defined with `#[tool]`, `#[prompt]`, `#[resource]` and
//! `#[handlers]`, served by a real `Server` over the in-memory transport: what is listed
//! (schemas compared exactly), what calls return, and how failures look. Every result is
//! validated against the official schema of the session's revision, and every structured
//! result against the tool's own output schema.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_sdk::jsonrpc::CancellationToken;
use mcp_sdk::jsonrpc::transport::memory;
use mcp_sdk::server::{Completion, CompletionRequest, Progress, Server, State, ToolError};
use mcp_sdk::types::{CallToolResult, ContentBlock, ErrorObject, GetPromptResult, PromptMessage, Role};
use mcp_sdk::{handlers, prompt, resource, tool};
use serde_json::{Value, json};

// The context type under another name, twice: the macros decide by the type's traits.
use mcp_sdk::server::Context as Ctx;

use mcp_test_support::{Session, Wire};

type RequestContext = mcp_sdk::server::Context;

// ---------------------------------------------------------------------------------------------
// Free functions.

/// Adds two numbers.
///
/// # Arguments
///
/// * `a` - the first number
/// * `b` - the second number
#[tool(read_only, idempotent)]
fn add(a: f64, b: f64) -> f64 {
    a + b
}

/// Divides `a` by `b`.
#[tool]
async fn divide(a: f64, b: f64) -> Result<f64, String> {
    if b == 0.0 { Err("division by zero".to_owned()) } else { Ok(a / b) }
}

/// Greets someone.
///
/// # Arguments
///
/// * `first_name` - who to greet
/// * `excited` - whether to shout
/// * `title` - an honorific
#[tool]
fn greet(
    #[serde(rename = "firstName")] first_name: String,
    #[serde(default)] excited: bool,
    title: Option<String>,
    #[serde(default = "default_times")] times: u8,
) -> String {
    let name = match title {
        Some(t) => format!("{t} {first_name}"),
        None => first_name,
    };
    let greeting = format!("Hello, {name}{}", if excited { "!" } else { "." });
    vec![greeting; times as usize].join(" ")
}

fn default_times() -> u8 {
    1
}

/// Units of a temperature.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// Where to look.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Place {
    /// The city.
    city: String,
    /// The country code.
    country: Option<String>,
}

/// A reading.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Reading {
    /// The temperature.
    temperature: f64,
    unit: Unit,
    /// The steps taken.
    steps: Vec<u32>,
}

/// Reads the temperature, reporting progress.
#[tool(open_world)]
async fn temperature(place: Place, unit: Unit, progress: Progress, cancel: CancellationToken) -> Reading {
    let mut steps = Vec::new();
    for i in 1..=3 {
        assert!(!cancel.is_cancelled());
        progress.report(f64::from(i)).total(3.0).message(format!("step {i}")).await;
        steps.push(i);
    }
    let celsius = if place.city == "Oslo" { 4.0 } else { 21.0 } + if place.country.is_some() { 0.5 } else { 0.0 };
    let temperature = match unit {
        Unit::Celsius => celsius,
        Unit::Fahrenheit => celsius * 9.0 / 5.0 + 32.0,
    };
    Reading { temperature, unit, steps }
}

/// Who is asking (through a renamed import).
#[tool]
fn whoami(ctx: Ctx) -> String {
    ctx.client_info().map(|i| i.name).unwrap_or_default()
}

/// The id of this request (through a type alias).
#[tool]
async fn request_id(request: RequestContext, #[serde(rename = "echo")] text: String) -> String {
    format!("{text} {}", serde_json::to_string(request.request_id()).unwrap())
}

#[derive(Default)]
struct Hits {
    count: AtomicU64,
}

/// Counts its calls in shared state.
#[tool]
fn hit(hits: State<Hits>) -> u64 {
    hits.count.fetch_add(1, Ordering::Relaxed) + 1
}

/// Does nothing.
#[tool(destructive = false)]
fn nothing() {}

/// Returns content blocks.
#[tool]
fn blocks(count: usize) -> Vec<ContentBlock> {
    (0..count).map(|i| ContentBlock::text(format!("block {i}"))).collect()
}

/// Returns a whole result.
#[tool]
fn raw() -> CallToolResult {
    CallToolResult::error("raw failure")
}

/// Fails with a protocol error.
#[tool]
fn protocol_failure() -> Result<String, ErrorObject> {
    Err(ErrorObject::invalid_params("not like that"))
}

/// Fails with an I/O error.
#[tool]
fn io_failure() -> std::io::Result<String> {
    Err(std::io::Error::other("disk on fire"))
}

/// Fails with a tool error.
#[tool]
fn tool_failure() -> Result<(), ToolError> {
    Err(ToolError::new("tool says no"))
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

/// Everything the attribute can say.
#[tool(
    name = "options.tool",
    title = "Options",
    description = "Set by the attribute.",
    read_only = false,
    destructive,
    idempotent = false,
    open_world = false,
    icon = "https://example.com/a.png",
    icon(src = "https://example.com/b.svg", mime_type = "image/svg+xml", sizes = ["any"], theme = "dark"),
    output_schema = false
)]
fn options_tool() -> Sum {
    Sum { sum: 3 }
}

/// Needs OAuth scopes (checked over HTTP with `auth`; the definition carries them).
#[tool(scopes = ["notes:write", "notes:admin"])]
fn scoped_tool() {}

/// Scopes on a prompt and a resource template.
#[prompt(scopes = ["notes:read"])]
fn scoped_prompt() -> String {
    String::new()
}

#[resource("notes://{id}", scopes = ["notes:read"])]
fn scoped_note(id: String) -> String {
    id
}

#[test]
fn scopes_reach_the_definitions() {
    assert_eq!(scoped_tool::tool().required_scopes(), ["notes:write", "notes:admin"]);
    assert_eq!(scoped_prompt::prompt().required_scopes(), ["notes:read"]);
    assert_eq!(scoped_note::template().required_scopes(), ["notes:read"]);
    assert!(count_nodes::tool().required_scopes().is_empty());
}

/// Rendered by an MCP App view, and `meta(...)` kept beside it.
#[tool(ui = "ui://notes/view", meta(owner = "notes"))]
fn app_tool() {}

/// The view's own tool: hosts keep it from the model.
#[tool(ui = "ui://notes/view", visibility = ["app"])]
fn app_only_tool() {}

/// Both, said out loud.
#[tool(visibility = ["model", "app"])]
fn both_tool() {}

#[test]
fn ui_and_visibility_reach_the_definitions() {
    let meta = |def: mcp_sdk::server::ToolDef| serde_json::to_value(&def.definition().meta).unwrap();
    assert_eq!(meta(app_tool::tool()), json!({"owner": "notes", "ui": {"resourceUri": "ui://notes/view"}}));
    assert_eq!(meta(app_only_tool::tool()), json!({"ui": {"resourceUri": "ui://notes/view", "visibility": ["app"]}}));
    assert_eq!(meta(both_tool::tool()), json!({"ui": {"visibility": ["model", "app"]}}));
    assert!(!mcp_sdk::types::apps::visible_to_model(app_only_tool::tool().definition()));
}

/// May run as a task (2025-11-25).
#[tool(task = "optional")]
async fn task_tool() -> String {
    "built".to_owned()
}

/// Must run as a task.
#[tool(task = "required")]
fn required_task_tool() {}

#[test]
fn task_support_reaches_the_definitions() {
    use mcp_sdk::server::TaskSupport;
    assert_eq!(task_tool::tool().task_support_of(), TaskSupport::Optional);
    assert_eq!(required_task_tool::tool().task_support_of(), TaskSupport::Required);
    assert_eq!(count_nodes::tool().task_support_of(), TaskSupport::Forbidden);
}

/// A tree, to show what recursive types do.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Tree {
    children: Vec<Tree>,
}

/// Counts the nodes of a tree.
#[tool]
fn count_nodes(tree: Tree) -> usize {
    fn count(t: &Tree) -> usize {
        1 + t.children.iter().map(count).sum::<usize>()
    }
    count(&tree)
}

fn languages(request: CompletionRequest) -> Vec<&'static str> {
    ["python", "perl", "php", "rust"].into_iter().filter(|l| l.starts_with(&request.value)).collect()
}

async fn styles(request: CompletionRequest) -> Result<Completion, String> {
    Ok(Completion::matching(&request.value, ["terse", "thorough"]))
}

/// Asks for a code review.
///
/// # Arguments
///
/// * `code` - the code to review
/// * `language` - the language it is written in
#[prompt(title = "Review", complete(language = languages, style = styles))]
fn review(code: String, language: Option<String>, style: Option<String>, ctx: Ctx) -> String {
    let _ = ctx.request_id();
    let language = language.unwrap_or_else(|| "unknown".to_owned());
    format!("Review this {language} code ({}):\n{code}", style.as_deref().unwrap_or("any style"))
}

/// Plans a trip.
#[prompt(name = "trip-plan")]
async fn plan(#[serde(rename = "where")] destination: String) -> GetPromptResult {
    let mut result = GetPromptResult::new(vec![
        PromptMessage::new(Role::User, ContentBlock::text(format!("Plan a trip to {destination}"))),
        PromptMessage::new(Role::Assistant, ContentBlock::text("Sure.")),
    ]);
    result.description = Some("A plan".to_owned());
    result
}

/// Always fails.
#[prompt]
fn broken() -> Result<String, std::fmt::Error> {
    Err(std::fmt::Error)
}

/// What a review covers: the prompt's arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ReviewArgs {
    /// The code to review.
    code: String,
    /// How many issues to list at most.
    #[serde(rename = "maxIssues")]
    max_issues: Option<u32>,
    /// Whether to be strict.
    #[schemars(title = "Strictness")]
    #[serde(default)]
    strict: bool,
}

fn counts(request: CompletionRequest) -> Vec<String> {
    (1..=3).map(|i| i.to_string()).filter(|i| i.starts_with(&request.value)).collect()
}

/// Reviews code, its arguments from a struct.
///
/// # Arguments
///
/// * `language` - the language it is written in
#[prompt(
    title = "Struct review",
    icon = "https://example.com/review.png",
    meta("com.example/owner" = "reviews", version = 2, tags = ["code", "review"]),
    complete(maxIssues = counts)
)]
async fn struct_review(args: ReviewArgs, language: Option<String>, ctx: Ctx) -> String {
    let _ = ctx.request_id();
    format!(
        "Review this {} code{} listing at most {} issues:\n{}",
        language.as_deref().unwrap_or("unknown"),
        if args.strict { " strictly," } else { "," },
        args.max_issues.unwrap_or(5),
        args.code
    )
}

/// The changelog, annotated.
#[resource(
    "docs://changelog",
    title = "Changelog",
    mime_type = "text/markdown",
    size = 11,
    icon(src = "https://example.com/log.png", mime_type = "image/png", sizes = ["48x48"]),
    annotations(audience = ["user", "assistant"], priority = 0.8, last_modified = "2025-01-12T15:00:58Z"),
    meta("com.example/source" = "git")
)]
fn changelog() -> &'static str {
    "# Changelog"
}

/// A release note, annotated.
#[resource(
    "docs://releases/{version}",
    mime_type = "text/markdown",
    icon = "https://example.com/release.png",
    annotations(audience = ["assistant"], priority = 0),
    meta(stable = true)
)]
fn release(version: String) -> String {
    format!("# Release {version}")
}

/// A tool with `_meta`.
#[tool(meta("com.example/cost" = 0.5, nested = {"a": [1, 2]}))]
fn meta_tool() {}

/// The readme.
#[resource("docs://readme", mime_type = "text/markdown", title = "Readme")]
fn readme() -> &'static str {
    "# Readme"
}

/// The logo.
#[resource("docs://logo", name = "logo.png", mime_type = "image/png")]
async fn logo() -> Vec<u8> {
    vec![0x89, b'P', b'N', b'G']
}

fn paths(request: CompletionRequest) -> Vec<String> {
    ["src/lib.rs", "src/main.rs", "README.md"]
        .iter()
        .filter(|p| p.starts_with(&request.value))
        .map(|p| (*p).to_owned())
        .collect()
}

/// A file.
#[resource("file:///{+path}", complete(path = paths))]
async fn file(path: String, ctx: RequestContext) -> Result<String, String> {
    let _ = ctx.request_id();
    if path.starts_with("secret") {
        return Err(format!("{path} is secret"));
    }
    Ok(format!("contents of {path}"))
}

/// A repository at a revision.
#[resource("repo://{owner}/{name}{?rev}")]
fn repository(owner: String, #[serde(rename = "name")] repo: String, rev: Option<String>) -> String {
    format!("{owner}/{repo} at {}", rev.as_deref().unwrap_or("HEAD"))
}

// ---------------------------------------------------------------------------------------------
// Methods sharing state.

#[derive(Default)]
struct Notes {
    notes: Mutex<Vec<String>>,
}

impl Notes {
    fn indexes(request: CompletionRequest) -> Vec<String> {
        (0..3).map(|i| i.to_string()).filter(|i| i.starts_with(&request.value)).collect()
    }
}

#[handlers]
impl Notes {
    /// Adds a note and returns how many there are.
    ///
    /// # Arguments
    ///
    /// * `text` - the note
    #[tool]
    fn add_note(&self, text: String) -> usize {
        let mut notes = self.notes.lock().unwrap();
        notes.push(text);
        notes.len()
    }

    /// Counts the notes.
    #[tool(read_only)]
    async fn count_notes(&self, ctx: Ctx) -> usize {
        let _ = ctx.request_id();
        tokio::task::yield_now().await;
        self.notes.lock().unwrap().len()
    }

    /// The notes, through an `Arc`.
    #[tool]
    fn list_notes(self: Arc<Self>) -> Vec<String> {
        self.notes.lock().unwrap().clone()
    }

    /// Doubles a number, with no state at all.
    #[tool]
    fn double(n: i32) -> i32 {
        n * 2
    }

    /// Summarizes the notes.
    #[prompt]
    fn summarize(&self, style: Option<String>) -> Vec<PromptMessage> {
        let notes = self.notes.lock().unwrap().join("; ");
        vec![PromptMessage::new(
            Role::User,
            ContentBlock::text(format!("Summarize ({}): {notes}", style.unwrap_or_default())),
        )]
    }

    /// All notes.
    #[resource("notes://all", mime_type = "text/plain")]
    fn all(&self) -> String {
        self.notes.lock().unwrap().join("\n")
    }

    /// One note.
    #[resource("notes://{index}", complete(index = Self::indexes))]
    async fn one(&self, index: String) -> Result<String, String> {
        let i: usize = index.parse().map_err(|_| format!("`{index}` is not an index"))?;
        self.notes.lock().unwrap().get(i).cloned().ok_or_else(|| format!("no note {i}"))
    }
}

// ---------------------------------------------------------------------------------------------
// The harness.

fn server() -> (Server, Arc<Notes>) {
    let notes = Arc::new(Notes::default());
    let server = Server::builder("macros", "1.0")
        .tools([add::tool(), divide::tool(), greet::tool(), temperature::tool(), whoami::tool()])
        .tools([request_id::tool(), hit::tool(), nothing::tool(), blocks::tool(), raw::tool()])
        .tools([protocol_failure::tool(), io_failure::tool(), tool_failure::tool(), options_tool::tool()])
        .tool(count_nodes::tool())
        .tool(meta_tool::tool())
        .prompt(review::prompt())
        .prompt(struct_review::prompt())
        .resource(changelog::resource())
        .resource_template(release::template())
        .prompt(plan::prompt())
        .prompt(broken::prompt())
        .resource(readme::resource())
        .resource(logo::resource())
        .resource_template(file::template())
        .resource_template(repository::template())
        .handlers(notes.clone())
        .state(Hits::default())
        .build()
        .unwrap();
    (server, notes)
}

/// A session of revision [`REV`], with the tools the server listed.
struct Client {
    session: Session,
    tools: Vec<Value>,
}

const REV: &str = "2025-11-25";

impl std::ops::Deref for Client {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.session
    }
}

impl std::ops::DerefMut for Client {
    fn deref_mut(&mut self) -> &mut Session {
        &mut self.session
    }
}

impl Client {
    async fn connect(server: &Server) -> Client {
        let (a, b) = memory(64);
        server.connect(a);
        let mut client = Client { session: Session::new(Wire::new(b), REV), tools: Vec::new() };
        let info = json!({"name": "macro-tests", "version": "1"});
        client.result("initialize", json!({"protocolVersion": REV, "capabilities": {}, "clientInfo": info})).await;
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        client.tools = client.result("tools/list", json!({})).await["tools"].as_array().unwrap().clone();
        client
    }
    fn tool(&self, name: &str) -> &Value {
        self.tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("no tool {name}"))
    }
    /// Calls a tool; a structured result must match the tool's output schema.
    async fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        let result = self.result("tools/call", json!({"name": name, "arguments": arguments})).await;
        if let (Some(structured), Some(schema)) = (result.get("structuredContent"), self.tool(name).get("outputSchema"))
        {
            let errors: Vec<String> =
                jsonschema::validator_for(schema).unwrap().iter_errors(structured).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{name}: {errors:?}\n{structured}");
        }
        result
    }
}

fn has_ref(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key("$ref") || m.values().any(has_ref),
        Value::Array(a) => a.iter().any(has_ref),
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Tools.

/// A session's view of the tools the macros defined (the server is not needed after listing).
async fn listed_tools() -> Client {
    let (server, _) = server();
    Client::connect(&server).await
}

/// Every macro-defined tool is listed, in the order of registration.
#[tokio::test]
async fn tools_are_listed_in_registration_order() {
    let c = listed_tools().await;
    let names: Vec<&str> = c.tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "add",
            "divide",
            "greet",
            "temperature",
            "whoami",
            "request_id",
            "hit",
            "nothing",
            "blocks",
            "raw",
            "protocol_failure",
            "io_failure",
            "tool_failure",
            "options.tool",
            "count_nodes",
            "meta_tool",
            "add_note",
            "count_notes",
            "list_notes",
            "double"
        ]
    );
}

/// Parameters with docs, a `result`-wrapped output schema, and annotations: the whole tool.
#[tokio::test]
async fn a_number_result_is_wrapped_in_an_object_schema() {
    let c = listed_tools().await;
    let number = |d: &str| json!({"type": "number", "format": "double", "description": d});
    assert_eq!(
        *c.tool("add"),
        json!({
            "name": "add",
            "description": "Adds two numbers.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": number("the first number"), "b": number("the second number")},
                "required": ["a", "b"]
            },
            "outputSchema": {
                "type": "object",
                "properties": {"result": {"type": "number", "format": "double"}},
                "required": ["result"]
            },
            "annotations": {"readOnlyHint": true, "idempotentHint": true}
        })
    );
}

/// Renamed, defaulted and optional parameters; the `# Arguments` section leaves the description.
#[tokio::test]
async fn parameters_are_renamed_defaulted_or_optional() {
    let c = listed_tools().await;
    assert_eq!(c.tool("greet")["description"], "Greets someone.");
    assert_eq!(
        c.tool("greet")["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "firstName": {"type": "string", "description": "who to greet"},
                "excited": {"type": "boolean", "description": "whether to shout"},
                "title": {"type": ["string", "null"], "description": "an honorific"},
                "times": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}
            },
            "required": ["firstName"]
        })
    );
    assert!(c.tool("greet").get("outputSchema").is_none());
}

/// Nested types are inlined; context parameters are not in the schema.
#[tokio::test]
async fn nested_types_are_inlined_and_context_parameters_left_out() {
    let c = listed_tools().await;
    assert_eq!(
        c.tool("temperature")["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "place": {
                    "description": "Where to look.",
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "The city."},
                        "country": {"type": ["string", "null"], "description": "The country code."}
                    },
                    "required": ["city"]
                },
                "unit": {"description": "Units of a temperature.", "type": "string", "enum": ["celsius", "fahrenheit"]}
            },
            "required": ["place", "unit"]
        })
    );
}

/// An object result keeps its own schema.
#[tokio::test]
async fn an_object_result_keeps_its_own_schema() {
    let c = listed_tools().await;
    assert_eq!(
        c.tool("temperature")["outputSchema"],
        json!({
            "description": "A reading.",
            "type": "object",
            "properties": {
                "temperature": {"type": "number", "format": "double", "description": "The temperature."},
                "unit": {"description": "Units of a temperature.", "type": "string", "enum": ["celsius", "fahrenheit"]},
                "steps": {
                    "type": "array",
                    "items": {"type": "integer", "format": "uint32", "minimum": 0},
                    "description": "The steps taken."
                }
            },
            "required": ["temperature", "unit", "steps"]
        })
    );
    assert_eq!(c.tool("temperature")["annotations"], json!({"openWorldHint": true}));
}

/// Tools whose parameters are all context parameters take an empty object; a renamed argument
/// is required by its wire name.
#[tokio::test]
async fn tools_without_arguments_take_an_empty_object() {
    let c = listed_tools().await;
    for name in ["whoami", "hit", "nothing", "raw", "count_notes", "list_notes"] {
        assert_eq!(c.tool(name)["inputSchema"], json!({"type": "object", "properties": {}}), "{name}");
    }
    assert_eq!(c.tool("request_id")["inputSchema"]["required"], json!(["echo"]));
}

/// No `$ref` anywhere, except in the one recursive type, whose definition comes along.
#[tokio::test]
async fn only_a_recursive_type_leaves_a_ref_with_its_definition() {
    let c = listed_tools().await;
    for t in c.tools.iter().filter(|t| t["name"] != "count_nodes") {
        assert!(!has_ref(t), "{t}");
    }
    let tree = &c.tool("count_nodes")["inputSchema"];
    assert_eq!(tree["properties"]["tree"]["properties"]["children"]["items"], json!({"$ref": "#/$defs/Tree"}));
    assert!(tree["$defs"]["Tree"].is_object(), "{tree}");
}

#[tokio::test]
async fn attribute_options_reach_the_definition() {
    let (server, _) = server();
    let c = Client::connect(&server).await;
    assert_eq!(
        *c.tool("options.tool"),
        json!({
            "name": "options.tool",
            "title": "Options",
            "description": "Set by the attribute.",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false},
            "icons": [
                {"src": "https://example.com/a.png"},
                {"src": "https://example.com/b.svg", "mimeType": "image/svg+xml", "sizes": ["any"], "theme": "dark"}
            ]
        })
    );
    assert_eq!(c.tool("nothing")["annotations"], json!({"destructiveHint": false}));
}

#[tokio::test]
async fn tool_calls_convert_arguments_and_results() {
    let (server, _) = server();
    let mut c = Client::connect(&server).await;
    let r = c.call_tool("add", json!({"a": 1, "b": 2.5})).await;
    assert_eq!(
        r,
        json!({"content": [{"type": "text", "text": r#"{"result":3.5}"#}], "structuredContent": {"result": 3.5}})
    );
    let r = c.call_tool("divide", json!({"a": 1, "b": 4})).await;
    assert_eq!(r["structuredContent"], json!({"result": 0.25}));

    let r = c.call_tool("greet", json!({"firstName": "Ann"})).await;
    assert_eq!(r, json!({"content": [{"type": "text", "text": "Hello, Ann."}]}));
    let r = c.call_tool("greet", json!({"firstName": "Ann", "excited": true, "title": "Dr", "times": 2})).await;
    assert_eq!(r["content"][0]["text"], "Hello, Dr Ann! Hello, Dr Ann!");
    let r = c.call_tool("greet", json!({"firstName": "Ann", "title": null})).await;
    assert_eq!(r["content"][0]["text"], "Hello, Ann.");

    let r = c.call_tool("temperature", json!({"place": {"city": "Oslo", "country": "NO"}, "unit": "fahrenheit"})).await;
    assert_eq!(r["structuredContent"], json!({"temperature": 40.1, "unit": "fahrenheit", "steps": [1, 2, 3]}));
    assert_eq!(r["content"][0]["text"], r#"{"temperature":40.1,"unit":"fahrenheit","steps":[1,2,3]}"#);

    let r = c.call_tool("whoami", json!({})).await;
    assert_eq!(r["content"][0]["text"], "macro-tests");
    let r = c.call_tool("request_id", json!({"echo": "id"})).await;
    assert_eq!(r["content"][0]["text"], format!("id {}", c.next));

    assert_eq!(c.call_tool("hit", json!({})).await["structuredContent"], json!({"result": 1}));
    assert_eq!(c.call_tool("hit", json!({})).await["structuredContent"], json!({"result": 2}));
    assert_eq!(c.call_tool("nothing", json!({})).await, json!({"content": []}));
    let r = c.call_tool("blocks", json!({"count": 2})).await;
    assert_eq!(r["content"], json!([{"type": "text", "text": "block 0"}, {"type": "text", "text": "block 1"}]));
    // 2.0 is an integer to JSON Schema (the input schema accepts it): the handler gets 2.
    let r = c.call_tool("blocks", json!({"count": 2.0})).await;
    assert_eq!(r["content"], json!([{"type": "text", "text": "block 0"}, {"type": "text", "text": "block 1"}]));
    let r = c.call_tool("greet", json!({"firstName": "Ann", "times": 2.0})).await;
    assert_eq!(r["content"][0]["text"], "Hello, Ann. Hello, Ann.");
    let r = c.call_tool("options.tool", json!({})).await;
    assert_eq!(r, json!({"content": [{"type": "text", "text": r#"{"sum":3}"#}], "structuredContent": {"sum": 3}}));
    let tree = json!({"tree": {"children": [{"children": []}, {"children": [{"children": []}]}]}});
    assert_eq!(c.call_tool("count_nodes", tree).await["structuredContent"], json!({"result": 4}));
}

#[tokio::test]
async fn failures_are_error_results_or_protocol_errors() {
    let (server, _) = server();
    let mut c = Client::connect(&server).await;
    let error_result = |text: &str| json!({"content": [{"type": "text", "text": text}], "isError": true});
    assert_eq!(c.call_tool("divide", json!({"a": 1, "b": 0})).await, error_result("division by zero"));
    assert_eq!(c.call_tool("io_failure", json!({})).await, error_result("disk on fire"));
    assert_eq!(c.call_tool("tool_failure", json!({})).await, error_result("tool says no"));
    assert_eq!(c.call_tool("raw", json!({})).await, error_result("raw failure"));
    let e = c.error("tools/call", json!({"name": "protocol_failure", "arguments": {}})).await;
    assert_eq!((e["code"].clone(), e["message"].clone()), (json!(-32602), json!("invalid params: not like that")));

    // Arguments that break the schema: the model reads what is wrong.
    for arguments in [json!({"a": "one", "b": 2}), json!({"a": 1}), json!({"firstName": 3})] {
        let name = if arguments.get("firstName").is_some() { "greet" } else { "add" };
        let r = c.call_tool(name, arguments.clone()).await;
        assert_eq!(r["isError"], true, "{arguments}");
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with(&format!("invalid arguments for tool `{name}`")), "{text}");
    }
    let r = c.call_tool("temperature", json!({"place": {"city": "Oslo"}, "unit": "kelvin"})).await;
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"].as_str().unwrap().contains("kelvin"), "{r}");
}

#[tokio::test]
async fn progress_reaches_the_client() {
    let (server, _) = server();
    let mut c = Client::connect(&server).await;
    let params = json!({"name": "temperature", "arguments": {"place": {"city": "Rome"}, "unit": "celsius"},
        "_meta": {"progressToken": "p"}});
    c.send(json!({"jsonrpc": "2.0", "id": "t", "method": "tools/call", "params": params})).await;
    let mut progress = Vec::new();
    let answer = loop {
        let m = c.recv().await;
        if m["method"] == "notifications/progress" {
            progress.push((m["params"]["progress"].as_f64().unwrap(), m["params"]["message"].clone()));
        } else {
            break m;
        }
    };
    assert_eq!(progress, [(1.0, json!("step 1")), (2.0, json!("step 2")), (3.0, json!("step 3"))]);
    assert_eq!(answer["result"]["structuredContent"]["temperature"], 21.0);
}

#[tokio::test]
async fn methods_share_their_value() {
    let (server, notes) = server();
    let mut c = Client::connect(&server).await;
    assert_eq!(
        c.tool("add_note")["inputSchema"],
        json!({"type": "object", "properties": {"text": {"type": "string", "description": "the note"}}, "required": ["text"]})
    );
    assert_eq!(c.tool("count_notes")["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(c.call_tool("add_note", json!({"text": "milk"})).await["structuredContent"], json!({"result": 1}));
    assert_eq!(c.call_tool("add_note", json!({"text": "eggs"})).await["structuredContent"], json!({"result": 2}));
    assert_eq!(c.call_tool("count_notes", json!({})).await["structuredContent"], json!({"result": 2}));
    assert_eq!(c.call_tool("list_notes", json!({})).await["structuredContent"], json!({"result": ["milk", "eggs"]}));
    assert_eq!(c.call_tool("double", json!({"n": 21})).await["structuredContent"], json!({"result": 42}));
    assert_eq!(*notes.notes.lock().unwrap(), ["milk", "eggs"]);
    assert_eq!(notes.tools().len(), 4);
    assert_eq!((notes.prompts().len(), notes.resources().len(), notes.resource_templates().len()), (1, 1, 1));

    let got = c.result("prompts/get", json!({"name": "summarize", "arguments": {"style": "short"}})).await;
    assert_eq!(got["messages"][0]["content"]["text"], "Summarize (short): milk; eggs");
    let read = c.result("resources/read", json!({"uri": "notes://all"})).await;
    assert_eq!(read["contents"], json!([{"uri": "notes://all", "mimeType": "text/plain", "text": "milk\neggs"}]));
    let read = c.result("resources/read", json!({"uri": "notes://1"})).await;
    assert_eq!(read["contents"], json!([{"uri": "notes://1", "text": "eggs"}]));
    let e = c.error("resources/read", json!({"uri": "notes://7"})).await;
    assert_eq!((e["code"].clone(), e["message"].clone()), (json!(-32603), json!("internal error: no note 7")));
    let done = c
        .result(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "notes://{index}"}, "argument": {"name": "index", "value": ""}}),
        )
        .await;
    assert_eq!(done["completion"]["values"], json!(["0", "1", "2"]));
}

// ---------------------------------------------------------------------------------------------
// Prompts and resources.

#[tokio::test]
async fn prompts_are_listed_rendered_and_completed() {
    let (server, _) = server();
    let mut c = Client::connect(&server).await;
    let list = c.result("prompts/list", json!({})).await;
    assert_eq!(
        list["prompts"][0],
        json!({
            "name": "review",
            "title": "Review",
            "description": "Asks for a code review.",
            "arguments": [
                {"name": "code", "description": "the code to review", "required": true},
                {"name": "language", "description": "the language it is written in", "required": false},
                {"name": "style", "required": false}
            ]
        })
    );
    assert_eq!(
        list["prompts"][2],
        json!({"name": "trip-plan", "description": "Plans a trip.", "arguments": [{"name": "where", "required": true}]})
    );
    let got =
        c.result("prompts/get", json!({"name": "review", "arguments": {"code": "x = 1", "language": "python"}})).await;
    assert_eq!(
        got,
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Review this python code (any style):\nx = 1"}}]})
    );
    let got = c.result("prompts/get", json!({"name": "trip-plan", "arguments": {"where": "Lisbon"}})).await;
    assert_eq!(got["description"], "A plan");
    assert_eq!(got["messages"][1], json!({"role": "assistant", "content": {"type": "text", "text": "Sure."}}));
    let e = c.error("prompts/get", json!({"name": "review", "arguments": {}})).await;
    assert_eq!(e["code"], -32602);
    let e = c.error("prompts/get", json!({"name": "broken"})).await;
    assert_eq!(e["code"], -32603);

    let complete = |argument: &str, value: &str| json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": argument, "value": value}});
    let done = c.result("completion/complete", complete("language", "p")).await;
    assert_eq!(done["completion"], json!({"values": ["python", "perl", "php"], "total": 3, "hasMore": false}));
    let done = c.result("completion/complete", complete("style", "th")).await;
    assert_eq!(done["completion"]["values"], json!(["thorough"]));
}

#[tokio::test]
async fn resources_and_templates_are_listed_read_and_completed() {
    let (server, _) = server();
    let mut c = Client::connect(&server).await;
    let list = c.result("resources/list", json!({})).await;
    assert_eq!(
        list["resources"],
        json!([
            {
                "uri": "docs://changelog",
                "name": "changelog",
                "title": "Changelog",
                "description": "The changelog, annotated.",
                "mimeType": "text/markdown",
                "size": 11,
                "icons": [{"src": "https://example.com/log.png", "mimeType": "image/png", "sizes": ["48x48"]}],
                "annotations": {"audience": ["user", "assistant"], "priority": 0.8, "lastModified": "2025-01-12T15:00:58Z"},
                "_meta": {"com.example/source": "git"}
            },
            {"uri": "docs://readme", "name": "readme", "title": "Readme", "description": "The readme.", "mimeType": "text/markdown"},
            {"uri": "docs://logo", "name": "logo.png", "description": "The logo.", "mimeType": "image/png"},
            {"uri": "notes://all", "name": "all", "description": "All notes.", "mimeType": "text/plain"}
        ])
    );
    let templates = c.result("resources/templates/list", json!({})).await;
    assert_eq!(
        templates["resourceTemplates"],
        json!([
            {
                "uriTemplate": "docs://releases/{version}",
                "name": "release",
                "description": "A release note, annotated.",
                "mimeType": "text/markdown",
                "icons": [{"src": "https://example.com/release.png"}],
                "annotations": {"audience": ["assistant"], "priority": 0},
                "_meta": {"stable": true}
            },
            {"uriTemplate": "file:///{+path}", "name": "file", "description": "A file."},
            {"uriTemplate": "repo://{owner}/{name}{?rev}", "name": "repository", "description": "A repository at a revision."},
            {"uriTemplate": "notes://{index}", "name": "one", "description": "One note."}
        ])
    );
    let read = c.result("resources/read", json!({"uri": "docs://changelog"})).await;
    assert_eq!(
        read["contents"],
        json!([{"uri": "docs://changelog", "mimeType": "text/markdown", "text": "# Changelog"}])
    );
    let read = c.result("resources/read", json!({"uri": "docs://releases/1.2"})).await;
    assert_eq!(
        read["contents"],
        json!([{"uri": "docs://releases/1.2", "mimeType": "text/markdown", "text": "# Release 1.2"}])
    );
    let read = c.result("resources/read", json!({"uri": "docs://readme"})).await;
    assert_eq!(read["contents"], json!([{"uri": "docs://readme", "mimeType": "text/markdown", "text": "# Readme"}]));
    let read = c.result("resources/read", json!({"uri": "docs://logo"})).await;
    assert_eq!(read["contents"], json!([{"uri": "docs://logo", "mimeType": "image/png", "blob": "iVBORw=="}]));
    let read = c.result("resources/read", json!({"uri": "file:///a/b.txt"})).await;
    assert_eq!(read["contents"], json!([{"uri": "file:///a/b.txt", "text": "contents of a/b.txt"}]));
    let read = c.result("resources/read", json!({"uri": "repo://rust-lang/rust?rev=abc"})).await;
    assert_eq!(read["contents"][0]["text"], "rust-lang/rust at abc");
    let read = c.result("resources/read", json!({"uri": "repo://rust-lang/cargo"})).await;
    assert_eq!(read["contents"][0]["text"], "rust-lang/cargo at HEAD");
    let e = c.error("resources/read", json!({"uri": "file:///secret/key"})).await;
    assert_eq!(
        (e["code"].clone(), e["message"].clone()),
        (json!(-32603), json!("internal error: secret/key is secret"))
    );
    let done = c
        .result(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "file:///{+path}"}, "argument": {"name": "path", "value": "src/"}}),
        )
        .await;
    assert_eq!(done["completion"]["values"], json!(["src/lib.rs", "src/main.rs"]));
}

/// The names, as they are: a list (2026-07-28 allows output schemas that are not objects).
#[tool]
fn names() -> mcp_sdk::server::Json<Vec<String>> {
    mcp_sdk::server::Json(vec!["ada".to_owned(), "grace".to_owned()])
}

/// A string as structured content rather than text.
#[tool]
fn motto() -> mcp_sdk::server::Json<String> {
    mcp_sdk::server::Json("less is more".to_owned())
}

#[tokio::test]
async fn json_outputs_keep_their_own_schema_and_older_revisions_see_them_wrapped() {
    let def = names::tool();
    let schema = def.definition().output_schema.clone().map(Value::Object);
    assert_eq!(schema, Some(json!({"type": "array", "items": {"type": "string"}})));
    assert_eq!(motto::tool().definition().output_schema.clone().map(Value::Object), Some(json!({"type": "string"})));
    let server = Server::builder("json", "1").check_structured_content(true).tool(def).tool(motto::tool()).build();
    let server = server.unwrap();
    let envelope = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let (a, b) = memory(16);
    server.connect(a);
    let mut c = Session::new(Wire::new(b), "2026-07-28");
    let r = c.result("tools/call", json!({"name": "names", "_meta": envelope})).await;
    assert_eq!(
        (&r["content"], &r["structuredContent"]),
        (&json!([{"type": "text", "text": "[\"ada\",\"grace\"]"}]), &json!(["ada", "grace"]))
    );
    let r = c.result("tools/call", json!({"name": "motto", "_meta": envelope})).await;
    assert_eq!(r["structuredContent"], json!("less is more"));

    let (a, b) = memory(16);
    server.connect(a);
    let mut c = Session::new(Wire::new(b), "2025-11-25");
    let init =
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    c.result("initialize", init).await;
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let listed = c.result("tools/list", json!({})).await;
    assert_eq!(
        listed["tools"][0]["outputSchema"],
        json!({"type": "object", "properties": {"result": {"type": "array", "items": {"type": "string"}}}, "required": ["result"]})
    );
    let r = c.result("tools/call", json!({"name": "names"})).await;
    assert_eq!(r["structuredContent"], json!({"result": ["ada", "grace"]}));
}

#[tokio::test]
async fn prompt_arguments_come_from_a_struct() {
    let (server, _) = server();
    let mut c = Client::connect(&server).await;
    let list = c.result("prompts/list", json!({})).await;
    assert_eq!(
        list["prompts"][1],
        json!({
            "name": "struct_review",
            "title": "Struct review",
            "description": "Reviews code, its arguments from a struct.",
            "icons": [{"src": "https://example.com/review.png"}],
            "_meta": {"com.example/owner": "reviews", "version": 2, "tags": ["code", "review"]},
            "arguments": [
                {"name": "code", "description": "The code to review.", "required": true},
                {"name": "maxIssues", "description": "How many issues to list at most.", "required": false},
                {"name": "strict", "title": "Strictness", "description": "Whether to be strict.", "required": false},
                {"name": "language", "description": "the language it is written in", "required": false}
            ]
        })
    );
    let get = |arguments: Value| json!({"name": "struct_review", "arguments": arguments});
    let got = c
        .result("prompts/get", get(json!({"code": "x = 1", "maxIssues": "2", "strict": "true", "language": "python"})))
        .await;
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "Review this python code strictly, listing at most 2 issues:\nx = 1"
    );
    let got = c.result("prompts/get", get(json!({"code": "y"}))).await;
    assert_eq!(got["messages"][0]["content"]["text"], "Review this unknown code, listing at most 5 issues:\ny");

    // A missing required argument, and values that do not parse as their fields: -32602.
    let e = c.error("prompts/get", get(json!({"maxIssues": "2"}))).await;
    assert_eq!(e["code"], -32602);
    assert!(e["message"].as_str().unwrap().contains("needs the argument(s): code"), "{e}");
    let e = c.error("prompts/get", get(json!({"code": "x", "maxIssues": "many"}))).await;
    assert_eq!(e["code"], -32602);
    assert!(
        e["message"].as_str().unwrap().contains("argument `maxIssues`: expected a non-negative integer, got `many`"),
        "{e}"
    );
    let e = c.error("prompts/get", get(json!({"code": "x", "strict": "very"}))).await;
    assert!(e["message"].as_str().unwrap().contains("argument `strict`: expected `true` or `false`"), "{e}");

    // A field of the struct can be completed.
    let complete =
        json!({"ref": {"type": "ref/prompt", "name": "struct_review"}, "argument": {"name": "maxIssues", "value": ""}});
    assert_eq!(c.result("completion/complete", complete).await["completion"]["values"], json!(["1", "2", "3"]));
}

#[tokio::test]
async fn a_tool_carries_its_meta() {
    let c = listed_tools().await;
    assert_eq!(c.tool("meta_tool")["_meta"], json!({"com.example/cost": 0.5, "nested": {"a": [1, 2]}}));
}

/// A prompt whose argument is not a struct of named fields, nor a string or a scalar the
/// macro refuses at compile time.
#[prompt]
fn unit_args(args: (), other: Option<String>) -> String {
    let () = args;
    other.unwrap_or_default()
}

#[test]
#[should_panic(expected = "invalid arguments of prompt `unit_args`: `null` is not a struct with named fields")]
fn a_prompt_argument_that_is_no_struct_fails_when_defined() {
    let _ = unit_args::prompt();
}

/// Completes an argument it does not have (a typo the macro cannot see, since arguments may
/// be fields of a struct).
#[prompt(complete(nmae = counts))]
fn typo(name: String) -> String {
    name
}

#[test]
fn a_completer_of_no_argument_is_refused_when_the_server_is_built() {
    let err = Server::builder("s", "1").prompt(typo::prompt()).build().unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid arguments of prompt `typo`: a completer names `nmae`, which is not an argument"
    );
}
