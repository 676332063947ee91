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
    Step { name: "features", action: Action::Xtask { command: "features", run: features } },
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

/// The feature sets the docs name (crate docs of `mcp-sdk`, `docs/server.md`,
/// `docs/client.md`), each checked alone with `--no-default-features`.
const FEATURE_SETS: &[(&str, &str)] = &[
    ("mcp-sdk", ""),
    ("mcp-sdk", "server"),
    ("mcp-sdk", "client"),
    ("mcp-sdk", "server,macros"),
    ("mcp-sdk", "server,macros,stdio"),
    ("mcp-sdk", "server,macros,http-server"),
    ("mcp-sdk", "client,http-client"),
    ("mcp-sdk", "server,jsonschema"),
    ("mcp-sdk", "client,jsonschema"),
    ("mcp-server", ""),
    ("mcp-server", "stdio"),
    ("mcp-server", "http"),
    ("mcp-server", "jsonschema"),
    ("mcp-client", ""),
    ("mcp-client", "http"),
    ("mcp-client", "jsonschema"),
    ("mcp-transport-http", "server"),
    ("mcp-transport-http", "client"),
];

/// What a stdio-only server with macros must not compile.
const NOT_IN_STDIO_SERVER: &[&str] = &["reqwest", "hyper", "axum", "jsonschema", "rustls"];

/// Every feature set the docs name builds without warnings, and a stdio-only server compiles no
/// HTTP stack and no jsonschema.
pub fn features(root: &Path) -> Result<()> {
    for (package, features) in FEATURE_SETS {
        println!("--> cargo clippy -p {package} --no-default-features --features '{features}'");
        let status = Command::new(env!("CARGO"))
            .args(["clippy", "-p", package, "--no-default-features", "--features", features, "--", "-D", "warnings"])
            .current_dir(root)
            .status()?;
        if !status.success() {
            bail!("{package} with features '{features}' does not build cleanly ({status})");
        }
    }
    let tree = Command::new(env!("CARGO"))
        .args(["tree", "-p", "mcp-sdk", "--no-default-features", "--features", "server,macros,stdio", "-e", "normal"])
        .args(["--prefix", "none", "--format", "{p}"])
        .current_dir(root)
        .output()?;
    if !tree.status.success() {
        bail!("cargo tree failed: {}", String::from_utf8_lossy(&tree.stderr));
    }
    let tree = String::from_utf8(tree.stdout)?;
    let found: Vec<&str> = tree
        .lines()
        .filter(|line| NOT_IN_STDIO_SERVER.iter().any(|name| line.split_whitespace().next() == Some(*name)))
        .collect();
    if !found.is_empty() {
        bail!("a stdio-only server (mcp-sdk with server,macros,stdio) compiles {}", found.join(", "));
    }
    println!("--> a stdio-only server compiles none of {}", NOT_IN_STDIO_SERVER.join(", "));
    Ok(())
}

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
