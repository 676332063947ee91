//! Reads the vendored schemas and lowers them into one merged model across revisions.
//!
//! Each revision's schema is lowered on its own into named definitions (inline objects, unions
//! and enums are hoisted and named), then definitions of the same name are merged: fields are
//! united and each field records the revisions it belongs to and the revisions that require it.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;

use super::config;

/// Number of revisions; bit `i` of a mask is `REVISIONS[i]`.
pub const REVISIONS: [&str; 5] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];
pub const ALL: u8 = 0b1_1111;

/// A field's or variant's Rust-side type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ty {
    String,
    Bool,
    Int,
    Number,
    /// Any JSON value.
    Any,
    /// A free-form JSON object.
    Object,
    Named(String),
    Array(Box<Ty>),
    Map(Box<Ty>),
    /// A map that keeps the order of its members as they come on the wire (see
    /// `config::ordered_map`).
    OrderedMap(Box<Ty>),
}

#[derive(Debug, Clone)]
pub struct Field {
    pub json: String,
    pub ty: Ty,
    pub doc: Option<String>,
    /// Revisions whose schema has the field.
    pub revs: u8,
    /// Revisions whose schema requires the field.
    pub required: u8,
    /// A constant value the field always has.
    pub konst: Option<Value>,
    /// The schema allows `null` besides the type (written as `null` when required and unset).
    pub nullable: bool,
}

#[derive(Debug, Clone)]
pub struct Variant {
    pub ty: Ty,
    pub revs: u8,
}

#[derive(Debug, Clone)]
pub enum Kind {
    Struct {
        fields: Vec<Field>,
        extra: bool,
    },
    /// An open string enum: known values with their revisions.
    Enum {
        values: Vec<(String, u8)>,
    },
    Union {
        variants: Vec<Variant>,
    },
    Alias(Ty),
}

#[derive(Debug, Clone)]
pub struct Def {
    pub name: String,
    pub doc: Option<String>,
    pub revs: u8,
    pub kind: Kind,
}

/// The merged model.
#[derive(Debug, Default)]
pub struct Model {
    pub defs: BTreeMap<String, Def>,
    /// (schema definition name, revision bit) -> canonical Rust name.
    pub schema_names: BTreeMap<String, BTreeMap<u8, String>>,
}

impl Model {
    pub fn def(&self, name: &str) -> &Def {
        &self.defs[name]
    }
}

/// Loads all revisions from `schema_dir` and merges them.
pub fn load(schema_dir: &std::path::Path) -> Result<Model> {
    let mut docs = Vec::new();
    for rev in REVISIONS {
        let path = schema_dir.join(rev).join("schema.json");
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let doc: Value = serde_json::from_str(&text)?;
        let mut defs = doc
            .get("definitions")
            .or_else(|| doc.get("$defs"))
            .and_then(Value::as_object)
            .context("schema has no definitions")?
            .clone();
        inherit_base_meta(&mut defs).with_context(|| format!("{rev}: inheriting `_meta`"))?;
        docs.push(defs);
    }

    // Positional names: where a newer revision references a named definition, an inline
    // schema at the same place in an older revision takes that name.
    let mut positional: BTreeMap<(String, String), String> = BTreeMap::new();
    for (i, defs) in docs.iter().enumerate().rev() {
        for (name, schema) in defs {
            let canon = config::canonical_name(name, i);
            collect_refs(schema, &canon, "", &mut positional);
        }
    }

    let mut model = Model::default();
    for (i, defs) in docs.iter().enumerate() {
        let mut lw = Lowerer { rev: i, defs, positional: &positional, out: BTreeMap::new() };
        for (name, schema) in defs {
            let canon = config::canonical_name(name, i);
            model.schema_names.entry(name.clone()).or_default().insert(i as u8, canon.clone());
            let def = lw.lower_def(&canon, schema)?;
            lw.add(def)?;
        }
        for def in lw.out.into_values() {
            merge_into(&mut model, def)?;
        }
    }
    postprocess(&mut model)?;
    Ok(model)
}

/// Gives every request's and notification's `params` the `_meta` its base type declares.
///
/// The schemas of 2024-11-05 to 2025-06-18 are generated from TypeScript interfaces in which
/// every request `extends Request` and every notification `extends Notification`, and the base
/// declares `params._meta` (for requests, with `progressToken`). A concrete message that
/// redeclares `params` (`CallToolRequest`: `params: { name, arguments }`) replaces the base's
/// `params` in the generated schema, so its `_meta` disappears there, although TypeScript only
/// accepts the override because it stays assignable to the base's `params`, and the
/// specification's `_meta` and progress rules apply to every request. Later revisions declare
/// `_meta` on each params type themselves (`RequestParams`, `NotificationParams`) and leave it
/// off the bases, so nothing is added there.
///
/// Results need nothing: they do not redeclare an object member of `Result`, so the flattened
/// schema of every result keeps `_meta`.
fn inherit_base_meta(defs: &mut serde_json::Map<String, Value>) -> Result<()> {
    for base in ["Request", "Notification"] {
        let Some(meta) = defs.get(base).and_then(|b| b.pointer("/properties/params/properties/_meta")).cloned() else {
            continue;
        };
        let mut targets = Vec::new();
        for (name, schema) in defs.iter() {
            if name == base || schema.pointer("/properties/method").is_none() {
                continue;
            }
            if !name.ends_with("Request") && !name.ends_with("Notification") {
                bail!("{name} has a `method` but is neither a request nor a notification");
            }
            if !name.ends_with(base) {
                continue;
            }
            // Without `params` of its own a message inherits the base's, `_meta` included.
            let Some(params) = schema.pointer("/properties/params") else {
                continue;
            };
            let has_meta = if params.get("$ref").is_some() {
                resolve_props(defs, params).is_some_and(|ps| ps.contains_key("_meta"))
            } else if params.get("type").and_then(Value::as_str) == Some("object") {
                params.pointer("/properties/_meta").is_some()
            } else {
                bail!("{name}: unexpected `params` schema {params}");
            };
            if has_meta {
                continue;
            }
            ensure!(
                params.get("$ref").is_none(),
                "{name}: `params` refers to a type without the `_meta` that `{base}` declares"
            );
            targets.push(name.clone());
        }
        for name in targets {
            let props = defs[&name]["properties"]["params"]
                .as_object_mut()
                .context("params")?
                .entry("properties")
                .or_insert_with(|| Value::Object(Default::default()));
            props.as_object_mut().context("params properties")?.insert("_meta".to_owned(), meta.clone());
        }
    }
    Ok(())
}

/// The properties of the definition a `$ref` points at.
fn resolve_props<'a>(
    defs: &'a serde_json::Map<String, Value>,
    schema: &Value,
) -> Option<&'a serde_json::Map<String, Value>> {
    let r = schema.get("$ref")?.as_str()?;
    let target = defs.get(r.rsplit('/').next()?)?;
    target.get("properties")?.as_object()
}

fn collect_refs(schema: &Value, owner: &str, path: &str, out: &mut BTreeMap<(String, String), String>) {
    collect(schema, owner, path, owner, out);
}

/// Mirrors the naming of `Lowerer::lower_ty`: an inline compound schema becomes a definition
/// named `hoist`, and what is nested in it is located relative to that name.
fn collect(schema: &Value, owner: &str, path: &str, hoist: &str, out: &mut BTreeMap<(String, String), String>) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        if !path.is_empty() {
            let target = r.rsplit('/').next().unwrap_or(r);
            out.entry((owner.to_owned(), path.to_owned())).or_insert_with(|| target.to_owned());
        }
        return;
    }
    let compound = obj.contains_key("properties") || obj.contains_key("allOf");
    let (owner, path) = if compound && !path.is_empty() { (hoist, "") } else { (owner, path) };
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            let h = config::hoist_name(owner, k).unwrap_or_else(|| format!("{owner}{}", pascal(k)));
            collect(v, owner, &format!("{path}/{k}"), &h, out);
        }
    }
    if let Some(items) = obj.get("items") {
        collect(items, owner, &format!("{path}/[]"), &config::item_name(hoist), out);
    }
}

struct Lowerer<'a> {
    rev: usize,
    defs: &'a serde_json::Map<String, Value>,
    positional: &'a BTreeMap<(String, String), String>,
    out: BTreeMap<String, Def>,
}

impl Lowerer<'_> {
    fn bit(&self) -> u8 {
        1 << self.rev
    }

    fn add(&mut self, def: Def) -> Result<()> {
        match self.out.remove(&def.name) {
            None => {
                self.out.insert(def.name.clone(), def);
            }
            Some(old) => {
                let merged = merge_defs(old, def)?;
                self.out.insert(merged.name.clone(), merged);
            }
        }
        Ok(())
    }

    fn ref_name(&self, r: &str) -> String {
        let target = r.rsplit('/').next().unwrap_or(r);
        config::canonical_name(target, self.rev)
    }

    fn lower_def(&mut self, name: &str, schema: &Value) -> Result<Def> {
        let doc = schema.get("description").and_then(Value::as_str).map(str::to_owned);
        let kind = if let Some(ty) = config::builtin(name) {
            Kind::Alias(ty)
        } else if let Some(only) = config::single_variant_union(name, self.rev) {
            Kind::Union { variants: vec![Variant { ty: Ty::Named(only.to_owned()), revs: self.bit() }] }
        } else {
            self.lower_kind(name, schema, name, "")?
        };
        Ok(Def { name: name.to_owned(), doc, revs: self.bit(), kind })
    }

    /// Lowers a schema that becomes a definition of its own (`owner` + `path` locate it for
    /// naming what is nested in it).
    fn lower_kind(&mut self, name: &str, schema: &Value, owner: &str, path: &str) -> Result<Kind> {
        let obj = schema.as_object().context("schema is not an object")?;
        if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
            return Ok(Kind::Alias(Ty::Named(self.ref_name(r))));
        }
        if let Some(parts) = obj.get("allOf").and_then(Value::as_array) {
            let mut fields: Vec<Field> = Vec::new();
            let mut extra = false;
            for part in parts {
                let part = self.resolve(part)?;
                let (mut fs, ex) = self.lower_fields(&part, name, "")?;
                extra |= ex;
                for f in fs.drain(..) {
                    if let Some(old) = fields.iter_mut().find(|o| o.json == f.json) {
                        // A later part narrows an earlier one (e.g. a fixed error code).
                        old.required |= f.required;
                        if f.konst.is_some() {
                            old.konst = f.konst;
                        }
                        if !matches!(f.ty, Ty::Any) {
                            old.ty = f.ty;
                        }
                        if f.doc.is_some() {
                            old.doc = f.doc;
                        }
                    } else {
                        fields.push(f);
                    }
                }
            }
            return Ok(Kind::Struct { fields, extra });
        }
        if let Some(vs) = obj.get("anyOf").or_else(|| obj.get("oneOf")).and_then(Value::as_array) {
            let mut variants = Vec::new();
            for (i, v) in vs.iter().enumerate() {
                if let Some(types) = v.get("type").and_then(Value::as_array) {
                    for t in types {
                        let ty = prim(t.as_str().unwrap_or("")).context("unknown primitive")?;
                        variants.push(Variant { ty, revs: self.bit() });
                    }
                    continue;
                }
                let ty = self.lower_ty(v, owner, &format!("{path}/|{i}"), &format!("{name}Variant{i}"))?;
                variants.push(Variant { ty, revs: self.bit() });
            }
            return Ok(Kind::Union { variants });
        }
        if let Some(types) = obj.get("type").and_then(Value::as_array) {
            let mut variants = Vec::new();
            for t in types {
                let ty = prim(t.as_str().unwrap_or("")).context("unknown primitive")?;
                variants.push(Variant { ty, revs: self.bit() });
            }
            return Ok(Kind::Union { variants });
        }
        if let Some(values) = obj.get("enum").and_then(Value::as_array) {
            let values = values
                .iter()
                .map(|v| Ok((v.as_str().context("non-string enum")?.to_owned(), self.bit())))
                .collect::<Result<_>>()?;
            return Ok(Kind::Enum { values });
        }
        match obj.get("type").and_then(Value::as_str) {
            Some("object") if obj.contains_key("properties") || name_keeps_struct(name) => {
                let (fields, extra) = self.lower_fields(schema, name, "")?;
                Ok(Kind::Struct { fields, extra })
            }
            _ => Ok(Kind::Alias(self.lower_ty(schema, owner, path, name)?)),
        }
    }

    fn resolve(&self, schema: &Value) -> Result<Value> {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let target = r.rsplit('/').next().unwrap_or(r);
            let s = self.defs.get(target).with_context(|| format!("unknown $ref {r}"))?;
            return self.resolve(s);
        }
        if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
            let mut props = serde_json::Map::new();
            let mut required = Vec::new();
            let mut additional = None;
            for p in parts {
                let p = self.resolve(p)?;
                if let Some(ps) = p.get("properties").and_then(Value::as_object) {
                    for (k, v) in ps {
                        props.insert(k.clone(), v.clone());
                    }
                }
                if let Some(r) = p.get("required").and_then(Value::as_array) {
                    required.extend(r.iter().cloned());
                }
                if let Some(a) = p.get("additionalProperties") {
                    additional = Some(a.clone());
                }
            }
            let mut out = serde_json::json!({"type": "object", "properties": props, "required": required});
            if let Some(a) = additional {
                out["additionalProperties"] = a;
            }
            return Ok(out);
        }
        Ok(schema.clone())
    }

    fn lower_fields(&mut self, schema: &Value, owner: &str, path: &str) -> Result<(Vec<Field>, bool)> {
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let extra = match schema.get("additionalProperties") {
            None | Some(Value::Bool(false)) => false,
            Some(_) => true,
        };
        let mut fields = Vec::new();
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (k, v) in props {
                let fpath = format!("{path}/{k}");
                let konst = v.get("const").cloned();
                // `type: [T, "null"]`: a nullable T.
                let (v, nullable) = strip_null(v);
                let v = &v;
                let ty = if let Some(t) = config::field_type(owner, k) {
                    t
                } else if konst.is_some() {
                    match &konst {
                        Some(Value::String(_)) => Ty::String,
                        Some(Value::Number(n)) if n.is_i64() => Ty::Int,
                        _ => Ty::Any,
                    }
                } else {
                    let hoist = config::hoist_name(owner, k).unwrap_or_else(|| format!("{owner}{}", pascal(k)));
                    match self.lower_ty(v, owner, &fpath, &hoist)? {
                        Ty::Map(t) if config::ordered_map(owner, k) => Ty::OrderedMap(t),
                        Ty::Map(_) | Ty::Object if config::ordered_map(owner, k) => {
                            bail!("{owner}.{k}: an ordered map in config.rs, but its schema is not a map of one type")
                        }
                        ty => ty,
                    }
                };
                let doc = v.get("description").and_then(Value::as_str).map(str::to_owned);
                let bit = self.bit();
                fields.push(Field {
                    json: k.clone(),
                    ty,
                    doc,
                    revs: bit,
                    required: if required.contains(k.as_str()) { bit } else { 0 },
                    konst,
                    nullable,
                });
            }
        }
        Ok((fields, extra))
    }

    /// Lowers a schema in field (or item, or variant) position, hoisting what needs a name.
    fn lower_ty(&mut self, schema: &Value, owner: &str, path: &str, hoist: &str) -> Result<Ty> {
        let obj = schema.as_object().context("schema is not an object")?;
        if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
            return Ok(Ty::Named(self.ref_name(r)));
        }
        let positional = self.positional.get(&(owner.to_owned(), path.to_owned())).cloned();
        let is_object = obj.get("type").and_then(Value::as_str) == Some("object");
        let compound = obj.contains_key("anyOf")
            || obj.contains_key("oneOf")
            || obj.contains_key("allOf")
            || obj.contains_key("enum")
            || (is_object && obj.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty()));
        if let Some(name) = positional.filter(|_| compound || is_object) {
            let name = config::canonical_name(&name, self.rev);
            let def = self.lower_def_inline(&name, schema)?;
            self.add(def)?;
            return Ok(Ty::Named(name));
        }
        if compound {
            let name = hoist.to_owned();
            let def = self.lower_def_inline(&name, schema)?;
            self.add(def)?;
            return Ok(Ty::Named(name));
        }
        if let Some(types) = obj.get("type").and_then(Value::as_array) {
            let _ = types;
            let name = hoist.to_owned();
            let def = self.lower_def_inline(&name, schema)?;
            self.add(def)?;
            return Ok(Ty::Named(name));
        }
        match obj.get("type").and_then(Value::as_str) {
            Some("array") => {
                let items = obj.get("items").context("array without items")?;
                let item = self.lower_ty(items, owner, &format!("{path}/[]"), &config::item_name(hoist))?;
                Ok(Ty::Array(Box::new(item)))
            }
            Some("object") => match obj.get("additionalProperties") {
                Some(ap @ Value::Object(m)) if !m.is_empty() => {
                    let v = self.lower_ty(ap, owner, &format!("{path}/{{}}"), &format!("{hoist}Value"))?;
                    if v == Ty::Any { Ok(Ty::Object) } else { Ok(Ty::Map(Box::new(v))) }
                }
                _ => Ok(Ty::Object),
            },
            Some(t) => prim(t).with_context(|| format!("unknown type {t}")),
            None => Ok(Ty::Any),
        }
    }

    fn lower_def_inline(&mut self, name: &str, schema: &Value) -> Result<Def> {
        let doc = schema.get("description").and_then(Value::as_str).map(str::to_owned);
        let kind = self.lower_kind(name, schema, name, "")?;
        Ok(Def { name: name.to_owned(), doc, revs: self.bit(), kind })
    }
}

fn strip_null(v: &Value) -> (Value, bool) {
    let Some(types) = v.get("type").and_then(Value::as_array) else {
        return (v.clone(), false);
    };
    if !types.iter().any(|t| t == "null") {
        return (v.clone(), false);
    }
    let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
    let mut out = v.clone();
    out["type"] = if rest.len() == 1 { rest[0].clone() } else { Value::Array(rest) };
    (out, true)
}

fn name_keeps_struct(name: &str) -> bool {
    name.ends_with("MetaObject") || name.ends_with("Capabilities") || name.ends_with("Params")
}

fn prim(t: &str) -> Option<Ty> {
    Some(match t {
        "string" => Ty::String,
        "integer" => Ty::Int,
        "number" => Ty::Number,
        "boolean" => Ty::Bool,
        "object" => Ty::Object,
        "null" => Ty::Any,
        _ => return None,
    })
}

fn merge_into(model: &mut Model, def: Def) -> Result<()> {
    match model.defs.remove(&def.name) {
        None => {
            model.defs.insert(def.name.clone(), def);
        }
        Some(old) => {
            let merged = merge_defs(old, def)?;
            model.defs.insert(merged.name.clone(), merged);
        }
    }
    Ok(())
}

fn merge_ty(a: &Ty, b: &Ty, ctx: &str) -> Result<Ty> {
    if a == b {
        return Ok(a.clone());
    }
    Ok(match (a, b) {
        (Ty::Any, _) | (_, Ty::Any) => Ty::Any,
        (Ty::Int, Ty::Number) | (Ty::Number, Ty::Int) => Ty::Number,
        (Ty::Object, Ty::Named(n)) | (Ty::Named(n), Ty::Object) => Ty::Named(n.clone()),
        (Ty::Object, Ty::Map(_)) | (Ty::Map(_), Ty::Object) => Ty::Object,
        (Ty::Named(x), Ty::Named(y)) if config::widen_named(x, y).is_some() => {
            Ty::Named(config::widen_named(x, y).unwrap_or_default().to_owned())
        }
        (Ty::Array(x), Ty::Array(y)) => Ty::Array(Box::new(merge_ty(x, y, ctx)?)),
        (Ty::Map(x), Ty::Map(y)) => Ty::Map(Box::new(merge_ty(x, y, ctx)?)),
        (Ty::OrderedMap(x), Ty::OrderedMap(y)) => Ty::OrderedMap(Box::new(merge_ty(x, y, ctx)?)),
        _ => bail!("{ctx}: cannot merge types {a:?} and {b:?}"),
    })
}

fn merge_defs(old: Def, new: Def) -> Result<Def> {
    let name = new.name.clone();
    let revs = old.revs | new.revs;
    let doc = new.doc.or(old.doc);
    let kind = match (old.kind, new.kind) {
        (Kind::Struct { fields: mut a, extra: ea }, Kind::Struct { fields: b, extra: eb }) => {
            for f in b {
                if let Some(o) = a.iter_mut().find(|o| o.json == f.json) {
                    o.ty = merge_ty(&o.ty, &f.ty, &format!("{name}.{}", f.json))?;
                    o.revs |= f.revs;
                    o.required |= f.required;
                    if f.doc.is_some() {
                        o.doc = f.doc;
                    }
                    if o.konst.is_none() {
                        o.konst = f.konst;
                    }
                    o.nullable |= f.nullable;
                } else {
                    a.push(f);
                }
            }
            a.sort_by(|x, y| x.json.cmp(&y.json));
            Kind::Struct { fields: a, extra: ea || eb }
        }
        (Kind::Enum { values: mut a }, Kind::Enum { values: b }) => {
            for (v, r) in b {
                if let Some(o) = a.iter_mut().find(|o| o.0 == v) {
                    o.1 |= r;
                } else {
                    a.push((v, r));
                }
            }
            Kind::Enum { values: a }
        }
        (Kind::Union { variants: a }, Kind::Union { variants: b }) => Kind::Union { variants: merge_variants(a, b) },
        (Kind::Alias(t), Kind::Union { variants }) if matches!(t, Ty::Named(_)) => {
            Kind::Union { variants: merge_variants(vec![Variant { ty: t, revs: old.revs }], variants) }
        }
        (Kind::Union { variants }, Kind::Alias(t)) if matches!(t, Ty::Named(_)) => {
            Kind::Union { variants: merge_variants(variants, vec![Variant { ty: t, revs: new.revs }]) }
        }
        (Kind::Alias(a), Kind::Alias(b)) => Kind::Alias(merge_ty(&a, &b, &name)?),
        (Kind::Struct { fields, extra }, Kind::Alias(Ty::Object))
        | (Kind::Alias(Ty::Object), Kind::Struct { fields, extra }) => {
            let _ = extra;
            Kind::Struct { fields, extra: true }
        }
        (a, b) => bail!("{name}: cannot merge {a:?} with {b:?}"),
    };
    Ok(Def { name, doc, revs, kind })
}

fn merge_variants(mut a: Vec<Variant>, b: Vec<Variant>) -> Vec<Variant> {
    for v in b {
        if let Some(o) = a.iter_mut().find(|o| o.ty == v.ty) {
            o.revs |= v.revs;
        } else {
            a.push(v);
        }
    }
    a
}

/// Whole-model fixes after merging: `Object` fields that met a struct give it an extra map.
fn postprocess(model: &mut Model) -> Result<()> {
    for def in model.defs.values_mut() {
        let revs = def.revs;
        if let Kind::Union { variants } = &mut def.kind {
            for ty in config::extra_variants(&def.name) {
                if !variants.iter().any(|v| v.ty == ty) {
                    variants.push(Variant { ty, revs });
                }
            }
        }
    }
    // Structs that received free-form objects in some revision keep unknown keys.
    let mut needs_extra = BTreeSet::new();
    for def in model.defs.values() {
        if let Kind::Struct { .. } = def.kind
            && (def.name.ends_with("MetaObject") || config::keeps_extra(&def.name))
        {
            needs_extra.insert(def.name.clone());
        }
    }
    for name in needs_extra {
        if let Some(Def { kind: Kind::Struct { extra, .. }, .. }) = model.defs.get_mut(&name) {
            *extra = true;
        }
    }
    // Every named reference must resolve.
    for def in model.defs.values() {
        let mut refs = Vec::new();
        match &def.kind {
            Kind::Struct { fields, .. } => fields.iter().for_each(|f| named(&f.ty, &mut refs)),
            Kind::Union { variants } => variants.iter().for_each(|v| named(&v.ty, &mut refs)),
            Kind::Alias(t) => named(t, &mut refs),
            Kind::Enum { .. } => {}
        }
        for r in refs {
            if !model.defs.contains_key(&r) {
                bail!("{}: reference to unknown type {r}", def.name);
            }
        }
    }
    Ok(())
}

pub fn named(t: &Ty, out: &mut Vec<String>) {
    match t {
        Ty::Named(n) => out.push(n.clone()),
        Ty::Array(t) | Ty::Map(t) | Ty::OrderedMap(t) => named(t, out),
        _ => {}
    }
}

/// `inputSchema` -> `InputSchema`, `io.modelcontextprotocol/clientInfo` -> `ClientInfo`.
pub fn pascal(s: &str) -> String {
    let s = s.rsplit('/').next().unwrap_or(s);
    let mut out = String::new();
    let mut upper = true;
    for c in s.chars() {
        if !c.is_ascii_alphanumeric() {
            upper = true;
            continue;
        }
        if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `inputSchema` -> `input_schema`, `_meta` -> `meta`, `URL` -> `url`.
pub fn snake(s: &str) -> String {
    let s = s.rsplit('/').next().unwrap_or(s);
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            continue;
        }
        if c.is_ascii_uppercase() {
            let prev_lower = i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if !out.is_empty() && !out.ends_with('_') && (prev_lower || (prev_upper && next_lower)) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out.trim_matches('_').to_owned()
}
