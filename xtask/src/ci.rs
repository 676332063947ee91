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
    // Redis for the tests of mcp-redis, HAProxy for the fleet: from the system's packages.
    Step { name: "packages", action: Action::Xtask { command: "packages", run: packages } },
    Step { name: "format", action: Action::Cargo { args: &["fmt", "--all", "--", "--check"], env: &[] } },
    Step {
        name: "clippy",
        action: Action::Cargo {
            args: &["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"],
            env: &[],
        },
    },
    Step { name: "features", action: Action::Xtask { command: "features", run: features } },
    // The official SDKs and servers (npm, PyPI) that the tests of mcp-cli run against too.
    Step { name: "peers", action: Action::Xtask { command: "interop (install only)", run: peers } },
    Step { name: "tests", action: Action::Cargo { args: &["test", "--workspace", "--all-features"], env: &[] } },
    Step {
        name: "docs",
        action: Action::Cargo {
            args: &["doc", "--workspace", "--no-deps", "--all-features"],
            env: &[("RUSTDOCFLAGS", "-D warnings")],
        },
    },
    // The `everything` server under attack over raw sockets (about a minute).
    Step { name: "hostile", action: Action::Xtask { command: "hostile", run: hostile } },
    // Last: the slowest, and the only ones that need the npm and PyPI registries (on a cold
    // cache).
    Step { name: "interop", action: Action::Xtask { command: "interop", run: crate::interop::run } },
    // `mcp web` in headless Chromium (Node, puppeteer-core and Chromium as interop installed).
    Step { name: "web", action: Action::Xtask { command: "web", run: crate::web::run } },
    Step { name: "auth-e2e", action: Action::Xtask { command: "auth-e2e", run: crate::auth_e2e::run } },
    Step { name: "conformance", action: Action::Xtask { command: "conformance", run: crate::conformance::run } },
    // The everything example under a mixed workload for 2 minutes: no growth after warm-up.
    Step { name: "soak", action: Action::Xtask { command: "soak --minutes 2", run: soak } },
    // Redis, HAProxy and three instances of each example server: the fleet without stickiness.
    Step { name: "fleet", action: Action::Xtask { command: "fleet", run: fleet } },
    // The soak's HTTP workload through a fleet's balancer, an instance killed every 30 s: nothing
    // lost, Redis's and the instances' memory bounded.
    Step {
        name: "soak-fleet",
        action: Action::Xtask { command: "soak --fleet --minutes 2 --kill-every 30", run: soak_fleet },
    },
];

/// The feature sets the docs name (the crate docs of `mcp-sdk`, `mcp-server`, `mcp-client`;
/// `docs/server.md`, `docs/client.md`), each checked alone with `--no-default-features`.
const FEATURE_SETS: &[(&str, &str)] = &[
    ("mcp-sdk", ""),
    ("mcp-sdk", "server"),
    ("mcp-sdk", "client"),
    ("mcp-sdk", "server,stdio"),
    ("mcp-sdk", "server,macros"),
    ("mcp-sdk", "server,macros,stdio"),
    ("mcp-sdk", "server,macros,http-server"),
    ("mcp-sdk", "server,macros,stdio,http-server,jsonschema"),
    ("mcp-sdk", "server,macros,stdio,auth"),
    ("mcp-sdk", "client,http-client"),
    ("mcp-sdk", "oauth"),
    ("mcp-sdk", "client,jsonschema"),
    ("mcp-sdk", "server,client,opentelemetry"),
    ("mcp-sdk", "server,metrics"),
    ("mcp-sdk", "testing"),
    ("mcp-sdk", "gateway"),
    ("mcp-sdk", "gateway,http-client"),
    ("mcp-server", ""),
    ("mcp-server", "stdio"),
    ("mcp-server", "http"),
    ("mcp-server", "jsonschema"),
    ("mcp-server", "auth"),
    ("mcp-server", "opentelemetry"),
    ("mcp-client", ""),
    ("mcp-client", "http"),
    ("mcp-client", "oauth"),
    ("mcp-client", "jsonschema"),
    ("mcp-client", "opentelemetry"),
    ("mcp-gateway", ""),
    ("mcp-gateway", "http"),
    ("mcp-transport-http", "server"),
    ("mcp-transport-http", "client"),
    ("mcp-transport-http", "oauth"),
    ("mcp-transport-http", "auth"),
    ("mcp-transport-http", "metrics"),
];

/// Test runs with features off, each the only run of code that `--all-features` never builds.
const FEATURE_TESTS: &[(&str, &str)] = &[
    // The server without `jsonschema`: schemas outside the built-in checker's subset are
    // accepted unchecked (a unit test of `tool.rs`), and every transcript still passes.
    ("mcp-server", "stdio"),
    // The macros' generated code, which names only `mcp_sdk::__private`, with nothing but the
    // features a macro user needs.
    ("mcp-sdk", "server,macros"),
];

/// What a stdio-only server with macros must not compile: any package whose name contains one
/// of these (`hyper-util`, `tokio-rustls`, ... included).
const NOT_IN_STDIO_SERVER: &[&str] = &["reqwest", "hyper", "axum", "jsonschema", "rustls"];

/// What a server protected by `auth` must not compile: the HTTP client stack (its token checks
/// take their keys through `JwksSource`, not over reqwest), and no jsonschema.
const NOT_IN_AUTH_SERVER: &[&str] = &["reqwest", "jsonschema", "rustls"];

/// What the default build (`full`) must not compile: OpenTelemetry and the Prometheus exporter
/// are opt-in.
const NOT_IN_DEFAULT: &[&str] = &["opentelemetry", "metrics-exporter-prometheus"];

/// Runs `cargo <args>` in `root`; fails with `what` if it fails.
fn cargo(root: &Path, args: &[&str], what: impl FnOnce() -> String) -> Result<()> {
    println!("--> cargo {}", args.join(" "));
    let status = Command::new(env!("CARGO")).args(args).current_dir(root).status()?;
    if !status.success() {
        bail!("{} ({status})", what());
    }
    Ok(())
}

/// Every feature set the docs name builds without warnings, the code only reduced sets compile
/// passes its tests, a stdio-only server compiles no HTTP stack and no jsonschema, and the
/// default build no OpenTelemetry.
pub fn features(root: &Path) -> Result<()> {
    for (package, features) in FEATURE_SETS {
        let args = ["clippy", "-p", package, "--no-default-features", "--features", features, "--", "-D", "warnings"];
        cargo(root, &args, || format!("{package} with features '{features}' does not build cleanly"))?;
    }
    for (package, features) in FEATURE_TESTS {
        let args = ["test", "-p", package, "--no-default-features", "--features", features];
        cargo(root, &args, || format!("the tests of {package} with features '{features}' fail"))?;
    }
    let found = compiled(root, "server,macros,stdio", NOT_IN_STDIO_SERVER)?;
    if !found.is_empty() {
        bail!("a stdio-only server (mcp-sdk with server,macros,stdio) compiles {}", found.join(", "));
    }
    println!("--> a stdio-only server compiles none of {}", NOT_IN_STDIO_SERVER.join(", "));
    let found = compiled(root, "server,macros,stdio,auth", NOT_IN_AUTH_SERVER)?;
    if !found.is_empty() {
        bail!("a server with auth (mcp-sdk with server,macros,stdio,auth) compiles {}", found.join(", "));
    }
    println!("--> a server with auth compiles none of {}", NOT_IN_AUTH_SERVER.join(", "));
    let found = compiled(root, "full", NOT_IN_DEFAULT)?;
    if !found.is_empty() {
        bail!("the default build (mcp-sdk with full) compiles {}", found.join(", "));
    }
    println!("--> the default build compiles none of {}", NOT_IN_DEFAULT.join(", "));
    Ok(())
}

/// The packages among `names` (by part of their name) that mcp-sdk with `features` compiles.
fn compiled(root: &Path, features: &str, names: &[&str]) -> Result<Vec<String>> {
    let tree = Command::new(env!("CARGO"))
        .args(["tree", "-p", "mcp-sdk", "--no-default-features", "--features", features, "-e", "normal"])
        .args(["--prefix", "none", "--format", "{p}"])
        .current_dir(root)
        .output()?;
    if !tree.status.success() {
        bail!("cargo tree failed: {}", String::from_utf8_lossy(&tree.stderr));
    }
    let tree = String::from_utf8(tree.stdout)?;
    let mut found: Vec<String> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|package| names.iter().any(|name| package.contains(name)))
        .map(str::to_owned)
        .collect();
    found.sort_unstable();
    found.dedup();
    Ok(found)
}

/// Installs the system packages the checks need (see `packages`).
fn packages(_root: &Path) -> Result<()> {
    crate::packages::ensure()
}

/// Installs the interop step's peers (see `interop::install`).
fn peers(root: &Path) -> Result<()> {
    crate::interop::install(root).map(drop)
}

/// `cargo xtask hostile`: every attack.
fn hostile(root: &Path) -> Result<()> {
    crate::hostile::run(root, &[])
}

/// `cargo xtask soak --minutes 2`.
fn soak(root: &Path) -> Result<()> {
    crate::soak::run(root, &["--minutes".to_owned(), "2".to_owned()])
}

/// `cargo xtask soak --fleet --minutes 2 --kill-every 30`.
fn soak_fleet(root: &Path) -> Result<()> {
    let args = ["--fleet", "--minutes", "2", "--kill-every", "30"];
    crate::soak::run(root, &args.map(str::to_owned))
}

/// `cargo xtask fleet` with every scenario.
fn fleet(root: &Path) -> Result<()> {
    crate::fleet::run(root, &[])
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
