//! Replays every input under `fuzz/corpus/<target>/` and `fuzz/artifacts/<target>/` through
//! the target's function, on the stable toolchain: an ordinary `cargo test` keeps every
//! finding of the fuzzers fixed, and the corpus they grew passing.

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir` (none when it does not exist), sorted.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn replay(kind: &str) -> usize {
    let mut count = 0;
    for (name, target) in mcp_fuzz::TARGETS {
        for file in inputs(&fuzz_dir().join(kind).join(name)) {
            if file.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
                continue;
            }
            let data = std::fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| target(&data));
            assert!(outcome.is_ok(), "{name}: {} fails again", file.display());
            count += 1;
        }
    }
    println!("{kind}: {count} inputs replayed");
    count
}

#[test]
fn every_corpus_input_passes() {
    let count = replay("corpus");
    // The corpus is committed: an empty one would mean the replay reads the wrong place.
    assert!(count >= mcp_fuzz::TARGETS.len(), "only {count} corpus inputs under {}", fuzz_dir().display());
}

#[test]
fn every_crash_found_stays_fixed() {
    replay("artifacts");
}

#[test]
fn every_target_has_its_fuzz_target_file() {
    for (name, _) in mcp_fuzz::TARGETS {
        let file = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(text.contains(&format!("mcp_fuzz::{name}(")), "{} calls another target", file.display());
    }
}
