//! `cargo xtask fuzz [--minutes N] [--only NAME] [--jobs J]`: builds the libFuzzer binaries of
//! `fuzz/` with the nightly toolchain and runs each target N minutes (default 1), J at a time
//! (default 1), on its corpus `fuzz/corpus/<name>/` plus seeds made from the protocol's example
//! messages; crashes go to `fuzz/artifacts/<name>/`. Then it minimizes each corpus
//! (`-merge=1`), prints the executions and coverage of each target and the corpus sizes, and
//! fails if any target crashed.
//!
//! No cargo-fuzz: the flags are the ones it passes (sanitizer coverage with inline 8-bit
//! counters, a PC table and traced comparisons, `--cfg fuzzing`, AddressSanitizer), for the
//! host target so that build scripts and proc macros stay uninstrumented.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

const RUSTFLAGS: &str = "-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Zsanitizer=address";
const TARGET: &str = "x86_64-unknown-linux-gnu";

struct Options {
    minutes: f64,
    only: Option<String>,
    jobs: usize,
}

/// What one run of one target gave.
struct Outcome {
    name: String,
    crashed: bool,
    executions: u64,
    new_units: u64,
    coverage: String,
    corpus_files: usize,
    corpus_bytes: u64,
    log: PathBuf,
}

/// Runs the command (see the module docs).
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let options = parse(args)?;
    let fuzz = root.join("fuzz");
    let mut targets = target_names(&fuzz)?;
    if let Some(only) = &options.only {
        if !targets.contains(only) {
            bail!("no target {only}; the targets: {}", targets.join(", "));
        }
        targets.retain(|t| t == only);
    }
    build(&fuzz)?;
    let seeds = fuzz.join("target/seeds");
    make_seeds(root, &seeds, &targets)?;
    let mut outcomes = Vec::new();
    for batch in targets.chunks(options.jobs.max(1)) {
        let handles: Vec<_> = batch
            .iter()
            .map(|name| {
                let (fuzz, seeds, name, minutes) = (fuzz.clone(), seeds.clone(), name.clone(), options.minutes);
                std::thread::spawn(move || run_target(&fuzz, &seeds, &name, minutes))
            })
            .collect();
        for handle in handles {
            outcomes.push(handle.join().expect("a fuzzing thread panicked")?);
        }
    }
    report(&outcomes)
}

fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options { minutes: 1.0, only: None, jobs: 1 };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--minutes" => options.minutes = value()?.parse().context("--minutes takes a number")?,
            "--only" => options.only = Some(value()?.clone()),
            "--jobs" => options.jobs = value()?.parse().context("--jobs takes a number")?,
            _ => bail!("usage: cargo xtask fuzz [--minutes N] [--only NAME] [--jobs J]"),
        }
    }
    Ok(options)
}

/// The targets: the files of `fuzz/fuzz_targets/`.
fn target_names(fuzz: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = fs::read_dir(fuzz.join("fuzz_targets"))?
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".rs").map(str::to_owned))
        .collect();
    names.sort();
    Ok(names)
}

fn build(fuzz: &Path) -> Result<()> {
    println!("==> building the fuzz targets (nightly, sanitizer coverage, AddressSanitizer)");
    let status = Command::new("cargo")
        .args(["+nightly", "build", "--release", "--bins", "--target", TARGET])
        .env("RUSTFLAGS", RUSTFLAGS)
        // The workspace pins stable; fuzz/ is built by nightly through `+nightly`.
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO")
        .current_dir(fuzz)
        .status()
        .context("cargo +nightly (the nightly toolchain is needed)")?;
    if !status.success() {
        bail!("building the fuzz targets failed");
    }
    Ok(())
}

/// One target: fuzz for `minutes`, then merge the corpus (and the seeds) into a minimal one.
fn run_target(fuzz: &Path, seeds: &Path, name: &str, minutes: f64) -> Result<Outcome> {
    let binary = fuzz.join("target").join(TARGET).join("release").join(name);
    let corpus = fuzz.join("corpus").join(name);
    let artifacts = fuzz.join("artifacts").join(name);
    fs::create_dir_all(&corpus)?;
    fs::create_dir_all(&artifacts)?;
    let logs = fuzz.join("target/logs");
    fs::create_dir_all(&logs)?;
    let log = logs.join(format!("{name}.log"));
    let before = artifact_count(&artifacts);
    println!("==> fuzzing {name} for {minutes} min (log: {})", log.display());
    let seconds = (minutes * 60.0).round().max(1.0) as u64;
    let status = Command::new(&binary)
        .arg(&corpus)
        .arg(seeds.join(name))
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .args(["-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1", "-max_len=65536"])
        .stdout(Stdio::null())
        .stderr(fs::File::create(&log)?)
        .status()
        .with_context(|| format!("running {}", binary.display()))?;
    let text = fs::read_to_string(&log).unwrap_or_default();
    let crashed = !status.success() || artifact_count(&artifacts) > before;
    merge(&binary, fuzz, &corpus, &seeds.join(name), name)?;
    let (corpus_files, corpus_bytes) = size(&corpus);
    Ok(Outcome {
        name: name.to_owned(),
        crashed,
        executions: stat(&text, "stat::number_of_executed_units:"),
        new_units: stat(&text, "stat::new_units_added:"),
        coverage: coverage(&text),
        corpus_files,
        corpus_bytes,
        log,
    })
}

/// Replaces the corpus by the smallest set of its inputs and the seeds that covers the same.
fn merge(binary: &Path, fuzz: &Path, corpus: &Path, seeds: &Path, name: &str) -> Result<()> {
    let merged = fuzz.join("target/merged").join(name);
    let _ = fs::remove_dir_all(&merged);
    fs::create_dir_all(&merged)?;
    let out = Command::new(binary)
        .arg("-merge=1")
        .arg(&merged)
        .arg(corpus)
        .arg(seeds)
        .args(["-timeout=10", "-rss_limit_mb=2048", "-max_len=65536"])
        .output()
        .with_context(|| format!("merging the corpus of {name}"))?;
    if !out.status.success() {
        bail!("merging the corpus of {name} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    }
    fs::remove_dir_all(corpus)?;
    fs::rename(&merged, corpus)?;
    Ok(())
}

fn artifact_count(dir: &Path) -> usize {
    fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

fn size(dir: &Path) -> (usize, u64) {
    let files: Vec<u64> = fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).filter_map(|e| e.metadata().ok()).map(|m| m.len()).collect())
        .unwrap_or_default();
    (files.len(), files.iter().sum())
}

/// The number after `key` in libFuzzer's final stats.
fn stat(log: &str, key: &str) -> u64 {
    log.lines().rev().find_map(|l| l.strip_prefix(key)?.trim().parse().ok()).unwrap_or(0)
}

/// `cov: N ft: M` of libFuzzer's last status line.
fn coverage(log: &str) -> String {
    log.lines()
        .rev()
        .find_map(|l| {
            let at = l.find("cov: ")?;
            let words: Vec<&str> = l[at..].split_whitespace().take(4).collect();
            Some(words.join(" "))
        })
        .unwrap_or_else(|| "cov: ?".to_owned())
}

fn report(outcomes: &[Outcome]) -> Result<()> {
    println!(
        "\n{:<10} {:>14} {:>10} {:<22} {:>8} {:>10}",
        "target", "executions", "new units", "coverage", "corpus", "bytes"
    );
    for o in outcomes {
        println!(
            "{:<10} {:>14} {:>10} {:<22} {:>8} {:>10}{}",
            o.name,
            o.executions,
            o.new_units,
            o.coverage,
            o.corpus_files,
            o.corpus_bytes,
            if o.crashed { "  CRASH" } else { "" }
        );
    }
    let total: u64 = outcomes.iter().map(|o| o.corpus_bytes).sum();
    println!(
        "corpus total: {} files, {:.1} KiB",
        outcomes.iter().map(|o| o.corpus_files).sum::<usize>(),
        total as f64 / 1024.0
    );
    let crashed: Vec<String> =
        outcomes.iter().filter(|o| o.crashed).map(|o| format!("{} ({})", o.name, o.log.display())).collect();
    if !crashed.is_empty() {
        bail!("crashes (inputs under fuzz/artifacts/): {}", crashed.join(", "));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Seeds, from the example messages of the 2026-07-28 schema (vendored in mcp-types).

/// Writes each target's seeds under `dir/<target>/`, fresh.
fn make_seeds(root: &Path, dir: &Path, targets: &[String]) -> Result<()> {
    let _ = fs::remove_dir_all(dir);
    let examples = examples(root)?;
    let registry = fs::read_to_string(root.join("crates/mcp-types/src/generated/registry.rs"))?;
    let type_names: Vec<&str> =
        registry.lines().filter_map(|l| l.trim().strip_prefix("name: \"")?.strip_suffix("\",")).collect();
    for target in targets {
        let out = dir.join(target);
        fs::create_dir_all(&out)?;
        let seeds = seeds_of(target, &examples, &type_names);
        for (i, seed) in seeds.iter().enumerate() {
            fs::write(out.join(format!("seed-{i:04}")), seed)?;
        }
    }
    Ok(())
}

/// Every example: its type's name (the directory), and its JSON, compact.
fn examples(root: &Path) -> Result<Vec<(String, String)>> {
    let dir = root.join("crates/mcp-types/schema/2026-07-28/examples");
    let mut out = Vec::new();
    for entry in fs::read_dir(&dir).with_context(|| dir.display().to_string())? {
        let entry = entry?;
        let ty = entry.file_name().to_string_lossy().into_owned();
        for file in fs::read_dir(entry.path())? {
            let value: Value = serde_json::from_slice(&fs::read(file?.path())?)?;
            out.push((ty.clone(), value.to_string()));
        }
    }
    out.sort();
    Ok(out)
}

fn seeds_of(target: &str, examples: &[(String, String)], type_names: &[&str]) -> Vec<Vec<u8>> {
    let framed = |prefix: &[u8], json: &str, suffix: &str| [prefix, json.as_bytes(), suffix.as_bytes()].concat();
    let each = |f: &dyn Fn(&str, &str) -> Vec<Vec<u8>>| examples.iter().flat_map(|(t, j)| f(t, j)).collect();
    match target {
        "frame" => each(&|_, j| {
            vec![j.as_bytes().to_vec(), format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{j}}}"#).into_bytes()]
        }),
        "raw" | "args" => each(&|_, j| vec![j.as_bytes().to_vec()]),
        "types" => each(&|t, j| {
            let Some(i) = type_names.iter().position(|n| *n == t) else { return vec![] };
            (0..5u8).map(|rev| framed(&[(i >> 8) as u8, i as u8, rev], j, "")).collect()
        }),
        "sse" => each(&|_, j| vec![[&[255, 3][..], b"id: 1\ndata: ", j.as_bytes(), b"\n\n"].concat()]),
        "lines" => each(&|_, j| vec![framed(&[255, 5], j, "\n"), framed(&[40, 9], j, "\r\n \n")]),
        "state" => each(&|_, j| vec![framed(&[1, 40, 7], j, ""), framed(&[0], j, "")]),
        "schema" => examples.iter().take(16).map(|(_, j)| j.as_bytes().to_vec()).collect(),
        "template" => TEMPLATES.iter().map(|t| t.as_bytes().to_vec()).collect(),
        _ => Vec::new(),
    }
}

const TEMPLATES: &[&str] = &[
    "file:///{path}\nfile:///a/b.txt",
    "docs://{section}{?q,lang}\ndocs://intro?q=rust&lang=en",
    "{+base}/items/{id}{#frag}\nhttp://example.com/items/7#top",
    "res://x{/seg}/y\nres://x/a%20b/y",
    "weather://{city}/{day}\nweather://paris/monday",
    "repo://{owner}/{name}/blob/{+path}\nrepo://a/b/blob/src/main.rs",
];
