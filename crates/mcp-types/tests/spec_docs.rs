//! Checks that the JSON examples in the MCP specification text parse into our types and
//! serialize back unchanged, for every protocol revision.
//!
//! The examples are the ` ```json ` / ` ```jsonc ` code blocks of the specification's `.mdx`
//! pages, vendored in `tests/spec-examples/<revision>.json` (see the README there). A normal run
//! reads only those files. `MCP_REGEN_SPEC_EXAMPLES=1 cargo test -p mcp-types --test spec_docs`
//! rewrites them from the `.mdx` sources in `../shared/spec/docs/<revision>/` beside the
//! repository (or in `$MCP_SPEC_DOCS_DIR/<revision>/`). Run with `-- --nocapture` to see the
//! counts and the skipped blocks; `MCP_SPEC_EXAMPLES_VERBOSE=1` also lists every checked block
//! with the definition it was checked as.
//!
//! Every block is classified, mechanically and driven by that revision's `schema.json`:
//!
//! * **not JSON in spec**: the block does not parse (comments, `...` placeholders): skipped.
//! * **request / notification** (has `"method"`): the definition whose `properties.method.const`
//!   is the method (the `Client*`/`Server*` unions aside). The message is checked as a whole,
//!   less the envelope members (`jsonrpc`, `id`) that definition does not declare, so its
//!   `params` are checked too.
//! * **result response** (`"result"` and `"id"`/`"jsonrpc"`): paired with the request block of the
//!   same `id` earlier in the same page, or else the nearest earlier request. `FooRequest` gives
//!   `FooResult`, or `EmptyResult` when the schema has no such definition (ping, setLevel,
//!   subscribe). Alternatives: `CreateTaskResult` when the request's params carry `task`, and the
//!   members of `FooResultResponse.result`'s `anyOf` (2026-07-28's `InputRequiredResult`). The
//!   first of those the result validates against is checked.
//! * **error response** (`"error"` and `"id"`/`"jsonrpc"`): the error object as `Error`, or the
//!   whole message as `JSONRPCErrorResponse` / `JSONRPCError`, the first the registry has.
//! * **capabilities fragment** (`{"capabilities": {...}}`): the inner object as
//!   `ClientCapabilities` or `ServerCapabilities`, ranked as fragments below.
//! * **`_meta` entry** (`{"_meta": {"io.modelcontextprotocol/x": V}}` or `{"<ns>/x": V}`): `V`
//!   as the one definition that the schema's properties of that name refer to (2026-07-28's
//!   per-request `clientCapabilities`).
//! * **other object fragment**: candidates are the object definitions (no `method`/`jsonrpc`
//!   member) that declare every key of the block and whose required keys the block has. They
//!   are ranked by how many of the block's keys they declare at any depth (through `$ref`s,
//!   `anyOf`, `items`), then valid before invalid, then by how many words of their name
//!   occur in the page's path (`client/sampling.mdx` favours `SamplingMessage` over
//!   `PromptMessage`), then fewest properties, then name. When no definition fits, a map
//!   definition (only `additionalProperties`, e.g. `InputRequests`) that declares some of the
//!   block's nested keys is taken. Nothing: skipped as "no schema definition matches this
//!   fragment", naming the closest definition and why it does not fit.
//! * **not a JSON object** (e.g. an array of roots): skipped.
//!
//! Each checked block is first validated with `jsonschema` against its definition in that
//! revision's schema; an example that is invalid there is skipped as "spec example violates its
//! own schema". Then the registry's `roundtrip` must give back exactly the input. All
//! failures are reported together; skipped blocks are counted and listed with their reasons,
//! and the test fails if fewer blocks than [`FLOORS`] are checked.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

mod support;

use mcp_types::__registry;
use mcp_types::ProtocolVersion;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Set to `1` to rewrite the vendored examples from the specification's `.mdx` pages.
const REGEN_ENV: &str = "MCP_REGEN_SPEC_EXAMPLES";
/// Set to `1` to list every checked block with the definition it was checked as.
const VERBOSE_ENV: &str = "MCP_SPEC_EXAMPLES_VERBOSE";
/// Overrides the folder holding `<revision>/**/*.mdx` (default: `../shared/spec/docs`).
const DOCS_ENV: &str = "MCP_SPEC_DOCS_DIR";

/// The fewest blocks per revision that must be checked (classified, schema-valid, round-tripped);
/// set from the counts when this test was written, so that it cannot silently check nothing.
const FLOORS: [(ProtocolVersion, usize); 5] = [
    (ProtocolVersion::V2024_11_05, 59),
    (ProtocolVersion::V2025_03_26, 63),
    (ProtocolVersion::V2025_06_18, 77),
    (ProtocolVersion::V2025_11_25, 114),
    (ProtocolVersion::V2026_07_28, 92),
];

const NOT_JSON: &str = "not JSON in spec";
const VIOLATES_SCHEMA: &str = "spec example violates its own schema";
const NO_MATCH: &str = "no schema definition matches this fragment";
const NOT_OBJECT: &str = "not a JSON object";
const UNKNOWN_METHOD: &str = "method not defined in this revision's schema";
const UNPAIRED: &str = "response without a request to pair with";

// ---------------------------------------------------------------------------------------------
// Vendored data and its extraction from the .mdx pages.

/// One revision's vendored examples: `tests/spec-examples/<revision>.json`.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Vendored {
    revision: String,
    origin: String,
    blocks: Vec<Block>,
}

/// One ` ```json ` code block of a specification page.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Block {
    /// The page, relative to the revision's folder, with `/` separators.
    file: String,
    /// The block's position among the page's JSON blocks, from 0.
    index: usize,
    /// The 1-based line of the opening fence.
    line: usize,
    /// The nearest heading above the block.
    section: String,
    /// The fence's language: `json` or `jsonc`.
    lang: String,
    /// The block, when it is valid JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    json: Option<Value>,
    /// The block's text, when it is not valid JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn vendored_path(rev: ProtocolVersion) -> PathBuf {
    crate_dir().join("tests/spec-examples").join(format!("{}.json", rev.as_str()))
}

fn docs_dir() -> PathBuf {
    match std::env::var_os(DOCS_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => crate_dir().join("../../../shared/spec/docs"),
    }
}

/// The JSON code blocks of one `.mdx` page, in order.
fn extract_mdx(file: &str, src: &str) -> Vec<Block> {
    let lines: Vec<&str> = src.lines().collect();
    let mut blocks = Vec::new();
    let mut section = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            let indent = line.len() - trimmed.len();
            let lang = info.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
            let mut end = i + 1;
            while end < lines.len() && lines[end].trim() != "```" {
                end += 1;
            }
            if lang == "json" || lang == "jsonc" {
                let body: Vec<&str> = lines[i + 1..end].iter().map(|l| strip_indent(l, indent)).collect();
                let body = body.join("\n");
                let (json, text) = match serde_json::from_str::<Value>(&body) {
                    Ok(v) => (Some(v), None),
                    Err(_) => (None, Some(body)),
                };
                blocks.push(Block {
                    file: file.to_owned(),
                    index: blocks.len(),
                    line: i + 1,
                    section: section.clone(),
                    lang,
                    json,
                    text,
                });
            }
            i = end + 1;
            continue;
        }
        let hashes = line.len() - line.trim_start_matches('#').len();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            section = line[hashes..].trim().to_owned();
        }
        i += 1;
    }
    blocks
}

/// Removes up to `n` leading blanks (the indentation of a fence nested in a list).
fn strip_indent(line: &str, n: usize) -> &str {
    let blanks = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[blanks.min(n)..]
}

/// Every `.mdx` page under `dir`, as paths relative to it, sorted.
fn mdx_files(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "mdx") {
                let rel = path.strip_prefix(root).expect("under root");
                let parts: Vec<_> = rel.iter().map(|p| p.to_string_lossy()).collect();
                out.push(parts.join("/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Extracts a revision's examples from its `.mdx` pages.
fn extract_revision(docs: &Path, rev: ProtocolVersion) -> Vendored {
    let dir = docs.join(rev.as_str());
    let mut blocks = Vec::new();
    for file in mdx_files(&dir) {
        let src = std::fs::read_to_string(dir.join(&file)).expect("read .mdx page");
        blocks.extend(extract_mdx(&file, &src));
    }
    Vendored {
        revision: rev.as_str().to_owned(),
        origin: format!("modelcontextprotocol/modelcontextprotocol, specification text of revision {}", rev.as_str()),
        blocks,
    }
}

fn render_vendored(v: &Vendored) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("serialize");
    s.push('\n');
    s
}

/// Regenerates the vendored files when asked to; otherwise notes (without failing) when they
/// differ from the `.mdx` sources that happen to be present.
fn sync_vendored() {
    let docs = docs_dir();
    let regen = std::env::var(REGEN_ENV).is_ok_and(|v| v == "1");
    if !docs.is_dir() {
        assert!(!regen, "{REGEN_ENV}=1 needs the specification pages in {} (or ${DOCS_ENV})", docs.display());
        return;
    }
    for rev in ProtocolVersion::ALL {
        let fresh = render_vendored(&extract_revision(&docs, rev));
        let path = vendored_path(rev);
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        if old == fresh {
            continue;
        }
        if regen {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("create dir");
            std::fs::write(&path, fresh).expect("write vendored examples");
            println!("rewrote {}", path.display());
        } else {
            println!(
                "note: {} differs from {}; rerun with {REGEN_ENV}=1 to update it",
                path.display(),
                docs.join(rev.as_str()).display()
            );
        }
    }
}

fn load_vendored(rev: ProtocolVersion) -> Vendored {
    let path = vendored_path(rev);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run with {REGEN_ENV}=1 to create it", path.display()));
    let v: Vendored = serde_json::from_str(&text).expect("vendored examples parse");
    assert_eq!(v.revision, rev.as_str(), "{}", path.display());
    v
}

// ---------------------------------------------------------------------------------------------
// The revision's schema.

struct Schema {
    rev: ProtocolVersion,
    root: Value,
    defs_key: &'static str,
    draft7: bool,
    validators: HashMap<String, jsonschema::Validator>,
}

impl Schema {
    fn load(rev: ProtocolVersion) -> Schema {
        let path = crate_dir().join("schema").join(rev.as_str()).join("schema.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let root: Value = serde_json::from_str(&text).expect("schema parses");
        let defs_key = if root.get("$defs").is_some() { "$defs" } else { "definitions" };
        let dialect = root["$schema"].as_str().unwrap_or_default();
        let draft7 = dialect.contains("draft-07");
        assert!(draft7 || dialect.contains("2020-12"), "{rev}: unexpected dialect {dialect}");
        Schema { rev, root, defs_key, draft7, validators: HashMap::new() }
    }

    fn defs(&self) -> &Map<String, Value> {
        self.root[self.defs_key].as_object().expect("definitions")
    }

    fn has(&self, name: &str) -> bool {
        self.defs().contains_key(name)
    }

    /// Follows `$ref`s to a definition.
    fn resolve<'a>(&'a self, mut s: &'a Value) -> &'a Value {
        for _ in 0..16 {
            match s.get("$ref").and_then(Value::as_str) {
                Some(r) => match r.rsplit('/').next().and_then(|n| self.defs().get(n)) {
                    Some(target) => s = target,
                    None => return s,
                },
                None => return s,
            }
        }
        s
    }

    fn properties(&self, name: &str) -> Option<&Map<String, Value>> {
        self.resolve(&self.defs()[name]).get("properties")?.as_object()
    }

    /// The request or notification definition of a method.
    fn method_def(&self, method: &str) -> Result<String, String> {
        let mut names: Vec<&String> =
            self.defs().iter().filter(|(_, d)| d["properties"]["method"]["const"] == method).map(|(n, _)| n).collect();
        if names.len() > 1 {
            names.retain(|n| !n.starts_with("Client") && !n.starts_with("Server"));
        }
        match names.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(format!("no definition has method `{method}`")),
            many => Err(format!("several definitions have method `{method}`: {many:?}")),
        }
    }

    /// The one definition that properties named `key` refer to, if they all agree.
    fn property_def(&self, key: &str) -> Option<String> {
        let mut targets: Vec<&str> = self
            .defs()
            .values()
            .filter_map(|d| d["properties"][key]["$ref"].as_str())
            .filter_map(|r| r.rsplit('/').next())
            .collect();
        targets.sort_unstable();
        targets.dedup();
        match targets.as_slice() {
            [one] => Some((*one).to_owned()),
            _ => None,
        }
    }

    /// Candidate result definitions for a request definition, in order of preference.
    fn result_defs(&self, request_def: &str, params: Option<&Value>) -> Vec<String> {
        let base = request_def.strip_suffix("Request").unwrap_or(request_def);
        let mut out = Vec::new();
        if params.is_some_and(|p| p.get("task").is_some()) && self.has("CreateTaskResult") {
            out.push("CreateTaskResult".to_owned());
        }
        let own = format!("{base}Result");
        if self.has(&own) {
            out.push(own);
        } else if self.has("EmptyResult") {
            out.push("EmptyResult".to_owned());
        } else {
            out.push("Result".to_owned());
        }
        if let Some(any_of) = self
            .defs()
            .get(&format!("{base}ResultResponse"))
            .and_then(|d| d["properties"]["result"]["anyOf"].as_array())
        {
            for alt in any_of {
                if let Some(name) = alt["$ref"].as_str().and_then(|r| r.rsplit('/').next())
                    && !out.iter().any(|o| o == name)
                {
                    out.push(name.to_owned());
                }
            }
        }
        out
    }

    /// Validates `value` against a definition; the error names the first violation.
    fn validate(&mut self, name: &str, value: &Value) -> Result<(), String> {
        if !self.validators.contains_key(name) {
            let mut schema = self.root.clone();
            schema["$ref"] = Value::String(format!("#/{}/{name}", self.defs_key));
            let built =
                if self.draft7 { jsonschema::draft7::new(&schema) } else { jsonschema::draft202012::new(&schema) };
            let validator = built.unwrap_or_else(|e| panic!("schema for {name}: {e}"));
            self.validators.insert(name.to_owned(), validator);
        }
        let validator = &self.validators[name];
        match validator.iter_errors(value).next() {
            None => Ok(()),
            Some(e) => Err(format!("at `{}`: {e}", e.instance_path())),
        }
    }

    /// How many of `value`'s object keys, at any depth, the schema `s` declares.
    fn coverage(&self, s: &Value, value: &Value, depth: usize) -> usize {
        if depth > 24 {
            return 0;
        }
        let s = self.resolve(s);
        let mut total = 0;
        let mut best_branch = 0;
        for key in ["anyOf", "oneOf"] {
            for branch in s.get(key).and_then(Value::as_array).into_iter().flatten() {
                best_branch = best_branch.max(self.coverage(branch, value, depth + 1));
            }
        }
        for part in s.get("allOf").and_then(Value::as_array).into_iter().flatten() {
            total += self.coverage(part, value, depth + 1);
        }
        match value {
            Value::Object(members) => {
                let props = s.get("properties").and_then(Value::as_object);
                let extra = s.get("additionalProperties").filter(|a| a.is_object());
                for (key, member) in members {
                    if let Some(p) = props.and_then(|p| p.get(key)) {
                        total += 1 + self.coverage(p, member, depth + 1);
                    } else if let Some(extra) = extra {
                        total += self.coverage(extra, member, depth + 1);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item_schema) = s.get("items") {
                    for item in items {
                        total += self.coverage(item_schema, item, depth + 1);
                    }
                }
            }
            _ => {}
        }
        total + best_branch
    }

    /// For the report of an unmatched fragment: the object definition declaring most of its
    /// keys, and why it does not fit.
    fn closest_def(&mut self, value: &Map<String, Value>) -> Option<String> {
        let mut best: Option<(usize, std::cmp::Reverse<usize>, String)> = None;
        for (name, def) in self.defs() {
            let def = self.resolve(def);
            let Some(props) = def.get("properties").and_then(Value::as_object) else {
                continue;
            };
            let declared = value.keys().filter(|k| props.contains_key(*k)).count();
            let key = (declared, std::cmp::Reverse(props.len()), name.clone());
            if declared > 0 && best.as_ref().is_none_or(|b| key > *b) {
                best = Some(key);
            }
        }
        let name = best?.2;
        let def = self.resolve(&self.defs()[&name]);
        let props = def["properties"].as_object().expect("properties");
        let undeclared: Vec<&str> = value.keys().filter(|k| !props.contains_key(*k)).map(String::as_str).collect();
        let missing: Vec<&str> = def
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|r| !value.contains_key(*r))
            .collect();
        let why = if !undeclared.is_empty() {
            format!("does not declare {undeclared:?}")
        } else if !missing.is_empty() {
            format!("requires {missing:?}")
        } else if let Err(e) = self.validate(&name, &Value::Object(value.clone())) {
            format!("rejects it {e}")
        } else {
            "is a message definition".to_owned()
        };
        Some(format!("; closest: {name}, which {why}"))
    }

    /// Ranks the definitions among `names` that fit a fragment; see the module docs.
    fn best_fragment_def(&mut self, names: &[String], value: &Map<String, Value>, file: &str) -> Option<String> {
        let path_words: Vec<String> = file.trim_end_matches(".mdx").split(['/', '-', '_']).map(singular).collect();
        let whole = Value::Object(value.clone());
        let mut ranked = Vec::new();
        let mut maps = Vec::new();
        for name in names {
            let def = self.resolve(&self.defs()[name.as_str()]);
            let coverage = self.coverage(def, &whole, 0);
            let Some(props) = def.get("properties").and_then(Value::as_object) else {
                // A map (`additionalProperties` only), e.g. `InputRequests`: a fallback.
                if def.get("additionalProperties").is_some_and(Value::is_object) && coverage > 0 {
                    maps.push((std::cmp::Reverse(coverage), name.clone()));
                }
                continue;
            };
            if props.contains_key("method") || props.contains_key("jsonrpc") {
                continue;
            }
            if !value.keys().all(|k| props.contains_key(k)) {
                continue;
            }
            let required = def.get("required").and_then(Value::as_array);
            if !required.into_iter().flatten().all(|r| r.as_str().is_some_and(|r| value.contains_key(r))) {
                continue;
            }
            let n_props = props.len();
            let affinity = camel_words(name).iter().filter(|w| path_words.contains(w)).count();
            let valid = self.validate(name, &whole).is_ok();
            ranked.push((
                std::cmp::Reverse(coverage),
                std::cmp::Reverse(valid),
                std::cmp::Reverse(affinity),
                n_props,
                name.clone(),
            ));
        }
        ranked.sort();
        maps.sort();
        let best = ranked.into_iter().next().map(|r| r.4);
        best.or_else(|| maps.into_iter().next().map(|m| m.1))
    }
}

fn singular(word: &str) -> String {
    let w = word.to_ascii_lowercase();
    w.strip_suffix('s').map(str::to_owned).unwrap_or(w)
}

fn camel_words(name: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && prev_lower || words.is_empty() {
            words.push(String::new());
        }
        prev_lower = c.is_ascii_lowercase();
        words.last_mut().expect("a word").push(c);
    }
    words.iter().map(|w| singular(w)).collect()
}

// ---------------------------------------------------------------------------------------------
// Classification.

/// What a block is checked as.
struct Check {
    def: String,
    /// What the block was taken for, for the report.
    kind: String,
    value: Value,
}

/// Why a block is not checked.
struct Skip {
    reason: &'static str,
    detail: String,
}

fn skip(reason: &'static str, detail: impl Into<String>) -> Skip {
    Skip { reason, detail: detail.into() }
}

/// A request seen earlier in the page, for pairing responses.
struct SeenRequest {
    id: Value,
    method: String,
    def: Option<String>,
    params: Option<Value>,
}

/// The single entry of `{"_meta": {"<prefix>/<name>": ...}}` or `{"<prefix>/<name>": ...}`.
fn meta_entry(obj: &Map<String, Value>) -> Option<(&str, &Value)> {
    let obj = match obj.get("_meta") {
        Some(Value::Object(meta)) if obj.len() == 1 => meta,
        _ => obj,
    };
    match obj.iter().next() {
        Some((key, value)) if obj.len() == 1 && key.contains('/') => Some((key, value)),
        _ => None,
    }
}

fn is_response(obj: &Map<String, Value>) -> bool {
    obj.contains_key("id") || obj.contains_key("jsonrpc")
}

fn classify(schema: &mut Schema, block: &Block, seen: &mut Vec<SeenRequest>) -> Result<Check, Skip> {
    let Some(json) = &block.json else {
        return Err(skip(NOT_JSON, first_line_with_problem(block)));
    };
    let Value::Object(obj) = json else {
        return Err(skip(NOT_OBJECT, kind_of(json)));
    };
    if let Some(method) = obj.get("method") {
        let method = method.as_str().unwrap_or_default().to_owned();
        let def = schema.method_def(&method);
        if let Some(id) = obj.get("id") {
            seen.push(SeenRequest {
                id: id.clone(),
                method: method.clone(),
                def: def.as_ref().ok().cloned(),
                params: obj.get("params").cloned(),
            });
        }
        let def = def.map_err(|e| skip(UNKNOWN_METHOD, e))?;
        let props = schema.properties(&def).cloned().unwrap_or_default();
        let mut value = obj.clone();
        value.retain(|k, _| !(k == "jsonrpc" || k == "id") || props.contains_key(k));
        return Ok(Check { def, kind: format!("message `{method}`"), value: Value::Object(value) });
    }
    if let Some(result) = obj.get("result").filter(|_| is_response(obj)) {
        let id = obj.get("id");
        let request = seen
            .iter()
            .rev()
            .find(|r| Some(&r.id) == id)
            .or_else(|| seen.last())
            .ok_or_else(|| skip(UNPAIRED, "no request block earlier in the page"))?;
        let Some(request_def) = &request.def else {
            return Err(skip(UNKNOWN_METHOD, format!("response to `{}`", request.method)));
        };
        let candidates = schema.result_defs(request_def, request.params.as_ref());
        let def = candidates.iter().find(|c| schema.validate(c, result).is_ok()).unwrap_or(&candidates[0]).clone();
        return Ok(Check { def, kind: format!("result of `{}`", request.method), value: result.clone() });
    }
    if let Some(error) = obj.get("error").filter(|_| is_response(obj)) {
        let candidates = [("Error", error), ("JSONRPCErrorResponse", json), ("JSONRPCError", json)];
        let present: Vec<_> = candidates.iter().filter(|(name, _)| schema.has(name)).collect();
        let (def, value) = present
            .iter()
            .find(|(name, _)| registered(name, schema.rev))
            .or(present.first())
            .ok_or_else(|| skip(NO_MATCH, "no error definition in schema"))?;
        return Ok(Check { def: (*def).to_owned(), kind: "error response".to_owned(), value: (*value).clone() });
    }
    if let (1, Some(Value::Object(caps))) = (obj.len(), obj.get("capabilities")) {
        let names = ["ClientCapabilities", "ServerCapabilities"].map(str::to_owned);
        let def = schema
            .best_fragment_def(&names, caps, &block.file)
            .ok_or_else(|| skip(NO_MATCH, "capabilities fit neither side's definition"))?;
        return Ok(Check { def, kind: "capabilities fragment".to_owned(), value: Value::Object(caps.clone()) });
    }
    if let Some((key, inner)) = meta_entry(obj)
        && let Some(def) = schema.property_def(key)
    {
        return Ok(Check { def, kind: format!("`_meta` entry `{key}`"), value: inner.clone() });
    }
    let names: Vec<String> = schema.defs().keys().cloned().collect();
    let def = schema.best_fragment_def(&names, obj, &block.file).ok_or_else(|| {
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        let closest = schema.closest_def(obj).unwrap_or_default();
        skip(NO_MATCH, format!("keys {keys:?}{closest}"))
    })?;
    Ok(Check { def, kind: "fragment".to_owned(), value: json.clone() })
}

fn registered(name: &str, rev: ProtocolVersion) -> bool {
    __registry::lookup(name, rev).is_some()
}

fn first_line_with_problem(block: &Block) -> String {
    let text = block.text.as_deref().unwrap_or_default();
    match serde_json::from_str::<Value>(text) {
        Ok(_) => String::new(),
        Err(e) => {
            let line = text.lines().nth(e.line().saturating_sub(1)).unwrap_or_default();
            format!("{e}: `{}`", line.trim())
        }
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

// ---------------------------------------------------------------------------------------------
// Comparison.

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 90 {
        let cut: String = s.chars().take(87).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// The differences between the input and the round-tripped output, one line each.
fn diff(path: &str, input: &Value, output: &Value, out: &mut Vec<String>) {
    match (input, output) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let p = format!("{path}/{k}");
                match b.get(k) {
                    Some(vb) => diff(&p, va, vb, out),
                    None => out.push(format!("- {p}: {} (dropped)", short(va))),
                }
            }
            for (k, vb) in b {
                if !a.contains_key(k) {
                    out.push(format!("+ {path}/{k}: {} (added)", short(vb)));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}/{i}"), va, vb, out);
            }
        }
        (a, b) if a != b => {
            let p = if path.is_empty() { "/" } else { path };
            out.push(format!("~ {p}: {} -> {}", short(a), short(b)));
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// The test.

#[derive(Default)]
struct Tally {
    checked: usize,
    passed: usize,
    skipped: BTreeMap<&'static str, usize>,
}

/// What checking the examples of one revision found.
#[derive(Default)]
struct Run {
    blocks: usize,
    tally: Tally,
    /// One line per skipped block, with the reason.
    skipped_list: String,
    /// One line per checked block (when verbose).
    checked_list: String,
    failures: Vec<String>,
}

#[test]
fn spec_examples_round_trip() {
    sync_vendored();
    let verbose = std::env::var(VERBOSE_ENV).is_ok_and(|v| v == "1");
    let runs: Vec<(ProtocolVersion, Run)> =
        ProtocolVersion::ALL.into_iter().map(|rev| (rev, check_revision(rev, verbose))).collect();

    let mut report = String::new();
    for (rev, run) in &runs {
        summarize(&mut report, *rev, run);
    }
    println!("spec examples:\n{report}");
    println!("skipped blocks:\n{}", runs.iter().map(|(_, run)| run.skipped_list.as_str()).collect::<String>());
    if verbose {
        println!("checked blocks:\n{}", runs.iter().map(|(_, run)| run.checked_list.as_str()).collect::<String>());
    }

    let mut below = Vec::new();
    for ((rev, run), (floor_rev, floor)) in runs.iter().zip(FLOORS) {
        assert_eq!(*rev, floor_rev);
        if run.tally.checked < floor {
            below.push(format!("{rev}: {} checked, floor {floor}", run.tally.checked));
        }
    }
    assert!(below.is_empty(), "fewer spec examples checked than the floor:\n{}", below.join("\n"));
    let failures: Vec<&String> = runs.iter().flat_map(|(_, run)| &run.failures).collect();
    assert!(
        failures.is_empty(),
        "{} spec examples do not round-trip:\n  {}\n\n{report}",
        failures.len(),
        failures.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("\n  ")
    );
}

/// Classifies every example block of `rev`, validates it against the schema and round-trips
/// it through its Rust type.
fn check_revision(rev: ProtocolVersion, verbose: bool) -> Run {
    let vendored = load_vendored(rev);
    let mut schema = Schema::load(rev);
    let mut run = Run { blocks: vendored.blocks.len(), ..Run::default() };
    let mut seen: Vec<SeenRequest> = Vec::new();
    let mut page = String::new();

    for block in &vendored.blocks {
        if block.file != page {
            page.clone_from(&block.file);
            seen.clear();
        }
        let at = format!("{rev} {}#{} (line {}, \"{}\")", block.file, block.index, block.line, block.section);
        let check = classify(&mut schema, block, &mut seen).and_then(|c| match schema.validate(&c.def, &c.value) {
            Ok(()) => Ok(c),
            Err(e) => Err(skip(VIOLATES_SCHEMA, format!("as {} ({}): {e}", c.def, c.kind))),
        });
        let check = match check {
            Ok(check) => check,
            Err(s) => {
                *run.tally.skipped.entry(s.reason).or_default() += 1;
                let _ = writeln!(run.skipped_list, "  {at}: {}: {}", s.reason, s.detail);
                continue;
            }
        };
        run.tally.checked += 1;
        let what = format!("{at}: {} as {}", check.kind, check.def);
        if verbose {
            let _ = writeln!(run.checked_list, "  {what}");
        }
        match round_trip(rev, &check, &what) {
            Ok(()) => run.tally.passed += 1,
            Err(failure) => run.failures.push(failure),
        }
    }
    run
}

/// Decodes a checked example as its Rust type and encodes it again for `rev`: the result must
/// be the example, less the members the schema does not declare (dropped by design).
fn round_trip(rev: ProtocolVersion, check: &Check, what: &str) -> Result<(), String> {
    let Some(ty) = __registry::lookup(&check.def, rev) else {
        return Err(format!("{what}: no registry entry for `{}`", check.def));
    };
    let expected = support::schema(rev.as_str()).declared(&check.def, &check.value);
    match (ty.roundtrip)(check.value.clone(), rev.only()) {
        Err(e) => Err(format!("{what} ({}): does not deserialize: {e}", ty.rust_type)),
        Ok(out) if out == expected => Ok(()),
        Ok(out) => {
            let mut lines = Vec::new();
            diff("", &expected, &out, &mut lines);
            Err(format!("{what} ({}): round trip differs:\n      {}", ty.rust_type, lines.join("\n      ")))
        }
    }
}

/// The report's lines for one revision: blocks, checked, passed, failed, skipped by reason.
fn summarize(report: &mut String, rev: ProtocolVersion, run: &Run) {
    let tally = &run.tally;
    let skipped: usize = tally.skipped.values().sum();
    let _ = writeln!(
        report,
        "{rev}: {} blocks, {} checked ({} passed, {} failed), {skipped} skipped",
        run.blocks,
        tally.checked,
        tally.passed,
        tally.checked - tally.passed,
    );
    for (reason, n) in &tally.skipped {
        let _ = writeln!(report, "    skipped {n:3}: {reason}");
    }
}

#[test]
fn extraction_reads_fenced_json_blocks() {
    let mdx = "\
# Title
## Capabilities

```json
{\"a\": 1}
```

```typescript
const x = 1;
```

1. Nested:
   ```jsonc
   {
     // comment
     \"b\": 2
   }
   ```
### Next
```json
[1, 2]
```
";
    let blocks = extract_mdx("server/x.mdx", mdx);
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[0].json, Some(serde_json::json!({"a": 1})));
    assert_eq!(blocks[0].section, "Capabilities");
    assert_eq!(blocks[0].line, 4);
    assert_eq!(blocks[1].lang, "jsonc");
    assert_eq!(blocks[1].json, None);
    assert_eq!(blocks[1].text.as_deref(), Some("{\n  // comment\n  \"b\": 2\n}"));
    assert_eq!(blocks[2].index, 2);
    assert_eq!(blocks[2].section, "Next");
}
