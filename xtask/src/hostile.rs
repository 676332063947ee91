//! `cargo xtask hostile`: the `everything` example server attacked over real sockets by a
//! client that breaks every rule (issue 22): slow heads and bodies, heads and bodies past the
//! bounds, floods of sessions, streams never read, forged and foreign session ids, wrong
//! headers, malformed and hostile bodies, mismatched 2026-07-28 headers, tampered
//! `requestState`, thousands of pipelined requests, and the same on the HTTP+SSE endpoints.
//!
//! Each attack asserts the exact status and JSON-RPC error that docs/http.md names. After each
//! one a fresh client (initialize, `tools/list`, over a new connection) must be answered within
//! [`FRESH_LIMIT`], and the server's resident memory must come back under its start plus
//! [`RSS_MARGIN`]: see docs/reliability.md ("Hostile clients") for why that bound.
//! One line per attack: PASS or FAIL, what was sent, what came back, time, RSS.

mod attacks;
mod wire;

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::interop;

/// How long a fresh client may wait for its answers, during and after an attack.
pub const FRESH_LIMIT: Duration = Duration::from_secs(1);
/// Resident memory allowed above the start once an attack's connections are closed (what glibc
/// keeps of the suite's legitimate peaks is about 28 MiB; see docs/reliability.md).
pub const RSS_MARGIN: u64 = 48 << 20;
/// How long memory may take to come back under the bound.
const RSS_SETTLE: Duration = Duration::from_secs(10);

/// The server under attack.
pub struct Target {
    pub addr: SocketAddr,
    child: Child,
}

impl Target {
    /// Its resident memory (`VmRSS`), in bytes.
    pub fn rss(&self) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        let kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .context("no VmRSS")?;
        Ok(kib << 10)
    }

    /// A fresh client: initialize and `tools/list` over a new connection, then DELETE; the
    /// time it took, which must be under [`FRESH_LIMIT`].
    pub fn fresh(&self) -> Result<Duration> {
        let start = Instant::now();
        let mut conn = wire::Conn::open(self.addr)?;
        conn.stream().set_read_timeout(Some(FRESH_LIMIT))?;
        let id = wire::open_session(&mut conn).context("a fresh client's initialize")?;
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        let reply = conn.ask(&wire::post("/mcp", &wire::session_headers(&id), list))?;
        reply.expect(200, None)?;
        if reply.json()["result"]["tools"].as_array().is_none_or(Vec::is_empty) {
            bail!("a fresh client's tools/list got {}", reply.short());
        }
        let took = start.elapsed();
        wire::delete_session(&mut conn, &id)?;
        if took > FRESH_LIMIT {
            bail!("a fresh client waited {took:?}");
        }
        Ok(took)
    }

    fn alive(&mut self) -> Result<()> {
        match self.child.try_wait()? {
            Some(status) => bail!("the server exited ({status})"),
            None => Ok(()),
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One attack: its name, what it sends, and the attack itself (what came back, or why it
/// failed).
pub struct Attack {
    pub name: &'static str,
    pub sends: &'static str,
    pub run: fn(&Target) -> Result<String>,
}

/// Builds and starts `everything`, runs every attack (or those whose name contains one of
/// `args`), fails if one did.
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let [everything] = interop::build_examples(root, ["everything"])?;
    let dir = root.join("target/hostile");
    std::fs::create_dir_all(&dir)?;
    let log = dir.join("everything.log");
    let mut target = start(&everything, &log)?;
    for _ in 0..3 {
        target.fresh()?;
    }
    let start_rss = target.rss()?;
    let bound = start_rss + RSS_MARGIN;
    println!(
        "==> hostile: `everything` at http://{}/mcp, RSS {} at start, bound {}",
        target.addr,
        mib(start_rss),
        mib(bound)
    );
    let mut failed = Vec::new();
    let chosen = attacks::ALL.iter().filter(|a| args.is_empty() || args.iter().any(|n| a.name.contains(n.as_str())));
    for attack in chosen {
        let start = Instant::now();
        let outcome = (attack.run)(&target).and_then(|got| after(&mut target, bound).map(|rss| (got, rss)));
        let took = start.elapsed().as_secs_f64();
        let rss = target.rss().map(mib).unwrap_or_else(|e| e.to_string());
        match outcome {
            Ok((got, fresh)) => {
                println!(
                    "PASS {}: sent {}; got {got}; fresh client {fresh}; {took:.1} s; RSS {rss}",
                    attack.name, attack.sends
                )
            }
            Err(e) => {
                println!("FAIL {}: sent {}; {e:#}; {took:.1} s; RSS {rss}", attack.name, attack.sends);
                failed.push(attack.name);
            }
        }
        target.alive()?;
    }
    if !failed.is_empty() {
        bail!("hostile: {} attack(s) failed: {} (server log: {})", failed.len(), failed.join(", "), log.display());
    }
    println!("==> hostile: every attack answered as docs/http.md says");
    Ok(())
}

/// After an attack: a fresh client is served in time, and memory comes back under `bound`.
fn after(target: &mut Target, bound: u64) -> Result<String> {
    target.alive()?;
    let took = target.fresh()?;
    let deadline = Instant::now() + RSS_SETTLE;
    loop {
        let rss = target.rss()?;
        if rss <= bound {
            return Ok(format!("in {} ms", took.as_millis()));
        }
        if Instant::now() > deadline {
            bail!("RSS {} stayed over the bound {} for {RSS_SETTLE:?}", mib(rss), mib(bound));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn start(everything: &Path, log: &Path) -> Result<Target> {
    let addr = SocketAddr::from(([127, 0, 0, 1], interop::free_port()?));
    let child = Command::new(everything)
        .args(["--http", &addr.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log)?)
        .spawn()
        .with_context(|| format!("starting {}", everything.display()))?;
    let mut target = Target { addr, child };
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(addr).is_err() {
        target.alive()?;
        if Instant::now() > deadline {
            bail!("`everything` did not listen on {addr} within 30 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(target)
}

pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}
