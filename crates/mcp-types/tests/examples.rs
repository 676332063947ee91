//! Checks the generated wire types against the official example messages of the 2026-07-28
//! schema (`schema/2026-07-28/examples/<Definition>/*.json`): each decodes into the Rust type of
//! its definition and encodes back unchanged, and is valid against the schema.

mod support;

use std::path::PathBuf;

use mcp_types::__registry::lookup;
use mcp_types::ProtocolVersion;
use serde_json::Value;
use support::{Failures, json_diff, schema, schema_dir, short};

const REV: ProtocolVersion = ProtocolVersion::V2026_07_28;

/// Every example file, as (definition name, path), sorted.
fn example_files() -> Vec<(String, PathBuf)> {
    let dir = schema_dir().join(REV.as_str()).join("examples");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())) {
        let def_dir = entry.expect("directory entry").path();
        let name = def_dir.file_name().and_then(|n| n.to_str()).expect("UTF-8 name").to_owned();
        for file in std::fs::read_dir(&def_dir).unwrap_or_else(|e| panic!("reading {}: {e}", def_dir.display())) {
            let path = file.expect("directory entry").path();
            if path.extension().is_some_and(|ext| ext == "json") {
                files.push((name.clone(), path));
            }
        }
    }
    files.sort();
    files
}

/// Every example is valid against its definition, and round-trips through its Rust type for
/// 2026-07-28 to exactly the same JSON, less the members its definition does not declare.
#[test]
fn every_example_roundtrips_unchanged() {
    let doc = schema(REV.as_str());
    let files = example_files();
    assert!(files.len() > 50, "only {} example files found", files.len());
    let mut failures = Failures::default();
    for (name, path) in &files {
        let file = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let fail = |problem: String| format!("{name} @ {REV} [{file}]\n  {problem}");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let example: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));
        if !doc.defines(name) {
            failures.push(fail(format!("the {REV} schema has no definition {name}")));
            continue;
        }
        if let Err(error) = doc.validate(name, &example) {
            failures.push(fail(format!("the example is invalid: {error}")));
        }
        let Some(entry) = lookup(name, REV) else {
            failures.push(fail("no Rust type in the registry".to_owned()));
            continue;
        };
        // Members the schema does not declare are dropped by design.
        let expected = doc.declared(name, &example);
        match (entry.roundtrip)(example.clone(), REV.only()) {
            Err(error) => failures.push(fail(format!("{} failed: {error}", entry.rust_type))),
            Ok(output) if output != expected => {
                let mut lines = json_diff(&expected, &output);
                lines.truncate(8);
                failures.push(fail(format!(
                    "differs from the example:\n    {}\n  got: {}",
                    lines.join("\n    "),
                    short(&output)
                )));
            }
            Ok(_) => {}
        }
    }
    failures.assert_none("examples");
}
