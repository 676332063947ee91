//! The load generator: drives one server process over its stdio pipes or over HTTP/1.1
//! keep-alive connections, with blocking I/O on plain threads so that it costs the machine as
//! little as possible, and reads the server's CPU time and memory from `/proc`.

use std::io::{BufRead as _, BufReader, BufWriter, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

/// How a server is spoken to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Wire {
    /// Newline-delimited JSON-RPC over the child's stdin and stdout, after `initialize`.
    Stdio,
    /// Streamable HTTP with a session per connection (`initialize`, then `Mcp-Session-Id`).
    HttpSessions,
    /// The same, the client speaking 2025-11-25: each stream it is answered on can be resumed
    /// from its priming event (what a shared session's event store has to keep).
    HttpSessionsResumable,
    /// Streamable HTTP without sessions: every POST stands alone.
    HttpStateless,
    /// Streamable HTTP, revision 2026-07-28: no handshake, the envelope in each request.
    Http2026,
    /// Not a server: our client (`examples/echo_client.rs`) calling the `echo` tool of a server
    /// it runs as its child over stdio, told on stdin how many calls to make. Only for
    /// `--callgrind`, which counts the client's instructions (valgrind does not follow the
    /// child).
    Client,
}

impl Wire {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Wire::Stdio => "stdio",
            Wire::HttpSessions => "HTTP sessions",
            Wire::HttpSessionsResumable => "HTTP sessions 2025-11-25",
            Wire::HttpStateless => "HTTP stateless",
            Wire::Http2026 => "HTTP 2026-07-28",
            Wire::Client => "client over stdio",
        }
    }

    /// Whether a connection opens a session first (`initialize`).
    pub(crate) fn sessions(self) -> bool {
        matches!(self, Wire::HttpSessions | Wire::HttpSessionsResumable)
    }

    /// The session revision the client speaks.
    fn version(self) -> &'static str {
        match self {
            Wire::HttpSessionsResumable => RESUMABLE,
            _ => VERSION,
        }
    }
}

/// A server under test and how to start it.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// Who made it: `ours`, `rmcp`, `baseline`, ...
    pub(crate) sdk: &'static str,
    /// What distinguishes it from the same SDK's other targets (`stdio`, `pipe`, ...).
    pub(crate) mode: &'static str,
    pub(crate) wire: Wire,
    pub(crate) program: PathBuf,
    /// Its arguments; `{addr}` is replaced by the address to listen on.
    pub(crate) args: Vec<String>,
}

impl Target {
    pub(crate) fn name(&self) -> String {
        format!("{} {}", self.sdk, self.mode)
    }
}

/// The session-era revision the benchmark speaks: every SDK under test serves it.
const VERSION: &str = "2025-06-18";
/// The revision of [`Wire::HttpSessionsResumable`].
const RESUMABLE: &str = "2025-11-25";
const STATELESS: &str = "2026-07-28";
const TEXT: &str = "hello world";

fn initialize(id: u64) -> String {
    initialize_at(id, VERSION)
}

fn initialize_at(id: u64, version: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"bench","version":"1"}}}}}}"#
    )
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn call(id: u64, stateless: bool) -> String {
    let meta = if stateless {
        format!(
            r#","_meta":{{"io.modelcontextprotocol/protocolVersion":"{STATELESS}","io.modelcontextprotocol/clientInfo":{{"name":"bench","version":"1"}},"io.modelcontextprotocol/clientCapabilities":{{}}}}"#
        )
    } else {
        String::new()
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{TEXT}"}}{meta}}}}}"#
    )
}

/// Checks that `message` is the successful answer to the echo call `id`.
fn check_answer(message: &Value, id: u64) -> Result<()> {
    if message["id"] != id {
        bail!("an answer to {} where {id} was expected: {message}", message["id"]);
    }
    if message["result"]["content"][0]["text"] != TEXT || message["result"]["isError"] == true {
        bail!("not the echo of the call {id}: {message}");
    }
    Ok(())
}

/// The CPUs the servers run on when the run is pinned (see [`pin`]).
static SERVER_CPUS: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Where the load generator and the servers run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Placement {
    /// Left to the scheduler.
    Free,
    /// The load generator on CPU 0, the servers on the others.
    Split,
    /// Both on CPU 0.
    Shared,
}

/// Pins the load generator (this process, and every thread it starts from now on) and the
/// servers it starts as `placement` says; returns how, in words, for the report.
pub(crate) fn pin(placement: Placement) -> Result<String> {
    let cpus = std::thread::available_parallelism().map(usize::from).unwrap_or(1);
    let server = match placement {
        Placement::Free => return Ok("placement left to the scheduler".to_owned()),
        _ if cpus < 2 => return Ok("one CPU".to_owned()),
        Placement::Shared => "0".to_owned(),
        Placement::Split if cpus == 2 => "1".to_owned(),
        Placement::Split => format!("1-{}", cpus - 1),
    };
    let status = Command::new("taskset")
        .args(["--all-tasks", "--cpu-list", "--pid", "0", &std::process::id().to_string()])
        .stdout(Stdio::null())
        .status()
        .context("running taskset (util-linux)")?;
    if !status.success() {
        bail!("taskset could not pin the load generator ({status})");
    }
    let _ = SERVER_CPUS.set(server.clone());
    Ok(match placement {
        Placement::Shared => "load generator and servers on CPU 0".to_owned(),
        _ => format!("load generator on CPU 0, servers on CPU {server}"),
    })
}

/// The server process, killed (with its process group) when dropped.
pub(crate) struct Process {
    child: Child,
    clock_ticks: f64,
}

impl Process {
    fn spawn(target: &Target, addr: Option<SocketAddr>, stdio: bool) -> Result<Process> {
        let args = target.args.iter().map(|a| match addr {
            Some(addr) => a.replace("{addr}", &addr.to_string()),
            None => a.clone(),
        });
        let mut command = match SERVER_CPUS.get() {
            // `taskset` execs the server: the child's pid is the server's.
            Some(cpus) => {
                let mut command = Command::new("taskset");
                command.args(["--cpu-list", cpus]).arg(&target.program);
                command
            }
            None => Command::new(&target.program),
        };
        command.args(args).stderr(Stdio::inherit()).process_group(0);
        if stdio {
            command.stdin(Stdio::piped()).stdout(Stdio::piped());
        } else {
            command.stdin(Stdio::null()).stdout(Stdio::null());
        }
        let child = command.spawn().with_context(|| format!("starting {}", target.program.display()))?;
        Ok(Process { child, clock_ticks: clock_ticks() })
    }

    fn stat(&self) -> Result<Vec<String>> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))?;
        // The command name, in parentheses, may hold spaces; the fields follow the last `)`.
        let rest = stat.rsplit_once(')').context("unreadable /proc/PID/stat")?.1;
        Ok(rest.split_whitespace().map(str::to_owned).collect())
    }

    /// User and system CPU time the server has used so far.
    pub(crate) fn cpu(&self) -> Result<Duration> {
        let fields = self.stat()?;
        // After the `)`: state is field 3 of the man page, utime 14 and stime 15.
        let ticks: u64 = fields[11].parse::<u64>()? + fields[12].parse::<u64>()?;
        Ok(Duration::from_secs_f64(ticks as f64 / self.clock_ticks))
    }

    fn status_kib(&self, key: &str) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        let line = status.lines().find(|l| l.starts_with(key)).with_context(|| format!("no {key} in status"))?;
        Ok(line[key.len()..].trim().trim_end_matches("kB").trim().parse()?)
    }

    /// Resident memory now, in KiB.
    pub(crate) fn rss_kib(&self) -> Result<u64> {
        self.status_kib("VmRSS:")
    }

    /// The anonymous part of the resident memory (heap, stacks: what the process itself
    /// allocated, not the pages of its executable and libraries), in KiB.
    pub(crate) fn anon_rss_kib(&self) -> Result<u64> {
        self.status_kib("RssAnon:")
    }

    /// The most resident memory so far, in KiB.
    pub(crate) fn peak_rss_kib(&self) -> Result<u64> {
        self.status_kib("VmHWM:")
    }

    fn exited(&mut self) -> Result<Option<std::process::ExitStatus>> {
        Ok(self.child.try_wait()?)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ =
            Command::new("kill").args(["-KILL", "--", &format!("-{}", self.child.id())]).stderr(Stdio::null()).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// How long each phase lasts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timing {
    pub(crate) warmup: Duration,
    pub(crate) measure: Duration,
}

/// One phase's numbers.
#[derive(Clone, Debug, Default)]
pub(crate) struct Phase {
    pub(crate) calls_per_sec: f64,
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    /// Server CPU time per call, in microseconds.
    pub(crate) cpu_us_per_call: f64,
}

/// What one run of one target measured.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunResult {
    pub(crate) cold_start_ms: f64,
    pub(crate) idle_rss_kib: f64,
    /// The anonymous part of the idle RSS.
    pub(crate) idle_anon_kib: f64,
    pub(crate) peak_rss_kib: f64,
    pub(crate) sequential: Phase,
    pub(crate) concurrent: Phase,
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

/// Turns the latencies of the calls that ended inside the window into a [`Phase`].
fn phase(mut latencies: Vec<Duration>, window: Duration, cpu: Duration) -> Phase {
    latencies.sort_unstable();
    let calls = latencies.len() as f64;
    Phase {
        calls_per_sec: calls / window.as_secs_f64(),
        p50_us: percentile(&latencies, 0.5),
        p99_us: percentile(&latencies, 0.99),
        cpu_us_per_call: cpu.as_secs_f64() * 1e6 / calls.max(1.0),
    }
}

/// Sequential round trips (`call` with ids from 2 on) for the warm-up, then for the measured
/// window: one phase's numbers, the server's CPU time included.
fn sequential(process: &Process, timing: Timing, mut call: impl FnMut(u64) -> Result<()>) -> Result<Phase> {
    let t0 = Instant::now() + timing.warmup;
    let t1 = t0 + timing.measure;
    let mut latencies = Vec::new();
    let mut cpu0 = None;
    for id in 2.. {
        let sent = Instant::now();
        if sent >= t0 && cpu0.is_none() {
            cpu0 = Some(process.cpu()?);
        }
        if sent >= t1 {
            break;
        }
        call(id)?;
        if sent >= t0 {
            latencies.push(sent.elapsed());
        }
    }
    let cpu = process.cpu()? - cpu0.unwrap_or_default();
    Ok(phase(latencies, timing.measure, cpu))
}

/// Runs `target` once: cold start, idle memory, sequential calls, `in_flight` concurrent calls,
/// peak memory.
pub(crate) fn run(target: &Target, timing: Timing, in_flight: usize) -> Result<RunResult> {
    match target.wire {
        Wire::Stdio => run_stdio(target, timing, in_flight),
        _ => run_http(target, timing, in_flight),
    }
}

// ---- stdio ----

struct Pipes {
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Pipes {
    fn send(&mut self, frame: &str) -> Result<()> {
        self.stdin.write_all(frame.as_bytes())?;
        self.stdin.write_all(b"\n")?;
        self.stdin.flush()?;
        Ok(())
    }

    /// The next message that has an `id` (notifications, e.g. logs, are skipped).
    fn answer(&mut self) -> Result<Value> {
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line)? == 0 {
                bail!("the server closed its stdout");
            }
            let message: Value = serde_json::from_str(&self.line)
                .with_context(|| format!("the server wrote a line that is not JSON: {:?}", self.line))?;
            if message.get("id").is_some() {
                return Ok(message);
            }
        }
    }
}

fn run_stdio(target: &Target, timing: Timing, in_flight: usize) -> Result<RunResult> {
    let started = Instant::now();
    let mut process = Process::spawn(target, None, true)?;
    let mut pipes = Pipes {
        stdin: BufWriter::with_capacity(64 * 1024, process.child.stdin.take().context("stdin")?),
        stdout: BufReader::with_capacity(64 * 1024, process.child.stdout.take().context("stdout")?),
        line: String::new(),
    };
    pipes.send(&initialize(0))?;
    let answer = pipes.answer()?;
    let cold_start = started.elapsed();
    if answer["result"]["protocolVersion"].is_null() {
        bail!("{}: unexpected answer to initialize: {answer}", target.name());
    }
    pipes.send(INITIALIZED)?;
    pipes.send(&call(1, false))?;
    check_answer(&pipes.answer()?, 1)?;
    let idle_rss = process.rss_kib()?;
    let idle_anon = process.anon_rss_kib()?;

    // Sequential: write one, wait for its answer, repeat.
    let sequential = sequential(&process, timing, |id| {
        pipes.send(&call(id, false))?;
        check_answer(&pipes.answer()?, id)
    })?;

    // Pipelined: a writer keeps `in_flight` calls outstanding; a reader frees a slot per
    // answer. Latency is timed from the moment a call is written.
    let Pipes { mut stdin, mut stdout, .. } = pipes;
    let (credit_tx, credit_rx) = mpsc::sync_channel::<()>(in_flight);
    for _ in 0..in_flight {
        credit_tx.send(())?;
    }
    // Pipelined ids start far above the sequential ones.
    let first: u64 = 1 << 40;
    let stop = Arc::new(AtomicBool::new(false));
    // Send times, by id modulo a ring far larger than the calls outstanding at once (answers
    // may come out of order).
    const RING: usize = 1 << 16;
    let sent_at: Arc<Vec<AtomicU64>> = Arc::new((0..RING).map(|_| AtomicU64::new(0)).collect());
    let epoch = Instant::now();
    let writer = {
        let stop = stop.clone();
        let sent_at = sent_at.clone();
        std::thread::spawn(move || -> Result<()> {
            let mut id = first;
            let mut have_credit = false;
            while !stop.load(Ordering::Relaxed) {
                if !have_credit {
                    // Out of credit: send what is written, then wait for an answer.
                    stdin.flush()?;
                    if credit_rx.recv().is_err() {
                        break;
                    }
                }
                sent_at[(id as usize) % RING].store(epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
                stdin.write_all(call(id, false).as_bytes())?;
                stdin.write_all(b"\n")?;
                id += 1;
                have_credit = credit_rx.try_recv().is_ok();
            }
            let _ = stdin.flush();
            // Keep the pipe open: closing it would end the server before the reader is done.
            std::mem::forget(stdin);
            Ok(())
        })
    };
    let t0 = Instant::now() + timing.warmup;
    let t1 = t0 + timing.measure;
    let mut latencies = Vec::new();
    let mut line = String::new();
    let mut cpu0 = None;
    loop {
        line.clear();
        if stdout.read_line(&mut line)? == 0 {
            bail!("{}: the server closed its stdout", target.name());
        }
        let now = Instant::now();
        let message: Value = serde_json::from_str(&line)?;
        if message.get("id").is_none() {
            continue;
        }
        let id = message["id"].as_u64().with_context(|| format!("an answer with a bad id: {message}"))?;
        if id < first {
            bail!("an answer to {id}, which was not pipelined");
        }
        check_answer(&message, id)?;
        if now >= t0 {
            if cpu0.is_none() {
                cpu0 = Some(process.cpu()?);
            }
            let sent = Duration::from_nanos(sent_at[(id as usize) % RING].load(Ordering::Relaxed));
            latencies.push((now - epoch).saturating_sub(sent));
        }
        let _ = credit_tx.try_send(());
        if now >= t1 {
            break;
        }
    }
    let cpu = process.cpu()? - cpu0.unwrap_or_default();
    stop.store(true, Ordering::Relaxed);
    drop(credit_tx);
    let concurrent = phase(latencies, timing.measure, cpu);
    let peak_rss = process.peak_rss_kib()?;
    // Killing the server ends the writer's last write, if it is blocked in one.
    drop(process);
    let _ = writer.join();
    Ok(RunResult {
        cold_start_ms: cold_start.as_secs_f64() * 1e3,
        idle_rss_kib: idle_rss as f64,
        idle_anon_kib: idle_anon as f64,
        peak_rss_kib: peak_rss as f64,
        sequential,
        concurrent,
    })
}

// ---- HTTP ----

/// An HTTP response, body decoded from its framing.
pub(crate) struct Response {
    pub(crate) status: u16,
    headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body: the body itself, or each SSE event's data.
    fn messages(&self) -> Result<Vec<Value>> {
        let sse = self.header("content-type").is_some_and(|c| c.starts_with("text/event-stream"));
        if !sse {
            return Ok(vec![serde_json::from_slice(&self.body).with_context(|| {
                format!("HTTP {}: a body that is not JSON: {:?}", self.status, String::from_utf8_lossy(&self.body))
            })?]);
        }
        let text = std::str::from_utf8(&self.body)?;
        let mut messages = Vec::new();
        for event in text.replace("\r\n", "\n").split("\n\n") {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            if !data.is_empty() && !data.iter().all(|d| d.is_empty()) {
                messages.push(serde_json::from_str(&data.join("\n"))?);
            }
        }
        Ok(messages)
    }

    /// The message of the body that answers `id`.
    fn answer(&self, id: u64) -> Result<Value> {
        if self.status != 200 {
            bail!("HTTP {}: {}", self.status, String::from_utf8_lossy(&self.body));
        }
        self.messages()?
            .into_iter()
            .find(|m| m["id"] == id)
            .with_context(|| format!("no answer to {id} in {}", String::from_utf8_lossy(&self.body)))
    }
}

/// One HTTP/1.1 keep-alive connection, reconnected when the server closes it.
pub(crate) struct Connection {
    addr: SocketAddr,
    stream: Option<(TcpStream, BufReader<TcpStream>)>,
    /// The session this connection's calls belong to.
    session: Option<String>,
    wire: Wire,
}

impl Connection {
    pub(crate) fn new(addr: SocketAddr, wire: Wire) -> Connection {
        Connection { addr, stream: None, session: None, wire }
    }

    fn stream(&mut self) -> Result<&mut (TcpStream, BufReader<TcpStream>)> {
        if self.stream.is_none() {
            let stream = TcpStream::connect(self.addr)?;
            stream.set_nodelay(true)?;
            stream.set_read_timeout(Some(Duration::from_secs(30)))?;
            let reader = BufReader::with_capacity(64 * 1024, stream.try_clone()?);
            self.stream = Some((stream, reader));
        }
        Ok(self.stream.as_mut().expect("just connected"))
    }

    /// POSTs `body` to `/mcp`, with the headers of this connection's wire.
    pub(crate) fn post(&mut self, body: &str, method: &str) -> Result<Response> {
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        if self.wire == Wire::Http2026 {
            request.push_str("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: ");
            request.push_str(method);
            request.push_str("\r\n");
            if method == "tools/call" {
                request.push_str("Mcp-Name: echo\r\n");
            }
        } else if method != "initialize" {
            request.push_str("MCP-Protocol-Version: ");
            request.push_str(self.wire.version());
            request.push_str("\r\n");
        }
        if let Some(session) = &self.session {
            request.push_str("Mcp-Session-Id: ");
            request.push_str(session);
            request.push_str("\r\n");
        }
        request.push_str("\r\n");
        request.push_str(body);
        let result = self.exchange(request.as_bytes());
        if result.is_err() {
            self.stream = None;
        }
        result
    }

    fn exchange(&mut self, request: &[u8]) -> Result<Response> {
        let (stream, reader) = self.stream()?;
        stream.write_all(request)?;
        let response = read_response(reader)?;
        let close = response.header("connection").is_some_and(|c| c.eq_ignore_ascii_case("close"));
        if close {
            self.stream = None;
        }
        Ok(response)
    }

    /// Opens a session: `initialize`, then `notifications/initialized`. Without a session id in
    /// the answer (a stateless server), the connection goes on without one.
    pub(crate) fn open_session(&mut self) -> Result<()> {
        self.session = None;
        let response = self.post(&initialize_at(0, self.wire.version()), "initialize")?;
        let answer = response.answer(0)?;
        if answer["result"]["protocolVersion"].is_null() {
            bail!("unexpected answer to initialize: {answer}");
        }
        self.session = response.header("mcp-session-id").map(str::to_owned);
        let response = self.post(INITIALIZED, "notifications/initialized")?;
        if !(200..300).contains(&response.status) {
            bail!("HTTP {} to notifications/initialized", response.status);
        }
        Ok(())
    }

    /// One echo call, checked.
    pub(crate) fn call(&mut self, id: u64) -> Result<()> {
        let response = self.post(&call(id, self.wire == Wire::Http2026), "tools/call")?;
        check_answer(&response.answer(id)?, id)
    }
}

fn read_response(reader: &mut BufReader<TcpStream>) -> Result<Response> {
    // The head: lines up to the empty one.
    let mut head = Vec::with_capacity(512);
    loop {
        let before = head.len();
        if reader.read_until(b'\n', &mut head)? == 0 {
            bail!("the server closed the connection");
        }
        let line = &head[before..];
        if line == b"\r\n" || line == b"\n" {
            break;
        }
        if head.len() > 64 * 1024 {
            bail!("a response head over 64 KiB");
        }
    }
    let mut parsed_headers = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Response::new(&mut parsed_headers);
    parsed.parse(&head)?;
    let status = parsed.code.context("no status")?;
    let headers: Vec<(String, String)> =
        parsed.headers.iter().map(|h| (h.name.to_owned(), String::from_utf8_lossy(h.value).into_owned())).collect();
    let find = |name: &str| headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
    let mut body = Vec::new();
    if find("transfer-encoding").is_some_and(|t| t.to_ascii_lowercase().contains("chunked")) {
        let mut line = String::new();
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or_default(), 16)
                .with_context(|| format!("a bad chunk size line {line:?}"))?;
            if size == 0 {
                // Trailers, up to the empty line.
                loop {
                    line.clear();
                    if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..])?;
            line.clear();
            reader.read_line(&mut line)?;
        }
    } else if let Some(length) = find("content-length") {
        body.resize(length.trim().parse()?, 0);
        reader.read_exact(&mut body)?;
    } else if !(status == 202 || status == 204 || status == 304) {
        // Neither framing: the body runs to the end of the connection.
        reader.read_to_end(&mut body)?;
    }
    Ok(Response { status, headers, body })
}

/// Waits until `addr` accepts a connection, or the server exits, or `limit` passes.
fn wait_listening(process: &mut Process, addr: SocketAddr, limit: Duration) -> Result<()> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = process.exited()? {
            bail!("the server exited ({status}) before listening on {addr}");
        }
        if TcpStream::connect(addr).is_ok() {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the server did not listen on {addr} within {} s", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn free_addr() -> Result<SocketAddr> {
    Ok(SocketAddr::from(([127, 0, 0, 1], crate::interop::free_port()?)))
}

/// Starts an HTTP target; returns the process, its address, and how long it took from the
/// spawn to the first answered call.
fn start_http(target: &Target) -> Result<(Process, SocketAddr, Duration, Connection)> {
    let addr = free_addr()?;
    let started = Instant::now();
    let mut process = Process::spawn(target, Some(addr), false)?;
    wait_listening(&mut process, addr, Duration::from_secs(60))?;
    let mut connection = Connection::new(addr, target.wire);
    if target.wire.sessions() {
        connection.open_session()?;
    } else {
        connection.call(0)?;
    }
    let cold_start = started.elapsed();
    Ok((process, addr, cold_start, connection))
}

fn run_http(target: &Target, timing: Timing, connections: usize) -> Result<RunResult> {
    let (process, addr, cold_start, mut connection) = start_http(target)?;
    connection.call(1)?;
    let idle_rss = process.rss_kib()?;
    let idle_anon = process.anon_rss_kib()?;

    let sequential = sequential(&process, timing, |id| connection.call(id))?;
    drop(connection);

    // Concurrent: `connections` keep-alive connections (each its own session, where there are
    // sessions), each calling in a loop. Sessions are opened before the clock starts.
    let mut opened = Vec::with_capacity(connections);
    for _ in 0..connections {
        let mut connection = Connection::new(addr, target.wire);
        if target.wire.sessions() {
            connection.open_session()?;
        }
        opened.push(connection);
    }
    let t0 = Instant::now() + timing.warmup;
    let t1 = t0 + timing.measure;
    let workers: Vec<_> = opened
        .into_iter()
        .enumerate()
        .map(|(n, mut connection)| {
            std::thread::spawn(move || -> Result<Vec<Duration>> {
                let mut latencies = Vec::new();
                let mut id = (n as u64 + 1) << 32;
                loop {
                    let sent = Instant::now();
                    if sent >= t1 {
                        return Ok(latencies);
                    }
                    connection.call(id)?;
                    if sent >= t0 {
                        latencies.push(sent.elapsed());
                    }
                    id += 1;
                }
            })
        })
        .collect();
    std::thread::sleep(t0.saturating_duration_since(Instant::now()));
    let cpu0 = process.cpu()?;
    std::thread::sleep(t1.saturating_duration_since(Instant::now()));
    let cpu = process.cpu()? - cpu0;
    let mut latencies = Vec::new();
    for worker in workers {
        latencies.extend(worker.join().map_err(|_| anyhow::anyhow!("a load thread panicked"))??);
    }
    let concurrent = phase(latencies, timing.measure, cpu);
    let peak_rss = process.peak_rss_kib()?;
    Ok(RunResult {
        cold_start_ms: cold_start.as_secs_f64() * 1e3,
        idle_rss_kib: idle_rss as f64,
        idle_anon_kib: idle_anon as f64,
        peak_rss_kib: peak_rss as f64,
        sequential,
        concurrent,
    })
}

/// What the sessions test found.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sessions {
    /// Sessions opened, all still answering at the end.
    pub(crate) held: usize,
    /// Resident memory per idle session, in bytes.
    pub(crate) bytes_per_session: f64,
    /// Why it stopped short of `max`, if it did.
    pub(crate) stopped_by: Option<String>,
}

/// Opens up to `max` sessions on a fresh server (`threads` connections opening them side by
/// side), leaves them idle, measures the memory they hold, and checks that a sample of them
/// still answers.
pub(crate) fn sessions(target: &Target, max: usize, threads: usize, limit: Duration) -> Result<Sessions> {
    // The first session (opened to time the start) counts: it stays open too.
    let (process, addr, _, _first) = start_http(target)?;
    let max = max.saturating_sub(1);
    let base = process.rss_kib()?;
    let deadline = Instant::now() + limit;
    let step = 1_000.min(max);
    let open_batch = |count: usize| -> (Vec<Connection>, Option<String>) {
        let per = count.div_ceil(threads);
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let n = per.min(count.saturating_sub(t * per));
                std::thread::spawn(move || {
                    let mut done = Vec::with_capacity(n);
                    let mut connection = Connection::new(addr, Wire::HttpSessions);
                    for _ in 0..n {
                        if Instant::now() > deadline {
                            return (done, Some("the time limit".to_owned()));
                        }
                        if let Err(e) = connection.open_session() {
                            return (done, Some(format!("{e:#}")));
                        }
                        // Keep the session; calls on it go over a fresh connection later.
                        let mut kept = Connection::new(addr, Wire::HttpSessions);
                        kept.session = connection.session.take();
                        done.push(kept);
                    }
                    (done, None)
                })
            })
            .collect();
        let mut all = Vec::new();
        let mut error = None;
        for handle in handles {
            let (done, e) = handle.join().unwrap_or_default();
            all.extend(done);
            error = error.or(e);
        }
        (all, error)
    };
    let (mut held, mut stopped_by) = open_batch(step);
    let after_first = process.rss_kib()?;
    while stopped_by.is_none() && held.len() < max {
        let (more, error) = open_batch(step.min(max - held.len()));
        held.extend(more);
        stopped_by = error;
    }
    let after_all = process.rss_kib()?;
    let bytes_per_session = if held.len() > step {
        (after_all.saturating_sub(after_first) as f64 * 1024.0) / (held.len() - step) as f64
    } else {
        (after_first.saturating_sub(base) as f64 * 1024.0) / held.len().max(1) as f64
    };
    // A sample of the sessions, first and last included, must still answer.
    let stride = (held.len() / 100).max(1);
    let sample = (0..held.len()).step_by(stride).chain(held.len().checked_sub(1));
    for (id, n) in (1..).zip(sample) {
        if let Err(e) = held[n].call(id) {
            bail!("session {n} of {} no longer answers: {e:#}", held.len());
        }
        held[n].stream = None;
    }
    Ok(Sessions { held: held.len() + 1, bytes_per_session, stopped_by })
}

/// Runs `target` under `valgrind --tool=callgrind` and returns the instructions the server
/// executes per sequential echo call: the counters are zeroed after the handshake and 50
/// warm-up calls, and dumped (to `out.1`, for `callgrind_annotate`) after `calls` more.
/// Instruction counts do not depend on what else the machine is doing.
pub(crate) fn callgrind(target: &Target, calls: u64, out: &std::path::Path) -> Result<f64> {
    let mut args =
        vec!["-q".to_owned(), "--tool=callgrind".to_owned(), format!("--callgrind-out-file={}", out.display())];
    args.push(target.program.display().to_string());
    args.extend(target.args.iter().cloned());
    let profiled = Target { program: PathBuf::from("valgrind"), args, ..target.clone() };
    let dumped = out.with_extension(format!("{}.1", out.extension().and_then(|e| e.to_str()).unwrap_or("out")));
    let _ = std::fs::remove_file(&dumped);
    let control = |process: &Process, flag: &str| -> Result<()> {
        let status = Command::new("callgrind_control")
            .args([flag, &process.child.id().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .context("running callgrind_control (is valgrind installed?)")?;
        if !status.success() {
            bail!("callgrind_control {flag} failed ({status})");
        }
        Ok(())
    };
    let process = if target.wire == Wire::Client {
        let mut process = Process::spawn(&profiled, None, true)?;
        let mut pipes = Pipes {
            stdin: BufWriter::new(process.child.stdin.take().context("stdin")?),
            stdout: BufReader::new(process.child.stdout.take().context("stdout")?),
            line: String::new(),
        };
        // The client makes the calls it is told, then writes `done`.
        let mut round = |n: u64| -> Result<()> {
            pipes.send(&n.to_string())?;
            pipes.line.clear();
            pipes.stdout.read_line(&mut pipes.line)?;
            if pipes.line.trim() != "done" {
                bail!("the client wrote {:?} instead of done", pipes.line);
            }
            Ok(())
        };
        round(50)?;
        control(&process, "-z")?;
        round(calls)?;
        control(&process, "-d")?;
        process
    } else if target.wire == Wire::Stdio {
        let mut process = Process::spawn(&profiled, None, true)?;
        let mut pipes = Pipes {
            stdin: BufWriter::new(process.child.stdin.take().context("stdin")?),
            stdout: BufReader::new(process.child.stdout.take().context("stdout")?),
            line: String::new(),
        };
        pipes.send(&initialize(0))?;
        pipes.answer()?;
        pipes.send(INITIALIZED)?;
        let mut round = |first: u64, n: u64| -> Result<()> {
            for id in first..first + n {
                pipes.send(&call(id, false))?;
                check_answer(&pipes.answer()?, id)?;
            }
            Ok(())
        };
        round(1, 50)?;
        control(&process, "-z")?;
        round(51, calls)?;
        control(&process, "-d")?;
        process
    } else {
        let addr = free_addr()?;
        let mut process = Process::spawn(&profiled, Some(addr), false)?;
        wait_listening(&mut process, addr, Duration::from_secs(120))?;
        let mut connection = Connection::new(addr, target.wire);
        if target.wire.sessions() {
            connection.open_session()?;
        }
        for id in 1..=50 {
            connection.call(id)?;
        }
        control(&process, "-z")?;
        for id in 51..51 + calls {
            connection.call(id)?;
        }
        control(&process, "-d")?;
        process
    };
    drop(process);
    let dump = std::fs::read_to_string(&dumped).with_context(|| format!("reading {}", dumped.display()))?;
    let total: u64 = dump
        .lines()
        .find_map(|l| l.strip_prefix("summary:").or_else(|| l.strip_prefix("totals:")))
        .context("no totals in the callgrind dump")?
        .trim()
        .parse()?;
    Ok(total as f64 / calls as f64)
}

/// One more cold start of `target`: from the spawn to the first answered request, in ms.
pub(crate) fn cold_start(target: &Target) -> Result<f64> {
    if target.wire != Wire::Stdio {
        let (_process, _, elapsed, _) = start_http(target)?;
        return Ok(elapsed.as_secs_f64() * 1e3);
    }
    let started = Instant::now();
    let mut process = Process::spawn(target, None, true)?;
    let mut pipes = Pipes {
        stdin: BufWriter::new(process.child.stdin.take().context("stdin")?),
        stdout: BufReader::new(process.child.stdout.take().context("stdout")?),
        line: String::new(),
    };
    pipes.send(&initialize(0))?;
    pipes.answer()?;
    Ok(started.elapsed().as_secs_f64() * 1e3)
}
