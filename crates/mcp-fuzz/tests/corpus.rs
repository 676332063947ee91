//! Replays every input under `fuzz/corpus/<target>/` and `fuzz/artifacts/<target>/` through
//! the target's function, on the stable toolchain: an ordinary `cargo test` keeps every
//! finding of the fuzzers fixed, and the corpus they grew passing.
//!
//! Each replay is counted per target and checked against what is on disk (every file under the
//! directory, counted apart from the replay) and against what is committed: a corpus of at
//! least [`MIN_CORPUS`] inputs per target, and the crashes of [`CRASHES`]. A wrong path, a
//! directory no target reads, or a crash file gone, fails here instead of replaying nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The fewest corpus inputs a target may have (the smallest committed corpus, `lines`, has
/// some 290 after minimization).
const MIN_CORPUS: usize = 100;

/// The crashes committed under `fuzz/artifacts/`, per target: each is a finding fixed with a
/// test of its own. A new crash file is added here with its fix.
const CRASHES: &[(&str, usize)] = &[("frame", 4), ("raw", 2), ("types", 2), ("lines", 3), ("template", 6)];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir` (none when it does not exist), sorted, skipping hidden ones (`.gitkeep`).
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    files.retain(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')));
    files.sort();
    files
}

/// Replays `fuzz/<kind>/<target>/` for every target; the inputs replayed per target.
fn replay(kind: &str) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for (name, target) in mcp_fuzz::TARGETS {
        let mut count = 0;
        for file in inputs(&fuzz_dir().join(kind).join(name)) {
            let data = std::fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| target(&data));
            assert!(outcome.is_ok(), "{name}: {} fails again", file.display());
            count += 1;
        }
        counts.insert((*name).to_owned(), count);
    }
    println!("{kind}: {counts:?} inputs replayed");
    counts
}

/// The files under `fuzz/<kind>/`, counted per directory (every directory, whatever its name;
/// a file directly under `fuzz/<kind>/` counts under "").
fn on_disk(kind: &str) -> BTreeMap<String, usize> {
    let root = fuzz_dir().join(kind);
    let mut counts = BTreeMap::new();
    let entries = std::fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    for entry in entries.map(Result::unwrap) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if entry.path().is_dir() {
            counts.insert(name, inputs(&entry.path()).len());
        } else {
            *counts.entry(String::new()).or_default() += 1;
        }
    }
    counts
}

/// Every file on disk was replayed, by the target of its directory.
fn assert_all_replayed(kind: &str, replayed: &BTreeMap<String, usize>) {
    let mut expected = on_disk(kind);
    // A target without a directory replays nothing, as on disk.
    for name in replayed.keys() {
        expected.entry(name.clone()).or_insert(0);
    }
    assert_eq!(replayed, &expected, "fuzz/{kind}/: inputs replayed per target (left) against files on disk (right)");
}

#[test]
fn every_corpus_input_passes() {
    let replayed = replay("corpus");
    assert_all_replayed("corpus", &replayed);
    // The corpus is committed: a small one would mean the replay reads the wrong place.
    for (name, count) in &replayed {
        assert!(*count >= MIN_CORPUS, "{name}: {count} corpus inputs under {}", fuzz_dir().display());
    }
}

#[test]
fn every_crash_found_stays_fixed() {
    let replayed = replay("artifacts");
    assert_all_replayed("artifacts", &replayed);
    let committed: BTreeMap<String, usize> = mcp_fuzz::TARGETS
        .iter()
        .map(|(name, _)| {
            let crashes = CRASHES.iter().find(|(n, _)| n == name).map_or(0, |(_, c)| *c);
            ((*name).to_owned(), crashes)
        })
        .collect();
    assert_eq!(replayed, committed, "crashes replayed per target (left) against those committed (right)");
}

#[test]
fn every_target_has_its_fuzz_target_file() {
    for (name, _) in mcp_fuzz::TARGETS {
        let file = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(text.contains(&format!("mcp_fuzz::{name}(")), "{} calls another target", file.display());
    }
}
