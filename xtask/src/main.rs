//! Project automation, run as `cargo xtask <command>`.
//!
//! - `codegen`: regenerates `crates/mcp-types/src/generated/` from the vendored schemas.
//! - `ci`: everything CI checks (system packages, formatting, clippy, tests, docs, hostile, interop,
//!   web, auth-e2e, conformance, a 2-minute soak, fleet).
//! - `bench`: our servers against rmcp, the TypeScript and Python SDKs and no-library baselines
//!   (stdio and HTTP: throughput, latency, CPU, memory, cold start, sessions).
//! - `interop`: the official TypeScript and Python SDK clients against our example servers, and
//!   our client against the official `server-everything` and a Python SDK server.
//! - `web`: `mcp web` driven in headless Chromium against the `everything` example (a tool
//!   called through its form, traffic, progress, an image, elicitation, sampling, a server's
//!   `<script>` shown as text); screenshots in `target/web/`.
//! - `auth-e2e`: authorization end to end: our OAuth client, and the TypeScript and Python SDK
//!   ones, against the `auth_server` example and a real OpenID provider (`oidc-provider`), and
//!   our client against a TypeScript SDK server behind the SDK's `requireBearerAuth`.
//! - `packages`: installs the system packages the checks need (Redis, HAProxy) when missing.
//! - `conformance`: the official conformance suite against the `everything` example server
//!   (over Streamable HTTP) and the `conformance_client` example.
//! - `hostile`: the `everything` example attacked over raw sockets by a client that breaks every
//!   rule (slow, oversized, flooding, forged, malformed, pipelined); each answer exact, and the
//!   server still serving a fresh client within a second with its memory back within a bound.
//! - `soak`: the `everything` example under a mixed workload for N minutes (`--minutes N`,
//!   default 10), over Streamable HTTP and stdio; fails when its memory, file descriptors,
//!   threads or tasks grow after the warm-up; writes `target/soak/memory.svg` and a CSV.
//! - `fleet`: three instances of `everything` (and of `http_server`) sharing a real Redis behind
//!   HAProxy (round robin, no stickiness), and scenarios through the balancer (every revision,
//!   list_changed fan-out, resuming after an instance is killed, Redis restarting, the SDK
//!   clients, the conformance server scenarios).
//! - `fuzz`: the libFuzzer targets of `fuzz/` (nightly), each for `--minutes N`, the corpus
//!   minimized after; crashes land in `fuzz/artifacts/` (see `docs/reliability.md`).

mod auth_e2e;
mod bench;
mod ci;
mod codegen;
mod conformance;
mod fleet;
mod fuzz;
mod hostile;
mod interop;
mod packages;
mod soak;
mod web;

use std::path::PathBuf;

use anyhow::{Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = project_root();
    match args.first().map(String::as_str) {
        Some("codegen") => codegen::run(&root),
        Some("ci") => ci::run(&root, &args[1..]),
        Some("bench") => bench::run(&root, &args[1..]),
        Some("features") => ci::features(&root),
        Some("interop") => interop::run(&root),
        Some("apps") => interop::apps_only(&root),
        Some("web") => web::run(&root),
        Some("conformance") => conformance::run(&root),
        Some("auth-e2e") => auth_e2e::run(&root),
        Some("packages") => packages::ensure(),
        Some("soak") => soak::run(&root, &args[1..]),
        // Internal: a fleet behind HAProxy as one server target of `bench`.
        Some("fleet-front") => fleet::front(&args[1..]),
        Some("fleet") => fleet::run(&root, &args[1..]),
        Some("hostile") => hostile::run(&root, &args[1..]),
        Some("fuzz") => fuzz::run(&root, &args[1..]),
        // Internal: a relay that delays each byte, for `bench`'s `link` rows.
        Some("link-relay") => bench::link_relay(&args[1..]),
        _ => bail!(
            "usage: cargo xtask <codegen|ci|features|bench|interop|apps|web|auth-e2e|conformance|packages|fleet|hostile|soak|fuzz>"
        ),
    }
}

/// The workspace root (the parent of this crate's directory).
pub fn project_root() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    dir.parent().expect("xtask lives in the workspace root").to_path_buf()
}
