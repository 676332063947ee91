//! `cargo xtask ci`: the checks CI runs, in order, stopping at the first failure.

use std::path::Path;
use std::process::Command;

use anyhow::{Result, bail};

/// One check: a cargo command and the environment it needs.
struct Step {
    name: &'static str,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

const STEPS: &[Step] = &[
    Step { name: "format", args: &["fmt", "--all", "--", "--check"], env: &[] },
    Step {
        name: "clippy",
        args: &["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"],
        env: &[],
    },
    Step { name: "tests", args: &["test", "--workspace", "--all-features"], env: &[] },
    Step {
        name: "docs",
        args: &["doc", "--workspace", "--no-deps", "--all-features"],
        env: &[("RUSTDOCFLAGS", "-D warnings")],
    },
];

/// Runs every check.
pub fn run(root: &Path, _args: &[String]) -> Result<()> {
    for step in STEPS {
        println!("==> {}: cargo {}", step.name, step.args.join(" "));
        let status =
            Command::new(env!("CARGO")).args(step.args).envs(step.env.iter().copied()).current_dir(root).status()?;
        if !status.success() {
            bail!("{} failed ({status})", step.name);
        }
    }
    println!("==> all checks passed");
    Ok(())
}
