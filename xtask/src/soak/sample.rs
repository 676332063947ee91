//! What the soak measures of a server process, once a second: resident memory and threads
//! (`/proc/PID/status`), open file descriptors (`/proc/PID/fd`) and the tokio tasks alive
//! (the example's `--metrics` line on its stderr); and the least-squares slope that judges them.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// One reading of one server.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Seconds since the soak began.
    pub t: f64,
    /// Resident memory, KiB.
    pub rss_kib: u64,
    /// Open file descriptors.
    pub fds: u64,
    /// Threads.
    pub threads: u64,
    /// Tokio tasks alive (-1 until the server's first metrics line).
    pub tasks: i64,
}

/// A sampled server: its name, process id, where its metrics line lands, and its samples; and
/// two readings at rest: before the workload, and after it once idle sessions expired.
pub struct Watched {
    pub name: &'static str,
    pub pid: u32,
    pub tasks: Arc<AtomicI64>,
    pub samples: Vec<Sample>,
    /// At rest before the workload.
    pub before: Option<Sample>,
    /// At rest after the workload (the last reading of the quiet phase).
    pub after: Option<Sample>,
    /// Whether it is judged at rest after the workload: the HTTP server, whose sessions come
    /// and go (a long-lived stdio server ends with its one session, at the workload's end).
    pub judged_at_rest: bool,
}

impl Watched {
    pub fn new(name: &'static str, pid: u32) -> Self {
        Watched {
            name,
            pid,
            tasks: Arc::new(AtomicI64::new(-1)),
            samples: Vec::new(),
            before: None,
            after: None,
            judged_at_rest: false,
        }
    }

    /// Reads the process now and keeps the sample; false once it is gone.
    pub fn sample(&mut self, t: f64) -> bool {
        match self.read(t) {
            Some(sample) => {
                self.samples.push(sample);
                true
            }
            None => false,
        }
    }

    /// Reads the process now; `None` once it is gone.
    pub fn read(&self, t: f64) -> Option<Sample> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        let field = |name: &str| {
            status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.split_whitespace().next()?.parse().ok())
        };
        // A process that exited but is not reaped yet has no memory lines.
        let rss_kib = field("VmRSS:")?;
        let fds = std::fs::read_dir(format!("/proc/{}/fd", self.pid)).map(|d| d.count() as u64).unwrap_or(0);
        Some(Sample {
            t,
            rss_kib,
            fds,
            threads: field("Threads:").unwrap_or(0),
            tasks: self.tasks.load(Ordering::Relaxed),
        })
    }
}

/// Parses a `metrics tasks=N` line of the example's stderr into `tasks`.
pub fn note_metrics(line: &str, tasks: &AtomicI64) {
    if let Some(n) = line.trim().strip_prefix("metrics tasks=").and_then(|n| n.parse().ok()) {
        tasks.store(n, Ordering::Relaxed);
    }
}

/// The least-squares slope of `y` over `t` (units of y per second); 0 with fewer than 2 points.
pub fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    if points.len() < 2 {
        return 0.0;
    }
    let mean_t = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (t, y) in points {
        num += (t - mean_t) * (y - mean_y);
        den += (t - mean_t) * (t - mean_t);
    }
    if den == 0.0 { 0.0 } else { num / den }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slope_of_a_line_and_of_noise_around_it() {
        let line: Vec<_> = (0..100).map(|i| (i as f64, 3.0 + 0.5 * i as f64)).collect();
        assert!((slope(&line) - 0.5).abs() < 1e-9);
        let noisy: Vec<_> = (0..100).map(|i| (i as f64, if i % 2 == 0 { 10.0 } else { 12.0 })).collect();
        assert!(slope(&noisy).abs() < 0.01);
        assert_eq!(slope(&[(1.0, 1.0)]), 0.0);
    }

    #[test]
    fn metrics_lines_are_read_and_others_ignored() {
        let tasks = AtomicI64::new(-1);
        note_metrics("2026-01-01 WARN something", &tasks);
        assert_eq!(tasks.load(Ordering::Relaxed), -1);
        note_metrics("metrics tasks=42\n", &tasks);
        assert_eq!(tasks.load(Ordering::Relaxed), 42);
    }
}
