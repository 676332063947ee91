//! `cargo xtask bench`: our servers against rmcp, the official TypeScript (1.x and 2.x) and
//! Python SDKs and no-library baselines, side by side in one run on one machine.
//!
//! Every server under test has one tool, `echo` ({"text": string} in, the same text out), and
//! the same command line (`--stdio`, `--http ADDR`, `--http ADDR --stateless`). For each target
//! the load generator ([`load`], in Rust, on plain threads with blocking I/O) measures:
//!
//! - cold start: from the spawn to the first answered request (the median of five starts);
//! - sequential round trips: calls/s, p50 and p99;
//! - `--in-flight` (64) calls at once: pipelined on stdio, one keep-alive connection (and
//!   session) each over HTTP;
//! - the server's CPU time per call in both phases, its idle and peak RSS (from `/proc`);
//! - for HTTP sessions: memory per idle session and how many concurrent sessions it holds (up
//!   to `--sessions`, 10,000).
//!
//! The `proxy to-http` row drives `mcp proxy` over stdio in front of `echo --http`; the `link`
//! rows compare it with a direct HTTP client when both reach the server over an emulated
//! network of 1 ms round trip (`xtask link-relay`, see [`link`]), which is where a proxy to a
//! remote server is used (their CPU and memory columns are the proxy's and the relay's).
//!
//! Runs alternate between the targets (so that the machine's drift falls on all alike), each on
//! a fresh process; the report takes medians, checks the targets as ratios from this
//! run, and writes `docs/bench/results.md` and `docs/bench/throughput.svg` (with
//! `--write-docs`) and prints the table.
//!
//! Options: `--runs N` (3), `--measure SECS` (2), `--warmup SECS` (0.5), `--in-flight N` (64),
//! `--sessions N` (10000), `--only SUBSTRING` (targets whose name contains it, e.g. `ours`),
//! `--no-sessions`, `--write-docs`, `--no-pin` (leave CPU placement to the scheduler; by
//! default the load generator runs on CPU 0 and the servers on the others, see [`load::pin`]),
//! `--callgrind N` (instead of timing: run each selected
//! target under `valgrind --tool=callgrind`, N sequential calls after 50 of warm-up, and print
//! the server's instructions per call; the profiles stay in `target/bench/callgrind/`). With
//! `--callgrind`, the `ours client` rows profile our client instead (`examples/echo_client.rs`
//! calling `echo --stdio`, without and with the client's logging and metrics layers).

mod link;
mod load;
mod report;

pub use link::relay as link_relay;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};

use load::{Target, Timing, Wire};

struct Options {
    runs: usize,
    timing: Timing,
    in_flight: usize,
    sessions: usize,
    only: Vec<String>,
    no_sessions: bool,
    write_docs: bool,
    /// Where the load generator and the servers run (see [`load::pin`]).
    placement: load::Placement,
    /// Profile instead of timing: this many sequential calls under callgrind.
    callgrind: Option<u64>,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options {
        runs: 3,
        timing: Timing { warmup: Duration::from_millis(500), measure: Duration::from_secs(2) },
        in_flight: 64,
        sessions: 10_000,
        only: Vec::new(),
        no_sessions: false,
        write_docs: false,
        placement: load::Placement::Shared,
        callgrind: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--runs" => o.runs = value()?.parse()?,
            "--measure" => o.timing.measure = Duration::from_secs_f64(value()?.parse()?),
            "--warmup" => o.timing.warmup = Duration::from_secs_f64(value()?.parse()?),
            "--in-flight" => o.in_flight = value()?.parse()?,
            "--sessions" => o.sessions = value()?.parse()?,
            "--only" => o.only.push(value()?.clone()),
            "--no-sessions" => o.no_sessions = true,
            "--write-docs" => o.write_docs = true,
            "--pin" => {
                o.placement = match value()?.as_str() {
                    "shared" => load::Placement::Shared,
                    "split" => load::Placement::Split,
                    "none" => load::Placement::Free,
                    other => bail!("--pin takes shared, split or none, not {other}"),
                }
            }
            "--callgrind" => o.callgrind = Some(value()?.parse()?),
            _ => bail!("unknown option {arg} (see xtask/src/bench/mod.rs)"),
        }
    }
    Ok(o)
}

/// Where `cargo build --release` puts its output (`CARGO_TARGET_DIR` honoured).
fn release_dir(root: &Path) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    root.join(target).join("release")
}

fn cargo(root: &Path, args: &[&str]) -> Result<()> {
    println!("==> cargo {}", args.join(" "));
    let status = Command::new(env!("CARGO")).args(args).current_dir(root).status()?;
    if !status.success() {
        bail!("cargo {} failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Builds and installs the servers of the SDKs `wanted` says yes to, and lists their targets.
fn targets(root: &Path, wanted: &dyn Fn(&str) -> bool, redis_url: Option<&str>) -> Result<Vec<Target>> {
    let t = |sdk: &'static str, mode: &'static str, wire: Wire, program: &PathBuf, args: &[&str]| Target {
        sdk,
        mode,
        wire,
        program: program.clone(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
    };
    let mut targets = Vec::new();
    if wanted("ours") || wanted("baseline") {
        let examples = release_dir(root).join("examples");
        cargo(
            root,
            &[
                "build",
                "--release",
                "--example",
                "echo",
                "--example",
                "echo_client",
                "--example",
                "baseline_stdio",
                "--example",
                "baseline_http",
            ],
        )?;
        let echo = examples.join("echo");
        let client = examples.join("echo_client");
        let echo_path = echo.display().to_string();
        let (base_stdio, base_http) = (examples.join("baseline_stdio"), examples.join("baseline_http"));
        targets.extend([
            t("baseline", "stdio", Wire::Stdio, &base_stdio, &[]),
            t("ours", "stdio", Wire::Stdio, &echo, &["--stdio"]),
            // With the logging and metrics middleware (docs/server.md, "Middleware").
            t("ours", "stdio +mw", Wire::Stdio, &echo, &["--stdio", "--middleware"]),
            // Our client calling `echo --stdio` (its instructions only; `--callgrind` alone):
            // without layers, and with the client's Logging and Metrics (docs/client.md).
            t("ours", "client", Wire::Client, &client, &[echo_path.as_str(), "--stdio"]),
            t("ours", "client +mw", Wire::Client, &client, &["--middleware", echo_path.as_str(), "--stdio"]),
            t("baseline", "json", Wire::HttpStateless, &base_http, &["--http", "{addr}"]),
            t("baseline", "sse", Wire::HttpSessions, &base_http, &["--http", "{addr}", "--sse"]),
            t("baseline", "2026-07-28", Wire::Http2026, &base_http, &["--http", "{addr}"]),
            t("ours", "sessions", Wire::HttpSessions, &echo, &["--http", "{addr}"]),
            t("ours", "stateless", Wire::HttpStateless, &echo, &["--http", "{addr}", "--stateless"]),
            t("ours", "2026-07-28", Wire::Http2026, &echo, &["--http", "{addr}", "--stateless"]),
        ]);
    }
    if let Some(url) = redis_url {
        targets.extend(fleet_targets(root, url, &t)?);
    }
    if wanted("proxy") {
        targets.push(proxy_target(root)?);
    }
    if wanted("link") {
        targets.extend(link_targets(root)?);
    }
    if wanted("rmcp") {
        // rmcp lives in its own package and lock file, out of the workspace, so that the normal
        // build never compiles it.
        let manifest = "bench/rmcp-echo/Cargo.toml";
        cargo(root, &["build", "--release", "--manifest-path", manifest, "--target-dir", "target/bench/rmcp"])?;
        let rmcp = root.join("target/bench/rmcp/release/rmcp-echo");
        targets.extend([
            t("rmcp", "stdio", Wire::Stdio, &rmcp, &["--stdio"]),
            t("rmcp", "pipe", Wire::Stdio, &rmcp, &["--stdio-pipe"]),
            t("rmcp", "sessions", Wire::HttpSessions, &rmcp, &["--http", "{addr}"]),
            t("rmcp", "stateless", Wire::HttpStateless, &rmcp, &["--http", "{addr}", "--stateless"]),
            t("rmcp", "2026-07-28", Wire::Http2026, &rmcp, &["--http", "{addr}", "--stateless"]),
        ]);
    }
    let work = root.join("target/interop");
    for (sdk, project) in [("ts-sdk-1", "ts"), ("ts-sdk-2", "ts2")] {
        if !wanted(sdk) {
            continue;
        }
        let node = crate::interop::install_node(root, &work)?;
        let dir = crate::interop::install_npm_project(root, &work, project)?;
        crate::interop::copy_scripts(&root.join("interop").join(project), &dir)?;
        let script = dir.join("bench_echo.mjs").display().to_string();
        targets.extend([
            t(sdk, "stdio", Wire::Stdio, &node, &[&script, "--stdio"]),
            t(sdk, "sessions", Wire::HttpSessions, &node, &[&script, "--http", "{addr}"]),
            t(sdk, "stateless", Wire::HttpStateless, &node, &[&script, "--http", "{addr}", "--stateless"]),
        ]);
        if sdk == "ts-sdk-2" {
            // 2.x serves 2026-07-28 (1.x stops at 2025-11-25).
            targets.push(t(sdk, "2026-07-28", Wire::Http2026, &node, &[&script, "--http", "{addr}", "--stateless"]));
        }
    }
    if wanted("python-sdk") {
        let python = crate::interop::install_python(root, &work)?;
        let script = root.join("interop/python/bench_echo.py").display().to_string();
        targets.extend([
            // -B: no bytecode written next to the script, in the source tree.
            t("python-sdk", "stdio", Wire::Stdio, &python, &["-B", &script, "--stdio"]),
            t("python-sdk", "sessions", Wire::HttpSessions, &python, &["-B", &script, "--http", "{addr}"]),
            t(
                "python-sdk",
                "stateless",
                Wire::HttpStateless,
                &python,
                &["-B", &script, "--http", "{addr}", "--stateless"],
            ),
            t("python-sdk", "2026-07-28", Wire::Http2026, &python, &["-B", &script, "--http", "{addr}", "--stateless"]),
        ]);
    }
    // Grouped by transport for the report: stdio first, then HTTP; the shared sessions on
    // Redis (`fleet redis`, `fleet redis 2025-11-25`) next to the same server's sessions in
    // memory (`ours sessions`).
    targets.sort_by_key(|t| t.wire != Wire::Stdio);
    for name in ["fleet redis 2025-11-25", "fleet redis"] {
        if let Some(at) = targets.iter().position(|t| t.name() == name)
            && let Some(ours) = targets.iter().position(|t| t.name() == "ours sessions")
        {
            let shared = targets.remove(at);
            targets.insert(if at < ours { ours } else { ours + 1 }, shared);
        }
    }
    Ok(targets)
}

/// Makes a target: its SDK, mode, wire, program and arguments.
type MakeTarget<'a> = dyn Fn(&'static str, &'static str, Wire, &PathBuf, &[&str]) -> Target + 'a;

/// The fleet rows (the echo server's state shared through a Redis the run starts): one
/// instance on Redis (`fleet redis`: the cost of the shared session store and event store per
/// call, against `ours sessions`; `fleet redis 2025-11-25`: the same with a client whose
/// streams open with a priming event, resumable from it), and one and three instances behind HAProxy round robin
/// (`fleet haproxy-N`: the balancer's overhead on one machine, not scale; their CPU and
/// memory columns are HAProxy's). The rows are started by `xtask fleet-front`.
fn fleet_targets(root: &Path, url: &str, t: &MakeTarget<'_>) -> Result<Vec<Target>> {
    cargo(root, &["build", "--release", "--example", "echo"])?;
    let echo = release_dir(root).join("examples/echo");
    let front = std::env::current_exe()?;
    let dir = root.join("target/bench/fleet").display().to_string();
    let echo_path = echo.display().to_string();
    let front_args = |n: &'static str| ["fleet-front", "{addr}", n, url, echo_path.as_str(), dir.as_str()];
    Ok(vec![
        t("fleet", "redis", Wire::HttpSessions, &echo, &["--http", "{addr}", "--redis", url]),
        t("fleet", "redis 2025-11-25", Wire::HttpSessionsResumable, &echo, &["--http", "{addr}", "--redis", url]),
        t("fleet", "haproxy-1", Wire::HttpSessions, &front, &front_args("1")),
        t("fleet", "haproxy-3", Wire::HttpSessions, &front, &front_args("3")),
    ])
}

/// `proxy to-http`: `mcp proxy http://ADDR/mcp` in front of `echo --http ADDR`, driven over
/// stdio (one process group: bash starts echo, its stdout silenced, waits until it listens, and
/// execs the proxy, so the CPU and memory columns are the proxy's). Its round trip is checked against `ours
/// sessions`, the same server called over HTTP directly.
fn proxy_target(root: &Path) -> Result<Target> {
    cargo(root, &["build", "--release", "--example", "echo"])?;
    cargo(root, &["build", "--release", "--package", "mcp-cli", "--bin", "mcp"])?;
    let (echo, mcp) = (release_dir(root).join("examples/echo"), release_dir(root).join("mcp"));
    let port = crate::interop::free_port()?;
    let script = format!(
        "'{}' --http 127.0.0.1:{port} >/dev/null & until (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; do sleep 0.01; done; \
         exec '{}' proxy http://127.0.0.1:{port}/mcp",
        echo.display(),
        mcp.display()
    );
    Ok(Target {
        sdk: "proxy",
        mode: "to-http",
        wire: Wire::Stdio,
        program: PathBuf::from("bash"),
        args: vec!["-c".to_owned(), script],
    })
}

/// One way of the emulated network under the `link` rows: 0.5 ms, a round trip of 1 ms (two
/// machines in one data centre; the Internet is tens of milliseconds).
const LINK_ONE_WAY_US: u32 = 500;

/// `link direct` and `link proxy`: the `echo` server behind a relay that delays each byte by
/// [`LINK_ONE_WAY_US`] each way (`xtask link-relay`), called over HTTP directly and through
/// `mcp proxy` on stdio. Their round trips compare what the proxy adds to a call to a remote
/// server; on loopback (`proxy to-http` against `ours sessions`) any extra hop is a large
/// share of a 30 µs call.
fn link_targets(root: &Path) -> Result<Vec<Target>> {
    cargo(root, &["build", "--release", "--example", "echo"])?;
    cargo(root, &["build", "--release", "--package", "mcp-cli", "--bin", "mcp"])?;
    let (echo, mcp) = (release_dir(root).join("examples/echo"), release_dir(root).join("mcp"));
    let xtask = std::env::current_exe()?;
    let (server, relay) = (crate::interop::free_port()?, crate::interop::free_port()?);
    let wait = |port: u16| format!("until (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; do sleep 0.01; done");
    let start_echo = format!("'{}' --http 127.0.0.1:{server} >/dev/null & {}", echo.display(), wait(server));
    let relay_to =
        |listen: &str| format!("'{}' link-relay {listen} 127.0.0.1:{server} {LINK_ONE_WAY_US}", xtask.display());
    let direct = format!("{start_echo}; exec {}", relay_to("{addr}"));
    let proxied = format!(
        "{start_echo}; {} & {}; exec '{}' proxy http://127.0.0.1:{relay}/mcp",
        relay_to(&format!("127.0.0.1:{relay}")),
        wait(relay),
        mcp.display()
    );
    let bash = PathBuf::from("bash");
    Ok(vec![
        Target {
            sdk: "link",
            mode: "direct",
            wire: Wire::HttpSessions,
            program: bash.clone(),
            args: vec!["-c".into(), direct],
        },
        Target { sdk: "link", mode: "proxy", wire: Wire::Stdio, program: bash, args: vec!["-c".into(), proxied] },
    ])
}

/// Builds everything, runs every target, prints (and with `--write-docs` writes) the report.
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    // The load generator must not be the bottleneck: run it optimized.
    if cfg!(debug_assertions) {
        cargo(root, &["build", "--release", "--package", "xtask"])?;
        let status = Command::new(release_dir(root).join("xtask")).arg("bench").args(args).status()?;
        if !status.success() {
            bail!("the benchmark failed ({status})");
        }
        return Ok(());
    }
    let options = parse(args)?;
    let selected = |name: &str| options.only.is_empty() || options.only.iter().any(|o| name.contains(o.as_str()));
    let wanted =
        |sdk: &str| options.only.is_empty() || options.only.iter().any(|o| o.contains(sdk) || sdk.contains(o.as_str()));
    // The fleet rows' Redis, for the whole run.
    let redis = if wanted("fleet") { Some(crate::fleet::BenchRedis::start()?) } else { None };
    let url = redis.as_ref().map(crate::fleet::BenchRedis::url);
    let mut targets = targets(root, &wanted, url.as_deref())?;
    targets.retain(|t| selected(&t.name()));
    if options.callgrind.is_none() {
        // A client is profiled, not timed.
        targets.retain(|t| t.wire != Wire::Client);
    }
    if let Some(calls) = options.callgrind {
        let dir = root.join("target/bench/callgrind");
        std::fs::create_dir_all(&dir)?;
        println!("\n| server | transport | instructions per call |\n|---|---|---:|");
        // The rows behind HAProxy are several processes: no one profile counts them.
        for target in targets.iter().filter(|t| !t.mode.starts_with("haproxy")) {
            let out = dir.join(format!("{}.out", target.name().replace(' ', "-")));
            let per_call = load::callgrind(target, calls, &out).with_context(|| target.name())?;
            println!("| {} | {} | {per_call:.0} |", target.name(), target.wire.label());
        }
        println!("\nProfiles: target/bench/callgrind/*.out.1 (callgrind_annotate --inclusive=yes FILE)");
        return Ok(());
    }
    let machine = machine();
    let placement = load::pin(options.placement)?;
    println!("==> {placement}");
    let mut results: Vec<Vec<load::RunResult>> = vec![Vec::new(); targets.len()];
    for run in 0..options.runs {
        for (target, results) in targets.iter().zip(results.iter_mut()) {
            println!("==> run {}/{}: {} ({})", run + 1, options.runs, target.name(), target.wire.label());
            let mut result = load::run(target, options.timing, options.in_flight).with_context(|| target.name())?;
            // A single start is at the mercy of the scheduler: the median of five.
            let mut starts = vec![result.cold_start_ms];
            for _ in 0..4 {
                starts.push(load::cold_start(target).with_context(|| target.name())?);
            }
            starts.sort_by(f64::total_cmp);
            result.cold_start_ms = starts[2];
            println!(
                "    sequential {:.0}/s (p50 {:.0} µs), {} in flight {:.0}/s, CPU {:.1}/{:.1} µs/call, idle {:.1} MiB, peak {:.1} MiB, cold start {:.1} ms",
                result.sequential.calls_per_sec,
                result.sequential.p50_us,
                options.in_flight,
                result.concurrent.calls_per_sec,
                result.sequential.cpu_us_per_call,
                result.concurrent.cpu_us_per_call,
                result.idle_rss_kib / 1024.0,
                result.peak_rss_kib / 1024.0,
                result.cold_start_ms
            );
            results.push(result);
        }
    }
    let mut summaries = Vec::new();
    for (target, results) in targets.into_iter().zip(results) {
        let measured = !matches!(target.sdk, "baseline" | "fleet" | "link");
        let sessions = if target.wire.sessions() && measured && !options.no_sessions {
            println!("==> sessions: {} (up to {})", target.name(), options.sessions);
            let s = load::sessions(&target, options.sessions, 4, Duration::from_secs(120))
                .with_context(|| format!("{}: sessions", target.name()))?;
            println!(
                "    {} held, {:.2} KiB per idle session{}",
                s.held,
                s.bytes_per_session / 1024.0,
                s.stopped_by.as_deref().map(|e| format!(", stopped by {e}")).unwrap_or_default()
            );
            Some(s)
        } else {
            None
        };
        summaries.push(report::Summary { median: report::medians(&results), target, sessions });
    }
    let header = format!(
        "# Benchmark results\n\nWritten by `cargo xtask bench` ({} runs per target, medians; {} s measured after {} s of warm-up per phase; {placement}) on {}, {}.",
        options.runs,
        options.timing.measure.as_secs_f64(),
        options.timing.warmup.as_secs_f64(),
        machine,
        today()
    );
    let md = report::markdown(&summaries, &header, options.in_flight);
    println!("\n{md}");
    let out = root.join("target/bench");
    std::fs::create_dir_all(&out)?;
    std::fs::write(out.join("results.md"), &md)?;
    std::fs::write(out.join("throughput.svg"), report::svg(&summaries, options.in_flight))?;
    if options.write_docs {
        let docs = root.join("docs/bench");
        std::fs::create_dir_all(&docs)?;
        std::fs::write(docs.join("results.md"), &md)?;
        std::fs::write(docs.join("throughput.svg"), report::svg(&summaries, options.in_flight))?;
        println!("==> wrote docs/bench/results.md and docs/bench/throughput.svg");
    }
    Ok(())
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "an unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cpu}, {cores} cores")
}

fn today() -> String {
    Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}
