//! Shared helpers of the schema tests: loading the vendored schemas, generating sample instances
//! of their definitions, validating instances, and comparing JSON values.
//!
//! The sample generator walks a definition of a schema and builds JSON instances of it:
//!
//! * a **minimal** one: only the required properties, recursively;
//! * a **full** one: every declared property, recursively (free-form maps get one entry `"k"`);
//! * **variants**: one instance per branch of every union (`anyOf`, `oneOf`, a list of types,
//!   an `enum`), each differing from the minimal or full instance in that one place.
//!
//! Values are distinct but deterministic: strings `"s"`, integers `1`, numbers `0.5` (so they
//! survive a float round trip), booleans `true`, and valid strings for the formats the schemas
//! use. Recursive definitions (`JSONValue`) are cut off at [`MAX_DEPTH`], below which objects
//! get only their required properties and arrays and maps are empty.

#![allow(dead_code)] // every test file uses its own part of this module

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::{Draft, Validator};
use serde_json::{Map, Value, json};

/// Nesting depth (of objects, arrays and maps) below which the generator stops expanding optional
/// properties, array items and map entries, so that recursive definitions terminate.
pub const MAX_DEPTH: usize = 8;

/// Nesting depth below which unions are no longer enumerated (only their first branch is used).
/// Every union is still enumerated in the samples of the definition it belongs to.
pub const VARIANT_DEPTH: usize = 6;

/// The key of the one entry the generator makes up in an object that allows undeclared keys (a
/// free-form map, or an object with `additionalProperties` next to its declared properties).
/// No schema declares a property of this name.
pub const EXTRA_KEY: &str = "k";

/// The most instances the generator produces for one schema node, to bound the sample count.
pub const MAX_VARIANTS: usize = 64;

/// A nesting depth that no finite instance of the vendored schemas reaches: a chain of required
/// properties this deep means the schema requires an infinite instance.
const HARD_DEPTH: usize = 40;

/// Keywords that do not constrain an instance.
const ANNOTATIONS: &[&str] = &["description", "title", "$comment", "default", "examples", "deprecated"];

/// The directory holding one sub-directory per vendored revision (`schema/<rev>/schema.json`).
pub fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema")
}

/// One generated instance of a definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Which instance this is: `minimal`, `full`, `minimal variant 3`, `full variant 7`.
    pub label: String,
    /// The instance.
    pub value: Value,
}

/// A vendored schema document of one revision, with its compiled validators.
pub struct SchemaDoc {
    /// The revision, e.g. `"2025-06-18"`.
    pub rev: String,
    /// The whole document, with the `_meta` of the base `Request` and `Notification` params
    /// given to every request's and notification's params (see [`inherit_base_meta`]): what
    /// samples are generated from and what [`SchemaDoc::declared`] keeps.
    pub doc: Value,
    /// The document as vendored: what instances are validated against.
    pub official: Value,
    /// Where the document keeps its definitions: `definitions` (draft-07) or `$defs` (2020-12).
    defs_key: &'static str,
    draft: Draft,
    validators: Mutex<HashMap<String, Arc<Validator>>>,
}

/// Every vendored schema, keyed by revision, loaded once per test binary.
pub fn schemas() -> &'static BTreeMap<String, SchemaDoc> {
    static DOCS: OnceLock<BTreeMap<String, SchemaDoc>> = OnceLock::new();
    DOCS.get_or_init(|| {
        let dir = schema_dir();
        let mut docs = BTreeMap::new();
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())) {
            let path = entry.expect("directory entry").path().join("schema.json");
            if path.is_file() {
                let doc = SchemaDoc::load(&path);
                docs.insert(doc.rev.clone(), doc);
            }
        }
        assert!(!docs.is_empty(), "no schema.json under {}", dir.display());
        docs
    })
}

/// The vendored schema of revision `rev` (e.g. `"2025-06-18"`); panics if there is none.
pub fn schema(rev: &str) -> &'static SchemaDoc {
    schemas().get(rev).unwrap_or_else(|| panic!("no vendored schema for revision {rev}"))
}

impl SchemaDoc {
    /// `value` without the members that definition `name` does not declare, which the types
    /// drop by design ("unknown members are ignored"). Members are kept where the schema
    /// allows additional properties explicitly, and JSON Schema documents are kept whole.
    pub fn declared(&self, name: &str, value: &Value) -> Value {
        let node = self.doc[self.defs_key][name].clone();
        self.project(&node, value, 0)
    }

    fn follow<'a>(&'a self, mut node: &'a Value) -> &'a Value {
        for _ in 0..16 {
            match node.get("$ref").and_then(Value::as_str) {
                Some(r) => node = &self.doc[self.defs_key][r.rsplit('/').next().unwrap_or(r)],
                None => break,
            }
        }
        node
    }

    /// How well `value` fits an object schema: `None` when a constant differs, else the
    /// number of its members the schema declares.
    fn fit(&self, node: &Value, value: &Value) -> Option<usize> {
        let node = self.follow(node);
        let Some(obj) = value.as_object() else {
            let t = node.get("type");
            let kind_ok = match value {
                Value::String(_) => {
                    t.is_none_or(|t| t == "string" || t.as_array().is_some_and(|a| a.contains(&"string".into())))
                }
                Value::Array(_) => t.is_none_or(|t| t == "array"),
                _ => true,
            };
            return kind_ok.then_some(0);
        };
        let props = node.get("properties").and_then(Value::as_object);
        let mut known = 0;
        for (k, v) in obj {
            if let Some(p) = props.and_then(|p| p.get(k)) {
                if let Some(c) = self.follow(p).get("const")
                    && c != v
                {
                    return None;
                }
                known += 1;
            }
        }
        Some(known)
    }

    fn project(&self, node: &Value, value: &Value, depth: usize) -> Value {
        let node = self.follow(node);
        if depth > 32 || is_schema_document(value) {
            return value.clone();
        }
        if let Some(parts) = node.get("allOf").and_then(Value::as_array) {
            let mut props = Map::new();
            let mut additional = None;
            for part in parts {
                let part = self.follow(part);
                if let Some(p) = part.get("properties").and_then(Value::as_object) {
                    props.extend(p.clone());
                }
                if let Some(a) = part.get("additionalProperties") {
                    additional = Some(a.clone());
                }
            }
            let mut merged = serde_json::json!({"type": "object", "properties": props});
            if let Some(a) = additional {
                merged["additionalProperties"] = a;
            }
            return self.project(&merged, value, depth + 1);
        }
        if let Some(branches) = node.get("anyOf").or_else(|| node.get("oneOf")).and_then(Value::as_array) {
            let best = branches.iter().filter_map(|b| self.fit(b, value).map(|score| (score, b))).fold(
                None::<(usize, &Value)>,
                |acc, (score, b)| match acc {
                    Some((s, _)) if s >= score => acc,
                    _ => Some((score, b)),
                },
            );
            return match best {
                Some((_, b)) => self.project(b, value, depth + 1),
                None => value.clone(),
            };
        }
        match value {
            Value::Object(m) => {
                let props = node.get("properties").and_then(Value::as_object);
                let additional = node.get("additionalProperties");
                if props.is_none() && additional.is_none() {
                    return value.clone(); // a free-form object
                }
                let mut out = Map::new();
                for (k, v) in m {
                    if let Some(p) = props.and_then(|p| p.get(k)) {
                        out.insert(k.clone(), self.project(p, v, depth + 1));
                    } else {
                        match additional {
                            Some(Value::Bool(false)) | None => {}
                            Some(a @ Value::Object(o)) if !o.is_empty() => {
                                out.insert(k.clone(), self.project(a, v, depth + 1));
                            }
                            Some(_) => {
                                out.insert(k.clone(), v.clone());
                            }
                        }
                    }
                }
                Value::Object(out)
            }
            Value::Array(items) => match node.get("items") {
                Some(item) => Value::Array(items.iter().map(|v| self.project(item, v, depth + 1)).collect()),
                None => value.clone(),
            },
            _ => value.clone(),
        }
    }

    fn load(path: &Path) -> SchemaDoc {
        let rev = path
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .expect("revision directory name")
            .to_owned();
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));
        let dialect = doc["$schema"].as_str().unwrap_or_default();
        let (draft, defs_key) = if dialect.contains("draft-07") {
            (Draft::Draft7, "definitions")
        } else if dialect.contains("2020-12") {
            (Draft::Draft202012, "$defs")
        } else {
            panic!("{}: unsupported $schema {dialect:?}", path.display())
        };
        assert!(doc[defs_key].is_object(), "{}: no `{defs_key}` object", path.display());
        let official = doc.clone();
        let mut doc = doc;
        inherit_base_meta(&mut doc[defs_key]);
        SchemaDoc { rev, doc, official, defs_key, draft, validators: Mutex::new(HashMap::new()) }
    }

    fn defs(&self) -> &Map<String, Value> {
        self.doc[self.defs_key].as_object().expect("checked on load")
    }

    /// The names of every definition, sorted.
    pub fn definition_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.defs().keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// Whether the schema defines `name`.
    pub fn defines(&self, name: &str) -> bool {
        self.defs().contains_key(name)
    }

    /// The JSON pointer reference to definition `name`, e.g. `#/$defs/Tool`.
    pub fn ref_to(&self, name: &str) -> String {
        format!("#/{}/{name}", self.defs_key)
    }

    /// Validates `instance` against definition `name`; the error lists what is wrong where.
    pub fn validate(&self, name: &str, instance: &Value) -> Result<(), String> {
        let validator = self.validator(name);
        let errors: Vec<String> =
            validator.iter_errors(instance).map(|e| format!("at `{}`: {e}", e.instance_path())).collect();
        if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) }
    }

    /// The compiled validator of definition `name`: the whole document (so every reference
    /// resolves) with its root replaced by a reference to the definition.
    fn validator(&self, name: &str) -> Arc<Validator> {
        assert!(self.defines(name), "{}: no definition {name}", self.rev);
        let mut cache = self.validators.lock().unwrap_or_else(|e| e.into_inner());
        let validator = cache.entry(name.to_owned()).or_insert_with(|| {
            let mut root = self.official.clone();
            root["$ref"] = Value::String(self.ref_to(name));
            let validator = jsonschema::options()
                .with_draft(self.draft)
                .should_validate_formats(true)
                .build(&root)
                .unwrap_or_else(|e| panic!("{}: compiling the schema of {name}: {e}", self.rev));
            Arc::new(validator)
        });
        Arc::clone(validator)
    }

    /// Every sample of definition `name`: minimal, full, then the union variants of both,
    /// without duplicates.
    pub fn samples(&self, name: &str) -> Vec<Sample> {
        let root = json!({ "$ref": self.ref_to(name) });
        let generator = Generator { doc: self, variants: true };
        let minimal = generator.generate(&root, Mode::Minimal, 0, false);
        let full = generator.generate(&root, Mode::Full, 0, false);
        let mut samples: Vec<Sample> = Vec::new();
        let mut push = |label: String, value: Value| {
            if !samples.iter().any(|s| s.value == value) {
                samples.push(Sample { label, value });
            }
        };
        push("minimal".into(), minimal[0].clone());
        push("full".into(), full[0].clone());
        for (i, value) in full.into_iter().enumerate().skip(1) {
            push(format!("full variant {i}"), value);
        }
        for (i, value) in minimal.into_iter().enumerate().skip(1) {
            push(format!("minimal variant {i}"), value);
        }
        samples
    }

    /// The full sample of definition `name` and its union variants: every property, each union
    /// branch in turn. The first is [`SchemaDoc::full`].
    pub fn full_variants(&self, name: &str) -> Vec<Value> {
        let root = json!({ "$ref": self.ref_to(name) });
        let generator = Generator { doc: self, variants: true };
        generator.generate(&root, Mode::Full, 0, false)
    }

    /// The full sample of definition `name` (every property, first branch of every union).
    pub fn full(&self, name: &str) -> Value {
        self.single(name, Mode::Full)
    }

    /// The minimal sample of definition `name` (required properties only).
    pub fn minimal(&self, name: &str) -> Value {
        self.single(name, Mode::Minimal)
    }

    fn single(&self, name: &str, mode: Mode) -> Value {
        let root = json!({ "$ref": self.ref_to(name) });
        let generator = Generator { doc: self, variants: false };
        generator.generate(&root, mode, 0, false).swap_remove(0)
    }

    /// Resolves a local reference such as `#/$defs/Tool` or `#/definitions/Tool`.
    fn resolve(&self, reference: &str) -> &Value {
        let pointer = reference.strip_prefix('#').unwrap_or_else(|| panic!("{}: non-local $ref {reference}", self.rev));
        self.doc.pointer(pointer).unwrap_or_else(|| panic!("{}: dangling $ref {reference}", self.rev))
    }
}

/// Gives the inline `params` of every request and notification the `_meta` that the base
/// `Request` / `Notification` declares, where they do not declare it themselves.
///
/// The draft-07 schemas (2024-11-05 to 2025-06-18) are generated from TypeScript interfaces:
/// `CallToolRequest extends Request` redeclares `params`, which replaces the base's `params`
/// (with its `_meta.progressToken`) in the schema, although every request's params may carry
/// `_meta` (the schema still allows it as an undeclared member). Later revisions declare `_meta`
/// on each params type and not on the bases, so this changes nothing there. The generated types
/// follow the same rule, so the samples must too.
pub fn inherit_base_meta(defs: &mut Value) {
    for base in ["Request", "Notification"] {
        let Some(meta) = defs.pointer(&format!("/{base}/properties/params/properties/_meta")).cloned() else {
            continue;
        };
        let defs = defs.as_object_mut().expect("definitions are an object");
        for (name, def) in defs.iter_mut() {
            if name == base || !name.ends_with(base) || def.pointer("/properties/method").is_none() {
                continue;
            }
            let Some(params) = def.pointer_mut("/properties/params").and_then(Value::as_object_mut) else {
                continue;
            };
            assert!(!params.contains_key("$ref"), "{name}: referenced params next to a base `_meta`");
            let properties = params.entry("properties").or_insert_with(|| json!({}));
            let properties = properties.as_object_mut().expect("properties are an object");
            properties.entry("_meta").or_insert_with(|| meta.clone());
        }
    }
}

/// Which properties of an object the generator writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Only the required ones.
    Minimal,
    /// Every declared one.
    Full,
}

struct Generator<'a> {
    doc: &'a SchemaDoc,
    /// Whether to enumerate union branches; when false every node yields one instance.
    variants: bool,
}

impl Generator<'_> {
    /// Instances of `schema`: never empty; the first is the default (first branch of every
    /// union), each other one differs from it in one union branch.
    ///
    /// `depth` is the nesting depth of the instance being built; `meta` says the instance is a
    /// `_meta` object (which gets no made-up extra keys).
    fn generate(&self, schema: &Value, mode: Mode, depth: usize, meta: bool) -> Vec<Value> {
        assert!(depth < HARD_DEPTH, "{}: the schema requires an infinitely deep instance", self.doc.rev);
        let node = match schema {
            Value::Bool(true) => return vec![json!("v")],
            Value::Object(node) => node,
            other => panic!("{}: cannot generate an instance of schema {other}", self.doc.rev),
        };
        if let Some(reference) = node.get("$ref") {
            let target = self.doc.resolve(reference.as_str().expect("$ref is a string"));
            let rest = without(node, &["$ref"]);
            return if constrains(&rest) {
                self.generate(&self.merge(&[target.clone(), Value::Object(rest)]), mode, depth, meta)
            } else {
                self.generate(target, mode, depth, meta)
            };
        }
        if let Some(Value::Array(parts)) = node.get("allOf") {
            let mut parts = parts.clone();
            parts.push(Value::Object(without(node, &["allOf"])));
            return self.generate(&self.merge(&parts), mode, depth, meta);
        }
        if let Some(value) = node.get("const") {
            return vec![value.clone()];
        }
        if let Some(Value::Array(values)) = node.get("enum") {
            assert!(!values.is_empty(), "{}: empty enum", self.doc.rev);
            return self.limit(values.clone(), depth);
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = node.get(keyword) {
                let rest = without(node, &[keyword]);
                let mut per_branch = Vec::new();
                for branch in branches {
                    let branch = if constrains(&rest) {
                        self.merge(&[Value::Object(rest.clone()), branch.clone()])
                    } else {
                        branch.clone()
                    };
                    per_branch.push(self.generate(&branch, mode, depth, meta));
                    if !self.enumerates(depth) {
                        break;
                    }
                }
                return self.limit(interleave(per_branch), depth);
            }
        }
        match node.get("type") {
            Some(Value::Array(types)) => {
                let mut per_type = Vec::new();
                for ty in types {
                    let mut single = node.clone();
                    single.insert("type".into(), ty.clone());
                    per_type.push(self.generate(&Value::Object(single), mode, depth, meta));
                    if !self.enumerates(depth) {
                        break;
                    }
                }
                self.limit(interleave(per_type), depth)
            }
            Some(Value::String(ty)) => self.typed(ty, node, mode, depth, meta),
            Some(other) => panic!("{}: bad type {other}", self.doc.rev),
            None if node.contains_key("properties") || node.contains_key("additionalProperties") => {
                self.typed("object", node, mode, depth, meta)
            }
            None if node.contains_key("items") => self.typed("array", node, mode, depth, meta),
            // No constraint at all: any value will do.
            None => vec![json!("v")],
        }
    }

    fn typed(&self, ty: &str, node: &Map<String, Value>, mode: Mode, depth: usize, meta: bool) -> Vec<Value> {
        match ty {
            "string" => vec![Value::String(string_for(node.get("format").and_then(Value::as_str)))],
            "integer" => {
                let (min, max) = bounds(node);
                // 1, moved inside [minimum, maximum].
                let value = 1f64.max(min.unwrap_or(f64::MIN)).min(max.unwrap_or(f64::MAX));
                assert!(value.fract() == 0.0, "{}: no integer in {min:?}..{max:?}", self.doc.rev);
                #[allow(clippy::cast_possible_truncation)] // checked integral above
                let value = value as i64;
                vec![json!(value)]
            }
            "number" => {
                let (min, max) = bounds(node);
                let value = match (min, max) {
                    (Some(lo), Some(hi)) => (lo + hi) / 2.0,
                    _ => 0.5f64.max(min.unwrap_or(f64::MIN)).min(max.unwrap_or(f64::MAX)),
                };
                vec![json!(value)]
            }
            "boolean" => vec![json!(true)],
            "null" => vec![Value::Null],
            "array" => self.array(node, mode, depth),
            "object" => self.object(node, mode, depth, meta),
            other => panic!("{}: unknown type {other}", self.doc.rev),
        }
    }

    fn array(&self, node: &Map<String, Value>, mode: Mode, depth: usize) -> Vec<Value> {
        let max_items = node.get("maxItems").and_then(Value::as_u64);
        let items = match node.get("items") {
            Some(items) if depth < MAX_DEPTH && max_items != Some(0) => items,
            _ => return vec![json!([])],
        };
        self.generate(items, mode, depth + 1, false).into_iter().map(|item| Value::Array(vec![item])).collect()
    }

    fn object(&self, node: &Map<String, Value>, mode: Mode, depth: usize, meta: bool) -> Vec<Value> {
        let empty = Map::new();
        let properties = node.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for name in &required {
            assert!(properties.contains_key(*name), "{}: required `{name}` is not declared", self.doc.rev);
        }
        // Below the depth limit only what is required is written.
        let mode = if depth >= MAX_DEPTH { Mode::Minimal } else { mode };

        // Each member: its name and its instances (default first).
        let mut members: Vec<(String, Vec<Value>)> = Vec::new();
        for (name, schema) in properties {
            if mode == Mode::Full || required.contains(&name.as_str()) {
                members.push((name.clone(), self.generate(schema, mode, depth + 1, name == "_meta")));
            }
        }
        // One made-up entry where the schema allows undeclared keys explicitly: the single entry
        // of a free-form map, or an extension field next to declared properties. `_meta`
        // objects only get their declared properties.
        let extra = node.get("additionalProperties").filter(|ap| **ap != Value::Bool(false));
        if let Some(extra) = extra
            && mode == Mode::Full
            && !meta
        {
            assert!(!properties.contains_key(EXTRA_KEY), "{}: a property is named {EXTRA_KEY}", self.doc.rev);
            members.push((EXTRA_KEY.to_owned(), self.generate(extra, mode, depth + 1, false)));
        }

        let default: Map<String, Value> = members.iter().map(|(k, vs)| (k.clone(), vs[0].clone())).collect();
        let per_member = members.iter().map(|(name, values)| {
            let variants = values[1..].iter().map(|value| {
                let mut variant = default.clone();
                variant.insert(name.clone(), value.clone());
                Value::Object(variant)
            });
            variants.collect()
        });
        let mut out = vec![Value::Object(default.clone())];
        out.extend(interleave(per_member.collect()));
        self.limit(out, depth)
    }

    /// Whether unions at this depth are enumerated.
    fn enumerates(&self, depth: usize) -> bool {
        self.variants && depth < VARIANT_DEPTH
    }

    /// Drops duplicates, keeps at most [`MAX_VARIANTS`] (only the first when not enumerating).
    fn limit(&self, values: Vec<Value>, depth: usize) -> Vec<Value> {
        let cap = if self.enumerates(depth) { MAX_VARIANTS } else { 1 };
        let mut out: Vec<Value> = Vec::new();
        for value in values {
            if out.len() == cap {
                break;
            }
            if !out.contains(&value) {
                out.push(value);
            }
        }
        out
    }

    /// Merges the schemas of an `allOf` (references resolved) into one schema: properties are
    /// merged by name (a property in several parts becomes the `allOf` of its schemas), required
    /// lists are joined, any other keyword is taken from the last part that has it.
    fn merge(&self, parts: &[Value]) -> Value {
        let mut merged = Map::new();
        for part in parts {
            let part = self.flatten(part);
            for (key, value) in part {
                if ANNOTATIONS.contains(&key.as_str()) {
                    continue;
                }
                match (key.as_str(), merged.get_mut(&key)) {
                    ("properties", Some(Value::Object(props))) => {
                        for (name, schema) in value.as_object().expect("properties is an object") {
                            let schema = match props.remove(name) {
                                Some(previous) => json!({ "allOf": [previous, schema] }),
                                None => schema.clone(),
                            };
                            props.insert(name.clone(), schema);
                        }
                    }
                    ("required", Some(Value::Array(names))) => {
                        for name in value.as_array().expect("required is an array") {
                            if !names.contains(name) {
                                names.push(name.clone());
                            }
                        }
                    }
                    _ => {
                        merged.insert(key, value);
                    }
                }
            }
        }
        Value::Object(merged)
    }

    /// A schema's keywords with its references and `allOf`s resolved into it.
    fn flatten(&self, schema: &Value) -> Map<String, Value> {
        let node = match schema {
            Value::Bool(true) => return Map::new(),
            Value::Object(node) => node,
            other => panic!("{}: cannot merge schema {other}", self.doc.rev),
        };
        let mut parts = Vec::new();
        if let Some(reference) = node.get("$ref") {
            parts.push(self.doc.resolve(reference.as_str().expect("$ref is a string")).clone());
        }
        if let Some(Value::Array(all)) = node.get("allOf") {
            parts.extend(all.iter().cloned());
        }
        if parts.is_empty() {
            return node.clone();
        }
        parts.push(Value::Object(without(node, &["$ref", "allOf"])));
        match self.merge(&parts) {
            Value::Object(merged) => merged,
            _ => unreachable!("merge returns an object"),
        }
    }
}

/// The first element of every list, then the second of every list, and so on: so that a cap on
/// the count cuts the alternatives of every list alike.
fn interleave(lists: Vec<Vec<Value>>) -> Vec<Value> {
    let mut iters: Vec<_> = lists.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    loop {
        let before = out.len();
        out.extend(iters.iter_mut().filter_map(Iterator::next));
        if out.len() == before {
            return out;
        }
    }
}

/// `node` without the given keywords.
fn without(node: &Map<String, Value>, keywords: &[&str]) -> Map<String, Value> {
    node.iter().filter(|(k, _)| !keywords.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Whether a schema object has any keyword besides annotations.
fn constrains(node: &Map<String, Value>) -> bool {
    node.keys().any(|k| !ANNOTATIONS.contains(&k.as_str()))
}

/// The `minimum` and `maximum` of a numeric schema.
fn bounds(node: &Map<String, Value>) -> (Option<f64>, Option<f64>) {
    (node.get("minimum").and_then(Value::as_f64), node.get("maximum").and_then(Value::as_f64))
}

/// A valid string of a `format`.
fn string_for(format: Option<&str>) -> String {
    match format {
        None => "s",
        Some("uri" | "iri" | "uri-reference" | "iri-reference") => "https://example.com/x",
        Some("uri-template") => "https://example.com/{x}",
        Some("byte") => "aGVsbG8=",
        Some("date-time") => "2025-01-01T00:00:00Z",
        Some("date") => "2025-01-01",
        Some("time") => "00:00:00Z",
        Some("email") => "a@example.com",
        Some("hostname") => "example.com",
        Some("uuid") => "00000000-0000-4000-8000-000000000000",
        Some(other) => panic!("no sample string for format {other:?}"),
    }
    .to_owned()
}

/// Copies into `base` every property of `extra` that `base` lacks, recursively where both sides
/// are objects; for arrays whose first elements are both objects, merges those first elements.
///
/// Entries the generator made up ([`EXTRA_KEY`]) are not properties and are not copied: they
/// stand for undeclared keys, which an older revision may allow too.
///
/// A JSON Schema document (an object whose `type` is `"object"`: a tool's `inputSchema`, an
/// elicitation's `requestedSchema`) is data, kept verbatim by the types: nothing is merged into it.
pub fn deep_merge(base: &mut Value, extra: &Value) {
    if is_schema_document(base) {
        return;
    }
    match (base, extra) {
        (Value::Object(base), Value::Object(extra)) => {
            for (key, value) in extra {
                match base.get_mut(key) {
                    Some(existing) => deep_merge(existing, value),
                    None if key == EXTRA_KEY => {}
                    None => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (Value::Array(base), Value::Array(extra)) => {
            if let (Some(first @ Value::Object(_)), Some(extra @ Value::Object(_))) = (base.first_mut(), extra.first())
            {
                deep_merge(first, extra);
            }
        }
        _ => {}
    }
}

/// Whether a value is a JSON Schema document embedded in a message (its `type` is `"object"`).
pub fn is_schema_document(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("object")
}

/// How alike two JSON values are in shape: the number of object keys both have (recursively
/// where both values are objects, or arrays, whose first elements are compared), plus one for
/// each of those keys whose values are equal scalars. Used to pick, among the union variants of a
/// sample, the one of the same branches as another sample.
pub fn likeness(a: &Value, b: &Value) -> usize {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.iter().filter_map(|(key, av)| b.get(key).map(|bv| 1 + likeness(av, bv))).sum()
        }
        (Value::Array(a), Value::Array(b)) => match (a.first(), b.first()) {
            (Some(a), Some(b)) => likeness(a, b),
            _ => 0,
        },
        (a, b) => usize::from(a == b),
    }
}

/// Where two JSON values differ, one line per place (JSON pointer, then what differs); empty
/// when they are equal.
pub fn json_diff(expected: &Value, actual: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff_into(expected, actual, &mut String::new(), &mut out);
    out
}

fn diff_into(expected: &Value, actual: &Value, path: &mut String, out: &mut Vec<String>) {
    let here = |path: &str| {
        if path.is_empty() { "/".to_owned() } else { path.to_owned() }
    };
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, ev) in e {
                let len = path.len();
                let _ = write!(path, "/{}", key.replace('~', "~0").replace('/', "~1"));
                match a.get(key) {
                    Some(av) => diff_into(ev, av, path, out),
                    None => out.push(format!("{path}: missing (expected {})", short(ev))),
                }
                path.truncate(len);
            }
            for (key, av) in a {
                if !e.contains_key(key) {
                    out.push(format!("{}/{key}: unexpected {}", path, short(av)));
                }
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                let len = path.len();
                let _ = write!(path, "/{i}");
                diff_into(ev, av, path, out);
                path.truncate(len);
            }
        }
        _ if expected == actual => {}
        _ => out.push(format!("{}: expected {}, got {}", here(path), short(expected), short(actual))),
    }
}

/// A compact rendering of a JSON value, cut to a readable length.
pub fn short(value: &Value) -> String {
    const LIMIT: usize = 300;
    let text = value.to_string();
    if text.len() <= LIMIT {
        return text;
    }
    let mut end = LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &text[..end], text.len())
}

/// Collects failures of a test and reports them all at once.
#[derive(Default)]
pub struct Failures(Vec<String>);

impl Failures {
    /// Records one failure.
    pub fn push(&mut self, failure: impl Into<String>) {
        self.0.push(failure.into());
    }

    /// Panics listing every recorded failure, if there is any.
    #[track_caller]
    pub fn assert_none(self, what: &str) {
        if !self.0.is_empty() {
            panic!("{} {what} failed:\n\n{}\n", self.0.len(), self.0.join("\n\n"));
        }
    }
}
