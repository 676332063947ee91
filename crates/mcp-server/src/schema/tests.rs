//! The checker against jsonschema: the same verdicts and messages.

use super::*;
use serde_json::json;

/// SplitMix64: a small seeded generator, so every run checks the same instances.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn float(x: f64) -> Value {
    Value::Number(Number::from_f64(x).unwrap())
}

/// Scalars, with the numbers where exactness matters: integers written as floats, `2^53`
/// and its neighbours, the ends of `u64` and `i64` as integers and as floats.
fn scalars() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(false),
        json!(0),
        json!(-1),
        json!(1),
        float(1.0),
        float(1.5),
        float(-0.5),
        float(-0.0),
        float(0.1),
        json!(2),
        json!(3),
        json!(5),
        json!(10),
        json!(100),
        json!(127),
        json!(128),
        json!(-128),
        json!(-129),
        json!(255),
        json!(256),
        json!(65535),
        json!(65536),
        json!(2_147_483_647),
        json!(4_294_967_296_u64),
        json!(9_007_199_254_740_992_u64),
        json!(9_007_199_254_740_993_u64),
        float(9_007_199_254_740_992.0),
        json!(u64::MAX),
        float(18_446_744_073_709_551_616.0),
        json!(i64::MIN),
        float(-9_223_372_036_854_775_808.0),
        json!(i64::MAX),
        float(1e308),
        float(-1e308),
        float(2.5),
        json!(""),
        json!("a"),
        json!("ab"),
        json!("abc"),
        json!("é"),
        json!("😀"),
        json!("日本語"),
        json!("xxxxxxxxxx"),
        json!("celsius"),
        json!("fahrenheit"),
        json!("kelvin"),
        json!("Circle"),
        json!("Square"),
        json!("Dot"),
        json!("A"),
        json!("C"),
        json!("1"),
        json!("not an email"),
    ]
}

fn composites() -> Vec<Value> {
    vec![
        json!([]),
        json!([1]),
        json!(["a"]),
        json!(["a", "b"]),
        json!([1, "a"]),
        json!([null]),
        json!([1, 2, 3]),
        json!([[1]]),
        json!([{}]),
        json!([1.0, 2]),
        json!({}),
        json!({"a": 1}),
        json!({"a": "x"}),
        json!({"x": null}),
        json!({"a": 1, "b": [1]}),
        json!({"text": "hi"}),
        json!({"text": 5}),
        json!({"kind": "Circle", "radius": 1}),
        json!({"kind": "Dot"}),
        json!({"A": "x"}),
        json!({"city": "Oslo"}),
        json!({"a": {"b": 1.0}, "c": null}),
    ]
}

struct Pools {
    scalars: Vec<Value>,
    composites: Vec<Value>,
    /// How often, in percent, a generated value ignores its schema; varied per instance.
    noise: u64,
}

impl Pools {
    fn any(&self, rng: &mut Rng, depth: u32) -> Value {
        match rng.below(10) {
            0..=5 => rng.pick(&self.scalars).clone(),
            6 | 7 => rng.pick(&self.composites).clone(),
            8 if depth > 0 => Value::Array((0..rng.below(4)).map(|_| self.any(rng, depth - 1)).collect()),
            9 if depth > 0 => {
                let keys = ["a", "b", "x", "kind", "text", "zzz"];
                let n = rng.below(4);
                Value::Object((0..n).map(|_| (rng.pick(&keys).to_string(), self.any(rng, depth - 1))).collect())
            }
            _ => rng.pick(&self.scalars).clone(),
        }
    }

    /// An instance shaped by `schema` (so that many are valid), or not (so that many are not).
    fn instance(&self, schema: &Value, rng: &mut Rng, depth: u32) -> Value {
        let Value::Object(s) = schema else { return self.any(rng, depth) };
        if depth == 0 || rng.chance(self.noise) {
            return self.any(rng, depth);
        }
        if let Some(c) = s.get("const")
            && rng.chance(50)
        {
            return variant(c, rng);
        }
        if let Some(Value::Array(options)) = s.get("enum")
            && !options.is_empty()
            && rng.chance(60)
        {
            return variant(rng.pick(options), rng);
        }
        if let Some(not) = s.get("not")
            && rng.chance(40)
        {
            return self.instance(not, rng, depth);
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            if let Some(Value::Array(branches)) = s.get(key)
                && rng.chance(70)
            {
                return self.instance(rng.pick(branches), rng, depth);
            }
        }
        let ty = match s.get("type") {
            Some(Value::String(t)) => t.as_str(),
            Some(Value::Array(types)) => rng.pick(types).as_str().unwrap(),
            _ if s.contains_key("properties") || s.contains_key("required") => "object",
            _ if s.contains_key("additionalProperties") || s.contains_key("minProperties") => "object",
            _ if s.contains_key("items") || s.contains_key("minItems") => "array",
            _ if s.contains_key("minLength") || s.contains_key("maxLength") => "string",
            _ if s.contains_key("minimum") || s.contains_key("exclusiveMinimum") => "number",
            _ if s.contains_key("maximum") || s.contains_key("exclusiveMaximum") => "number",
            _ => return self.any(rng, depth),
        };
        match ty {
            "null" => Value::Null,
            "boolean" => json!(rng.chance(50)),
            "integer" | "number" => self.number(s, ty == "integer", rng),
            "string" => string_near(s, self.noise, rng),
            "array" => {
                let len = size_near(s, "minItems", "maxItems", self.noise, rng);
                let items = s.get("items");
                Value::Array(
                    (0..len)
                        .map(|_| match items {
                            Some(items) => self.instance(items, rng, depth - 1),
                            None => self.any(rng, depth - 1),
                        })
                        .collect(),
                )
            }
            _ => {
                let mut object = Map::new();
                let required =
                    |name: &String| s.get("required").is_some_and(|r| r.as_array().unwrap().contains(&json!(name)));
                if let Some(Value::Object(properties)) = s.get("properties") {
                    for (name, schema) in properties {
                        if rng.chance(if required(name) { 100 - self.noise } else { 70 }) {
                            object.insert(name.clone(), self.instance(schema, rng, depth - 1));
                        }
                    }
                }
                let additional = s.get("additionalProperties").filter(|a| a.is_object());
                let extra = if additional.is_some() { rng.below(4) } else { usize::from(rng.chance(self.noise)) };
                for i in 0..extra {
                    let value = match additional {
                        Some(schema) => self.instance(schema, rng, depth - 1),
                        None => self.any(rng, depth - 1),
                    };
                    object.insert(format!("{}{i}", rng.pick(&["k", "a/b~", "é"])), value);
                }
                Value::Object(object)
            }
        }
    }

    /// A number: mostly one the schema allows (by an `f64` reading of its bounds), else one
    /// at, next to or away from a bound.
    fn number(&self, s: &Map<String, Value>, integer: bool, rng: &mut Rng) -> Value {
        let bound = |k: &str| s.get(k).and_then(Value::as_number);
        let bounds: Vec<&Number> =
            ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"].into_iter().filter_map(bound).collect();
        if !bounds.is_empty() && rng.chance(self.noise.max(5) * 2) {
            let bound = *rng.pick(&bounds);
            return match (rng.below(6), bound.as_i64(), bound.as_u64()) {
                (0, ..) => Value::Number(bound.clone()),
                (1, ..) => float(bound.as_f64().unwrap()),
                (2, Some(i), _) => json!(i.saturating_add(1)),
                (3, Some(i), _) => json!(i.saturating_sub(1)),
                (2 | 3, None, Some(u)) => json!(u.saturating_sub(1)),
                (4, ..) => float(bound.as_f64().unwrap() + 0.5),
                _ => float(bound.as_f64().unwrap() - 0.5),
            };
        }
        let f = |k: &str| bound(k).and_then(Number::as_f64);
        let allowed = |v: &&Value| {
            let x = v.as_f64().unwrap();
            (!integer || x.fract() == 0.0)
                && f("minimum").is_none_or(|b| x >= b)
                && f("maximum").is_none_or(|b| x <= b)
                && f("exclusiveMinimum").is_none_or(|b| x > b)
                && f("exclusiveMaximum").is_none_or(|b| x < b)
        };
        let numbers: Vec<&Value> = self.scalars.iter().filter(|v| v.is_number()).collect();
        let fitting: Vec<&Value> = numbers.iter().copied().filter(allowed).collect();
        match (fitting.is_empty() || rng.chance(self.noise), bounds.first()) {
            (false, _) => (*rng.pick(&fitting)).clone(),
            (true, Some(bound)) if !rng.chance(self.noise) => Value::Number((*bound).clone()),
            _ => (*rng.pick(&numbers)).clone(),
        }
    }
}

/// The same JSON value, or one equal to it written otherwise (`1` as `1.0`).
fn variant(value: &Value, rng: &mut Rng) -> Value {
    match value {
        Value::Number(n) if rng.chance(50) => float(n.as_f64().unwrap()),
        Value::Array(items) => Value::Array(items.iter().map(|v| variant(v, rng)).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), variant(v, rng))).collect()),
        v => v.clone(),
    }
}

/// A size: mostly within the bounds, else at or next to one.
fn size_near(s: &Map<String, Value>, min: &str, max: &str, noise: u64, rng: &mut Rng) -> usize {
    let (min, max) = (s.get(min).and_then(Value::as_u64), s.get(max).and_then(Value::as_u64));
    let limits: Vec<usize> = [min, max].into_iter().flatten().map(|l| l as usize).collect();
    if !limits.is_empty() && rng.chance(noise.max(5) * 2) {
        return (*rng.pick(&limits) + rng.below(3)).saturating_sub(1);
    }
    let low = min.unwrap_or(0) as usize;
    let high = max.map_or(low + 3, |max| (max as usize).min(low + 3));
    if high < low { low } else { low + rng.below(high - low + 1) }
}

/// A string with a length in code points within or next to its bounds, of one- to
/// four-byte characters.
fn string_near(s: &Map<String, Value>, noise: u64, rng: &mut Rng) -> Value {
    let len = size_near(s, "minLength", "maxLength", noise, rng);
    Value::String((0..len).map(|_| *rng.pick(&['a', 'é', '語', '😀'])).collect())
}

/// Schemas within the subset: what schemars derives (the macros' settings: subschemas
/// inlined, no `$schema`; and a root schema as `schema_for!` writes it), whole tool schemas,
/// and edge cases for each keyword.
fn schemas() -> Vec<Value> {
    [schemars_schemas(), tool_schemas(), edge_cases_of_values(), edge_cases_of_structure()].concat()
}

/// What schemars derives, one type at a time.
fn schemars_schemas() -> Vec<Value> {
    vec![
        json!({"type": "string"}),
        json!({"type": ["string", "null"]}),
        json!({"format": "uint32", "minimum": 0, "type": "integer"}),
        json!({"format": "int64", "type": "integer"}),
        json!({"format": "double", "type": "number"}),
        json!({"type": "boolean"}),
        json!({"items": {"type": "string"}, "type": "array"}),
        json!({"properties": {"city": {"type": "string"}, "country": {"type": ["string", "null"]}},
               "required": ["city"], "type": "object"}),
        json!({"additionalProperties": {"format": "int32", "type": "integer"}, "type": "object"}),
        json!({"enum": ["celsius", "fahrenheit"], "type": "string"}),
        json!({"enum": ["celsius", "fahrenheit", null], "type": ["string", "null"]}),
        tagged_enum(),
        externally_tagged_enum(),
        json!({"anyOf": [{"format": "int64", "type": "integer"}, {"type": "string"}]}),
        json!({"format": "int8", "maximum": 127, "minimum": -128, "type": "integer"}),
        json!({"maxLength": 1, "minLength": 1, "type": "string"}),
        json!({"format": "uint64", "minimum": 0, "type": ["integer", "null"]}),
        schemars_struct(),
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Inner", "type": "object",
               "properties": {"city": {"type": "string"}, "country": {"type": ["string", "null"]}}, "required": ["city"]}),
    ]
}

/// Tool schemas as the macros and hand-written tools build them.
fn tool_schemas() -> Vec<Value> {
    vec![
        json!({"type": "object", "properties": {"text": {"type": "string", "description": "the note"}}, "required": ["text"]}),
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
        json!({"type": "object", "properties": {"place": {"properties": {"city": {"type": "string"}}, "required": ["city"],
               "type": "object"}, "unit": {"enum": ["celsius", "fahrenheit"], "type": "string"}, "shape": tagged_enum()},
               "required": ["place", "unit"]}),
        json!({"type": "object", "properties": {}}),
    ]
}

/// Edge cases of the keywords on values: `type`, the bounds of numbers, `const` and `enum`.
fn edge_cases_of_values() -> Vec<Value> {
    vec![
        json!(true),
        json!(false),
        json!({}),
        json!({"type": "integer"}),
        json!({"type": ["integer"]}),
        json!({"type": ["number", "string"]}),
        json!({"type": ["null", "boolean", "object", "array"]}),
        json!({"minimum": 9_007_199_254_740_993_u64}),
        json!({"maximum": 9_007_199_254_740_992.0}),
        json!({"maximum": u64::MAX, "exclusiveMinimum": i64::MIN}),
        json!({"exclusiveMaximum": 18_446_744_073_709_551_616.0, "minimum": -9_223_372_036_854_775_808.0}),
        json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1.5}),
        json!({"minimum": 1.5, "type": "integer"}),
        json!({"minimum": 5, "maximum": 2}),
        json!({"minimum": -0.5, "maximum": 0.1, "exclusiveMaximum": 0}),
        json!({"const": 1}),
        json!({"const": 9_007_199_254_740_993_u64}),
        json!({"const": {"a": [1, 2.0], "b": null}}),
        json!({"const": [1, "a", {"x": true}]}),
        json!({"const": null}),
        json!({"enum": [1, "a", null, [1], {"x": 1}]}),
        json!({"enum": [1.5, 2, -1]}),
        json!({"enum": [u64::MAX, 9_007_199_254_740_993_u64, 0.1]}),
        json!({"enum": []}),
        json!({"enum": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "celsius"]}),
    ]
}

/// Edge cases of the other keywords: sizes, arrays, objects, combinators, annotations.
fn edge_cases_of_structure() -> Vec<Value> {
    vec![
        json!({"minLength": 2, "maxLength": 3}),
        json!({"maxLength": 0}),
        json!({"minLength": 4, "maxLength": 2}),
        json!({"minItems": 1, "maxItems": 2, "items": {"type": "integer"}}),
        json!({"items": false}),
        json!({"items": true, "type": "array"}),
        json!({"items": {"items": {"minimum": 1}}}),
        json!({"minProperties": 1, "maxProperties": 2}),
        json!({"properties": {"a": {"type": "string"}, "b": false, "c": true, "a/b~0": {"type": "integer"}},
               "required": ["a"], "additionalProperties": false}),
        json!({"required": ["a", "b"]}),
        json!({"additionalProperties": {"type": "integer", "minimum": 0}, "properties": {"a": {"type": "string"}}}),
        json!({"additionalProperties": false}),
        json!({"anyOf": [{"type": "string"}, {"minimum": 3}]}),
        json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}),
        json!({"oneOf": [true, true]}),
        json!({"allOf": [{"minimum": 1}, {"maximum": 5}, {"type": "integer"}]}),
        json!({"not": {"type": "null"}}),
        json!({"not": {"properties": {"a": {"const": 1}}, "required": ["a"]}}),
        json!({"not": {}}),
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "T", "description": "d",
               "$comment": "c", "default": 1, "examples": [1, "x"], "deprecated": true, "readOnly": false,
               "writeOnly": false, "format": "email", "type": "string"}),
        json!({"format": "date-time"}),
        json!({"format": "no-such-format", "type": ["string", "integer"]}),
    ]
}

/// schemars' schema of a struct with a field of each kind.
fn schemars_struct() -> Value {
    json!({
        "additionalProperties": false,
        "description": "Doc comment.",
        "properties": {
            "arr": {"items": {"format": "uint8", "maximum": 255, "minimum": 0, "type": "integer"},
                    "maxItems": 3, "minItems": 3, "type": "array"},
            "b": {"type": "boolean"},
            "c": {"maxLength": 1, "minLength": 1, "type": "string"},
            "d": {"default": 0, "format": "uint16", "maximum": 65535, "minimum": 0, "type": "integer"},
            "e": {"enum": ["celsius", "fahrenheit"], "type": "string"},
            "f": {"format": "double", "type": "number"},
            "i": {"format": "int64", "type": "integer"},
            "m": {"additionalProperties": {"format": "int32", "type": "integer"}, "type": "object"},
            "n": {"properties": {"city": {"type": "string"}, "country": {"type": ["string", "null"]}},
                  "required": ["city"], "type": "object"},
            "o": {"type": ["string", "null"]},
            "ou": {"format": "uint64", "minimum": 0, "type": ["integer", "null"]},
            "s": {"description": "the text", "type": "string"},
            "u": {"format": "uint32", "minimum": 0, "type": "integer"},
            "v": {"items": {"type": "string"}, "type": "array"}
        },
        "required": ["s", "u", "i", "f", "b", "v", "n", "m", "e", "arr", "c"],
        "type": "object"
    })
}

/// schemars' schema of an internally tagged enum.
fn tagged_enum() -> Value {
    json!({"oneOf": [
        {"properties": {"kind": {"const": "Circle", "type": "string"}, "radius": {"format": "double", "type": "number"}},
         "required": ["kind", "radius"], "type": "object"},
        {"properties": {"kind": {"const": "Square", "type": "string"}, "side": {"format": "double", "type": "number"}},
         "required": ["kind", "side"], "type": "object"},
        {"properties": {"kind": {"const": "Dot", "type": "string"}}, "required": ["kind"], "type": "object"}
    ]})
}

/// schemars' schema of an externally tagged enum.
fn externally_tagged_enum() -> Value {
    json!({"oneOf": [
        {"enum": ["C"], "type": "string"},
        {"additionalProperties": false, "properties": {"A": {"type": "string"}}, "required": ["A"], "type": "object"},
        {"additionalProperties": false,
         "properties": {"B": {"properties": {"x": {"format": "int32", "type": "integer"}}, "required": ["x"], "type": "object"}},
         "required": ["B"], "type": "object"}
    ]})
}

fn their_lines(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() { e.to_string() } else { format!("{at}: {e}") }
        })
        .collect()
}

/// The same verdict as jsonschema, on every instance: each schema against every value of
/// the pools, and against a few hundred instances generated from it. Invalid instances get
/// the same problems, in jsonschema's words (in whatever order).
#[test]
fn same_verdicts_as_jsonschema() {
    let mut pools = Pools { scalars: scalars(), composites: composites(), noise: 0 };
    let mut rng = Rng(0x5EED_1234_ABCD_0042);
    let (mut checked, mut valid) = (0, 0);
    for schema in schemas() {
        let ours = Schema::compile(&schema).unwrap_or_else(|| panic!("outside the subset: {schema}"));
        let theirs = jsonschema::validator_for(&schema).unwrap();
        let mut instances: Vec<Value> = pools.scalars.iter().chain(&pools.composites).cloned().collect();
        for _ in 0..300 {
            pools.noise = *rng.pick(&[0, 3, 10, 30]);
            instances.push(pools.instance(&schema, &mut rng, 4));
        }
        let mut verdicts = [0; 2];
        for instance in &instances {
            let verdict = theirs.is_valid(instance);
            assert_eq!(ours.is_valid(instance), verdict, "schema {schema}\ninstance {instance}");
            let mut problems = ours.problems(instance, usize::MAX);
            let mut expected = their_lines(&theirs, instance);
            problems.sort();
            expected.sort();
            assert_eq!(problems, expected, "schema {schema}\ninstance {instance}");
            verdicts[usize::from(verdict)] += 1;
        }
        // Schemas that take everything or nothing; `format` is an annotation only.
        let constant = [json!(true), json!(false), json!({}), json!({"enum": []}), json!({"not": {}})];
        let constant = constant.contains(&schema)
            || [json!({"oneOf": [true, true]}), json!({"format": "date-time"})].contains(&schema);
        assert!(constant || verdicts.iter().all(|n| *n >= 10), "{verdicts:?} (invalid, valid) for {schema}");
        checked += instances.len();
        valid += verdicts[1];
    }
    assert!(checked > 20_000 && valid > 5_000, "{checked} instances, {valid} valid");
}

#[test]
fn schemas_outside_the_subset_go_to_jsonschema() {
    for schema in outside_the_subset() {
        assert!(Schema::compile(&schema).is_none(), "{schema}");
    }
}

/// Malformed: jsonschema says what is wrong with them.
#[test]
fn malformed_schemas_go_to_jsonschema_which_refuses_them() {
    for schema in malformed() {
        assert!(Schema::compile(&schema).is_none(), "{schema}");
        assert!(jsonschema::validator_for(&schema).is_err(), "jsonschema accepts {schema}");
    }
}

/// Well-formed schemas with keywords (anywhere) that the subset does not have.
fn outside_the_subset() -> Vec<Value> {
    vec![
        json!({"$ref": "#"}),
        json!({"$defs": {"a": {}}}),
        json!({"definitions": {"a": {}}}),
        json!({"$id": "urn:example:a"}),
        json!({"$anchor": "a"}),
        json!({"$dynamicRef": "#a"}),
        json!({"$dynamicAnchor": "a"}),
        json!({"$vocabulary": {}}),
        json!({"pattern": "^a"}),
        json!({"patternProperties": {"^a": {}}}),
        json!({"multipleOf": 2}),
        json!({"uniqueItems": true}),
        json!({"prefixItems": [true]}),
        json!({"contains": true}),
        json!({"minContains": 1}),
        json!({"maxContains": 1}),
        json!({"if": true}),
        json!({"then": true}),
        json!({"else": true}),
        json!({"dependentRequired": {}}),
        json!({"dependentSchemas": {}}),
        json!({"dependencies": {}}),
        json!({"additionalItems": false}),
        json!({"propertyNames": true}),
        json!({"unevaluatedProperties": false}),
        json!({"unevaluatedItems": false}),
        json!({"contentMediaType": "text/plain"}),
        json!({"contentEncoding": "base64"}),
        json!({"contentSchema": {}}),
        json!({"x-unknown": 1}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema#"}),
        // anywhere below the root, too
        json!({"properties": {"a": {"$ref": "#"}}}),
        json!({"properties": {"a": {"$schema": DRAFT_2020_12}}}),
        json!({"items": {"pattern": "a"}}),
        json!({"anyOf": [{"type": "string"}, {"uniqueItems": true}]}),
        json!({"not": {"if": true}}),
        json!({"additionalProperties": {"propertyNames": {}}}),
        // well formed, but not how we take them (jsonschema reads 1.0 as a size)
        json!({"minLength": 1.0}),
    ]
}

/// Schemas that are not valid JSON Schema.
fn malformed() -> Vec<Value> {
    vec![
        json!({"required": "x"}),
        json!({"required": [1]}),
        json!({"required": ["a", "a"]}),
        json!({"type": "strin"}),
        json!({"type": []}),
        json!({"type": ["string", "string"]}),
        json!({"type": 1}),
        json!({"minLength": -1}),
        json!({"maxLength": 1.5}),
        json!({"minItems": "2"}),
        json!({"maxProperties": null}),
        json!({"minimum": "0"}),
        json!({"exclusiveMaximum": true}),
        json!({"properties": []}),
        json!({"properties": {"a": 1}}),
        json!({"additionalProperties": 1}),
        json!({"items": [true]}),
        json!({"enum": 1}),
        json!({"anyOf": []}),
        json!({"oneOf": {}}),
        json!({"allOf": [1]}),
        json!({"not": null}),
        json!({"title": 1}),
        json!({"description": false}),
        json!({"$comment": 1}),
        json!({"format": 1}),
        json!({"examples": {}}),
        json!({"deprecated": "yes"}),
        json!({"readOnly": 1}),
        json!({"writeOnly": null}),
        json!({"properties": {"a": {"type": "strin"}}}),
        json!([1]),
        json!(1),
    ]
}

#[test]
fn problems_in_jsonschema_words() {
    let schema = json!({
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "unit": {"enum": ["celsius", "fahrenheit"]},
            "tags": {"type": "array", "items": {"type": ["string", "null"]}},
            "a/b~c": {"minimum": 0}
        },
        "required": ["text", "unit"],
        "additionalProperties": false
    });
    let ours = Schema::compile(&schema).unwrap();
    let problems = |instance: Value| ours.problems(&instance, 8);
    assert_eq!(problems(json!({"unit": "celsius"})), [r#""text" is a required property"#]);
    assert_eq!(problems(json!({"text": 5, "unit": "celsius"})), [r#"/text: 5 is not of type "string""#]);
    assert_eq!(problems(json!({"text": "hi", "unit": "celsius"})), Vec::<String>::new());
    assert_eq!(problems(json!([])), [r#"[] is not of type "object""#]);
    assert_eq!(
        problems(json!({"text": "hi", "unit": "kelvin", "x": 1, "y": 2})),
        [
            r#"/unit: "kelvin" is not one of "celsius" or "fahrenheit""#,
            "Additional properties are not allowed ('x', 'y' were unexpected)"
        ]
    );
    assert_eq!(
        problems(json!({"text": "hi", "unit": "celsius", "tags": ["a", 1], "a/b~c": -1})),
        [r#"/a~1b~0c: -1 is less than the minimum of 0"#, r#"/tags/1: 1 is not of types "null", "string""#]
    );
    // At most as many as asked for.
    let many = Value::Object((0..20).map(|i| (format!("k{i}"), json!(i))).collect());
    assert_eq!(problems(many.clone()).len(), 3); // two required, one for the unexpected
    let strings = Schema::compile(&json!({"additionalProperties": {"type": "string"}})).unwrap();
    assert_eq!(strings.problems(&many, 8).len(), 8);
    assert_eq!(strings.problems(&many, 8)[0], r#"/k0: 0 is not of type "string""#);
}
