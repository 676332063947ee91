//! Self-check of the sample generator of `support`: every sample it makes of every definition of
//! every vendored schema must be valid against that schema, and must cover what it promises.

mod support;

use serde_json::{Value, json};
use support::{Failures, schema, schemas, short};

/// Every sample of every definition of every revision validates against its own definition.
#[test]
fn every_sample_is_valid() {
    let mut failures = Failures::default();
    let mut count = 0;
    for (rev, doc) in schemas() {
        for name in doc.definition_names() {
            let samples = doc.samples(name);
            assert!(samples.len() >= 2 || doc.minimal(name) == doc.full(name), "{rev} {name}: too few samples");
            for sample in samples {
                count += 1;
                if let Err(error) = doc.validate(name, &sample.value) {
                    failures.push(format!(
                        "{name} @ {rev} [{}]\n  sample: {}\n  error: {error}",
                        sample.label,
                        short(&sample.value)
                    ));
                }
            }
        }
    }
    eprintln!("validated {count} samples");
    failures.assert_none("generated samples");
}

/// Every vendored revision has at least the core definitions, so a misplaced file is noticed.
#[test]
fn every_schema_is_loaded() {
    let revs: Vec<&str> = schemas().keys().map(String::as_str).collect();
    assert_eq!(revs, ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]);
    for doc in schemas().values() {
        for name in ["JSONRPCMessage", "Tool", "CallToolResult", "Implementation"] {
            assert!(doc.defines(name), "{}: no {name}", doc.rev);
        }
    }
}

/// The generator follows the conventions the round-trip tests rely on.
#[test]
fn samples_follow_the_conventions() {
    let doc = schema("2025-06-18");

    // Minimal: only required properties; full: every property.
    assert_eq!(doc.minimal("Implementation"), json!({ "name": "s", "version": "s" }));
    assert_eq!(doc.full("Implementation"), json!({ "name": "s", "title": "s", "version": "s" }));

    // Numbers stay inside their bounds and are not integral.
    assert_eq!(doc.full("Annotations")["priority"], json!(0.5));

    // Formats get valid strings.
    assert_eq!(doc.minimal("BlobResourceContents"), json!({ "blob": "aGVsbG8=", "uri": "https://example.com/x" }));

    // Every branch of a union and every type of a type list is sampled.
    let ids: Vec<Value> = doc.samples("RequestId").into_iter().map(|s| s.value).collect();
    assert_eq!(ids, [json!("s"), json!(1)]);
    let content_types: Vec<Value> = doc.samples("ContentBlock").into_iter().map(|s| s.value["type"].clone()).collect();
    for ty in ["text", "image", "audio", "resource_link", "resource"] {
        assert!(content_types.contains(&json!(ty)), "no {ty} content block in {content_types:?}");
    }

    // Every value of an enum is sampled.
    let levels = doc.samples("LoggingLevel");
    assert_eq!(levels.len(), 8, "{levels:?}");

    // `_meta` gets its declared properties only; free-form maps get one entry.
    let request = doc.full("JSONRPCRequest");
    assert_eq!(request["params"]["_meta"], json!({ "progressToken": "s" }));
    assert_eq!(request["params"]["k"], json!("v"));
    assert_eq!(doc.full("ClientCapabilities")["experimental"], json!({ "k": { "k": "v" } }));

    // `allOf` is merged, with the more specific `const` winning.
    let error = schema("2025-11-25").full("URLElicitationRequiredError");
    assert_eq!(error["error"]["code"], json!(-32042));
    assert!(error["error"]["data"]["elicitations"].is_array());

    // Recursive definitions terminate.
    let value = schema("2026-07-28").full("JSONValue");
    assert!(value.is_object());
}

/// The helpers of the round-trip tests: merging samples and describing differences.
#[test]
fn merge_and_diff_helpers() {
    let mut old = json!({ "a": 1, "o": { "x": 1 }, "l": [{ "x": 1 }], "k": "v" });
    let new = json!({ "a": 2, "b": 2, "o": { "x": 2, "y": 2 }, "l": [{ "y": 2 }], "m": { "k": "v" } });
    support::deep_merge(&mut old, &new);
    assert_eq!(
        old,
        json!({ "a": 1, "b": 2, "o": { "x": 1, "y": 2 }, "l": [{ "x": 1, "y": 2 }], "k": "v", "m": { "k": "v" } })
    );
    let mut no_extra = json!({ "a": 1 });
    support::deep_merge(&mut no_extra, &json!({ "k": "v" }));
    assert_eq!(no_extra, json!({ "a": 1 }));

    assert!(support::json_diff(&old, &old).is_empty());
    let diff = support::json_diff(&json!({ "a": [1, 2], "b": 1 }), &json!({ "a": [1, 3], "c": 1 }));
    assert_eq!(diff, ["/a/1: expected 2, got 3", "/b: missing (expected 1)", "/c: unexpected 1"]);
}

/// Validation is not vacuous: wrong types, missing properties, wrong constants and bad formats
/// are rejected, in both dialects.
#[test]
fn validation_rejects_invalid_instances() {
    for rev in ["2025-06-18", "2026-07-28"] {
        let doc = schema(rev);
        assert!(doc.validate("Implementation", &json!({ "name": "s", "version": "s" })).is_ok());
        assert!(doc.validate("Implementation", &json!({ "name": 1, "version": "s" })).is_err());
        assert!(doc.validate("Implementation", &json!({ "name": "s" })).is_err());
        assert!(doc.validate("TextContent", &json!({ "type": "image", "text": "s" })).is_err());
        assert!(doc.validate("Resource", &json!({ "name": "s", "uri": "not a uri" })).is_err());
    }
    let error = schema("2026-07-28").full("UnsupportedProtocolVersionError");
    let mut wrong_code = error.clone();
    wrong_code["error"]["code"] = json!(-32000);
    assert!(schema("2026-07-28").validate("UnsupportedProtocolVersionError", &error).is_ok());
    assert!(schema("2026-07-28").validate("UnsupportedProtocolVersionError", &wrong_code).is_err());
}
