//! `cargo xtask fleet`: the proof that a fleet works. A real `redis-server` (no persistence),
//! N `everything` instances and N `http_server` instances sharing it (`--redis URL`; N is 3,
//! or `--instances N`, up to 26, named `a`, `b`, ...), and one HAProxy in front (round robin, no
//! stickiness, every request of a keep-alive connection balanced on its own); then, through the
//! balancer:
//!
//! - `balancing`: 2N requests on one keep-alive connection land two on each instance
//!   (HAProxy's per-server counts);
//! - the scenarios of the `fleet_check` example (`revisions`, `fanout`, `resume`, `redis`), each
//!   with a `requests per instance` line from HAProxy's counts, so that "the calls landed on
//!   different instances" is checked, not assumed (on every instance of a fleet of three, on at
//!   least two thirds of a larger one); the harness takes the steps the client
//!   asks for (`FLEET-WAIT`: kill the instance serving a call, stop and restart Redis, read
//!   the balancer's statistics);
//! - the session-revision interop: the official TypeScript and Python SDK clients (and the
//!   TypeScript SDK 2.x one, 2026-07-28) against the `http_server` fleet;
//! - the conformance suites' server scenarios against the `everything` fleet;
//! - `metrics`: each `everything` instance's `/metrics` (`--prometheus`), scraped directly
//!   before and after a session's requests through the balancer: the fleet's request counters
//!   moved by exactly those requests, an unknown method counted as `other`, every series
//!   labelled with its instance, Redis calls measured.
//!
//! With `--tls`, Redis also listens for TLS (a throwaway CA and certificate made by `openssl`)
//! and the instances reach it only there (`rediss://`, the CA in `MCP_REDIS_CA_PEM`); the
//! harness's own probes keep to its plain port.
//!
//! Each scenario prints one `PASS` or `FAIL` line; the command fails if any failed. Every child
//! is killed at the end, also on failure. Logs and HAProxy's configuration are in
//! `target/fleet/` (one `.log` per process).

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use crate::{conformance, interop, packages};

/// The instances of each fleet unless `--instances` says otherwise (CI's).
const DEFAULT_INSTANCES: usize = 3;
/// The most instances of each fleet (`--instances`): each is named by a letter.
const MAX_INSTANCES: usize = 26;

/// The name of the `i`th instance of a fleet: `a`, `b`, `c`, ...
fn instance_name(i: usize) -> String {
    char::from(b'a' + u8::try_from(i % MAX_INSTANCES).unwrap_or(0)).to_string()
}

/// How many distinct instances a scenario's requests must reach in a fleet of `n`: every
/// one of a small fleet; at least two thirds of a larger one (a scenario makes only so many
/// requests, and the round robin is shared with every other client of the balancer).
fn spread_needed(n: usize) -> usize {
    if n <= DEFAULT_INSTANCES { n } else { (2 * n).div_ceil(3) }
}
/// How long a process may take to be ready.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one `fleet_check` scenario may run.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(420);
/// How long the harness waits for the listeners' streams to be open on every instance.
const STREAMS_WAIT: Duration = Duration::from_secs(3);

/// One scenario's outcome.
struct Outcome {
    name: String,
    passed: bool,
    details: String,
}

impl Outcome {
    fn new(name: impl Into<String>, result: Result<String>) -> Self {
        let name = name.into();
        let outcome = match result {
            Ok(details) => Outcome { name, passed: true, details },
            Err(e) => Outcome { name, passed: false, details: format!("{e:#}").replace('\n', " | ") },
        };
        outcome.print();
        outcome
    }

    fn print(&self) {
        println!("==> {} {}: {}", if self.passed { "PASS" } else { "FAIL" }, self.name, self.details);
    }
}

/// What HAProxy logs of each request (see [`Logged`]): the captures of [`CAPTURES`].
const LOG_FORMAT: &str = "FLEETLOG %s %HM %ST label=%[capture.req.hdr(0)] sid=%[capture.req.hdr(1)] \
                          lei=%[capture.req.hdr(2)] ra=%[capture.res.hdr(0)] body=%[capture.req.hdr(3)]";
/// A frontend's captures: the client's label (`X-Fleet-Check`), its session, the event id it
/// resumes after, the start of the body, and the response's `Retry-After`.
const CAPTURES: &str = "    option http-buffer-request\n    capture request header X-Fleet-Check len 64\n    \
                        capture request header Mcp-Session-Id len 128\n    \
                        capture request header Last-Event-ID len 64\n    declare capture request len 3072\n    \
                        http-request capture req.body id 3\n    capture response header Retry-After len 16\n";

/// The scenarios, in the order they run.
const SCENARIOS: [&str; 8] =
    ["balancing", "revisions", "fanout", "resume", "redis", "interop", "conformance", "metrics"];

/// Starts the fleet, runs the scenarios through the balancer, reports each.
///
/// `args`: `[--instances N] [--tls] [SCENARIO...]`: N instances per fleet (default 3; with 1, the
/// scenarios that need no sharing pass, which checks the checks), and the scenarios to run
/// (default all of [`SCENARIOS`]).
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let started = Instant::now();
    let (instances, tls, selected) = parse_args(args)?;
    packages::ensure()?;
    let [everything, http_server, fleet_check] =
        interop::build_examples(root, ["everything", "http_server", "fleet_check"])?;
    let dir = root.join("target/fleet");
    if dir.exists() {
        fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    fs::create_dir_all(&dir)?;
    let tls = if tls { Some(RedisTls::make(&dir)?) } else { None };
    let mut fleet = Fleet::start(&dir, &everything, &http_server, instances, tls)?;
    println!(
        "==> fleet ready: Redis at {}, {instances} `everything` behind {}, {instances} `http_server` behind {} \
         (logs in {})",
        fleet.redis_url(),
        fleet.url(Kind::Everything),
        fleet.url(Kind::Showcase),
        dir.display()
    );

    let mut outcomes = Vec::new();
    for scenario in selected {
        match scenario {
            "balancing" => outcomes.push(Outcome::new("balancing", fleet.check_balancing())),
            "interop" => outcomes.extend(interop_clients(root, &fleet.url(Kind::Showcase))?),
            "conformance" => outcomes.extend(conformance_servers(root, &fleet.url(Kind::Everything))?),
            "metrics" => outcomes.push(Outcome::new("metrics", fleet.check_metrics())),
            check => {
                let subscribed = fleet.subscribers();
                outcomes.extend(fleet.run_check(root, &fleet_check, check));
                // A scenario may leave an instance or Redis down: the next starts with a
                // whole fleet. Only `resume` may kill (one instance); any other death is a
                // failure.
                let mut restarted_instances = 0;
                match fleet.heal() {
                    Ok(restarted) if restarted.len() > usize::from(check == "resume") => outcomes.push(Outcome::new(
                        format!("{check}: no process died"),
                        Err(anyhow::anyhow!("dead after the scenario, restarted: {}", restarted.join(", "))),
                    )),
                    Ok(restarted) => restarted_instances = restarted.len() as i64,
                    Err(e) => outcomes.push(Outcome::new(format!("restore the fleet after {check}"), Err(e))),
                }
                // After Redis or an instance came back, the next scenario starts once every
                // instance reads the fleet's streams and hears its change channel again (they
                // reconnect with a backoff). An instance reads its streams once it has claimed
                // its tag, at start, and subscribes to `mcp:bus` with its first session: a
                // restarted one may not have yet.
                if let Ok((sessions, changes)) = subscribed
                    && let Err(e) = fleet.wait_subscribers((sessions, changes - restarted_instances))
                {
                    outcomes.push(Outcome::new(format!("{check}: the instances subscribe to Redis again"), Err(e)));
                }
            }
        }
    }
    drop(fleet);

    println!("==> fleet: {} scenarios in {:.0} s", outcomes.len(), started.elapsed().as_secs_f64());
    for outcome in &outcomes {
        outcome.print();
    }
    let failed: Vec<&str> = outcomes.iter().filter(|o| !o.passed).map(|o| o.name.as_str()).collect();
    if !failed.is_empty() {
        bail!("fleet: {} of {} scenarios failed: {}", failed.len(), outcomes.len(), failed.join(", "));
    }
    println!("==> fleet: every scenario passed");
    Ok(())
}

/// `[--instances N] [SCENARIO...]`.
fn parse_args(args: &[String]) -> Result<(usize, bool, Vec<&'static str>)> {
    let mut instances = DEFAULT_INSTANCES;
    let mut tls = false;
    let mut selected = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == "--tls" {
            tls = true;
        } else if arg == "--instances" {
            let n = it.next().and_then(|n| n.parse().ok()).filter(|n| (1..=MAX_INSTANCES).contains(n));
            instances = n.with_context(|| format!("--instances takes 1 to {MAX_INSTANCES}"))?;
        } else {
            let known = SCENARIOS.iter().find(|s| **s == arg.as_str());
            selected.push(*known.with_context(|| format!("no scenario `{arg}` (one of {})", SCENARIOS.join(", ")))?);
        }
    }
    if selected.is_empty() {
        selected = SCENARIOS.to_vec();
    }
    selected.sort_by_key(|s| SCENARIOS.iter().position(|k| k == s));
    selected.dedup();
    Ok((instances, tls, selected))
}

/// The official SDK clients (session revisions, and the TypeScript SDK 2.x in 2026-07-28)
/// against the `http_server` fleet.
fn interop_clients(root: &Path, url: &str) -> Result<Vec<Outcome>> {
    let work = root.join("target/interop");
    let node = interop::install_node(root, &work)?;
    let ts = interop::install_npm_project(root, &work, "ts")?;
    interop::copy_scripts(&root.join("interop/ts"), &ts)?;
    let ts2 = interop::install_npm_project(root, &work, "ts2")?;
    interop::copy_scripts(&root.join("interop/ts2"), &ts2)?;
    let python = interop::install_python(root, &work)?;
    let python_env: &'static [(&str, &str)] = &[("PYTHONDONTWRITEBYTECODE", "1"), ("PYTHONUTF8", "1")];
    let clients = [
        interop::Client {
            name: "TypeScript SDK",
            program: node.clone(),
            args: vec![ts.join("client.mjs").display().to_string()],
            env: &[],
        },
        interop::Client {
            name: "Python SDK",
            program: python,
            args: vec![root.join("interop/python/client.py").display().to_string()],
            env: python_env,
        },
        interop::Client {
            name: "TypeScript SDK 2.x (2026-07-28)",
            program: node,
            args: vec![ts2.join("client.mjs").display().to_string()],
            env: &[],
        },
    ];
    let mut outcomes = Vec::new();
    for client in &clients {
        let outcome = interop::run_client(root, client, &["--http".to_owned(), url.to_owned()])?;
        let result = if outcome.passed { Ok(outcome.summary) } else { Err(anyhow::anyhow!(outcome.summary)) };
        outcomes.push(Outcome::new(format!("interop: {} client through the balancer", client.name), result));
    }
    Ok(outcomes)
}

/// The conformance suites' server scenarios against the `everything` fleet, one outcome per
/// suite and revision.
fn conformance_servers(root: &Path, url: &str) -> Result<Vec<Outcome>> {
    let runs = conformance::servers_against(root, url)?;
    Ok(runs
        .into_iter()
        .map(|(run, failed)| {
            let result = if failed.is_empty() {
                Ok("every scenario passed".to_owned())
            } else {
                Err(anyhow::anyhow!("{} failed: {}", failed.len(), failed.join(", ")))
            };
            Outcome::new(format!("conformance server scenarios {run} through the balancer"), result)
        })
        .collect())
}

/// Which fleet.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `everything` instances (`/mcp`, health at `/readyz`).
    Everything,
    /// `http_server` instances (the showcase server the SDK clients check; health at `/health`).
    Showcase,
}

impl Kind {
    /// HAProxy's name of the backend (and of the frontend).
    fn backend(self) -> &'static str {
        match self {
            Kind::Everything => "everything",
            Kind::Showcase => "showcase",
        }
    }
}

/// A child process, killed (SIGKILL) when dropped.
struct Proc {
    name: String,
    child: Child,
}

impl Proc {
    /// Starts `command`, its stdout and stderr appended to `log`.
    fn spawn(name: &str, mut command: Command, log: &Path) -> Result<Self> {
        let file = fs::OpenOptions::new().create(true).append(true).open(log)?;
        let child = command
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .spawn()
            .with_context(|| format!("starting {name}: {command:?}"))?;
        Ok(Proc { name: name.to_owned(), child })
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One MCP server instance of a fleet.
struct Instance {
    kind: Kind,
    name: String,
    addr: SocketAddr,
    proc: Option<Proc>,
}

/// Redis, the instances of both fleets and HAProxy; all killed when dropped.
struct Fleet {
    dir: PathBuf,
    everything: PathBuf,
    http_server: PathBuf,
    redis_addr: SocketAddr,
    redis: Option<Proc>,
    /// With `--tls`: the instances reach Redis over TLS only.
    tls: Option<RedisTls>,
    instances: Vec<Instance>,
    /// More arguments of the `everything` instances (the soak's idle timeout).
    everything_args: Vec<String>,
    frontends: BTreeMap<&'static str, SocketAddr>,
    haproxy: Option<Proc>,
    stats_socket: PathBuf,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        // The balancer first, then the instances, then Redis (each `Proc` kills itself).
        self.haproxy.take();
        for instance in &mut self.instances {
            instance.proc.take();
        }
        self.redis.take();
    }
}

/// The TLS port of the fleet's Redis and its throwaway CA and certificate (made by `openssl`,
/// for 127.0.0.1).
struct RedisTls {
    port: u16,
    dir: PathBuf,
    ca_pem: String,
}

impl RedisTls {
    fn make(dir: &Path) -> Result<RedisTls> {
        let dir = dir.join("tls");
        fs::create_dir_all(&dir)?;
        let openssl = |args: &[&str]| -> Result<()> {
            let out = Command::new("openssl").args(args).current_dir(&dir).stdin(Stdio::null()).output()?;
            if !out.status.success() {
                bail!("openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
            }
            Ok(())
        };
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        openssl(
            &[
                &["req", "-x509"][..],
                &ec,
                &["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=fleet CA"],
                &["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
            ]
            .concat(),
        )?;
        openssl(
            &[&["req"][..], &ec, &["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"]].concat(),
        )?;
        fs::write(dir.join("server.ext"), "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")?;
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ])?;
        let ca_pem = fs::read_to_string(dir.join("ca.pem"))?;
        Ok(RedisTls { port: interop::free_port()?, dir, ca_pem })
    }
}

fn loopback() -> Result<SocketAddr> {
    Ok(SocketAddr::from(([127, 0, 0, 1], interop::free_port()?)))
}

impl Fleet {
    fn start(dir: &Path, everything: &Path, http_server: &Path, count: usize, tls: Option<RedisTls>) -> Result<Self> {
        Fleet::start_kinds(dir, everything, http_server, count, tls, &[Kind::Everything, Kind::Showcase], Vec::new())
    }

    /// Redis, `count` instances of each of `kinds` and HAProxy.
    fn start_kinds(
        dir: &Path,
        everything: &Path,
        http_server: &Path,
        count: usize,
        tls: Option<RedisTls>,
        kinds: &[Kind],
        everything_args: Vec<String>,
    ) -> Result<Self> {
        let mut instances = Vec::new();
        for &kind in kinds {
            for i in 0..count {
                instances.push(Instance { kind, name: instance_name(i), addr: loopback()?, proc: None });
            }
        }
        let frontends = BTreeMap::from([("everything", loopback()?), ("showcase", loopback()?)]);
        let mut fleet = Fleet {
            dir: dir.to_path_buf(),
            everything: everything.to_path_buf(),
            http_server: http_server.to_path_buf(),
            redis_addr: loopback()?,
            redis: None,
            tls,
            instances,
            everything_args,
            frontends,
            haproxy: None,
            stats_socket: dir.join("haproxy.sock"),
        };
        fleet.start_redis()?;
        for i in 0..fleet.instances.len() {
            fleet.start_instance(i)?;
        }
        fleet.start_haproxy()?;
        Ok(fleet)
    }

    /// How many connections listen to the fleet: those blocked reading its streams (each
    /// instance reads its inbox with `XREAD BLOCK`, by
    /// `INFO clients`'s `blocked_clients`), and those subscribed to the change channel
    /// (`mcp:bus`, by `PUBSUB NUMSUB`).
    fn subscribers(&self) -> Result<(i64, i64)> {
        let mut stream = TcpStream::connect_timeout(&self.redis_addr, Duration::from_millis(500))?;
        stream.set_read_timeout(Some(Duration::from_secs(2)))?;
        stream.write_all(b"INFO clients\r\nPUBSUB NUMSUB mcp:bus\r\n")?;
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        // INFO: a bulk string ($len, then its lines).
        reader.read_line(&mut line)?;
        let len: usize = line.trim_end().strip_prefix('$').context("INFO's answer")?.parse()?;
        let mut info = vec![0; len + 2];
        reader.read_exact(&mut info)?;
        let info = String::from_utf8_lossy(&info);
        let blocked = info.lines().find_map(|l| l.strip_prefix("blocked_clients:")).context("blocked_clients")?;
        let blocked = blocked.trim().parse::<i64>()?;
        // PUBSUB NUMSUB: *2, the channel's name ($len, name), its count (:N).
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                bail!("Redis closed the connection");
            }
            if let Some(n) = line.trim_end().strip_prefix(':') {
                return Ok((blocked, n.parse::<i64>()?));
            }
        }
    }

    /// Waits (at most 30 s) until the channels have at least the listeners of `before`.
    fn wait_subscribers(&self, before: (i64, i64)) -> Result<()> {
        poll(Duration::from_secs(30), "every instance listens to Redis again", || {
            let now = self.subscribers()?;
            if now.0 >= before.0 && now.1 >= before.1 { Ok(()) } else { bail!("listeners {now:?}, before {before:?}") }
        })
    }

    /// The instances' Redis: `rediss://` on the TLS port with `--tls` (the harness's own
    /// probes use the plain port).
    fn redis_url(&self) -> String {
        match &self.tls {
            Some(tls) => format!("rediss://127.0.0.1:{}", tls.port),
            None => format!("redis://{}", self.redis_addr),
        }
    }

    fn url(&self, kind: Kind) -> String {
        format!("http://{}/mcp", self.frontends[kind.backend()])
    }

    /// Starts `redis-server` (no persistence) and waits for its `PONG`.
    fn start_redis(&mut self) -> Result<()> {
        let mut command = Command::new("redis-server");
        command
            .args(["--bind", "127.0.0.1", "--port", &self.redis_addr.port().to_string()])
            .args(["--save", "", "--appendonly", "no", "--protected-mode", "no"])
            .arg("--dir")
            .arg(&self.dir);
        if let Some(tls) = &self.tls {
            command.args(["--tls-port", &tls.port.to_string(), "--tls-auth-clients", "no"]);
            command.arg("--tls-cert-file").arg(tls.dir.join("server.pem"));
            command.arg("--tls-key-file").arg(tls.dir.join("server.key"));
            command.arg("--tls-ca-cert-file").arg(tls.dir.join("ca.pem"));
        }
        let mut proc = Proc::spawn("redis-server", command, &self.dir.join("redis.log"))?;
        let addr = self.redis_addr;
        poll(START_TIMEOUT, "redis-server answers PING", || {
            ensure_alive(&mut proc)?;
            redis_ping(addr)
        })?;
        self.redis = Some(proc);
        Ok(())
    }

    /// Starts instance `i` and waits until it is ready.
    fn start_instance(&mut self, i: usize) -> Result<()> {
        let redis = self.redis_url();
        let instance = &mut self.instances[i];
        let (program, health) = match instance.kind {
            Kind::Everything => (&self.everything, "/readyz"),
            Kind::Showcase => (&self.http_server, "/health"),
        };
        let mut command = Command::new(program);
        match instance.kind {
            Kind::Everything => command
                .args(["--http", &instance.addr.to_string(), "--redis", &redis, "--name", &instance.name])
                .arg("--prometheus")
                .args(&self.everything_args)
                .env("RUST_LOG", "info"),
            Kind::Showcase => command.args([&instance.addr.to_string(), "--redis", &redis]),
        };
        if let Some(tls) = &self.tls {
            command.env("MCP_REDIS_CA_PEM", &tls.ca_pem);
        }
        let label = format!("{}-{}", instance.kind.backend(), instance.name);
        let mut proc = Proc::spawn(&label, command, &self.dir.join(format!("{label}.log")))?;
        let addr = instance.addr;
        poll(START_TIMEOUT, &format!("{label} answers {health}"), || {
            ensure_alive(&mut proc)?;
            match http_get(addr, health)? {
                200 => Ok(()),
                status => bail!("{health}: {status}"),
            }
        })?;
        instance.proc = Some(proc);
        Ok(())
    }

    /// Writes HAProxy's configuration, starts it, and waits until it sees every server up.
    fn start_haproxy(&mut self) -> Result<()> {
        let config = self.dir.join("haproxy.cfg");
        fs::write(&config, self.haproxy_config())?;
        let check = Command::new("haproxy").arg("-c").arg("-f").arg(&config).output()?;
        if !check.status.success() {
            bail!("haproxy -c rejects {}: {}", config.display(), String::from_utf8_lossy(&check.stderr));
        }
        let mut command = Command::new("haproxy");
        command.arg("-db").arg("-f").arg(&config);
        let mut proc = Proc::spawn("haproxy", command, &self.dir.join("haproxy.log"))?;
        let socket = self.stats_socket.clone();
        let servers = self.instances.len();
        poll(START_TIMEOUT, "HAProxy sees every server up", || {
            ensure_alive(&mut proc)?;
            let stats = read_stats(&socket)?;
            let down: Vec<String> = stats.iter().filter(|s| s.status != "UP").map(Stat::label).collect();
            if stats.len() != servers || !down.is_empty() {
                bail!("{} servers, not up: {}", stats.len(), down.join(", "));
            }
            Ok(())
        })?;
        self.haproxy = Some(proc);
        Ok(())
    }

    /// The configuration: per kind a frontend and a round-robin backend over its three
    /// instances, no stickiness, each request balanced on its own (`http-server-close`: the
    /// connection to the server closes after each response, so the next request of the
    /// client's keep-alive connection is balanced again), timeouts for long SSE streams,
    /// health checks, and an admin socket for the statistics.
    ///
    /// Every request is logged (to stdout, `haproxy.log`) as its response starts: a
    /// `FLEETLOG` line with the instance it went to and what identifies it (see [`Logged`]).
    fn haproxy_config(&self) -> String {
        let mut config = format!(
            "global\n    maxconn 2000\n    stats socket {} mode 600 level admin\n    \
             log stdout len 8192 format raw local0 info\n\n\
             defaults\n    mode http\n    log global\n    option logasap\n    log-format \"{LOG_FORMAT}\"\n    \
             option http-server-close\n    option redispatch\n    retries 2\n    \
             timeout connect 2s\n    timeout client 10m\n    timeout server 10m\n    timeout tunnel 10m\n    \
             timeout http-request 10s\n    timeout http-keep-alive 30s\n    timeout queue 5s\n",
            self.stats_socket.display()
        );
        for kind in [Kind::Everything, Kind::Showcase] {
            if !self.instances.iter().any(|i| i.kind == kind) {
                continue;
            }
            let name = kind.backend();
            let health = if kind == Kind::Everything { "/readyz" } else { "/health" };
            config.push_str(&format!(
                "\nfrontend {name}\n    bind {}\n    default_backend {name}\n{CAPTURES}\n\
                 backend {name}\n    balance roundrobin\n    option httpchk GET {health}\n    \
                 http-check expect status 200\n    default-server inter 300ms fall 2 rise 1\n",
                self.frontends[name]
            ));
            for instance in self.instances.iter().filter(|i| i.kind == kind) {
                config.push_str(&format!("    server {} {} check\n", instance.name, instance.addr));
            }
        }
        config
    }

    /// The statistics of the servers of `kind`, by name.
    fn stats(&self, kind: Kind) -> Result<BTreeMap<String, Stat>> {
        Ok(read_stats(&self.stats_socket)?
            .into_iter()
            .filter(|s| s.backend == kind.backend())
            .map(|s| (s.server.clone(), s))
            .collect())
    }

    /// Two requests per instance on one keep-alive connection to the `everything` frontend:
    /// each server must get two (each request balanced on its own).
    fn check_balancing(&self) -> Result<String> {
        let before = self.stats(Kind::Everything)?;
        let requests = 2 * before.len().max(1);
        let addr = self.frontends["everything"];
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        let mut reader = BufReader::new(stream.try_clone()?);
        for i in 0..requests {
            stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: fleet\r\n\r\n")?;
            let (status, close) = read_response(&mut reader).with_context(|| format!("response {}", i + 1))?;
            if status != 200 {
                bail!("response {}: {status}", i + 1);
            }
            if close && i + 1 < requests {
                bail!("the balancer closed the keep-alive connection after response {}", i + 1);
            }
        }
        let after = self.stats(Kind::Everything)?;
        let deltas = deltas(&before, &after);
        let shown = show(&deltas);
        if deltas.values().any(|d| *d != 2) {
            bail!("{requests} requests on one connection were not spread two per instance: {shown}");
        }
        Ok(format!("{requests} requests on one keep-alive connection: {shown}"))
    }

    /// Scrapes every `everything` instance's `/metrics` before and after a session's requests
    /// through the balancer (an `initialize`, three of a method no server has, a `tools/list`,
    /// the DELETE): summed over the fleet, the counters moved by exactly those; the unknown method
    /// is counted as `other`, never by its name; each instance labels its series with its name
    /// (`mcp_instance`); the instances timed their Redis calls.
    fn check_metrics(&self) -> Result<String> {
        let instances: Vec<&Instance> = self.instances.iter().filter(|i| i.kind == Kind::Everything).collect();
        let scrape_all = || -> Result<Vec<Vec<Sample>>> {
            instances.iter().map(|i| scrape(i.addr).with_context(|| format!("{}: /metrics", i.name))).collect()
        };
        let before = scrape_all()?;
        let front = self.frontends["everything"];
        let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"metrics","version":"0"}}}"#;
        let (status, head, _) = http_post(front, None, initialize)?;
        let session = head
            .lines()
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id")))
            .map(|(_, v)| v.trim().to_owned())
            .with_context(|| format!("initialize answered {status} without a session id"))?;
        http_post(front, Some(&session), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
        for id in 1..=3 {
            let (_, _, body) =
                http_post(front, Some(&session), &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"acme/unknown"}}"#))?;
            if !body.contains("-32601") {
                bail!("acme/unknown was not answered -32601: {body}");
            }
        }
        http_post(front, Some(&session), r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#)?;
        http_delete(front, &session)?;
        let after = scrape_all()?;

        let total = |scrapes: &[Vec<Sample>], name: &str, method: Option<&str>| -> f64 {
            let samples = scrapes.iter().flatten().filter(|s| s.name == name);
            samples.filter(|s| method.is_none_or(|m| s.label("method") == Some(m))).map(|s| s.value).sum()
        };
        let moved = |name: &str, method: Option<&str>| total(&after, name, method) - total(&before, name, method);
        for (method, expected) in [("initialize", 1.0), ("other", 3.0), ("tools/list", 1.0)] {
            let n = moved("mcp_requests_total", Some(method));
            if n != expected {
                bail!("mcp_requests_total{{method=\"{method}\"}} moved by {n} over the fleet, not {expected}");
            }
        }
        let errors = moved("mcp_request_errors_total", Some("other"));
        if errors != 3.0 {
            bail!("mcp_request_errors_total{{method=\"other\"}} moved by {errors}, not 3");
        }
        let timed = moved("mcp_request_duration_seconds_count", None);
        if timed < 5.0 {
            bail!("mcp_request_duration_seconds_count moved by {timed}, not at least 5");
        }
        if after.iter().flatten().any(|s| s.label("method") == Some("acme/unknown")) {
            bail!("a method a client chose became a label value");
        }
        for (instance, samples) in instances.iter().zip(&after) {
            if let Some(s) = samples.iter().find(|s| s.label("mcp_instance") != Some(instance.name.as_str())) {
                bail!("{}: a series not labelled mcp_instance=\"{}\": {}", instance.name, instance.name, s.line);
            }
        }
        let redis = moved("mcp_redis_duration_seconds_count", None);
        if redis <= 0.0 {
            bail!("no Redis call was timed (mcp_redis_duration_seconds_count moved by {redis})");
        }
        Ok(format!(
            "{} instances scraped; requests counted by method, `other` bounded; {redis} Redis calls timed",
            instances.len()
        ))
    }

    /// Runs one `fleet_check` scenario against the `everything` fleet, answering its
    /// `FLEET-WAIT` steps; its PASS/FAIL lines, and the requests per instance.
    fn run_check(&mut self, root: &Path, fleet_check: &Path, scenario: &str) -> Vec<Outcome> {
        println!("==> fleet_check {scenario}");
        let before = self.stats(Kind::Everything);
        let mut outcomes = match self.drive_check(root, fleet_check, scenario) {
            Ok(outcomes) => outcomes,
            Err(e) => vec![Outcome::new(scenario, Err(e))],
        };
        let spread = before.and_then(|before| {
            let deltas = deltas(&before, &self.stats(Kind::Everything)?);
            let shown = show(&deltas);
            let (reached, needed) = (deltas.values().filter(|d| **d > 0).count(), spread_needed(deltas.len()));
            match reached {
                n if n >= needed => Ok(format!("{n} of {} instances: {shown}", deltas.len())),
                _ if scenario == "resume" || scenario == "redis" => Ok(shown),
                n => bail!("{n} of {} instances got requests, not at least {needed}: {shown}", deltas.len()),
            }
        });
        outcomes.push(Outcome::new(format!("{scenario}: requests per instance"), spread));
        outcomes
    }

    fn drive_check(&mut self, root: &Path, fleet_check: &Path, scenario: &str) -> Result<Vec<Outcome>> {
        let mut child = Command::new(fleet_check)
            .args([&self.url(Kind::Everything), scenario])
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting fleet_check")?;
        let mut stdin = child.stdin.take().context("fleet_check's stdin")?;
        let stdout = child.stdout.take().context("fleet_check's stdout")?;
        let pid = child.id();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if done_rx.recv_timeout(SCENARIO_TIMEOUT).is_err() {
                let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            }
        });
        let mut outcomes = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let line = line?;
            println!("    {line}");
            if let Some(step) = line.strip_prefix("FLEET-WAIT ") {
                let reply = match self.take_step(step) {
                    Ok(details) => format!("ok {details}"),
                    Err(e) => format!("fail {}", format!("{e:#}").replace('\n', " | ")),
                };
                println!("    (harness) {reply}");
                // The client may be gone; its exit status says so.
                let _ = writeln!(stdin, "{reply}");
            } else if let Some(rest) = line.strip_prefix("PASS ") {
                let (name, details) = rest.split_once(": ").unwrap_or((rest, ""));
                outcomes.push(Outcome { name: name.to_owned(), passed: true, details: details.to_owned() });
            } else if let Some(rest) = line.strip_prefix("FAIL ") {
                let (name, details) = rest.split_once(": ").unwrap_or((rest, ""));
                outcomes.push(Outcome { name: name.to_owned(), passed: false, details: details.to_owned() });
            }
        }
        let status = child.wait()?;
        let _ = done_tx.send(());
        let _ = watchdog.join();
        if outcomes.is_empty() {
            bail!("fleet_check {scenario} reported nothing ({status}; killed after {SCENARIO_TIMEOUT:?} if it hung)");
        }
        if !status.success() && outcomes.iter().all(|o| o.passed) {
            outcomes.push(Outcome::new(scenario, Err(anyhow::anyhow!("fleet_check exited with {status}"))));
        }
        Ok(outcomes)
    }

    /// Takes a step `fleet_check` asked for; the details of its `ok`.
    fn take_step(&mut self, step: &str) -> Result<String> {
        let (what, arg) = step.split_once(' ').unwrap_or((step, ""));
        match what {
            "streams" => {
                let wanted: u64 = arg.parse().context("streams N")?;
                let mut shown = String::new();
                poll(STREAMS_WAIT, &format!("{wanted} open streams, on every instance"), || {
                    let stats = self.stats(Kind::Everything)?;
                    shown = stats.values().map(|s| format!("{}={}", s.server, s.current)).collect::<Vec<_>>().join(" ");
                    let total: u64 = stats.values().map(|s| s.current).sum();
                    if total < wanted || stats.values().any(|s| s.current == 0) {
                        bail!("open connections per instance: {shown}");
                    }
                    Ok(())
                })?;
                Ok(format!("streams per instance: {shown}"))
            }
            "streams-now" => {
                let stats = self.stats(Kind::Everything)?;
                Ok(stats.values().map(|s| format!("{}={}", s.server, s.current)).collect::<Vec<_>>().join(" "))
            }
            "kill" => {
                // `kill INSTANCE [LABEL N]`: once N progress notifications of LABEL's session
                // are stored in Redis, so that some may reach the client only by resuming.
                let mut words = arg.split(' ');
                let name = words.next().unwrap_or_default();
                let stored = match (words.next(), words.next().map(str::parse::<usize>)) {
                    (Some(label), Some(n)) => {
                        let n = n.context("kill INSTANCE LABEL N")?;
                        let mut seen = Stored::default();
                        poll(STREAMS_WAIT, &format!("{n} progress notifications of `{label}` stored"), || {
                            seen = self.stored(label)?;
                            if seen.progress < n { bail!("{} stored", seen.progress) } else { Ok(()) }
                        })?;
                        format!(", {} progress stored", seen.progress)
                    }
                    _ => String::new(),
                };
                let instance = self
                    .instances
                    .iter_mut()
                    .find(|i| i.kind == Kind::Everything && i.name == name)
                    .with_context(|| format!("no instance `{name}`"))?;
                let mut proc = instance.proc.take().with_context(|| format!("{name} is not running"))?;
                proc.kill();
                Ok(format!("{name} (SIGKILL{stored})"))
            }
            "requests" => {
                let shown: Vec<String> = self.logged(arg)?.iter().map(Logged::token).collect();
                let instances = self.instances.iter().filter(|i| i.kind == Kind::Everything).count();
                Ok(format!("instances={instances} {}", shown.join(" ")))
            }
            "stored" => {
                let stored = self.stored(arg)?;
                Ok(format!("progress={} result={}", stored.progress, stored.results))
            }
            "redis-down" => {
                let mut redis = self.redis.take().context("Redis is not running")?;
                redis.kill();
                Ok("Redis killed (SIGKILL)".to_owned())
            }
            "redis-up" => {
                let mut problems = Vec::new();
                for instance in &mut self.instances {
                    let label = format!("{}-{}", instance.kind.backend(), instance.name);
                    let health = if instance.kind == Kind::Everything { "/healthz" } else { "/health" };
                    if !instance.proc.as_mut().is_some_and(Proc::alive) {
                        problems.push(format!("{label} is dead"));
                        continue;
                    }
                    match http_get(instance.addr, health) {
                        Ok(200) => {}
                        Ok(status) => problems.push(format!("{label} {health}: {status}")),
                        Err(e) => problems.push(format!("{label} {health}: {e:#}")),
                    }
                }
                self.start_redis()?;
                if !problems.is_empty() {
                    bail!("with Redis down: {}", problems.join(", "));
                }
                Ok("every instance alive and answering its health route; Redis restarted".to_owned())
            }
            _ => bail!("unknown step `{step}`"),
        }
    }

    /// The requests of the client labelled `label` (its `X-Fleet-Check`), as HAProxy logged them,
    /// in order.
    fn logged(&self, label: &str) -> Result<Vec<Logged>> {
        let text = fs::read_to_string(self.dir.join("haproxy.log"))?;
        Ok(text.lines().filter_map(Logged::parse).filter(|l| l.label == label).collect())
    }

    /// What Redis holds of the session of the client labelled `label` (its session id as
    /// HAProxy logged it): the progress notifications stored in its streams, and the results
    /// stored in the streams that hold progress notifications.
    fn stored(&self, label: &str) -> Result<Stored> {
        let session = self
            .logged(label)?
            .into_iter()
            .find_map(|l| l.session)
            .with_context(|| format!("no request of `{label}` with a session id"))?;
        let meta = format!("mcp:events:{{{session}}}");
        let streams = redis_command(self.redis_addr, &["ZRANGE", &format!("{meta}:streams"), "0", "-1"])?;
        let mut stored = Stored::default();
        for stream in streams.items()? {
            let stream = String::from_utf8_lossy(stream.bytes()?).into_owned();
            let mut this = Stored::default();
            for event in
                redis_command(self.redis_addr, &["LRANGE", &format!("{meta}:s:{stream}"), "0", "-1"])?.items()?
            {
                // The seq (8 bytes), then the message.
                let message = event.bytes()?.get(8..).unwrap_or_default();
                let message: serde_json::Value = serde_json::from_slice(message).unwrap_or_default();
                if message["method"] == "notifications/progress" {
                    this.progress += 1;
                } else if message.get("result").is_some() && message.get("id").is_some() {
                    this.results += 1;
                }
            }
            // Only the streams of calls with progress (not `initialize`'s, say).
            if this.progress > 0 {
                stored.progress += this.progress;
                stored.results += this.results;
            }
        }
        Ok(stored)
    }

    /// Restarts what a scenario killed (an instance, Redis), and waits until HAProxy sees
    /// every server up again; what it restarted.
    fn heal(&mut self) -> Result<Vec<String>> {
        let mut restarted = Vec::new();
        if self.redis.as_mut().is_none_or(|r| !r.alive()) {
            println!("==> restarting redis-server");
            restarted.push("redis-server".to_owned());
            self.redis = None;
            self.start_redis()?;
        }
        for i in 0..self.instances.len() {
            if self.instances[i].proc.as_mut().is_none_or(|p| !p.alive()) {
                let label = format!("{}-{}", self.instances[i].kind.backend(), self.instances[i].name);
                println!("==> restarting {label}");
                restarted.push(label);
                self.instances[i].proc = None;
                self.start_instance(i)?;
            }
        }
        let socket = self.stats_socket.clone();
        poll(START_TIMEOUT, "HAProxy sees every server up", || {
            let down: Vec<String> = read_stats(&socket)?.iter().filter(|s| s.status != "UP").map(Stat::label).collect();
            if !down.is_empty() {
                bail!("not up: {}", down.join(", "));
            }
            Ok(())
        })?;
        Ok(restarted)
    }
}

fn ensure_alive(proc: &mut Proc) -> Result<()> {
    if let Ok(Some(status)) = proc.child.try_wait() {
        bail!("{} exited ({status})", proc.name);
    }
    Ok(())
}

/// Calls `f` every 50 ms until it succeeds, at most `limit`; the last error otherwise.
fn poll(limit: Duration, what: &str, mut f: impl FnMut() -> Result<()>) -> Result<()> {
    let deadline = Instant::now() + limit;
    loop {
        let error = match f() {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if Instant::now() > deadline {
            return Err(error.context(format!("waiting {} s for: {what}", limit.as_secs())));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `PING` answered with `+PONG`.
fn redis_ping(addr: SocketAddr) -> Result<()> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(500))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(b"PING\r\n")?;
    let mut answer = [0u8; 7];
    stream.read_exact(&mut answer)?;
    if &answer != b"+PONG\r\n" {
        bail!("PING answered {:?}", String::from_utf8_lossy(&answer));
    }
    Ok(())
}

/// The status of `GET path` on `addr` (a connection of its own, closed after).
fn http_get(addr: SocketAddr, path: &str) -> Result<u16> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(500))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(format!("GET {path} HTTP/1.1\r\nHost: fleet\r\nConnection: close\r\n\r\n").as_bytes())?;
    let (status, _) = read_response(&mut BufReader::new(stream))?;
    Ok(status)
}

/// One sample of a `/metrics` answer: `name{labels} value`.
struct Sample {
    name: String,
    value: f64,
    /// The whole line, to read labels from and to show.
    line: String,
}

impl Sample {
    /// A line of the Prometheus text format (`None` for comments and blank lines).
    fn parse(line: &str) -> Option<Sample> {
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let (series, value) = line.rsplit_once(' ')?;
        let name = series.split('{').next()?.to_owned();
        Some(Sample { name, value: value.parse().ok()?, line: line.to_owned() })
    }

    /// The value of label `key` (values the SDK records hold no quotes).
    fn label(&self, key: &str) -> Option<&str> {
        let start = self.line.find(&format!("{key}=\""))? + key.len() + 2;
        let len = self.line[start..].find('"')?;
        Some(&self.line[start..start + len])
    }
}

/// `GET /metrics` on `addr`: its samples (200 and some, or an error).
fn scrape(addr: SocketAddr) -> Result<Vec<Sample>> {
    let (status, _, body) = http_exchange(addr, "GET /metrics HTTP/1.1\r\nHost: fleet\r\nConnection: close\r\n\r\n")?;
    if status != 200 {
        bail!("GET /metrics: {status}");
    }
    let samples: Vec<Sample> = body.lines().filter_map(Sample::parse).collect();
    if samples.is_empty() {
        bail!("GET /metrics: no sample");
    }
    Ok(samples)
}

/// POSTs `body` to `/mcp` on `addr` (in `session`): the status, head and body of the answer.
fn http_post(addr: SocketAddr, session: Option<&str>, body: &str) -> Result<(u16, String, String)> {
    let session = session.map(|s| format!("Mcp-Session-Id: {s}\r\n")).unwrap_or_default();
    http_exchange(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\n{session}Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// DELETEs the session `session` on `addr`.
fn http_delete(addr: SocketAddr, session: &str) -> Result<()> {
    let request = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nMcp-Session-Id: {session}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\n\r\n"
    );
    match http_exchange(addr, &request)? {
        (200, _, _) => Ok(()),
        (status, _, body) => bail!("DELETE: {status} {body}"),
    }
}

/// Sends `request` on a connection of its own and reads the answer to its end: status, head,
/// body (an SSE response of one request ends with its answer).
fn http_exchange(addr: SocketAddr, request: &str) -> Result<(u16, String, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.write_all(request.as_bytes())?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer.split_once("\r\n\r\n").context("no end of the response's head")?;
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).context("no status")?;
    Ok((status, head.to_owned(), body.to_owned()))
}

/// One request as HAProxy logged it (a `FLEETLOG` line: the captures of [`CAPTURES`]).
#[derive(Debug, Clone, PartialEq)]
struct Logged {
    /// The instance it went to.
    server: String,
    method: String,
    status: String,
    label: String,
    session: Option<String>,
    last_event_id: Option<String>,
    retry_after: Option<String>,
    /// The start of its body (`None` for GET, DELETE).
    body: Option<String>,
}

impl Logged {
    fn parse(line: &str) -> Option<Logged> {
        let line = &line[line.find("FLEETLOG ")? + "FLEETLOG ".len()..];
        let (head, body) = line.split_once(" body=")?;
        let mut words = head.split(' ');
        let (server, method, status) = (words.next()?, words.next()?, words.next()?);
        let mut field = |name: &str| {
            let value = words.next()?.strip_prefix(name)?.strip_prefix('=')?;
            Some((!value.is_empty() && value != "-").then(|| value.to_owned()))
        };
        let (label, session, last_event_id, retry_after) =
            (field("label")?, field("sid")?, field("lei")?, field("ra")?);
        Some(Logged {
            server: server.to_owned(),
            method: method.to_owned(),
            status: status.to_owned(),
            label: label.unwrap_or_default(),
            session,
            last_event_id,
            retry_after,
            body: (!body.is_empty() && body != "-").then(|| body.to_owned()),
        })
    }

    /// `SERVER|METHOD|STATUS|WHAT|LAST-EVENT-ID|RETRY-AFTER` (`-` for none), WHAT from the body:
    /// `call:TOOL` (`call:TOOL+input` with input responses), `answer` (a result or an error
    /// to the server's request), `notification`, the method of another request, `-` for none.
    fn token(&self) -> String {
        let what = match &self.body {
            None => "-".to_owned(),
            Some(body) => match serde_json::from_str::<serde_json::Value>(body) {
                Ok(json) => match json["method"].as_str() {
                    Some("tools/call") => {
                        let input = json["params"].get("inputResponses").is_some();
                        let name = json["params"]["name"].as_str().unwrap_or("?");
                        format!("call:{name}{}", if input { "+input" } else { "" })
                    }
                    Some(method) if json.get("id").is_none() => format!("notification:{method}"),
                    Some(method) => method.to_owned(),
                    None => "answer".to_owned(),
                },
                // Cut at the capture's length: what its start shows.
                Err(_) if body.contains(r#""method":"tools/call""#) => {
                    let name = body.split_once(r#""name":""#).and_then(|(_, rest)| rest.split_once('"'));
                    let input = if body.contains(r#""inputResponses""#) { "+input" } else { "" };
                    format!("call:{}{input}", name.map_or("?", |(name, _)| name))
                }
                Err(_) if !body.contains(r#""method""#) => "answer".to_owned(),
                Err(_) => "?".to_owned(),
            },
        };
        let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
        format!(
            "{}|{}|{}|{what}|{}|{}",
            self.server,
            self.method,
            self.status,
            or_dash(&self.last_event_id),
            or_dash(&self.retry_after)
        )
    }
}

/// What Redis holds of a session's streams (see [`Fleet::stored`]).
#[derive(Debug, Default)]
struct Stored {
    progress: usize,
    results: usize,
}

/// A reply of Redis (RESP2).
#[derive(Debug)]
enum Resp {
    /// A bulk string (simple strings and integers as their text).
    Bulk(Option<Vec<u8>>),
    Array(Vec<Resp>),
}

impl Resp {
    fn items(self) -> Result<Vec<Resp>> {
        match self {
            Resp::Array(items) => Ok(items),
            other => bail!("not an array: {other:?}"),
        }
    }

    fn bytes(&self) -> Result<&[u8]> {
        match self {
            Resp::Bulk(Some(bytes)) => Ok(bytes),
            other => bail!("not a string: {other:?}"),
        }
    }

    fn read(reader: &mut impl std::io::BufRead) -> Result<Resp> {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            bail!("Redis closed the connection");
        }
        let line = line.trim_end();
        let (kind, rest) = line.split_at(1.min(line.len()));
        Ok(match kind {
            "+" | ":" => Resp::Bulk(Some(rest.as_bytes().to_vec())),
            "-" => bail!("Redis: {rest}"),
            "$" => match rest.parse::<i64>()? {
                n if n < 0 => Resp::Bulk(None),
                n => {
                    let mut bytes = vec![0u8; usize::try_from(n)? + 2];
                    reader.read_exact(&mut bytes)?;
                    bytes.truncate(bytes.len() - 2);
                    Resp::Bulk(Some(bytes))
                }
            },
            "*" => match rest.parse::<i64>()? {
                n if n < 0 => Resp::Array(Vec::new()),
                n => (0..n).map(|_| Resp::read(reader)).collect::<Result<_>>().map(Resp::Array)?,
            },
            _ => bail!("not a RESP reply: {line:?}"),
        })
    }
}

/// Sends one command to the Redis at `addr` (a connection of its own); its reply.
fn redis_command(addr: SocketAddr, args: &[&str]) -> Result<Resp> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(500))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut command = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        command.extend_from_slice(format!("${}\r\n{arg}\r\n", arg.len()).as_bytes());
    }
    stream.write_all(&command)?;
    Resp::read(&mut BufReader::new(stream))
}

/// Reads one HTTP/1.1 response with a `Content-Length` body: its status, and whether the
/// server closes the connection after it.
fn read_response(reader: &mut impl std::io::BufRead) -> Result<(u16, bool)> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let n = reader.read_until(b'\n', &mut head)?;
        if n == 0 {
            bail!("the connection closed before a whole response");
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    response.parse(&head)?;
    let status = response.code.context("no status")?;
    let header = |name: &str| {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).to_ascii_lowercase())
    };
    let length: usize = header("content-length").map_or(Ok(0), |l| l.trim().parse())?;
    let close = header("connection").is_some_and(|c| c.contains("close"));
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    Ok((status, close))
}

/// One server's line of HAProxy's `show stat`.
#[derive(Debug, Clone)]
struct Stat {
    backend: String,
    server: String,
    status: String,
    /// Connections open now (`scur`).
    current: u64,
    /// Connections since the start (`stot`): one per request, with `http-server-close`.
    total: u64,
}

impl Stat {
    fn label(&self) -> String {
        format!("{}/{} {}", self.backend, self.server, self.status)
    }
}

/// The servers' lines of `show stat` on the admin socket.
fn read_stats(socket: &Path) -> Result<Vec<Stat>> {
    let mut stream = UnixStream::connect(socket).with_context(|| format!("connecting to {}", socket.display()))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(b"show stat\n")?;
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    parse_stats(&text)
}

/// Parses `show stat` (CSV, its header line `# pxname,svname,...`).
fn parse_stats(text: &str) -> Result<Vec<Stat>> {
    let mut lines = text.lines();
    let header = lines.next().and_then(|h| h.strip_prefix("# ")).context("no header in `show stat`")?;
    let columns: Vec<&str> = header.split(',').collect();
    let column = |name: &str| columns.iter().position(|c| *c == name).with_context(|| format!("no column {name}"));
    let (px, sv, status, scur, stot) =
        (column("pxname")?, column("svname")?, column("status")?, column("scur")?, column("stot")?);
    let mut stats = Vec::new();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split(',').collect();
        let field = |i: usize| fields.get(i).copied().unwrap_or("");
        if matches!(field(sv), "FRONTEND" | "BACKEND") || field(px) == "stats" {
            continue;
        }
        stats.push(Stat {
            backend: field(px).to_owned(),
            server: field(sv).to_owned(),
            status: field(status).to_owned(),
            current: field(scur).parse().unwrap_or(0),
            total: field(stot).parse().unwrap_or(0),
        });
    }
    Ok(stats)
}

/// Requests per server between two readings.
fn deltas(before: &BTreeMap<String, Stat>, after: &BTreeMap<String, Stat>) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(name, s)| (name.clone(), s.total.saturating_sub(before.get(name).map_or(0, |b| b.total))))
        .collect()
}

fn show(deltas: &BTreeMap<String, u64>) -> String {
    deltas.iter().map(|(name, n)| format!("{name}+{n}")).collect::<Vec<_>>().join(" ")
}

/// The Redis of `cargo xtask bench`'s fleet rows: started on a free port without persistence,
/// killed when dropped.
/// A fleet for `cargo xtask soak --fleet`: Redis, `everything` instances and HAProxy in front
/// (the same start-up as `cargo xtask fleet`'s), an instance killed and restarted on demand,
/// Redis's memory and each instance's resident memory read. Everything is killed when dropped.
pub(crate) struct SoakFleet(Fleet);

impl SoakFleet {
    /// Starts Redis, `count` `everything` instances (with `args` besides the fleet's) and
    /// HAProxy, logs in `dir`.
    pub(crate) fn start(dir: &Path, everything: &Path, count: usize, args: Vec<String>) -> Result<SoakFleet> {
        if dir.exists() {
            fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        fs::create_dir_all(dir)?;
        packages::ensure()?;
        Ok(SoakFleet(Fleet::start_kinds(dir, everything, everything, count, None, &[Kind::Everything], args)?))
    }

    /// The balancer's endpoint.
    pub(crate) fn url(&self) -> String {
        self.0.url(Kind::Everything)
    }

    /// The instances' names.
    pub(crate) fn names(&self) -> Vec<String> {
        self.0.instances.iter().map(|i| i.name.clone()).collect()
    }

    /// Kills instance `i` (SIGKILL), starts it again and waits until HAProxy sees it up.
    pub(crate) fn kill_and_restart(&mut self, i: usize) -> Result<()> {
        let instance = self.0.instances.get_mut(i).context("no such instance")?;
        instance.proc.take().context("the instance is not running")?.kill();
        let restarted = self.0.heal()?;
        if restarted.len() != 1 {
            bail!("restarted {} (one instance was killed)", restarted.join(", "));
        }
        Ok(())
    }

    /// Each instance's resident memory (KiB; 0 when it is not running), in order.
    pub(crate) fn rss_kib(&self) -> Vec<u64> {
        self.0
            .instances
            .iter()
            .map(|i| {
                let pid = i.proc.as_ref().map(|p| p.child.id());
                let status = pid.and_then(|pid| fs::read_to_string(format!("/proc/{pid}/status")).ok());
                status
                    .and_then(|s| {
                        let line = s.lines().find(|l| l.starts_with("VmRSS:"))?.to_owned();
                        line.split_whitespace().nth(1)?.parse().ok()
                    })
                    .unwrap_or(0)
            })
            .collect()
    }

    /// Redis's `used_memory` (bytes), from `INFO memory`.
    pub(crate) fn redis_used_memory(&self) -> Result<u64> {
        let info = redis_command(self.0.redis_addr, &["INFO", "memory"])?;
        let text = String::from_utf8_lossy(info.bytes()?).into_owned();
        let used = text.lines().find_map(|l| l.strip_prefix("used_memory:")).context("no used_memory in INFO")?;
        Ok(used.trim().parse()?)
    }
}

pub(crate) struct BenchRedis {
    child: Child,
    addr: SocketAddr,
}

impl BenchRedis {
    pub(crate) fn start() -> Result<BenchRedis> {
        packages::ensure()?;
        let addr = loopback()?;
        let child = Command::new("redis-server")
            .args(["--port", &addr.port().to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .context("starting redis-server")?;
        let redis = BenchRedis { child, addr };
        poll(Duration::from_secs(10), "redis-server answers PING", || redis_ping(addr))?;
        Ok(redis)
    }

    pub(crate) fn url(&self) -> String {
        format!("redis://{}/", self.addr)
    }
}

impl Drop for BenchRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `xtask fleet-front ADDR N REDIS_URL ECHO DIR`: starts `N` instances of the `echo` server
/// sharing the Redis at `REDIS_URL`, then becomes HAProxy (exec) listening on `ADDR` in front
/// of them, round robin, each request balanced: a server target for `cargo xtask bench` whose
/// process group holds the whole fleet.
pub fn front(args: &[String]) -> Result<()> {
    use std::os::unix::process::CommandExt as _;
    let [addr, n, url, echo, dir] = args else {
        bail!("usage: xtask fleet-front ADDR N REDIS_URL ECHO DIR");
    };
    let n: usize = n.parse().context("N: a number of instances")?;
    let mut servers = String::new();
    for i in 0..n {
        let backend = loopback()?;
        Command::new(echo)
            .args(["--http", &backend.to_string(), "--redis", url])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {echo}"))?;
        poll(Duration::from_secs(10), "an instance listens", || Ok(TcpStream::connect(backend).map(drop)?))?;
        servers.push_str(&format!("    server e{i} {backend}\n"));
    }
    let config = format!(
        "global\n    maxconn 4000\n\ndefaults\n    mode http\n    option http-server-close\n    \
         timeout connect 2s\n    timeout client 1m\n    timeout server 1m\n\n\
         frontend fleet\n    bind {addr}\n    default_backend echo\n\n\
         backend echo\n    balance roundrobin\n{servers}"
    );
    fs::create_dir_all(dir)?;
    let path = Path::new(dir).join(format!("haproxy-{}.cfg", std::process::id()));
    fs::write(&path, config)?;
    let error = Command::new("haproxy").arg("-db").arg("-f").arg(&path).exec();
    bail!("exec haproxy: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_are_named_by_letter_and_spread_over_two_thirds_past_three() {
        let names: Vec<String> = (0..10).map(instance_name).collect();
        assert_eq!(names.join(""), "abcdefghij");
        assert_eq!(instance_name(MAX_INSTANCES - 1), "z");
        assert_eq!([1, 2, 3, 4, 10].map(spread_needed), [1, 2, 3, 3, 7]);
    }

    #[test]
    fn stats_parse() {
        let text = "# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,\n\
                    everything,FRONTEND,,,1,2,2000,10,0,0,0,0,0,,,,,OPEN,\n\
                    everything,a,0,0,1,1,,4,0,0,,0,,0,0,0,0,UP,\n\
                    everything,b,0,0,0,1,,3,0,0,,0,,0,0,0,0,DOWN,\n\
                    everything,BACKEND,0,0,1,1,200,7,0,0,0,0,,0,0,0,0,UP,\n";
        let stats = parse_stats(text).unwrap();
        assert_eq!(stats.len(), 2);
        assert_eq!((stats[0].server.as_str(), stats[0].current, stats[0].total), ("a", 1, 4));
        assert_eq!(stats[1].status, "DOWN");
        assert!(parse_stats("no header").is_err());
    }

    #[test]
    fn logged_requests_parse() {
        let post = "FLEETLOG b POST 200 label=revision-2025-11-25 sid=ab-1 lei=- ra=- \
                    body={\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"test_sampling\"}}";
        let logged = Logged::parse(post).unwrap();
        assert_eq!((logged.label.as_str(), logged.session.as_deref()), ("revision-2025-11-25", Some("ab-1")));
        assert_eq!(logged.token(), "b|POST|200|call:test_sampling|-|-");
        let answer = r#"FLEETLOG c POST 202 label=x sid=- lei=- ra=- body={"jsonrpc":"2.0","id":0,"result":{"a b":1}}"#;
        assert_eq!(Logged::parse(answer).unwrap().token(), "c|POST|202|answer|-|-");
        let retry = r#"FLEETLOG a POST 200 label=x sid=- lei=- ra=- body={"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","inputResponses":{}}}"#;
        assert_eq!(Logged::parse(retry).unwrap().token(), "a|POST|200|call:t+input|-|-");
        let resume = "FLEETLOG a GET 200 label=resume sid=ab-1 lei=3-7 ra=- body=-";
        assert_eq!(Logged::parse(resume).unwrap().token(), "a|GET|200|-|3-7|-");
        let busy =
            "FLEETLOG a POST 503 label=x sid=s lei=- ra=1 body={\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        assert_eq!(Logged::parse(busy).unwrap().token(), "a|POST|503|ping|-|1");
        assert!(Logged::parse("127.0.0.1 - - GET /").is_none());
    }

    #[test]
    fn responses_parse() {
        let mut reader = std::io::Cursor::new(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 503 x\r\nConnection: close\r\ncontent-length: 0\r\n\r\n".to_vec());
        assert_eq!(read_response(&mut reader).unwrap(), (200, false));
        assert_eq!(read_response(&mut reader).unwrap(), (503, true));
        assert!(read_response(&mut reader).is_err());
    }
}
