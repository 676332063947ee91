//! The form a Rust type describes, for `elicitation/create` in form mode: derived from the
//! type's `JsonSchema` once per type and revision, lowered to the revision's restricted schema,
//! with the compiled check of the answers (see [`elicit`](crate::elicit) for what a form can
//! hold). Also the inlined JSON Schema prompt arguments are read from.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use mcp_jsonrpc::sync::MutexExt as _;
use mcp_types::{
    ElicitRequestFormParams, ElicitRequestFormParamsRequestedSchema, ElicitRequestParams, PrimitiveSchemaDefinition,
    ProtocolVersion,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::Schema;

/// A type that a revision's elicitation form cannot express (see [`elicit`](crate::elicit)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot elicit `{type_name}`{}: {problem}", .field.as_deref().map(|f| format!(" (field `{f}`)")).unwrap_or_default())]
pub struct ElicitSchemaError {
    /// The type asked for.
    pub type_name: String,
    /// The field at fault; `None` when the type as a whole is.
    pub field: Option<String>,
    /// What is wrong.
    pub problem: FormProblem,
}

/// Why a type is not an elicitation form ([`ElicitSchemaError::problem`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormProblem {
    /// The type is not a struct with named fields (an object schema).
    #[error("a form is an object: use a struct with named fields")]
    NotAnObject,
    /// A field is itself an object (or a recursive type): forms are flat.
    #[error("nested objects are not allowed: a form is flat")]
    Nested,
    /// An array whose items are not the values of a string enum.
    #[error("only arrays of a unit-variant enum (multi-select) are allowed")]
    Array,
    /// An enum whose values are not all strings.
    #[error("enum values must be strings")]
    NonStringEnum,
    /// A field's schema is no primitive type the form knows (several types, `null`, none).
    #[error("{0} is not a primitive type a form can hold")]
    Type(String),
    /// A constraint the form cannot carry.
    #[error("`{0}` cannot be expressed in an elicitation form")]
    Keyword(String),
    /// The feature exists only from a later revision.
    #[error("{what} needs protocol revision {since} or later (the session speaks {version})")]
    NeedsRevision {
        /// What the field needs (`multi-select`).
        what: &'static str,
        /// The first revision that has it.
        since: ProtocolVersion,
        /// The revision in use.
        version: ProtocolVersion,
    },
}

/// Why an accepted answer's content is not a `T`
/// ([`ClientRequestError::InvalidContent`](crate::ClientRequestError::InvalidContent)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContentError {
    /// The content breaks the requested schema (each problem, as the validator words it).
    #[error("it does not match the requested schema: {}", .0.join("; "))]
    Schema(Vec<String>),
    /// The content matches the schema but does not decode into the type.
    #[error("it does not decode: {0}")]
    Decode(#[source] serde_json::Error),
}

/// The two shapes of `requestedSchema`: 2025-06-18's, and the one 2025-11-25 introduced and
/// 2026-07-28 kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// 2025-06-18: no defaults but booleans', enums with `enumNames`, no multi-select.
    First,
    /// 2025-11-25 and 2026-07-28: defaults, titled enums with `oneOf`, multi-select.
    Second,
}

impl Dialect {
    fn of(version: ProtocolVersion) -> Option<Dialect> {
        match version {
            ProtocolVersion::V2024_11_05 | ProtocolVersion::V2025_03_26 => None,
            ProtocolVersion::V2025_06_18 => Some(Dialect::First),
            _ => Some(Dialect::Second),
        }
    }
}

/// A type's form in one dialect: the schema to send and its compiled check.
#[derive(Debug)]
pub(crate) struct Form {
    pub(crate) requested: ElicitRequestFormParamsRequestedSchema,
    pub(crate) check: Option<Schema>,
}

/// A type's schemars schema (derived once) and its form in each dialect (lowered once each).
struct Derived {
    type_name: String,
    schema: Value,
    /// The type's field names in declaration order (schemars' `properties` come sorted).
    order: Vec<&'static str>,
    first: OnceLock<Result<Arc<Form>, ElicitSchemaError>>,
    second: OnceLock<Result<Arc<Form>, ElicitSchemaError>>,
}

/// The JSON Schema (2020-12) of what deserializes into `T`, every subschema inlined and no
/// `$schema`: the shape elicitation forms and prompt arguments are read from.
pub(crate) fn inline_schema_for<T: JsonSchema>() -> Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_deserialize()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The names of `T`'s fields in declaration order, as serde's derive lists them to the
/// deserializer (`deserialize_struct`, renamed as serde renames them, aliases included); empty
/// for a type that does not deserialize as a struct (`#[serde(flatten)]`, hand-written impls),
/// whose form keeps schemars' alphabetical order.
fn field_order<T: DeserializeOwned>() -> Vec<&'static str> {
    use serde::de::{Error as _, Visitor, value::Error};

    /// A deserializer that only notes the field names it is asked for.
    struct Names<'a>(&'a mut Vec<&'static str>);

    impl<'de> serde::Deserializer<'de> for Names<'_> {
        type Error = Error;

        fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Error> {
            Err(Error::custom("not a struct"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Error> {
            self.0.extend_from_slice(fields);
            Err(Error::custom("field names noted"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }

    let mut names = Vec::new();
    let _ = T::deserialize(Names(&mut names));
    names
}

/// The derived forms, by type.
fn derived<T: DeserializeOwned + JsonSchema + 'static>() -> Arc<Derived> {
    static CACHE: OnceLock<Mutex<HashMap<TypeId, Arc<Derived>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(d) = cache.lock_unpoisoned().get(&TypeId::of::<T>()) {
        return d.clone();
    }
    let schema = inline_schema_for::<T>();
    let d = Arc::new(Derived {
        type_name: T::schema_name().into_owned(),
        schema,
        order: field_order::<T>(),
        first: OnceLock::new(),
        second: OnceLock::new(),
    });
    cache.lock_unpoisoned().entry(TypeId::of::<T>()).or_insert(d).clone()
}

/// `T`'s form in `version`: `Ok(None)` when the revision has no elicitation.
pub(crate) fn form_for<T: DeserializeOwned + JsonSchema + 'static>(
    version: ProtocolVersion,
) -> Result<Option<Arc<Form>>, ElicitSchemaError> {
    let Some(dialect) = Dialect::of(version) else { return Ok(None) };
    let d = derived::<T>();
    let slot = match dialect {
        Dialect::First => &d.first,
        Dialect::Second => &d.second,
    };
    slot.get_or_init(|| lower(&d.type_name, &d.schema, &d.order, version).map(Arc::new)).clone().map(Some)
}

/// Checks that `T` is a form in the newest revision: what
/// [`ToolDef::elicits`](crate::ToolDef::elicits) does (without the cache: the order of the
/// fields, which needs `T: Deserialize`, makes no difference to the check).
pub(crate) fn check_form<T: JsonSchema + 'static>() -> Result<(), ElicitSchemaError> {
    let schema = inline_schema_for::<T>();
    lower(&T::schema_name(), &schema, &[], ProtocolVersion::LATEST).map(|_| ())
}

impl Form {
    /// The `elicitation/create` params asking for this form.
    pub(crate) fn params(&self, message: String, version: ProtocolVersion) -> ElicitRequestParams {
        let mut params = ElicitRequestFormParams::new(message, self.requested.clone());
        if version >= ProtocolVersion::V2025_11_25 {
            params.mode = Some("form".to_owned());
        }
        ElicitRequestParams::ElicitRequestForm(params)
    }
}

/// Lowers a schemars root schema to the form of `version`'s dialect, its properties in the
/// order of `order` (the type's fields; others after them).
fn lower(type_name: &str, schema: &Value, order: &[&str], version: ProtocolVersion) -> Result<Form, ElicitSchemaError> {
    let whole = |problem| ElicitSchemaError { type_name: type_name.to_owned(), field: None, problem };
    let Some(root) = schema.as_object().filter(|o| o.get("type") == Some(&Value::from("object"))) else {
        return Err(whole(FormProblem::NotAnObject));
    };
    for key in root.keys() {
        if !matches!(
            key.as_str(),
            "type" | "properties" | "required" | "title" | "description" | "additionalProperties" | "$defs"
        ) {
            return Err(whole(if key == "$ref" { FormProblem::Nested } else { FormProblem::NotAnObject }));
        }
    }
    let mut properties = mcp_types::indexmap::IndexMap::new();
    if let Some(fields) = root.get("properties").and_then(Value::as_object) {
        let mut fields: Vec<(&String, &Value)> = fields.iter().collect();
        fields.sort_by_key(|(name, _)| order.iter().position(|o| o == name).unwrap_or(order.len()));
        for (name, field) in fields {
            let definition = property(field, version).map_err(|problem| ElicitSchemaError {
                type_name: type_name.to_owned(),
                field: Some(name.clone()),
                problem,
            })?;
            properties.insert(name.clone(), definition);
        }
    }
    let mut requested = ElicitRequestFormParamsRequestedSchema::new(properties);
    let required: Vec<String> = root
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str())
        .map(str::to_owned)
        .collect();
    if !required.is_empty() {
        requested.required = Some(required);
    }
    let check = mcp_types::to_value_for(&requested, version).ok().and_then(|mut sent| {
        strip_enum_names(&mut sent);
        Schema::compile(&sent)
    });
    Ok(Form { requested, check })
}

/// `enumNames` (2025-06-18) is no JSON Schema keyword: the check goes without it.
fn strip_enum_names(schema: &mut Value) {
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for p in props.values_mut() {
            if let Some(p) = p.as_object_mut() {
                p.remove("enumNames");
            }
        }
    }
}

/// The annotations every primitive schema has.
struct Common {
    title: Option<String>,
    description: Option<String>,
    default: Option<Value>,
}

/// An enum's values, each with its display title if it has one.
type Options = Vec<(String, Option<String>)>;

/// Lowers one property of a form.
fn property(field: &Value, version: ProtocolVersion) -> Result<PrimitiveSchemaDefinition, FormProblem> {
    let Some(s) = field.as_object() else { return Err(FormProblem::Type("an unconstrained value".to_owned())) };
    let mut s = without_null(s.clone())?;
    let text = |v: Option<Value>| v.and_then(|v| v.as_str().map(str::to_owned));
    let common = Common {
        title: text(s.remove("title")),
        description: text(s.remove("description")),
        default: s.remove("default").filter(|d| !d.is_null()),
    };
    for annotation in ["examples", "deprecated", "readOnly", "writeOnly", "$comment"] {
        s.remove(annotation);
    }
    if s.contains_key("$ref") || s.contains_key("properties") || s.get("type") == Some(&Value::from("object")) {
        return Err(FormProblem::Nested);
    }
    let ty = s.remove("type");
    let definition = match (ty.as_ref().and_then(Value::as_str), options(&mut s)?) {
        (None | Some("string"), Some(options)) => single_select(options, common, version)?,
        (Some("array"), None) => multi_select(&mut s, common, version)?,
        (Some("string"), None) => string(&mut s, common)?,
        (Some(t @ ("integer" | "number")), None) => number(&mut s, t, common)?,
        (Some("boolean"), None) => PrimitiveSchemaDefinition::Boolean(mcp_types::BooleanSchema {
            default: common.default.map(|d| d.as_bool().ok_or_else(bad_default)).transpose()?,
            description: common.description,
            title: common.title,
        }),
        (Some(_), Some(_)) => return Err(FormProblem::NonStringEnum),
        (other, None) => {
            return Err(FormProblem::Type(
                other.map_or_else(|| "a value of any type".to_owned(), |t| format!("`{t}`")),
            ));
        }
    };
    match s.keys().next() {
        Some(key) => Err(FormProblem::Keyword(key.clone())),
        None => Ok(definition),
    }
}

fn bad_default() -> FormProblem {
    FormProblem::Keyword("default".to_owned())
}

/// An optional field's schema (`Option<T>`) as the schema of `T`: `null` taken out of `type`,
/// `enum`, or an `anyOf`/`oneOf` with a `{"type": "null"}` branch.
fn without_null(mut s: Map<String, Value>) -> Result<Map<String, Value>, FormProblem> {
    if let Some(Value::Array(types)) = s.get("type") {
        let types: Vec<&Value> = types.iter().filter(|t| t.as_str() != Some("null")).collect();
        match types.as_slice() {
            [one] => {
                let one = (*one).clone();
                s.insert("type".to_owned(), one);
            }
            _ => return Err(FormProblem::Type("a value of several types".to_owned())),
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = s.get(key) else { continue };
        let is_null = |b: &Value| b.get("type").and_then(Value::as_str) == Some("null");
        if !branches.iter().any(is_null) {
            continue;
        }
        let rest: Vec<Value> = branches.iter().filter(|b| !is_null(b)).cloned().collect();
        s.remove(key);
        match rest.as_slice() {
            [Value::Object(inner)] if key == "anyOf" => {
                for (k, v) in without_null(inner.clone())? {
                    s.entry(k).or_insert(v);
                }
            }
            _ => {
                s.insert(key.to_owned(), Value::Array(rest));
            }
        }
    }
    Ok(s)
}

/// The values of a string enum (`enum`, `const`, or a `oneOf` of those, with titles), taken
/// out of `s`; `None` when `s` is no enum.
fn options(s: &mut Map<String, Value>) -> Result<Option<Options>, FormProblem> {
    let strings = |values: &Value| -> Result<Vec<String>, FormProblem> {
        let values = values.as_array().ok_or(FormProblem::NonStringEnum)?;
        values
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| v.as_str().map(str::to_owned).ok_or(FormProblem::NonStringEnum))
            .collect()
    };
    if let Some(values) = s.remove("enum") {
        return Ok(Some(strings(&values)?.into_iter().map(|v| (v, None)).collect()));
    }
    if let Some(value) = s.remove("const") {
        return Ok(Some(vec![(value.as_str().ok_or(FormProblem::NonStringEnum)?.to_owned(), None)]));
    }
    let Some(branches) = s.remove("oneOf") else { return Ok(None) };
    let mut found = Options::new();
    for branch in branches.as_array().into_iter().flatten() {
        let mut b = branch.as_object().cloned().ok_or(FormProblem::NonStringEnum)?;
        let title = b.remove("title").or_else(|| b.remove("description")).and_then(|t| t.as_str().map(str::to_owned));
        if b.get("type").is_some_and(|t| t != "string") {
            return Err(if b.contains_key("properties") { FormProblem::Nested } else { FormProblem::NonStringEnum });
        }
        let values = options(&mut b)?.ok_or(FormProblem::Nested)?;
        let titled = values.len() == 1;
        found.extend(values.into_iter().map(|(v, _)| (v, if titled { title.clone() } else { None })));
    }
    Ok(Some(found))
}

fn single_select(
    options: Options,
    common: Common,
    version: ProtocolVersion,
) -> Result<PrimitiveSchemaDefinition, FormProblem> {
    let Common { title, description, default } = common;
    let default = default.map(|d| d.as_str().map(str::to_owned).ok_or_else(bad_default)).transpose()?;
    let titled = options.iter().any(|(_, t)| t.is_some());
    let values: Vec<String> = options.iter().map(|(v, _)| v.clone()).collect();
    if version < ProtocolVersion::V2025_11_25 {
        let names = titled.then(|| options.into_iter().map(|(v, t)| t.unwrap_or(v)).collect());
        return Ok(PrimitiveSchemaDefinition::LegacyTitledEnum(mcp_types::LegacyTitledEnumSchema {
            default,
            description,
            r#enum: values,
            enum_names: names,
            title,
        }));
    }
    if !titled {
        return Ok(PrimitiveSchemaDefinition::UntitledSingleSelectEnum(mcp_types::UntitledSingleSelectEnumSchema {
            default,
            description,
            r#enum: values,
            title,
        }));
    }
    let one_of = options
        .into_iter()
        .map(|(v, t)| mcp_types::TitledSingleSelectEnumSchemaOneOfItem::new(v.clone(), t.unwrap_or(v)))
        .collect::<Vec<_>>();
    Ok(PrimitiveSchemaDefinition::TitledSingleSelectEnum(mcp_types::TitledSingleSelectEnumSchema {
        default,
        description,
        one_of,
        title,
    }))
}

fn multi_select(
    s: &mut Map<String, Value>,
    common: Common,
    version: ProtocolVersion,
) -> Result<PrimitiveSchemaDefinition, FormProblem> {
    let Some(Value::Object(items)) = s.remove("items") else { return Err(FormProblem::Array) };
    let mut items = without_null(items)?;
    items.remove("type").filter(|t| t != "string").map_or(Ok(()), |_| Err(FormProblem::Array))?;
    let options = options(&mut items)?.ok_or(FormProblem::Array)?;
    if let Some(key) = items.keys().find(|k| !matches!(k.as_str(), "title" | "description")) {
        return Err(FormProblem::Keyword(format!("items.{key}")));
    }
    if version < ProtocolVersion::V2025_11_25 {
        let since = ProtocolVersion::V2025_11_25;
        return Err(FormProblem::NeedsRevision { what: "a multi-select", since, version });
    }
    s.remove("uniqueItems");
    let size = |s: &mut Map<String, Value>, key: &str| {
        s.remove(key).map(|v| v.as_i64().ok_or_else(|| FormProblem::Keyword(key.to_owned()))).transpose()
    };
    let (min_items, max_items) = (size(s, "minItems")?, size(s, "maxItems")?);
    let Common { title, description, default } = common;
    let default = default.map(|d| serde_json::from_value::<Vec<String>>(d).map_err(|_| bad_default())).transpose()?;
    if options.iter().any(|(_, t)| t.is_some()) {
        let any_of = options
            .into_iter()
            .map(|(v, t)| mcp_types::TitledMultiSelectEnumSchemaItemsAnyOfItem::new(v.clone(), t.unwrap_or(v)))
            .collect::<Vec<_>>();
        let items = mcp_types::TitledMultiSelectEnumSchemaItems::new(any_of);
        return Ok(PrimitiveSchemaDefinition::TitledMultiSelectEnum(mcp_types::TitledMultiSelectEnumSchema {
            default,
            description,
            items,
            max_items,
            min_items,
            title,
        }));
    }
    let items =
        mcp_types::UntitledMultiSelectEnumSchemaItems::new(options.into_iter().map(|(v, _)| v).collect::<Vec<_>>());
    Ok(PrimitiveSchemaDefinition::UntitledMultiSelectEnum(mcp_types::UntitledMultiSelectEnumSchema {
        default,
        description,
        items,
        max_items,
        min_items,
        title,
    }))
}

fn string(s: &mut Map<String, Value>, common: Common) -> Result<PrimitiveSchemaDefinition, FormProblem> {
    use mcp_types::StringSchemaFormat as F;
    let format = match s.remove("format").as_ref().and_then(Value::as_str) {
        Some("email") => Some(F::Email),
        Some("uri") => Some(F::Uri),
        Some("date") => Some(F::Date),
        Some("date-time") => Some(F::DateTime),
        _ => None, // an annotation the form has no room for: decoding checks it
    };
    let length = |s: &mut Map<String, Value>, key: &str| {
        s.remove(key).map(|v| v.as_i64().ok_or_else(|| FormProblem::Keyword(key.to_owned()))).transpose()
    };
    Ok(PrimitiveSchemaDefinition::String(mcp_types::StringSchema {
        default: common.default.map(|d| d.as_str().map(str::to_owned).ok_or_else(bad_default)).transpose()?,
        description: common.description,
        format,
        max_length: length(s, "maxLength")?,
        min_length: length(s, "minLength")?,
        title: common.title,
    }))
}

fn number(s: &mut Map<String, Value>, ty: &str, common: Common) -> Result<PrimitiveSchemaDefinition, FormProblem> {
    s.remove("format"); // `int32`, `uint8`, `double`: the type and its range say it
    let bound = |s: &mut Map<String, Value>, key: &str| {
        s.remove(key).map(|v| v.as_f64().ok_or_else(|| FormProblem::Keyword(key.to_owned()))).transpose()
    };
    let ty = if ty == "integer" { mcp_types::NumberSchemaType::Integer } else { mcp_types::NumberSchemaType::Number };
    let mut schema = mcp_types::NumberSchema::new(ty);
    schema.default = common.default.map(|d| d.as_f64().ok_or_else(bad_default)).transpose()?;
    schema.description = common.description;
    schema.title = common.title;
    schema.minimum = bound(s, "minimum")?;
    schema.maximum = bound(s, "maximum")?;
    Ok(PrimitiveSchemaDefinition::Number(schema))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sent<T: DeserializeOwned + JsonSchema + 'static>(version: ProtocolVersion) -> Result<Value, ElicitSchemaError> {
        let form = form_for::<T>(version)?.expect("a revision with elicitation");
        Ok(mcp_types::to_value_for(&form.requested, version).unwrap())
    }

    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord)]
    #[serde(rename_all = "lowercase")]
    enum Size {
        Small,
        Large,
    }

    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    enum Topping {
        /// Extra cheese
        Cheese,
        /// Olives
        Olives,
        Ham,
    }

    /// An order.
    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    struct Order {
        /// Your name
        #[schemars(length(min = 1, max = 50))]
        name: String,
        /// Where to send the receipt
        #[schemars(email)]
        email: Option<String>,
        /// How many
        #[schemars(range(min = 1, max = 10))]
        count: u8,
        price: f64,
        /// Gift wrap
        #[serde(default)]
        gift: bool,
        size: Size,
        /// Toppings
        topping: Option<Topping>,
    }

    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct Renamed {
        zip_code: String,
        #[serde(alias = "b")]
        a_field: u8,
        #[serde(rename = "M")]
        m: bool,
    }

    #[test]
    fn a_forms_fields_come_in_declaration_order() {
        let keys = |version| {
            let form = form_for::<Order>(version).unwrap().unwrap();
            form.requested.properties.keys().cloned().collect::<Vec<_>>()
        };
        let declared = ["name", "email", "count", "price", "gift", "size", "topping"];
        assert_eq!(keys(ProtocolVersion::V2025_06_18), declared);
        assert_eq!(keys(ProtocolVersion::V2025_11_25), declared);
        // As serde names them, aliases aside.
        let form = form_for::<Renamed>(ProtocolVersion::LATEST).unwrap().unwrap();
        assert_eq!(form.requested.properties.keys().collect::<Vec<_>>(), ["zipCode", "aField", "M"]);
        assert_eq!(field_order::<Renamed>(), ["zipCode", "aField", "b", "M"]);
        assert!(field_order::<String>().is_empty());
    }

    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    struct Multi {
        /// Toppings
        #[schemars(length(min = 1))]
        toppings: Vec<Topping>,
        sizes: std::collections::BTreeSet<Size>,
    }

    #[test]
    fn a_struct_becomes_each_revisions_form() {
        let first = sent::<Order>(ProtocolVersion::V2025_06_18).unwrap();
        let second = sent::<Order>(ProtocolVersion::V2025_11_25).unwrap();
        let common = json!({
            "count": {"description": "How many", "maximum": 10, "minimum": 1, "type": "integer"},
            "email": {"description": "Where to send the receipt", "format": "email", "type": "string"},
            "gift": {"default": false, "description": "Gift wrap", "type": "boolean"},
            "name": {"description": "Your name", "maxLength": 50, "minLength": 1, "type": "string"},
            "price": {"type": "number"},
            "size": {"enum": ["small", "large"], "type": "string"},
        });
        let required = json!(["name", "count", "price", "size"]);
        let mut properties = common.clone();
        properties["topping"] = json!({
            "description": "Toppings", "type": "string",
            "enum": ["Ham", "Cheese", "Olives"], "enumNames": ["Ham", "Extra cheese", "Olives"],
        });
        assert_eq!(first, json!({"type": "object", "properties": properties, "required": required}));
        let mut properties = common;
        properties["topping"] = json!({
            "description": "Toppings", "type": "string",
            "oneOf": [
                {"const": "Ham", "title": "Ham"},
                {"const": "Cheese", "title": "Extra cheese"},
                {"const": "Olives", "title": "Olives"},
            ],
        });
        assert_eq!(second, json!({"type": "object", "properties": properties, "required": required}));
        assert_eq!(sent::<Order>(ProtocolVersion::V2026_07_28).unwrap(), second);
        assert!(form_for::<Order>(ProtocolVersion::V2025_03_26).unwrap().is_none());
        assert!(form_for::<Order>(ProtocolVersion::V2024_11_05).unwrap().is_none());
    }

    #[test]
    fn multi_selects_need_2025_11_25() {
        // The first field that does not fit, in declaration order.
        let err = sent::<Multi>(ProtocolVersion::V2025_06_18).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("toppings"));
        assert!(matches!(err.problem, FormProblem::NeedsRevision { since: ProtocolVersion::V2025_11_25, .. }));
        assert_eq!(
            err.to_string(),
            "cannot elicit `Multi` (field `toppings`): a multi-select needs protocol revision 2025-11-25 or later \
             (the session speaks 2025-06-18)"
        );
        assert_eq!(
            sent::<Multi>(ProtocolVersion::V2025_11_25).unwrap(),
            json!({
                "type": "object",
                "properties": {
                    "sizes": {"type": "array", "items": {"type": "string", "enum": ["small", "large"]}},
                    "toppings": {
                        "description": "Toppings", "type": "array", "minItems": 1,
                        "items": {"anyOf": [
                            {"const": "Ham", "title": "Ham"},
                            {"const": "Cheese", "title": "Extra cheese"},
                            {"const": "Olives", "title": "Olives"},
                        ]},
                    },
                },
                "required": ["toppings", "sizes"],
            })
        );
        check_form::<Multi>().unwrap();
    }

    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    struct Inner {
        a: String,
    }
    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    struct Nested {
        inner: Inner,
    }
    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    struct Strings {
        tags: Vec<String>,
    }
    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    struct Pattern {
        #[schemars(regex(pattern = "^[a-z]+$"))]
        code: String,
    }
    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    enum Shape {
        Circle { r: f64 },
        Dot,
    }
    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    struct WithShape {
        shape: Shape,
    }
    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    struct Map {
        counts: std::collections::HashMap<String, u32>,
    }
    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    struct Tuple(String, u32);

    #[test]
    fn what_a_form_cannot_hold_is_refused() {
        let problem = |e: ElicitSchemaError| (e.field, e.problem);
        let latest = ProtocolVersion::LATEST;
        assert_eq!(problem(sent::<Nested>(latest).unwrap_err()), (Some("inner".into()), FormProblem::Nested));
        assert_eq!(problem(sent::<Strings>(latest).unwrap_err()), (Some("tags".into()), FormProblem::Array));
        assert_eq!(
            problem(sent::<Pattern>(latest).unwrap_err()),
            (Some("code".into()), FormProblem::Keyword("pattern".into()))
        );
        assert_eq!(problem(sent::<WithShape>(latest).unwrap_err()), (Some("shape".into()), FormProblem::Nested));
        assert_eq!(problem(sent::<Map>(latest).unwrap_err()), (Some("counts".into()), FormProblem::Nested));
        assert_eq!(problem(sent::<Tuple>(latest).unwrap_err()), (None, FormProblem::NotAnObject));
        assert_eq!(problem(sent::<String>(latest).unwrap_err()), (None, FormProblem::NotAnObject));
        let err = check_form::<Nested>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot elicit `Nested` (field `inner`): nested objects are not allowed: a form is flat"
        );
    }
}
