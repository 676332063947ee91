//! `cargo xtask ci`: the checks CI runs, in order, stopping at the first failure.

use std::path::Path;
use std::process::Command;

use anyhow::{Result, bail};

/// Runs every check. `--no-fmt` etc. are not offered: CI runs everything.
pub fn run(root: &Path, _args: &[String]) -> Result<()> {
    let steps: &[(&str, &[&str], &[(&str, &str)])] = &[
        ("format", &["fmt", "--all", "--", "--check"], &[]),
        ("clippy", &["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"], &[]),
        ("tests", &["test", "--workspace", "--all-features"], &[]),
        ("docs", &["doc", "--workspace", "--no-deps", "--all-features"], &[("RUSTDOCFLAGS", "-D warnings")]),
    ];
    for (name, args, env) in steps {
        println!("==> {name}: cargo {}", args.join(" "));
        let status = Command::new(env!("CARGO")).args(*args).envs(env.iter().copied()).current_dir(root).status()?;
        if !status.success() {
            bail!("{name} failed ({status})");
        }
    }
    println!("==> all checks passed");
    Ok(())
}
