//! `cargo xtask ci`: the checks CI runs, in order, stopping at the first failure.

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// One check.
struct Step {
    name: &'static str,
    action: Action,
}

enum Action {
    /// `cargo <args>`, with these environment variables.
    Cargo { args: &'static [&'static str], env: &'static [(&'static str, &'static str)] },
    /// An xtask command, run in this process (`cargo xtask <command>` would only rebuild and
    /// restart this same binary).
    Xtask { command: &'static str, run: fn(&Path) -> Result<()> },
}

const STEPS: &[Step] = &[
    Step { name: "format", action: Action::Cargo { args: &["fmt", "--all", "--", "--check"], env: &[] } },
    Step {
        name: "clippy",
        action: Action::Cargo {
            args: &["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"],
            env: &[],
        },
    },
    Step { name: "tests", action: Action::Cargo { args: &["test", "--workspace", "--all-features"], env: &[] } },
    Step {
        name: "docs",
        action: Action::Cargo {
            args: &["doc", "--workspace", "--no-deps", "--all-features"],
            env: &[("RUSTDOCFLAGS", "-D warnings")],
        },
    },
    // Last: the slowest, and the only ones that need the npm and PyPI registries (on a cold
    // cache).
    Step { name: "interop", action: Action::Xtask { command: "interop", run: crate::interop::run } },
    Step { name: "conformance", action: Action::Xtask { command: "conformance", run: crate::conformance::run } },
];

/// Runs every check.
pub fn run(root: &Path, _args: &[String]) -> Result<()> {
    for step in STEPS {
        match &step.action {
            Action::Cargo { args, env } => {
                println!("==> {}: cargo {}", step.name, args.join(" "));
                let status =
                    Command::new(env!("CARGO")).args(*args).envs(env.iter().copied()).current_dir(root).status()?;
                if !status.success() {
                    bail!("{} failed ({status})", step.name);
                }
            }
            Action::Xtask { command, run } => {
                println!("==> {}: cargo xtask {command}", step.name);
                run(root).with_context(|| format!("{} failed", step.name))?;
            }
        }
    }
    println!("==> all checks passed");
    Ok(())
}
