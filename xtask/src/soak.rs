//! `cargo xtask soak [--minutes N]`: the `everything` example under a mixed workload for N
//! minutes (default 10), over Streamable HTTP and over stdio, driven by our own client (see
//! [`workload`]). Each server's resident memory, open file descriptors, threads and tokio tasks
//! are sampled once a second; after the warm-up (a quarter of the run, at least 30 s) each is
//! fitted with a least-squares line, and the soak fails when a slope, projected over an hour,
//! and the growth it fits over the window both pass their bounds ([`BOUNDS`]), when a server
//! dies, or when an operation fails. The HTTP server is also read at rest, before the workload
//! and after it once the abandoned sessions expired: its own count of tokio tasks and its open
//! file descriptors must come back to where they were ([`REST_SLACK`]), which catches a leak
//! of either at any rate, also in a short run. A server whose metrics line was never read
//! fails (its tasks cannot be judged). Writes `target/soak/samples.csv` and
//! `target/soak/memory.svg`.
//!
//! `--fleet [--kill-every SECS] [--instances N]`: the HTTP workload through the balancer of a
//! fleet instead, an instance killed and restarted every SECS (60), see [`fleet`].

mod fleet;
mod report;
mod sample;
mod workload;

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use mcp_sdk::client::Client;
use mcp_sdk::transport::stdio::{ChildCommand, ChildProcess, StderrMode};
use mcp_sdk::types::ProtocolVersion;
use sample::{Sample, Watched, note_metrics, slope};
use workload::Counts;

/// Idle sessions end after this (the example's `--idle-timeout`): abandoned sessions must be
/// reclaimed many times over during a run.
const IDLE_TIMEOUT_SECS: u64 = 5;
/// Client tasks making HTTP sessions at once.
const HTTP_TASKS: usize = 4;
/// How many more tokio tasks and file descriptors a server may hold at rest after the workload
/// than before it (a timer or a pooled connection that comes and goes).
pub const REST_SLACK: i64 = 2;
/// How long the servers may take to come to rest after the workload: the idle expiry of the
/// last abandoned sessions, and its sweep.
const REST_LIMIT: Duration = Duration::from_secs(4 * IDLE_TIMEOUT_SECS + 10);
/// How long a server may take to write its first metrics line.
const METRICS_LIMIT: Duration = Duration::from_secs(10);

/// A bound on the growth of one measure after the warm-up: the fitted slope, projected per
/// hour, must stay under `per_hour`, or the growth it fits over the measured window under
/// `floor` (smaller changes are the allocator's and the connections' noise).
pub struct Bound {
    pub what: &'static str,
    pub per_hour: f64,
    pub floor: f64,
    read: fn(&Sample) -> f64,
}

/// The bounds, per hour: resident memory 8 MiB, 60 file descriptors, 4 threads, 120 tasks;
/// and the floors under which a fitted growth over the window is noise: 2 MiB, 10
/// descriptors, 2 threads, 10 tasks.
///
/// The workload makes about twenty sessions a second (half of them abandoned), so a leak of
/// one file descriptor or task per session grows some 70,000 an hour, and one of 100 bytes per
/// session 7 MiB an hour. The floors keep a short run from failing on one step of the heap
/// (a 256 KiB step in the middle of a 90 s window fits as 15 MiB an hour; a 1 MiB step as 1.5
/// MiB over the window) or on the tens of connections and tasks that come and go; a 2-minute
/// run still catches a leak of 2 KiB per session, a 60-minute one 100 bytes.
pub const BOUNDS: [Bound; 4] = [
    Bound { what: "rss MiB", per_hour: 8.0, floor: 2.0, read: |s| s.rss_kib as f64 / 1024.0 },
    Bound { what: "fds", per_hour: 60.0, floor: 10.0, read: |s| s.fds as f64 },
    Bound { what: "threads", per_hour: 4.0, floor: 2.0, read: |s| s.threads as f64 },
    Bound { what: "tasks", per_hour: 120.0, floor: 10.0, read: |s| s.tasks as f64 },
];

/// Runs the soak.
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let usage = "usage: cargo xtask soak [--minutes N] [--fleet [--kill-every SECS] [--instances N]]";
    let (mut minutes, mut in_fleet) = (10.0, false);
    let mut fleet_options = fleet::Options { minutes, kill_every: Duration::from_secs(60), instances: 3 };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().with_context(|| format!("{arg} needs a value; {usage}"));
        match arg.as_str() {
            "--minutes" => minutes = value()?.parse::<f64>().context("--minutes takes a number")?,
            "--fleet" => in_fleet = true,
            "--kill-every" => {
                let secs = value()?.trim_end_matches('s').parse::<f64>().context("--kill-every takes seconds")?;
                fleet_options.kill_every = Duration::from_secs_f64(secs.max(1.0));
            }
            "--instances" => fleet_options.instances = value()?.parse().context("--instances takes a number")?,
            _ => bail!("{usage}"),
        }
    }
    if in_fleet {
        fleet_options.minutes = minutes;
        return fleet::run(root, &fleet_options);
    }
    // Where cargo puts it (`CARGO_TARGET_DIR` included).
    let [binary] = crate::interop::build_examples(root, ["everything"])?;
    let out = root.join("target/soak");
    std::fs::create_dir_all(&out)?;
    let duration = Duration::from_secs_f64(minutes * 60.0);
    let warmup = (duration.as_secs_f64() / 4.0).max(30.0);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let (watched, counts) = runtime.block_on(soak(&binary, duration))?;
    std::fs::write(out.join("samples.csv"), report::csv(&watched))?;
    let title = format!("cargo xtask soak --minutes {minutes}: resident memory of the everything example");
    std::fs::write(out.join("memory.svg"), report::svg(&watched, warmup, &title))?;
    println!("soak: {}", counts.summary());
    println!("soak: samples in {}, plot in {}", out.join("samples.csv").display(), out.join("memory.svg").display());
    judge(&watched, warmup, duration.as_secs_f64(), &counts)
}

/// Starts the servers and the workload, samples until the end; the samples and the counts.
async fn soak(binary: &Path, duration: Duration) -> Result<(Vec<Watched>, Arc<Counts>)> {
    let started = Instant::now();
    let until = started + duration;
    // The workload outlasts the sampling a little: every sample sees the servers under load.
    let work_until = until + Duration::from_secs(3);
    let counts = Arc::new(Counts::default());
    let (http, mut watched, url) = start_http(binary)?;
    // Killed however this ends.
    let _http = KillOnDrop(http);
    let (mut clients, mut stdio) = (Vec::new(), Vec::new());
    for (name, version) in
        [("stdio 2025-11-25", ProtocolVersion::V2025_11_25), ("stdio 2026-07-28", ProtocolVersion::V2026_07_28)]
    {
        let (client, process) = start_stdio(binary, version).await?;
        watched.push(Watched::new(name, process.id().context("the stdio server's pid")?));
        clients.push(client);
        stdio.push(process);
    }
    // At rest before the workload: each server's first metrics line read.
    let before = at_rest(&watched, &stdio, started, METRICS_LIMIT).await;
    for (w, reading) in watched.iter_mut().zip(before) {
        w.before = Some(reading);
    }
    if let Some(w) = watched.iter().find(|w| w.before.is_some_and(|s| s.tasks < 0)) {
        bail!(
            "the {} server wrote no `metrics tasks=N` line within {METRICS_LIMIT:?}: its tasks cannot be judged",
            w.name
        );
    }
    let mut tasks = Vec::new();
    for i in 0..HTTP_TASKS {
        tasks.push(tokio::spawn(workload::http_task(url.clone(), i, work_until, counts.clone())));
    }
    for client in clients {
        tasks.push(tokio::spawn(workload::stdio_task(client, work_until, counts.clone())));
    }
    tasks.push(tokio::spawn(stdio_sessions(binary.to_owned(), work_until, counts.clone())));
    let result = sample_until(&mut watched, &stdio, started, until).await;
    for task in tasks {
        if result.is_err() {
            task.abort();
        }
        let _ = tokio::time::timeout(Duration::from_secs(60), task).await;
    }
    if result.is_ok() {
        // At rest after it: the long-lived stdio sessions idle, every HTTP client closed or
        // gone, the abandoned sessions expired.
        let after = at_rest(&watched, &stdio, started, REST_LIMIT).await;
        for (w, reading) in watched.iter_mut().zip(after).filter(|(w, _)| w.judged_at_rest) {
            w.after = Some(reading);
        }
    }
    for process in stdio {
        let _ = process.shutdown().await;
    }
    result.map(|()| (watched, counts))
}

/// Reads the stdio servers' metrics lines from their captured stderr.
fn note_stdio_metrics(watched: &[Watched], stdio: &[ChildProcess]) {
    for (w, process) in watched[1..].iter().zip(stdio) {
        for line in process.stderr_tail().iter().rev().take(4) {
            note_metrics(line, &w.tasks);
        }
    }
}

/// Each server at rest: read once a second for at most `limit`, until every one has written
/// its metrics line and (after the workload) is back within [`REST_SLACK`] of its reading
/// before; the last reading of each (a dead server reads as zeros: it fails elsewhere).
async fn at_rest(watched: &[Watched], stdio: &[ChildProcess], started: Instant, limit: Duration) -> Vec<Sample> {
    let deadline = Instant::now() + limit;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        note_stdio_metrics(watched, stdio);
        let t = started.elapsed().as_secs_f64();
        let readings: Vec<Sample> = watched
            .iter()
            .map(|w| w.read(t).unwrap_or(Sample { t, rss_kib: 0, fds: 0, threads: 0, tasks: -1 }))
            .collect();
        let rested = watched.iter().zip(&readings).all(|(w, now)| match w.before {
            None => now.tasks >= 0,
            Some(before) if w.judged_at_rest => rest_growth(&before, now).iter().all(|(_, grown)| *grown <= REST_SLACK),
            Some(_) => true,
        });
        if rested || Instant::now() > deadline {
            return readings;
        }
    }
}

/// What grew between two readings at rest: tokio tasks and file descriptors.
fn rest_growth(before: &Sample, after: &Sample) -> [(&'static str, i64); 2] {
    [("tasks", after.tasks - before.tasks), ("fds", after.fds as i64 - before.fds as i64)]
}

/// A server process, killed and reaped when dropped.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Samples every server once a second until `until`.
async fn sample_until(watched: &mut [Watched], stdio: &[ChildProcess], started: Instant, until: Instant) -> Result<()> {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut minute = 0;
    while Instant::now() < until {
        tick.tick().await;
        // The stdio servers' metrics lines are in their captured stderr.
        note_stdio_metrics(watched, stdio);
        let t = started.elapsed().as_secs_f64();
        for w in watched.iter_mut() {
            if !w.sample(t) {
                bail!("the {} server (pid {}) died after {t:.0} s", w.name, w.pid);
            }
        }
        if t as u64 / 60 > minute {
            minute = t as u64 / 60;
            let line: Vec<String> = watched
                .iter()
                .filter_map(|w| {
                    w.samples.last().map(|s| format!("{} {} KiB, {} fds, {} tasks", w.name, s.rss_kib, s.fds, s.tasks))
                })
                .collect();
            println!("soak: {minute} min: {}", line.join("; "));
        }
    }
    Ok(())
}

/// The HTTP server on a free local port, with its metrics read from its stderr.
fn start_http(binary: &Path) -> Result<(Child, Vec<Watched>, String)> {
    let addr = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let mut child = Command::new(binary)
        .args(["--http", &addr.to_string(), "--idle-timeout", &IDLE_TIMEOUT_SECS.to_string(), "--metrics"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    let mut watched = Watched::new("http", child.id());
    watched.judged_at_rest = true;
    let tasks = watched.tasks.clone();
    let stderr = child.stderr.take().expect("piped");
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if !line.starts_with("metrics ") {
                eprintln!("[http server] {line}");
            }
            note_metrics(&line, &tasks);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(addr).is_err() {
        if Instant::now() > deadline {
            let _ = child.kill();
            bail!("the HTTP server did not listen on {addr} within 30 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok((child, vec![watched], format!("http://{addr}/mcp")))
}

/// A stdio server as a child process, and our client connected to it in `version`.
async fn start_stdio(binary: &Path, version: ProtocolVersion) -> Result<(Client, ChildProcess)> {
    let command = ChildCommand::new(binary).args(["--stdio", "--metrics"]).stderr(StderrMode::Capture);
    let (transport, process) = ChildProcess::spawn(command)?;
    let client = workload::builder(version).connect(transport).await?;
    Ok((client, process))
}

/// Short stdio sessions, one after another, each in the next revision: a child process
/// started, the operations run once, the session closed.
async fn stdio_sessions(binary: std::path::PathBuf, until: Instant, counts: Arc<Counts>) {
    let mut turn = 0;
    while Instant::now() < until {
        let version = workload::VERSIONS[turn % workload::VERSIONS.len()];
        turn += 1;
        let command = ChildCommand::new(&binary).arg("--stdio").stderr(StderrMode::Capture);
        match workload::builder(version).spawn(command).await {
            Ok(client) => {
                counts.sessions.fetch_add(1, Ordering::Relaxed);
                workload::session(&client, version, &counts, 1).await;
                let _ = client.close().await;
            }
            Err(e) => {
                counts.failures.fetch_add(1, Ordering::Relaxed);
                eprintln!("soak: spawning a stdio server ({version}) failed: {e}");
            }
        }
    }
}

/// Fits each measure of each server after the warm-up and checks it against its bound.
fn judge(watched: &[Watched], warmup: f64, total: f64, counts: &Counts) -> Result<()> {
    let mut failed = Vec::new();
    println!("soak: slopes after the warm-up ({warmup:.0} s of {total:.0} s), projected per hour:");
    for w in watched {
        let after: Vec<&Sample> = w.samples.iter().filter(|s| s.t >= warmup).collect();
        let unread = after.iter().filter(|s| s.tasks < 0).count();
        if after.is_empty() || unread > 0 {
            failed.push(format!(
                "{}: {unread} of {} samples after the warm-up have no tasks count (no metrics line read)",
                w.name,
                after.len()
            ));
        }
        let mut line = format!("  {:<18}", w.name);
        for bound in &BOUNDS {
            let points: Vec<(f64, f64)> = after.iter().map(|s| (s.t, (bound.read)(s))).collect();
            let per_hour = slope(&points) * 3600.0;
            let window = points.last().map_or(0.0, |p| p.0) - points.first().map_or(0.0, |p| p.0);
            let grown = per_hour / 3600.0 * window;
            let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len().max(1) as f64;
            line.push_str(&format!("  {} {per_hour:+.2}/h, {grown:+.2} (mean {mean:.1})", bound.what));
            if per_hour > bound.per_hour && grown > bound.floor {
                failed.push(format!(
                    "{}: {} grows {per_hour:.2}/hour, {grown:.2} over the window (bounds {}/hour, {})",
                    w.name, bound.what, bound.per_hour, bound.floor
                ));
            }
        }
        println!("{line}");
    }
    println!("soak: at rest before the workload and after it (the abandoned sessions expired):");
    for w in watched.iter().filter(|w| w.judged_at_rest) {
        let (Some(before), Some(after)) = (w.before, w.after) else {
            failed.push(format!("{}: no reading at rest before and after the workload", w.name));
            continue;
        };
        println!(
            "  {:<18}  tasks {} -> {}, fds {} -> {}, rss {:.1} -> {:.1} MiB",
            w.name,
            before.tasks,
            after.tasks,
            before.fds,
            after.fds,
            before.rss_kib as f64 / 1024.0,
            after.rss_kib as f64 / 1024.0
        );
        for (what, grown) in rest_growth(&before, &after) {
            if grown > REST_SLACK || after.tasks < 0 {
                failed.push(format!(
                    "{}: {what} at rest grew by {grown} over the workload (more than {REST_SLACK}): a leak",
                    w.name
                ));
            }
        }
    }
    for f in counts.first_failures.lock().unwrap().iter() {
        println!("soak: failed: {f}");
    }
    let failures = counts.failures.load(Ordering::Relaxed);
    if failures > 0 {
        failed.push(format!("{failures} operations failed"));
    }
    if !failed.is_empty() {
        bail!("soak failed: {}", failed.join("; "));
    }
    println!("soak: passed");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server read flat for 120 s, its tasks at `tasks`, at rest with `at_rest` tasks after.
    fn server(tasks: i64, at_rest: i64) -> Watched {
        let mut w = Watched::new("http", 1);
        w.judged_at_rest = true;
        let reading = |t: f64, tasks| Sample { t, rss_kib: 20 << 10, fds: 15, threads: 3, tasks };
        w.samples = (0..120).map(|i| reading(f64::from(i), tasks)).collect();
        w.before = Some(reading(0.0, 4));
        w.after = Some(reading(130.0, at_rest));
        w
    }

    fn verdict(w: Watched) -> Result<()> {
        judge(&[w], 30.0, 120.0, &Counts::default())
    }

    #[test]
    fn a_flat_run_back_at_rest_passes() {
        verdict(server(12, 4 + REST_SLACK)).unwrap();
    }

    #[test]
    fn a_server_whose_metrics_line_was_never_read_fails() {
        let e = verdict(server(-1, 4)).unwrap_err().to_string();
        assert!(e.contains("90 of 90 samples after the warm-up have no tasks count"), "{e}");
    }

    #[test]
    fn tasks_or_descriptors_left_at_rest_fail_even_when_the_slope_is_flat() {
        let e = verdict(server(12, 5 + REST_SLACK)).unwrap_err().to_string();
        assert!(e.contains("tasks at rest grew by 3"), "{e}");
        let mut w = server(12, 4);
        w.after.as_mut().unwrap().fds += 3;
        let e = verdict(w).unwrap_err().to_string();
        assert!(e.contains("fds at rest grew by 3"), "{e}");
    }
}
