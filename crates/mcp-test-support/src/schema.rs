//! Checking a value against one definition of a revision's official schema (vendored in
//! `crates/mcp-types/schema/`).

use serde_json::{Value, json};

/// Asserts that `value` is valid against definition `def` of the official schema of `rev`.
pub fn validate(rev: &str, def: &str, value: &Value) {
    // The workspace root is an ancestor of this crate's manifest directory.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join(format!("crates/mcp-types/schema/{rev}/schema.json")))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("no schema of revision {rev}"));
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let key = if doc.get("definitions").is_some() { "definitions" } else { "$defs" };
    doc["$ref"] = json!(format!("#/{key}/{def}"));
    let validator = jsonschema::validator_for(&doc).unwrap();
    let errors: Vec<String> = validator.iter_errors(value).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{def} @ {rev} invalid: {errors:?}\n{value}");
}

/// The schema definition of the result of a server's request `method` (`EmptyResult` for
/// those answered with an empty result).
pub fn result_def(method: &str) -> &'static str {
    match method {
        "initialize" => "InitializeResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "completion/complete" => "CompleteResult",
        "tasks/get" => "GetTaskResult",
        "tasks/list" => "ListTasksResult",
        "tasks/cancel" => "CancelTaskResult",
        "tasks/result" => "GetTaskPayloadResult",
        _ => "EmptyResult",
    }
}
