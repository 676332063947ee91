//! `cargo xtask soak --fleet`: the soak's HTTP workload (see the `workload` module)
//! through the balancer of a fleet (Redis, `everything` instances, HAProxy: the start-up of
//! `cargo xtask fleet`), one instance killed (SIGKILL) and started again every `--kill-every`
//! (60 s), in turn. Once a second, Redis's `used_memory` and each instance's resident memory
//! are read.
//!
//! It fails when an operation is lost (no answer within the workload's timeout), when a call's
//! progress comes twice or out of order (a stream resumed on another instance replayed an
//! event twice), when an operation is answered wrongly (a cancelled call answered, an error
//! result or a JSON-RPC error, progress missing: see `workload::Failure::Wrong`), when fewer
//! than [`ANSWERED_AT_LEAST`] of the operations are answered (the others must be clean errors:
//! a broken connection or HTTP exchange, as a call in flight on a killed instance gets), when Redis's
//! memory grows after the warm-up past its bound ([`REDIS_BOUND`]), or when an instance's
//! memory grows within one of its lives past [`INSTANCE_FLOOR_MIB`].

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use super::sample::slope;
use super::workload::{self, Counts};
use super::{HTTP_TASKS, IDLE_TIMEOUT_SECS};
use crate::fleet::SoakFleet;

/// The share of operations that must be answered (the rest: clean errors of calls in flight on
/// a killed instance).
const ANSWERED_AT_LEAST: f64 = 0.95;
/// Redis's memory after the warm-up: its slope, projected per hour, and the growth it fits
/// over the window (MiB) must not both pass these.
const REDIS_BOUND: (f64, f64) = (16.0, 4.0);
/// An instance's memory within one life, from 20 s after its start to its end: at most this
/// much growth (MiB).
const INSTANCE_FLOOR_MIB: f64 = 16.0;
/// How long after its start an instance's memory counts (its heap and pools settle first).
const INSTANCE_SETTLE: f64 = 20.0;

/// One reading of the fleet: the time (s), Redis's memory (bytes), each instance's (KiB).
struct Reading {
    t: f64,
    redis: u64,
    rss: Vec<u64>,
}

/// What the fleet soak takes from the command line.
pub struct Options {
    pub minutes: f64,
    pub kill_every: Duration,
    pub instances: usize,
}

/// Runs the fleet soak.
pub fn run(root: &Path, options: &Options) -> Result<()> {
    let [binary] = crate::interop::build_examples(root, ["everything"])?;
    let dir = root.join("target/soak-fleet");
    let args = vec!["--idle-timeout".to_owned(), IDLE_TIMEOUT_SECS.to_string()];
    let mut fleet = SoakFleet::start(&dir, &binary, options.instances, args)?;
    let names = fleet.names();
    println!("soak --fleet: {} instances behind {} (logs in {})", names.len(), fleet.url(), dir.display());
    let duration = Duration::from_secs_f64(options.minutes * 60.0);
    let warmup = (duration.as_secs_f64() / 4.0).max(30.0).min(duration.as_secs_f64() / 2.0);
    let started = Instant::now();
    let until = started + duration;
    let counts = Arc::new(Counts::default());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let work = {
        let (url, counts) = (fleet.url(), counts.clone());
        runtime.spawn(async move {
            let tasks: Vec<_> = (0..HTTP_TASKS)
                .map(|i| tokio::spawn(workload::http_task(url.clone(), i, until, counts.clone())))
                .collect();
            for task in tasks {
                let _ = task.await;
            }
        })
    };
    // Read once a second; kill in turn.
    let mut readings = Vec::new();
    let mut lives: Vec<Vec<f64>> = vec![vec![0.0]; names.len()];
    let mut next_kill = started + options.kill_every;
    let mut kills = 0usize;
    let mut minute = 0;
    let mut tick = Instant::now();
    while Instant::now() < until {
        tick += Duration::from_secs(1);
        std::thread::sleep(tick.saturating_duration_since(Instant::now()));
        let t = started.elapsed().as_secs_f64();
        readings.push(Reading { t, redis: fleet.redis_used_memory()?, rss: fleet.rss_kib() });
        if Instant::now() >= next_kill && Instant::now() < until {
            let victim = kills % names.len();
            let at = Instant::now();
            fleet.kill_and_restart(victim)?;
            println!(
                "soak --fleet: {t:.0} s: instance {} killed (SIGKILL) and back in {:.1} s",
                names[victim],
                at.elapsed().as_secs_f64()
            );
            lives[victim].push(started.elapsed().as_secs_f64());
            kills += 1;
            next_kill += options.kill_every;
        }
        if t as u64 / 60 > minute {
            minute = t as u64 / 60;
            let last = readings.last().map_or(0, |r| r.redis);
            println!("soak --fleet: {minute} min: Redis {:.1} MiB; {}", mib(last), counts.summary());
        }
    }
    let _ = runtime.block_on(async { tokio::time::timeout(Duration::from_secs(90), work).await });
    drop(fleet);
    println!("soak --fleet: {kills} kills in {:.0} s; {}", started.elapsed().as_secs_f64(), counts.summary());
    judge(&readings, &lives, &names, warmup, &counts)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The verdict: nothing lost or repeated, most answered, memory bounded.
fn judge(readings: &[Reading], lives: &[Vec<f64>], names: &[String], warmup: f64, counts: &Counts) -> Result<()> {
    let mut failed = Vec::new();
    let n = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    let (answered, failures) = (n(&counts.answered), n(&counts.failures));
    let (lost, repeated, wrong) = (n(&counts.timeouts), n(&counts.duplicates), n(&counts.wrong));
    let clean = failures - lost - repeated - wrong;
    println!(
        "soak --fleet: operations: {answered} answered, {clean} clean errors, {lost} lost (no answer), {repeated} with \
         progress repeated, {wrong} answered wrongly"
    );
    for (kind, n) in counts.failure_kinds.lock().unwrap().iter() {
        println!("soak --fleet: {n} x {kind}");
    }
    if lost > 0 {
        failed.push(format!("{lost} operations got no answer"));
    }
    if repeated > 0 {
        failed.push(format!("{repeated} calls got a progress notification twice or out of order"));
    }
    if wrong > 0 {
        failed.push(format!("{wrong} operations answered wrongly (a cancelled call answered, an error, ...)"));
    }
    let total = answered + failures;
    if total == 0 || (answered as f64) < ANSWERED_AT_LEAST * total as f64 {
        failed.push(format!("{answered} of {total} operations answered (at least {ANSWERED_AT_LEAST} wanted)"));
    }
    // Redis after the warm-up.
    let points: Vec<(f64, f64)> = readings.iter().filter(|r| r.t >= warmup).map(|r| (r.t, mib(r.redis))).collect();
    let per_hour = slope(&points) * 3600.0;
    let window = points.last().map_or(0.0, |p| p.0) - points.first().map_or(0.0, |p| p.0);
    let grown = per_hour / 3600.0 * window;
    let (first, last) = (points.first().map_or(0.0, |p| p.1), points.last().map_or(0.0, |p| p.1));
    println!(
        "soak --fleet: Redis used_memory after the warm-up ({warmup:.0} s): {first:.2} -> {last:.2} MiB, slope \
         {per_hour:+.2} MiB/h ({grown:+.2} MiB over {window:.0} s)"
    );
    if per_hour > REDIS_BOUND.0 && grown > REDIS_BOUND.1 {
        failed.push(format!(
            "Redis's memory grows {per_hour:.2} MiB/h, {grown:.2} MiB over the window (bounds {} MiB/h, {} MiB)",
            REDIS_BOUND.0, REDIS_BOUND.1
        ));
    }
    // Each instance, life by life.
    for (i, name) in names.iter().enumerate() {
        let mut shown = Vec::new();
        for (k, &start) in lives[i].iter().enumerate() {
            let end = lives[i].get(k + 1).copied().unwrap_or(f64::INFINITY);
            let life: Vec<f64> = readings
                .iter()
                .filter(|r| r.t >= start + INSTANCE_SETTLE && r.t < end && r.rss[i] > 0)
                .map(|r| r.rss[i] as f64 / 1024.0)
                .collect();
            let (Some(first), Some(last)) = (life.first(), life.last()) else { continue };
            let peak = life.iter().copied().fold(0.0, f64::max);
            shown.push(format!("{first:.1} -> {last:.1} (peak {peak:.1})"));
            if last - first > INSTANCE_FLOOR_MIB {
                failed.push(format!("instance {name} grew {:.1} MiB in one life", last - first));
            }
        }
        println!("soak --fleet: instance {name} RSS MiB per life: {}", shown.join("; "));
    }
    if !failed.is_empty() {
        bail!("soak --fleet failed: {}", failed.join("; "));
    }
    println!("soak --fleet: passed");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 120 s of readings of two instances, Redis at `redis(t)` bytes, the first instance
    /// restarted at 60 s; 1,000 operations answered, 5 clean errors, `lost` lost.
    fn verdict(redis: fn(f64) -> u64, lost: u64) -> Result<()> {
        verdict_of(redis, lost, 0)
    }

    /// As [`verdict`], with `wrong` operations answered wrongly besides.
    fn verdict_of(redis: fn(f64) -> u64, lost: u64, wrong: u64) -> Result<()> {
        let readings: Vec<Reading> =
            (0..120).map(|t| Reading { t: f64::from(t), redis: redis(f64::from(t)), rss: vec![20 << 10; 2] }).collect();
        let counts = Counts::default();
        counts.answered.store(1000, Ordering::Relaxed);
        counts.failures.store(5 + lost + wrong, Ordering::Relaxed);
        counts.timeouts.store(lost, Ordering::Relaxed);
        counts.wrong.store(wrong, Ordering::Relaxed);
        let names = ["a".to_owned(), "b".to_owned()];
        judge(&readings, &[vec![0.0, 60.0], vec![0.0]], &names, 30.0, &counts)
    }

    #[test]
    fn a_flat_fleet_with_clean_errors_passes() {
        verdict(|_| 2 << 20, 0).unwrap();
    }

    #[test]
    fn a_lost_operation_fails() {
        let e = verdict(|_| 2 << 20, 1).unwrap_err().to_string();
        assert!(e.contains("1 operations got no answer"), "{e}");
    }

    #[test]
    fn a_cancelled_call_answered_fails() {
        let e = verdict_of(|_| 2 << 20, 0, 1).unwrap_err().to_string();
        assert!(e.contains("1 operations answered wrongly"), "{e}");
    }

    #[test]
    fn redis_memory_that_keeps_growing_fails() {
        // 100 KiB a second: 350 MiB an hour, 8.8 MiB over the 90 s window.
        let e = verdict(|t| (2 << 20) + (t * 100.0 * 1024.0) as u64, 0).unwrap_err().to_string();
        assert!(e.contains("Redis's memory grows"), "{e}");
    }
}
