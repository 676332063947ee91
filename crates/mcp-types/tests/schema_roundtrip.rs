//! Checks the generated wire types against the official schemas: every definition of every
//! revision has a Rust type, every generated sample of it decodes and re-encodes for that revision
//! unchanged and valid, and encoding for an older revision drops exactly the newer fields.

mod support;

use mcp_types::__registry::{SCHEMA_TYPES, lookup};
use mcp_types::ProtocolVersion;
use serde_json::Value;
use support::{Failures, deep_merge, json_diff, likeness, schema, short};

/// The failure report of one sample: what was tested, on what, and what went wrong.
fn report(name: &str, rev: ProtocolVersion, label: &str, sample: &Value, problem: &str) -> String {
    format!("{name} @ {rev} [{label}]\n  sample: {}\n  {problem}", short(sample))
}

/// The differences between what was expected and what the round trip produced, one per line.
fn differences(expected: &Value, actual: &Value) -> String {
    let mut lines = json_diff(expected, actual);
    lines.truncate(8);
    format!("differs from the sample:\n    {}\n  got: {}", lines.join("\n    "), short(actual))
}

/// The first of `candidates` most like `target` (see [`support::likeness`]).
fn most_alike(target: &Value, candidates: Vec<Value>) -> Value {
    let mut best: Option<(usize, Value)> = None;
    for candidate in candidates {
        let score = likeness(target, &candidate);
        if best.as_ref().is_none_or(|(best_score, _)| score > *best_score) {
            best = Some((score, candidate));
        }
    }
    best.expect("a definition has at least one sample").1
}

/// Every revision has a vendored schema, and every definition of every revision has a Rust type.
#[test]
fn every_definition_has_a_rust_type() {
    let mut failures = Failures::default();
    for rev in ProtocolVersion::ALL {
        let doc = schema(rev.as_str());
        for name in doc.definition_names() {
            if lookup(name, rev).is_none() {
                failures.push(format!("{name} @ {rev}: no Rust type in the registry"));
            }
        }
    }
    failures.assert_none("definitions without a Rust type");
}

/// The registry maps every name, for each revision whose schema defines it, to exactly one Rust
/// type (a name may mean different things in different revisions), and to none for the others.
#[test]
fn registry_revisions_match_the_schemas() {
    let mut failures = Failures::default();
    for rev in ProtocolVersion::ALL {
        let doc = schema(rev.as_str());
        let mut names: Vec<&str> = SCHEMA_TYPES.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let types: Vec<&str> = SCHEMA_TYPES
                .iter()
                .filter(|t| t.name == name && t.revisions.contains(rev))
                .map(|t| t.rust_type)
                .collect();
            match (doc.defines(name), types.len()) {
                (true, 1) | (false, 0) => {}
                (true, 0) => {} // reported by `every_definition_has_a_rust_type`
                (true, _) => failures.push(format!("{name} @ {rev}: several Rust types {types:?}")),
                (false, _) => failures.push(format!("{name} @ {rev}: {types:?}, but the schema has no {name}")),
            }
        }
    }
    failures.assert_none("registry entries");
}

/// Every sample of every definition of every revision decodes into its Rust type and encodes
/// back for that revision to exactly the same JSON, which is valid against the schema.
#[test]
fn every_sample_roundtrips_unchanged() {
    let mut failures = Failures::default();
    let mut checked = 0;
    for rev in ProtocolVersion::ALL {
        let doc = schema(rev.as_str());
        for name in doc.definition_names() {
            let Some(entry) = lookup(name, rev) else {
                continue; // reported by `every_definition_has_a_rust_type`
            };
            for sample in doc.samples(name) {
                checked += 1;
                let fail = |problem: &str| report(name, rev, &sample.label, &sample.value, problem);
                match (entry.roundtrip)(sample.value.clone(), rev.only()) {
                    Err(error) => failures.push(fail(&format!("{} failed: {error}", entry.rust_type))),
                    Ok(output) if output != sample.value => {
                        failures.push(fail(&differences(&sample.value, &output)));
                    }
                    Ok(output) => {
                        if let Err(error) = doc.validate(name, &output) {
                            failures.push(fail(&format!("output is invalid: {error}")));
                        }
                    }
                }
            }
        }
    }
    eprintln!("round-tripped {checked} samples");
    failures.assert_none("round trips");
}

/// For a definition both an older and a newer revision have: the older revision's full sample,
/// with every property of the newer revision's full sample added to it, encodes for the older
/// revision to exactly the older full sample: the newer fields are dropped, nothing else.
///
/// Where the definition holds unions, the newer sample merged in is the full variant most like
/// the older sample (the same union branches), so that branches are not mixed.
#[test]
fn encoding_for_an_older_revision_drops_newer_fields() {
    let mut failures = Failures::default();
    for (i, &old) in ProtocolVersion::ALL.iter().enumerate() {
        let old_doc = schema(old.as_str());
        for &new in &ProtocolVersion::ALL[i + 1..] {
            let new_doc = schema(new.as_str());
            for name in old_doc.definition_names() {
                if !new_doc.defines(name) {
                    continue;
                }
                let Some(entry) = lookup(name, old) else {
                    continue; // reported by `every_definition_has_a_rust_type`
                };
                let expected = old_doc.full(name);
                let mut merged = expected.clone();
                deep_merge(&mut merged, &most_alike(&expected, new_doc.full_variants(name)));
                let label = format!("{old} full + {new} full");
                let fail = |problem: &str| report(name, old, &label, &merged, problem);
                match (entry.roundtrip)(merged.clone(), old.only()) {
                    Err(error) => failures.push(fail(&format!("{} failed: {error}", entry.rust_type))),
                    Ok(output) if output != expected => failures.push(fail(&differences(&expected, &output))),
                    Ok(_) => {}
                }
            }
        }
    }
    failures.assert_none("downgrades");
}
