//! `mcp check`: a quick self-test of any server, printed as a report (a linter for server
//! authors).
//!
//! The checks, in order: the handshake at each of the five revisions (what the server
//! negotiates when asked for each; 2026-07-28 through `server/discover`); then, on one
//! connection (the newest revision, or `--protocol`): every list the server declares (tools,
//! prompts, resources, resource templates) read page by page (cursors followed, a cursor seen
//! twice or more than [`MAX_PAGES`] pages is a failure, items unique and well-formed); every
//! tool's input schema (and output schema) compiled as a JSON Schema of type object; the
//! answers to bad requests, sent raw (an unknown method: -32601; an unknown tool: an error;
//! params of the wrong type: -32602); and `ping`. Each check is a line PASS, WARN or FAIL with
//! its reason, and a summary ends the report. Exit code 4 when any check failed.

use std::collections::{BTreeMap, HashSet};
use std::process::ExitCode;
use std::time::Duration;

use mcp_sdk::client::{CallOptions, Client, ClientBuilder, ClientError};
use mcp_types::{ProtocolVersion, ServerCapabilities};
use serde::Serialize;
use serde_json::{Value, json};

use crate::cli::{Global, ServerArgs, exit};
use crate::target::{self, Target};

/// The most pages a list may have before it is taken for endless.
pub const MAX_PAGES: usize = 1000;

/// The most items read from one list (all pages together).
const MAX_ITEMS: usize = 100_000;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// As the specification asks.
    Pass,
    /// Allowed, but worth a look (a revision not spoken, an unexpected error code).
    Warn,
    /// Against the specification: clients will break.
    Fail,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// The outcome.
    pub status: Status,
    /// What was checked (`handshake 2025-11-25`, `tools/list`, `tool echo`, ...).
    pub check: String,
    /// Why it came out so.
    pub detail: String,
}

/// The report: the checks in the order they ran.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    /// The server, as it introduced itself on the main connection.
    pub server: Option<Value>,
    /// The checks.
    pub checks: Vec<Check>,
}

impl Report {
    fn add(&mut self, status: Status, check: impl Into<String>, detail: impl Into<String>) {
        self.checks.push(Check { status, check: check.into(), detail: one_line(&detail.into()) });
    }
    fn pass(&mut self, check: impl Into<String>, detail: impl Into<String>) {
        self.add(Status::Pass, check, detail);
    }
    fn warn(&mut self, check: impl Into<String>, detail: impl Into<String>) {
        self.add(Status::Warn, check, detail);
    }
    fn fail(&mut self, check: impl Into<String>, detail: impl Into<String>) {
        self.add(Status::Fail, check, detail);
    }

    /// How many checks came out `status`.
    pub fn count(&self, status: Status) -> usize {
        self.checks.iter().filter(|c| c.status == status).count()
    }

    /// The summary line.
    fn summary(&self) -> String {
        let (pass, warn, fail) = (self.count(Status::Pass), self.count(Status::Warn), self.count(Status::Fail));
        let s = |n: usize| if n == 1 { "" } else { "s" };
        format!("{} checks: {pass} passed, {warn} warning{}, {fail} failed", self.checks.len(), s(warn))
    }

    /// The report as text: one line per check, then the summary (colour only on a terminal).
    fn render(&self, colour: bool) -> String {
        let width = self.checks.iter().map(|c| c.check.chars().count()).max().unwrap_or(0);
        let mut text = String::new();
        for c in &self.checks {
            let style = match c.status {
                Status::Pass => console::Style::new().green(),
                Status::Warn => console::Style::new().yellow(),
                Status::Fail => console::Style::new().red().bold(),
            };
            let label = style.force_styling(colour).apply_to(c.status.label());
            text.push_str(&format!("{label}  {:<width$}  {}\n", c.check, c.detail));
        }
        text.push_str(&self.summary());
        text.push('\n');
        text
    }

    /// The report as JSON, with the summary.
    fn to_json(&self) -> Value {
        json!({
            "server": self.server,
            "checks": self.checks,
            "summary": {"pass": self.count(Status::Pass), "warn": self.count(Status::Warn), "fail": self.count(Status::Fail)},
        })
    }
}

/// The longest detail kept (a server's error message may be a whole document).
const MAX_DETAIL: usize = 400;

/// `text` on one line (runs of whitespace as one space), cut at [`MAX_DETAIL`] characters.
fn one_line(text: &str) -> String {
    let mut line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some((cut, _)) = line.char_indices().nth(MAX_DETAIL) {
        line.truncate(cut);
        line.push_str("...");
    }
    line
}

/// Checks the server; the report on stdout.
pub async fn run(server: ServerArgs, global: &Global) -> ExitCode {
    let target = match target::resolve(global, &server.server).and_then(|t| target::protocol(global).map(|_| t)) {
        Ok(target) => target,
        Err(e) => {
            eprintln!("mcp check: {e:#}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let (report, reached) = check(global, &target).await;
    if global.json {
        println!("{}", serde_json::to_string_pretty(&report.to_json()).unwrap_or_default());
    } else {
        println!("mcp check: {}", describe(&target));
        print!("{}", report.render(console::colors_enabled()));
    }
    if !reached {
        ExitCode::from(exit::CONNECTION)
    } else if report.count(Status::Fail) > 0 {
        ExitCode::from(exit::CHECK_FAILED)
    } else {
        ExitCode::from(exit::OK)
    }
}

/// The server named, in words.
fn describe(target: &Target) -> String {
    match target {
        Target::Url { url, .. } => url.clone(),
        Target::Command { program, args, .. } => {
            std::iter::once(program).chain(args).cloned().collect::<Vec<_>>().join(" ")
        }
    }
}

/// The client `mcp check` connects with.
fn builder() -> ClientBuilder {
    ClientBuilder::new("mcp-check", env!("CARGO_PKG_VERSION"))
}

/// Runs every check; the report, and whether the server could be reached at all.
pub async fn check(global: &Global, target: &Target) -> (Report, bool) {
    let mut report = Report::default();
    handshakes(&mut report, global, target).await;
    let client = match target::connect(global, target, builder()).await {
        Ok(client) => client,
        Err(e) => {
            report.fail("connect", format!("{e:#}"));
            let reached = report.checks.iter().any(|c| c.check.starts_with("handshake") && c.status != Status::Fail);
            return (report, reached);
        }
    };
    let info = client.server_info();
    report.server = Some(
        json!({"name": info.name, "version": info.version, "protocolVersion": client.protocol_version().as_str()}),
    );
    report.pass("connect", format!("{} {} speaks {}", info.name, info.version, client.protocol_version().as_str()));
    let timeout = request_timeout(global);
    let tools = lists(&mut report, &client, timeout).await;
    if let Some(tools) = &tools {
        tool_schemas(&mut report, tools, client.protocol_version()).await;
    }
    bad_requests(&mut report, &client, tools.as_deref(), timeout).await;
    match tokio::time::timeout(timeout, client.ping()).await {
        Ok(Ok(())) if client.protocol_version().is_stateless() => {
            report.pass("ping", "answered (server/discover: 2026-07-28 has no ping)")
        }
        Ok(Ok(())) => report.pass("ping", "answered"),
        Ok(Err(e)) => report.fail("ping", format!("{e:#}")),
        Err(_) => report.fail("ping", format!("no answer in {timeout:?}")),
    }
    let _ = client.close().await;
    (report, true)
}

/// How long one request may take (`--timeout`).
fn request_timeout(global: &Global) -> Duration {
    Duration::from_secs_f64(global.timeout.max(0.001))
}

/// `global` without `--protocol` (the handshakes choose their own revision).
fn unpinned(global: &Global) -> Global {
    Global { protocol: None, ..global.clone() }
}

/// The handshake at each revision: what the server negotiates when asked for it.
async fn handshakes(report: &mut Report, global: &Global, target: &Target) {
    let global = unpinned(global);
    for asked in ProtocolVersion::ALL {
        let name = format!("handshake {}", asked.as_str());
        let how = if asked.is_stateless() { "server/discover" } else { "initialize" };
        match target::connect(&global, target, builder().protocol_version(asked)).await {
            Ok(client) => {
                let got = client.protocol_version();
                let _ = client.close().await;
                if got == asked {
                    report.pass(name, format!("{how}: speaks {}", got.as_str()));
                } else {
                    report.warn(name, format!("{how}: answered {} (does not speak {})", got.as_str(), asked.as_str()));
                }
            }
            Err(e) => handshake_refused(report, name, how, asked, &e),
        }
    }
}

/// A handshake that did not end in a connection: a revision the server does not speak (it
/// named another, or refused the revision as the specification asks), or a failure.
fn handshake_refused(report: &mut Report, name: String, how: &str, asked: ProtocolVersion, e: &anyhow::Error) {
    let client_error = e.downcast_ref::<ClientError>();
    match client_error {
        Some(ClientError::UnsupportedVersion(other)) if looks_like_revision(other) => {
            report.warn(name, format!("{how}: answered {other} (does not speak {})", asked.as_str()))
        }
        Some(ClientError::UnsupportedVersion(other)) => {
            report.warn(name, format!("{how}: does not speak {} ({other})", asked.as_str()))
        }
        Some(ClientError::Remote(error)) if error.code == -32022 || (asked.is_stateless() && error.code == -32601) => {
            report.warn(
                name,
                format!("{how}: refused with {} {} (does not speak {})", error.code, error.message, asked.as_str()),
            )
        }
        _ if asked.is_stateless() && format!("{e:#}").contains("2026-07-28") => {
            report.warn(name, format!("{how}: does not speak {} ({e:#})", asked.as_str()))
        }
        _ => report.fail(name, format!("{how}: {e:#}")),
    }
}

/// Whether `s` is written as a revision (`YYYY-MM-DD`).
fn looks_like_revision(s: &str) -> bool {
    s.len() == 10 && s.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() })
}

/// One of the lists a server may offer.
struct List {
    method: &'static str,
    /// The member of a page that holds the items.
    items: &'static str,
    /// What the items are, in words.
    noun: &'static str,
    /// The member that names an item (unique in the list).
    key: &'static str,
    /// The capability the list needs.
    capability: &'static str,
    /// Whether an item decodes as the protocol's type.
    decodes: fn(&Value) -> Result<(), String>,
}

fn decodes<T: serde::de::DeserializeOwned>(item: &Value) -> Result<(), String> {
    serde_json::from_value::<T>(item.clone()).map(|_| ()).map_err(|e| e.to_string())
}

const LISTS: [List; 4] = [
    List {
        method: "tools/list",
        items: "tools",
        noun: "tools",
        key: "name",
        capability: "tools",
        decodes: decodes::<mcp_types::Tool>,
    },
    List {
        method: "prompts/list",
        items: "prompts",
        noun: "prompts",
        key: "name",
        capability: "prompts",
        decodes: decodes::<mcp_types::Prompt>,
    },
    List {
        method: "resources/list",
        items: "resources",
        noun: "resources",
        key: "uri",
        capability: "resources",
        decodes: decodes::<mcp_types::Resource>,
    },
    List {
        method: "resources/templates/list",
        items: "resourceTemplates",
        noun: "resource templates",
        key: "uriTemplate",
        capability: "resources",
        decodes: decodes::<mcp_types::ResourceTemplate>,
    },
];

fn declares(capabilities: &ServerCapabilities, capability: &str) -> bool {
    match capability {
        "tools" => capabilities.tools.is_some(),
        "prompts" => capabilities.prompts.is_some(),
        _ => capabilities.resources.is_some(),
    }
}

/// Every list the server declares, read to its end; the tools, if it declares them and they
/// could be listed.
async fn lists(report: &mut Report, client: &Client, timeout: Duration) -> Option<Vec<Value>> {
    let mut tools = None;
    for list in &LISTS {
        if !declares(client.server_capabilities(), list.capability) {
            report.pass(list.method, format!("not offered (no `{}` capability)", list.capability));
            continue;
        }
        match read_list(client, list, timeout).await {
            Ok((items, pages)) => {
                let problems = item_problems(list, &items);
                let what =
                    format!("{} {} in {pages} page{}", items.len(), list.noun, if pages == 1 { "" } else { "s" });
                match problems.is_empty() {
                    true => report.pass(list.method, what),
                    false => report.fail(list.method, format!("{what}: {}", problems.join("; "))),
                }
                if list.items == "tools" {
                    tools = Some(items);
                }
            }
            Err(why) => report.fail(list.method, why),
        }
    }
    tools
}

/// All the items of a list, page by page, and the number of pages; why not, if the pages are
/// broken (an error, a page without its items, a cursor seen twice, too many pages).
async fn read_list(client: &Client, list: &List, timeout: Duration) -> Result<(Vec<Value>, usize), String> {
    let mut items = Vec::new();
    let mut cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    for page in 1..=MAX_PAGES {
        let params = cursor.as_ref().map(|c| json!({"cursor": c}));
        let answer = client
            .request_raw_with(list.method, params, CallOptions::default().timeout(timeout))
            .await
            .map_err(|e| format!("page {page}: {e:#}"))?;
        let Some(found) = answer.get(list.items).and_then(Value::as_array) else {
            return Err(format!("page {page} has no `{}` array", list.items));
        };
        items.extend(found.iter().take(MAX_ITEMS.saturating_sub(items.len())).cloned());
        match answer.get("nextCursor") {
            None | Some(Value::Null) => return Ok((items, page)),
            Some(Value::String(next)) if cursors.insert(next.clone()) => cursor = Some(next.clone()),
            Some(Value::String(next)) => {
                return Err(format!("page {page}: the cursor {next:?} came before: the pages loop"));
            }
            Some(other) => return Err(format!("page {page}: nextCursor {other} is not a string")),
        }
        if items.len() >= MAX_ITEMS {
            return Err(format!("more than {MAX_ITEMS} {} after {page} pages", list.items));
        }
    }
    Err(format!("the pages did not end after {MAX_PAGES}: endless?"))
}

/// What is wrong with the items of a list: items that do not decode, or come twice.
fn item_problems(list: &List, items: &[Value]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let key = item.get(list.key).and_then(Value::as_str);
        match key {
            Some(key) => *seen.entry(key).or_default() += 1,
            None => problems.push(format!("item {} has no `{}`", i + 1, list.key)),
        }
        if let Err(e) = (list.decodes)(item) {
            problems.push(format!("{} is malformed: {e}", key.unwrap_or("an item")));
        }
    }
    for (key, n) in seen.into_iter().filter(|(_, n)| *n > 1) {
        problems.push(format!("`{key}` comes {n} times ({} must be unique)", list.key));
    }
    problems.truncate(10);
    problems
}

/// Each tool's name and schemas: a line per tool.
async fn tool_schemas(report: &mut Report, tools: &[Value], version: ProtocolVersion) {
    let tools = tools.to_vec();
    // The schema compiler runs off the runtime (it may block on references), and a panic in
    // it is a failed check rather than a crash.
    let checked =
        tokio::task::spawn_blocking(move || tools.iter().map(|tool| check_tool(tool, version)).collect::<Vec<_>>())
            .await;
    match checked {
        Ok(lines) => report.checks.extend(lines),
        Err(e) => report.fail("tool schemas", format!("the schema compiler failed: {e}")),
    }
}

/// One tool: its name, its input schema, its output schema.
fn check_tool(tool: &Value, version: ProtocolVersion) -> Check {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
    let check = format!("tool {name}");
    let mut fails = Vec::new();
    let mut warns = Vec::new();
    match tool.get("inputSchema") {
        None => fails.push("no inputSchema".to_owned()),
        Some(schema) => fails.extend(schema_problem("inputSchema", schema, true).err()),
    }
    if let Some(schema) = tool.get("outputSchema") {
        // 2026-07-28 allows an output schema of any type; the session revisions, objects.
        fails.extend(schema_problem("outputSchema", schema, !version.is_stateless()).err());
    }
    let valid_name = (1..=128).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if !valid_name {
        warns.push("the name should be 1 to 128 of A-Z a-z 0-9 _ - . (SEP-986)".to_owned());
    }
    let status = if !fails.is_empty() {
        Status::Fail
    } else if !warns.is_empty() {
        Status::Warn
    } else {
        Status::Pass
    };
    let detail = match status {
        Status::Pass => {
            let output = if tool.get("outputSchema").is_some() { " and output schema" } else { "" };
            format!("input schema{output} valid")
        }
        _ => fails.into_iter().chain(warns).collect::<Vec<_>>().join("; "),
    };
    Check { status, check, detail }
}

/// Why `schema` is not a valid JSON Schema (of type object, if `object`).
fn schema_problem(which: &str, schema: &Value, object: bool) -> Result<(), String> {
    if !schema.is_object() {
        return Err(format!("{which} is not a JSON object"));
    }
    if object && schema.get("type") != Some(&json!("object")) {
        return Err(format!(
            "{which} is not of type \"object\" (type: {})",
            schema.get("type").unwrap_or(&Value::Null)
        ));
    }
    jsonschema::validator_for(schema).map(|_| ()).map_err(|e| format!("{which} is not a valid JSON Schema: {e}"))
}

/// What an answer was: a result, or the server's JSON-RPC error, or a failure of the call.
enum Answer {
    Result(Value),
    Error(i64, String),
    Failed(String),
}

async fn send(client: &Client, method: &str, params: Option<Value>, timeout: Duration) -> Answer {
    match client.request_raw_with(method, params, CallOptions::default().timeout(timeout)).await {
        Ok(result) => Answer::Result(result),
        Err(ClientError::Remote(e)) => Answer::Error(e.code, e.message),
        Err(e) => Answer::Failed(format!("{e:#}")),
    }
}

/// The answers to bad requests, sent raw.
async fn bad_requests(report: &mut Report, client: &Client, tools: Option<&[Value]>, timeout: Duration) {
    let check = "error: unknown method";
    match send(client, "mcp-check/no-such-method", Some(json!({})), timeout).await {
        Answer::Error(-32601, message) => report.pass(check, format!("-32601 {message}")),
        Answer::Error(code, message) => report.fail(check, format!("{code} {message}: JSON-RPC asks -32601")),
        Answer::Result(result) => report.fail(check, format!("answered with a result: {result}")),
        Answer::Failed(why) => report.fail(check, why),
    }
    let capabilities = client.server_capabilities();
    if capabilities.tools.is_some() {
        unknown_tool(report, client, timeout).await;
    }
    // Arguments that are not an object, for a name that is a string (over HTTP in 2026-07-28
    // the name travels in the `Mcp-Name` header too, checked before the params).
    let tool = tools.and_then(|t| t.first()).and_then(|t| t.get("name")).and_then(Value::as_str);
    let bad = if capabilities.tools.is_some() {
        Some(("tools/call", json!({"name": tool.unwrap_or("mcp-check-no-such-tool"), "arguments": 42})))
    } else if capabilities.prompts.is_some() {
        Some(("prompts/get", json!({"name": "mcp-check-no-such-prompt", "arguments": 42})))
    } else {
        None
    };
    if let Some((method, params)) = bad {
        let check = "error: bad params";
        let sent = format!("{method} {params}");
        match send(client, method, Some(params), timeout).await {
            Answer::Error(-32602, message) => report.pass(check, format!("{sent}: -32602 {message}")),
            Answer::Error(code, message) => {
                report.warn(check, format!("{sent}: {code} {message}: JSON-RPC asks -32602"))
            }
            Answer::Result(result) => report.fail(check, format!("{sent}: answered with a result: {result}")),
            Answer::Failed(why) => report.fail(check, format!("{sent}: {why}")),
        }
    }
}

/// A call of a tool that does not exist.
async fn unknown_tool(report: &mut Report, client: &Client, timeout: Duration) {
    let check = "error: unknown tool";
    let params = json!({"name": "mcp-check-no-such-tool", "arguments": {}});
    match send(client, "tools/call", Some(params), timeout).await {
        Answer::Error(-32602, message) => report.pass(check, format!("-32602 {message}")),
        Answer::Error(code, message) => report.warn(check, format!("{code} {message}: the specification asks -32602")),
        Answer::Result(result) if result.get("isError") == Some(&json!(true)) => {
            report.warn(check, "a tool error (isError): the specification asks a JSON-RPC error, -32602")
        }
        Answer::Result(result) => report.fail(check, format!("answered with a result: {result}")),
        Answer::Failed(why) => report.fail(check, why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_must_compile_and_be_objects() {
        assert!(
            schema_problem("inputSchema", &json!({"type": "object", "properties": {"a": {"type": "string"}}}), true)
                .is_ok()
        );
        let not_object = schema_problem("inputSchema", &json!({"type": "string"}), true).unwrap_err();
        assert!(not_object.contains("not of type \"object\""), "{not_object}");
        let invalid =
            schema_problem("inputSchema", &json!({"type": "object", "properties": {"a": {"type": 12}}}), true);
        assert!(invalid.unwrap_err().contains("not a valid JSON Schema"));
        assert!(schema_problem("outputSchema", &json!({"type": "array"}), false).is_ok());
    }

    #[test]
    fn a_tool_line_says_what_is_wrong() {
        let v = ProtocolVersion::V2025_11_25;
        let good = check_tool(&json!({"name": "echo", "inputSchema": {"type": "object"}}), v);
        assert_eq!((good.status, good.detail.as_str()), (Status::Pass, "input schema valid"));
        let bad = check_tool(
            &json!({"name": "bad tool", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}}),
            v,
        );
        assert_eq!(bad.status, Status::Fail);
        assert!(bad.detail.contains("outputSchema is not of type") && bad.detail.contains("SEP-986"), "{}", bad.detail);
        let stateless = check_tool(
            &json!({"name": "n", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}}),
            ProtocolVersion::V2026_07_28,
        );
        assert_eq!(stateless.status, Status::Pass);
    }

    #[test]
    fn duplicates_and_malformed_items_are_problems() {
        let items = vec![
            json!({"name": "a", "inputSchema": {"type": "object"}}),
            json!({"name": "a", "inputSchema": {"type": "object"}}),
            json!({"description": "x"}),
        ];
        let problems = item_problems(&LISTS[0], &items);
        assert!(problems.iter().any(|p| p == "`a` comes 2 times (name must be unique)"), "{problems:?}");
        assert!(problems.iter().any(|p| p == "item 3 has no `name`"), "{problems:?}");
    }

    #[test]
    fn the_report_renders_aligned_with_a_summary() {
        let mut report = Report::default();
        report.pass("ping", "answered");
        report.fail("tools/list", "page 1: broken");
        let text = report.render(false);
        assert_eq!(
            text,
            "PASS  ping        answered\nFAIL  tools/list  page 1: broken\n2 checks: 1 passed, 0 warnings, 1 failed\n"
        );
        assert_eq!(report.to_json()["summary"], json!({"pass": 1, "warn": 0, "fail": 1}));
        assert_eq!(report.to_json()["checks"][1]["status"], "fail");
    }
}
