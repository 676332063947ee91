//! `cargo xtask bench`: round trips over real pipes, our stdio server against the no-library
//! baseline, side by side in one run.
//!
//! For each server: sequential round trips (one request, wait for its answer, repeat) and
//! pipelined ones (64 requests in flight); several runs alternating between the servers, medians,
//! and the ratio to the
//! baseline. The load generator is plain threads on blocking pipes, so that it costs the
//! servers as little as possible; both servers run the same `echo` tool call.

use std::io::{BufRead as _, BufReader, BufWriter, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};

struct Server {
    name: &'static str,
    program: String,
    args: Vec<&'static str>,
}

const RUNS: usize = 7;
const SEQUENTIAL_CALLS: usize = 20_000;
const PIPELINED_CALLS: usize = 200_000;
const IN_FLIGHT: usize = 64;

fn request(id: usize) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"hello world\"}}}}}}\n"
    )
}

/// Runs `calls` round trips with at most `in_flight` outstanding; returns calls per second.
fn measure(server: &Server, calls: usize, in_flight: usize) -> Result<f64> {
    let mut child = Command::new(&server.program)
        .args(&server.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", server.program))?;
    let mut stdin = BufWriter::with_capacity(64 * 1024, child.stdin.take().context("stdin")?);
    let mut stdout = BufReader::with_capacity(64 * 1024, child.stdout.take().context("stdout")?);
    let mut line = String::new();
    // The handshake, not timed.
    stdin.write_all(
        b"{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n",
    )?;
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")?;
    stdin.flush()?;
    stdout.read_line(&mut line)?;
    if !line.contains("\"init\"") {
        bail!("{}: unexpected handshake answer {line}", server.name);
    }
    let requests: Vec<String> = (0..calls).map(request).collect();
    if in_flight == 1 {
        // Sequential: one thread, write, wait for the answer, repeat.
        let started = Instant::now();
        for req in &requests {
            stdin.write_all(req.as_bytes())?;
            stdin.flush()?;
            line.clear();
            if stdout.read_line(&mut line)? == 0 {
                bail!("{}: stdout closed", server.name);
            }
        }
        let elapsed = started.elapsed();
        drop(stdin);
        child.wait()?;
        return Ok(calls as f64 / elapsed.as_secs_f64());
    }

    let (credit_tx, credit_rx) = mpsc::sync_channel::<()>(in_flight);
    for _ in 0..in_flight {
        credit_tx.send(())?;
    }
    let started = Instant::now();
    let writer = std::thread::spawn(move || -> Result<()> {
        let mut have_credit = false;
        for req in &requests {
            if !have_credit {
                // Out of credit: send what is written, then wait for an answer to free a slot.
                stdin.flush()?;
                credit_rx.recv()?;
            }
            stdin.write_all(req.as_bytes())?;
            have_credit = credit_rx.try_recv().is_ok();
        }
        stdin.flush()?;
        drop(stdin);
        Ok(())
    });
    for n in 0..calls {
        line.clear();
        if stdout.read_line(&mut line)? == 0 {
            bail!("{}: stdout closed after {n} answers", server.name);
        }
        let _ = credit_tx.try_send(());
    }
    let elapsed = started.elapsed();
    if !line.contains("hello world") {
        bail!("{}: unexpected answer {line}", server.name);
    }
    writer.join().map_err(|_| anyhow::anyhow!("writer panicked"))??;
    child.wait()?;
    Ok(calls as f64 / elapsed.as_secs_f64())
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Builds the servers and prints the table.
pub fn run(root: &Path) -> Result<()> {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--example", "echo", "--example", "baseline_stdio"])
        .current_dir(root)
        .status()?;
    if !status.success() {
        bail!("building the benchmark servers failed");
    }
    let examples = root.join("target/release/examples");
    let servers = [
        Server {
            name: "baseline (serde_json line loop)",
            program: examples.join("baseline_stdio").display().to_string(),
            args: vec![],
        },
        Server {
            name: "ours (echo --stdio)",
            program: examples.join("echo").display().to_string(),
            args: vec!["--stdio"],
        },
    ];
    println!("stdio round trips, {RUNS} alternating runs each, medians (calls/s)");
    println!("| server | sequential | {IN_FLIGHT} in flight |");
    println!("|---|---:|---:|");
    // Runs alternate between the servers, so that the machine's drift (this is a shared VM)
    // falls on both alike.
    let mut samples = vec![(Vec::new(), Vec::new()); servers.len()];
    for _ in 0..RUNS {
        for (server, (seq, pipe)) in servers.iter().zip(samples.iter_mut()) {
            seq.push(measure(server, SEQUENTIAL_CALLS, 1)?);
            pipe.push(measure(server, PIPELINED_CALLS, IN_FLIGHT)?);
        }
    }
    let mut rows = Vec::new();
    for (server, (seq, pipe)) in servers.iter().zip(samples) {
        let (seq, pipe) = (median(seq), median(pipe));
        println!("| {} | {seq:.0} | {pipe:.0} |", server.name);
        rows.push((seq, pipe));
    }
    let (base, ours) = (rows[0], rows[1]);
    println!();
    println!("ours / baseline: sequential {:.2}x, {IN_FLIGHT} in flight {:.2}x", ours.0 / base.0, ours.1 / base.1);
    Ok(())
}
