//! Real Redis deployments for a test, on free loopback ports, without persistence, their
//! processes killed when dropped: one [`RedisServer`] (plain, or TLS-only with a throwaway CA:
//! [`RedisServer::start_tls`]), a [`RedisSentinel`] set (a primary, a replica, sentinels), a
//! [`RedisCluster`] (three primaries), and a [`RedisProxy`] that cuts one client off a server
//! while the others keep it. `redis-server` and `redis-cli` must be installed (`cargo
//! xtask ci` installs them from the system's packages; by hand: `apt-get install redis-server`),
//! and `openssl` for TLS: a test that needs them fails when they are missing rather than passing
//! without them. Readiness is polled (`PING`, `CLUSTER INFO`, `SENTINEL ...`), never slept on.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A `redis-server` process of this test (a server, a sentinel or a cluster node).
#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    child: Option<Child>,
    /// The arguments after the program (without the port).
    args: Vec<String>,
    /// The certificates of a TLS-only server.
    tls: Option<Arc<TlsFiles>>,
    /// Its working directory (`--dir`: where a replica writes what it receives).
    dir: TempDir,
}

impl RedisServer {
    /// Starts `redis-server` (from `PATH`, or `$REDIS_SERVER`) on a free port and waits until
    /// it answers `PING`.
    pub fn start() -> RedisServer {
        RedisServer::start_with(&[])
    }

    /// Starts `redis-server` on `port` with `args` besides the usual ones (no persistence,
    /// loopback only), and waits until it answers `PING`.
    pub fn start_with(args: &[&str]) -> RedisServer {
        let mut all = base_args();
        all.extend(args.iter().map(|a| (*a).to_owned()));
        RedisServer::start_on_a_free_port(all, None, free_port)
    }

    /// Starts with `args` on a port `pick` chooses, choosing again when another process took it
    /// meanwhile (free ports are only free when chosen).
    fn start_on_a_free_port(args: Vec<String>, tls: Option<Arc<TlsFiles>>, pick: fn() -> u16) -> RedisServer {
        let mut server = RedisServer { port: pick(), child: None, args, tls, dir: TempDir::new("server") };
        for _ in 0..10 {
            match server.spawn() {
                Ok(()) => return server,
                Err(taken) => {
                    eprintln!("{taken}: trying another port");
                    server.port = pick();
                }
            }
        }
        panic!("no free port for redis-server in 10 tries");
    }

    /// Starts a `redis-server` that speaks TLS only (`--port 0 --tls-port PORT`), with a
    /// certificate for `127.0.0.1` and `localhost` signed by a CA made for this server (by the
    /// `openssl` command), clients not asked for certificates; waits until it answers `PING`
    /// over TLS (`redis-cli --tls`).
    pub fn start_tls() -> RedisServer {
        let tls = Arc::new(TlsFiles::make());
        let mut args = base_args();
        for (flag, path) in
            [("--tls-cert-file", &tls.cert), ("--tls-key-file", &tls.key), ("--tls-ca-cert-file", &tls.ca)]
        {
            args.extend([flag.to_owned(), path.display().to_string()]);
        }
        args.extend(["--tls-auth-clients".to_owned(), "no".to_owned()]);
        RedisServer::start_on_a_free_port(args, Some(tls), free_port)
    }

    /// The URL to connect to it (`redis://127.0.0.1:PORT/`, `rediss://` when TLS).
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "rediss" } else { "redis" };
        format!("{scheme}://127.0.0.1:{}/", self.port)
    }

    /// The certificate (PEM) of the CA that signed a TLS server's certificate.
    pub fn ca_pem(&self) -> Vec<u8> {
        let tls = self.tls.as_ref().expect("a TLS server (RedisServer::start_tls)");
        std::fs::read(&tls.ca).expect("read the test CA")
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills it (SIGKILL): clients see their connections drop, and new ones refused.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the process (SIGSTOP): it holds its connections and its port but answers nothing
    /// (Redis hanging rather than refusing) until [`resume`](Self::resume). What clients send
    /// meanwhile waits in the sockets and runs on resume.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a [`pause`](Self::pause)d process run again (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("a running redis-server").id().to_string();
        let status = Command::new("kill").args([signal, &pid]).status().expect("run kill");
        assert!(status.success(), "kill {signal} {pid} failed");
    }

    /// Starts it again on the same port (empty: nothing is persisted), after [`kill`](Self::kill).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn().unwrap_or_else(|taken| panic!("cannot restart redis-server: {taken}"));
    }

    /// Sends one command (inline form) and returns the raw reply's first line: for tests
    /// that look at Redis directly (`DBSIZE`, `TTL key`, ...). On a TLS server, through
    /// `redis-cli --tls`, the reply as it prints it to a pipe (`PONG`, `1`, ...).
    pub fn command(&self, command: &str) -> String {
        if self.tls.is_some() {
            let args: Vec<&str> = command.split_whitespace().collect();
            return self.cli(&args).expect("redis-cli --tls").lines().next().unwrap_or("").to_owned();
        }
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect to redis-server");
        stream.set_read_timeout(Some(Duration::from_secs(5))).expect("set a read timeout");
        stream.write_all(format!("{command}\r\n").as_bytes()).expect("write to redis-server");
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).expect("read from redis-server");
        line.trim_end().to_owned()
    }

    /// Sends one command (its arguments, binary-safe) and returns the whole reply (not on a TLS
    /// server).
    pub fn query(&self, args: &[&str]) -> Reply {
        query(self.port, args).unwrap_or_else(|e| panic!("{args:?} to port {}: {e}", self.port))
    }

    /// How many clients wait in a blocking command (`XREAD BLOCK`, ...): `INFO clients`'s
    /// `blocked_clients` (not on a TLS server).
    pub fn blocked_clients(&self) -> u64 {
        let info = self.query(&["INFO", "clients"]);
        let blocked = info.text().lines().find_map(|l| l.strip_prefix("blocked_clients:"));
        blocked.and_then(|n| n.trim().parse().ok()).unwrap_or(0)
    }

    /// Watches the commands clients send from now on (`MONITOR`, not on a TLS server): count
    /// round trips with [`Monitor::commands`].
    pub fn monitor(&self) -> Monitor {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect to redis-server");
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("set a read timeout");
        (&stream).write_all(b"MONITOR\r\n").expect("write to redis-server");
        let mut reader = BufReader::new(stream);
        let mut ok = String::new();
        reader.read_line(&mut ok).expect("read from redis-server");
        assert_eq!(ok.trim_end(), "+OK", "MONITOR refused");
        Monitor { port: self.port, reader }
    }

    /// Starts the process and waits until it answers `PING`; `Err` when its port is taken
    /// (it could not listen, or another process answers there).
    fn spawn(&mut self) -> Result<(), String> {
        let program = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let mut command = Command::new(&program);
        // A sentinel's configuration file comes first.
        let (config, rest) = match self.args.first() {
            Some(first) if first.ends_with(".conf") => (Some(first.clone()), &self.args[1..]),
            _ => (None, &self.args[..]),
        };
        command.args(config);
        let port = self.port.to_string();
        command.args(["--dir", &self.dir.path().display().to_string()]);
        match self.tls {
            None => command.args(["--port", &port]),
            Some(_) => command.args(["--port", "0", "--tls-port", &port]),
        };
        let child = command.args(rest).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap_or_else(|e| {
            panic!("cannot start `{program}` ({e}): install Redis (`apt-get install redis-server`)")
        });
        let pid = child.id();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if self.ping() {
                // The process that answers is this one, not another that holds the port.
                if self.process_id() == Some(pid) {
                    return Ok(());
                }
                self.kill();
                return Err(format!("port {} is another process's", self.port));
            }
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                let mut err = String::new();
                if let Some(mut stderr) = self.child.as_mut().and_then(|c| c.stderr.take()) {
                    let _ = stderr.read_to_string(&mut err);
                }
                self.child = None;
                if err.contains("in use") {
                    return Err(format!("port {} is taken", self.port));
                }
                panic!("redis-server exited ({status}): {err}");
            }
            assert!(Instant::now() < deadline, "redis-server did not answer PING within 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The `process_id` of `INFO server`.
    fn process_id(&self) -> Option<u32> {
        let info = match self.tls {
            Some(_) => self.cli(&["INFO", "server"])?,
            None => query(self.port, &["INFO", "server"]).ok()?.text().to_owned(),
        };
        info.lines().find_map(|l| l.strip_prefix("process_id:")).and_then(|p| p.trim().parse().ok())
    }

    fn ping(&self) -> bool {
        if self.tls.is_some() {
            return self.cli(&["PING"]).is_some_and(|out| out.trim() == "PONG");
        }
        matches!(query(self.port, &["PING"]), Ok(Reply::Simple(pong)) if pong == "PONG")
    }

    /// Runs `redis-cli` against this (TLS) server; its output, if it ran.
    fn cli(&self, args: &[&str]) -> Option<String> {
        let mut command = Command::new("redis-cli");
        command.args(["-h", "127.0.0.1", "-p", &self.port.to_string()]);
        if let Some(tls) = &self.tls {
            command.args(["--tls", "--cacert", &tls.ca.display().to_string()]);
        }
        let output = command.args(args).stderr(Stdio::null()).output().expect("run redis-cli");
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn base_args() -> Vec<String> {
    ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no", "--loglevel", "warning"]
        .map(str::to_owned)
        .to_vec()
}

/// The commands clients send a [`RedisServer`], as `MONITOR` shows them
/// ([`RedisServer::monitor`]).
#[derive(Debug)]
pub struct Monitor {
    port: u16,
    reader: BufReader<TcpStream>,
}

impl Monitor {
    /// The commands clients sent since the monitor started, in order, each as Redis shows it
    /// (`"EVALSHA" "..." ...`): one a round trip, the commands run by scripts left out. Ends
    /// them with a command of its own (`ECHO`), which Redis runs after every command sent
    /// before it, so that no earlier one is missed.
    pub fn commands(mut self) -> Vec<String> {
        let marker = format!("monitor-end-{}", std::process::id());
        assert_eq!(query(self.port, &["ECHO", &marker]).ok(), Some(Reply::Bulk(Some(marker.clone()))));
        let mut commands = Vec::new();
        loop {
            let mut line = String::new();
            let read = self.reader.read_line(&mut line).expect("read MONITOR's output");
            assert!(read > 0, "redis-server closed the monitor");
            // `+1700000000.123456 [0 127.0.0.1:5000] "GET" "k"`; a script's: `[0 lua]`.
            let Some((source, command)) = line.trim_end().split_once("] ") else { continue };
            if command.contains(&marker) {
                return commands;
            }
            if !source.ends_with(" lua") {
                commands.push(command.to_owned());
            }
        }
    }
}

/// A reply of Redis (RESP2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `+OK`
    Simple(String),
    /// `-ERR ...`
    Error(String),
    /// `:1`
    Int(i64),
    /// `$...` (`None`: nil)
    Bulk(Option<String>),
    /// `*...` (`None`: nil)
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// The text of a simple, bulk or error reply (`""` for others).
    pub fn text(&self) -> &str {
        match self {
            Reply::Simple(s) | Reply::Error(s) | Reply::Bulk(Some(s)) => s,
            _ => "",
        }
    }

    /// The elements of an array reply (none for others).
    pub fn items(&self) -> &[Reply] {
        match self {
            Reply::Array(Some(items)) => items,
            _ => &[],
        }
    }
}

/// Sends one command to the plain server at `port`.
fn query(port: u16, args: &[&str]) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut request = format!("*{}\r\n", args.len());
    for arg in args {
        request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream.write_all(request.as_bytes())?;
    read_reply(&mut BufReader::new(stream))
}

fn read_reply(reader: &mut impl std::io::BufRead) -> std::io::Result<Reply> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let line = line.trim_end_matches("\r\n");
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not RESP: {line:?}"));
    let (kind, rest) = line.split_at_checked(1).ok_or_else(bad)?;
    let number = || rest.parse::<i64>().map_err(|_| bad());
    Ok(match kind {
        "+" => Reply::Simple(rest.to_owned()),
        "-" => Reply::Error(rest.to_owned()),
        ":" => Reply::Int(number()?),
        "$" => match usize::try_from(number()?) {
            Err(_) => Reply::Bulk(None),
            Ok(len) => {
                let mut bytes = vec![0; len + 2];
                reader.read_exact(&mut bytes)?;
                bytes.truncate(len);
                Reply::Bulk(Some(String::from_utf8_lossy(&bytes).into_owned()))
            }
        },
        "*" => match usize::try_from(number()?) {
            Err(_) => Reply::Array(None),
            Ok(len) => Reply::Array(Some((0..len).map(|_| read_reply(reader)).collect::<Result<_, _>>()?)),
        },
        _ => return Err(bad()),
    })
}

/// Polls `ready` until it holds (every 20 ms), panicking after `within` with `what`.
fn wait_until(within: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !ready() {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A TCP proxy to a server of the test, which the test cuts (every connection through it
/// dropped, new ones closed at once) and restores: a client that loses Redis while Redis stays
/// up for the others. Threads of its own; stops when dropped.
#[derive(Debug)]
pub struct RedisProxy {
    port: u16,
    state: Arc<ProxyState>,
}

#[derive(Debug, Default)]
struct ProxyState {
    cut: std::sync::atomic::AtomicBool,
    stopped: std::sync::atomic::AtomicBool,
    /// Both ends of every connection through it (to shut them down when cut).
    open: std::sync::Mutex<Vec<TcpStream>>,
}

impl RedisProxy {
    /// A proxy to `server` (not a TLS one) on a free loopback port.
    pub fn start(server: &RedisServer) -> RedisProxy {
        RedisProxy::to_port(server.port)
    }

    /// A proxy to any TCP server of the test on loopback `port` (an HTTP one: a client that
    /// loses its server), on a free loopback port.
    pub fn to_port(target: u16) -> RedisProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a proxy port");
        let port = listener.local_addr().expect("the proxy's address").port();
        let state = Arc::new(ProxyState::default());
        let accepting = state.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if accepting.stopped.load(Ordering::Acquire) {
                    return;
                }
                let Ok(client) = client else { continue };
                if accepting.cut.load(Ordering::Acquire) {
                    continue; // dropped: closed at once
                }
                let Ok(upstream) = TcpStream::connect(("127.0.0.1", target)) else { continue };
                let (Ok(c2), Ok(u2), Ok(c3), Ok(u3)) =
                    (client.try_clone(), upstream.try_clone(), client.try_clone(), upstream.try_clone())
                else {
                    continue;
                };
                accepting.open.lock().unwrap_or_else(|e| e.into_inner()).extend([c3, u3]);
                std::thread::spawn(move || pipe(client, upstream));
                std::thread::spawn(move || pipe(u2, c2));
            }
        });
        RedisProxy { port, state }
    }

    /// The URL to connect through it.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Drops every connection through it, and closes new ones until [`restore`](Self::restore).
    pub fn cut(&self) {
        self.state.cut.store(true, Ordering::Release);
        for stream in self.state.open.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }

    /// Lets connections through again.
    pub fn restore(&self) {
        self.state.cut.store(false, Ordering::Release);
    }
}

impl Drop for RedisProxy {
    fn drop(&mut self) {
        self.cut();
        self.state.stopped.store(true, Ordering::Release);
        // Wakes the accepting thread, which then stops.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Copies `from` to `to` until either ends, then ends both.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = from.shutdown(std::net::Shutdown::Both);
    let _ = to.shutdown(std::net::Shutdown::Both);
}

/// A Redis Cluster of three primaries (no replicas), slots spread by `redis-cli --cluster
/// create`.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
    _dir: TempDir,
}

impl RedisCluster {
    /// Starts three cluster nodes, makes them one cluster, and waits until every node says
    /// `cluster_state:ok` with all 16384 slots served and every node known.
    pub fn start() -> RedisCluster {
        let dir = TempDir::new("cluster");
        let mut nodes = Vec::new();
        for i in 0..3 {
            let conf = dir.path().join(format!("nodes-{i}.conf")).display().to_string();
            let mut args = base_args();
            for arg in ["--cluster-enabled", "yes", "--cluster-node-timeout", "5000", "--cluster-config-file", &conf] {
                args.push(arg.to_owned());
            }
            nodes.push(RedisServer::start_on_a_free_port(args, None, free_port_with_bus));
        }
        let addresses: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port())).collect();
        let output = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addresses)
            .arg("--cluster-yes")
            .stdin(Stdio::null())
            .output()
            .expect("run redis-cli --cluster create");
        assert!(output.status.success(), "redis-cli --cluster create: {}", String::from_utf8_lossy(&output.stdout));
        let cluster = RedisCluster { nodes, _dir: dir };
        wait_until(Duration::from_secs(20), "the cluster is ok on every node", || {
            cluster.nodes.iter().all(|node| {
                let info = node.query(&["CLUSTER", "INFO"]);
                let info = info.text();
                info.contains("cluster_state:ok")
                    && info.contains("cluster_slots_ok:16384")
                    && info.contains("cluster_known_nodes:3")
            })
        });
        cluster
    }

    /// The URLs of its nodes (`redis://127.0.0.1:PORT/`).
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    /// Its nodes.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// The node that serves `key`'s slot.
    pub fn node_of(&self, key: &str) -> &RedisServer {
        let slot = self.nodes[0].query(&["CLUSTER", "KEYSLOT", key]);
        let Reply::Int(slot) = slot else { panic!("CLUSTER KEYSLOT: {slot:?}") };
        let slots = self.nodes[0].query(&["CLUSTER", "SLOTS"]);
        for range in slots.items() {
            let [Reply::Int(first), Reply::Int(last), primary, ..] = range.items() else { continue };
            if (*first..=*last).contains(&slot) {
                let Reply::Int(port) = primary.items()[1] else { panic!("CLUSTER SLOTS: {range:?}") };
                return self.nodes.iter().find(|n| i64::from(n.port()) == port).expect("a node of the cluster");
            }
        }
        panic!("no node serves slot {slot}");
    }
}

/// The name of the service a [`RedisSentinel`] set monitors.
pub const SENTINEL_SERVICE: &str = "mcp";

/// A primary, its replica, and sentinels monitoring them (quorum: a majority), for failovers.
#[derive(Debug)]
pub struct RedisSentinel {
    servers: Vec<RedisServer>,
    sentinels: Vec<RedisServer>,
    _dir: TempDir,
}

impl RedisSentinel {
    /// Starts a primary, a replica of it, and `sentinels` sentinels (at least 1) that monitor
    /// them as [`SENTINEL_SERVICE`] (primary down after 1 s), and waits until the replica is in
    /// sync and every sentinel knows the replica and the other sentinels.
    pub fn start(sentinels: usize) -> RedisSentinel {
        let dir = TempDir::new("sentinel");
        let primary = RedisServer::start();
        let replica_of = primary.port().to_string();
        let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &replica_of]);
        let quorum = sentinels.max(1) / 2 + 1;
        let mut started = Vec::new();
        for i in 0..sentinels.max(1) {
            let conf = dir.path().join(format!("sentinel-{i}.conf"));
            let text = format!(
                "bind 127.0.0.1\nprotected-mode no\nsentinel monitor {SENTINEL_SERVICE} 127.0.0.1 {} {quorum}\n\
                 sentinel down-after-milliseconds {SENTINEL_SERVICE} 1000\n\
                 sentinel failover-timeout {SENTINEL_SERVICE} 10000\n",
                primary.port()
            );
            std::fs::write(&conf, text).expect("write a sentinel's configuration");
            let args = vec![
                conf.display().to_string(),
                "--sentinel".to_owned(),
                "--loglevel".to_owned(),
                "warning".to_owned(),
            ];
            started.push(RedisServer::start_on_a_free_port(args, None, free_port));
        }
        let set = RedisSentinel { servers: vec![primary, replica], sentinels: started, _dir: dir };
        set.wait_ready();
        set
    }

    /// The sentinels' URLs (`redis://127.0.0.1:PORT/`).
    pub fn sentinel_urls(&self) -> Vec<String> {
        self.sentinels.iter().map(RedisServer::url).collect()
    }

    /// The server the sentinels name primary now.
    pub fn primary(&self) -> &RedisServer {
        let port = self.named_primary(&self.sentinels[0]);
        self.servers.iter().find(|s| s.port() == port).expect("the primary is one of the set's servers")
    }

    /// The primary and the replica (in their first roles).
    pub fn servers(&self) -> &[RedisServer] {
        &self.servers
    }

    /// Kills server `index` of [`servers`](Self::servers) (SIGKILL).
    pub fn kill_server(&mut self, index: usize) {
        self.servers[index].kill();
    }

    /// Asks a sentinel for a failover (`SENTINEL FAILOVER`) and waits until every sentinel
    /// names the former replica primary, it answers as primary, and the former primary is its
    /// replica in sync. Returns the new primary's port.
    pub fn failover(&self) -> u16 {
        let old = self.named_primary(&self.sentinels[0]);
        let reply = self.sentinels[0].query(&["SENTINEL", "FAILOVER", SENTINEL_SERVICE]);
        assert_eq!(reply, Reply::Simple("OK".to_owned()), "SENTINEL FAILOVER");
        let new = self.servers.iter().map(RedisServer::port).find(|p| *p != old).expect("two servers");
        wait_until(Duration::from_secs(30), "the failover is done", || {
            self.sentinels.iter().all(|s| self.named_primary(s) == new)
                && self.role(new).first().map(Reply::text) == Some("master")
                && self.role(old).first().map(Reply::text) == Some("slave")
                && self.role(old).get(3).map(Reply::text) == Some("connected")
        });
        new
    }

    /// Switches the primary over by hand, without dropping anyone's connection (as
    /// [`failover`](Self::failover) does): the replica made primary (`REPLICAOF NO ONE`), the
    /// primary its replica, and every sentinel told to monitor the new primary (`SENTINEL
    /// REMOVE` and `MONITOR`). Clients still connected to the former primary meet `READONLY`.
    /// Waits as [`start`](Self::start) does; returns the new primary's port.
    pub fn switch_over_by_hand(&self) -> u16 {
        let old = self.named_primary(&self.sentinels[0]);
        let new = self.servers.iter().map(RedisServer::port).find(|p| *p != old).expect("two servers");
        let new_port = new.to_string();
        assert_eq!(query(new, &["REPLICAOF", "NO", "ONE"]).ok(), Some(Reply::Simple("OK".to_owned())));
        assert_eq!(query(old, &["REPLICAOF", "127.0.0.1", &new_port]).ok(), Some(Reply::Simple("OK".to_owned())));
        let quorum = (self.sentinels.len() / 2 + 1).to_string();
        for sentinel in &self.sentinels {
            sentinel.query(&["SENTINEL", "REMOVE", SENTINEL_SERVICE]);
            let monitor = sentinel.query(&["SENTINEL", "MONITOR", SENTINEL_SERVICE, "127.0.0.1", &new_port, &quorum]);
            assert_eq!(monitor, Reply::Simple("OK".to_owned()), "SENTINEL MONITOR");
            let set =
                ["SENTINEL", "SET", SENTINEL_SERVICE, "down-after-milliseconds", "1000", "failover-timeout", "10000"];
            assert_eq!(sentinel.query(&set), Reply::Simple("OK".to_owned()), "SENTINEL SET");
        }
        self.wait_ready();
        new
    }

    fn named_primary(&self, sentinel: &RedisServer) -> u16 {
        let reply = sentinel.query(&["SENTINEL", "GET-MASTER-ADDR-BY-NAME", SENTINEL_SERVICE]);
        reply.items().get(1).and_then(|p| p.text().parse().ok()).unwrap_or(0)
    }

    fn role(&self, port: u16) -> Vec<Reply> {
        query(port, &["ROLE"]).map(|r| r.items().to_vec()).unwrap_or_default()
    }

    /// Waits until the replica is in sync with the primary the sentinels name, and every
    /// sentinel knows it and the other sentinels.
    fn wait_ready(&self) {
        wait_until(Duration::from_secs(30), "the sentinel set is ready", || {
            let primary = self.named_primary(&self.sentinels[0]);
            let Some(replica) = self.servers.iter().map(RedisServer::port).find(|p| *p != primary) else {
                return false;
            };
            let replica_port = replica.to_string();
            let role = self.role(replica);
            let in_sync = role.first().map(Reply::text) == Some("slave")
                && role.get(2) == Some(&Reply::Int(i64::from(primary)))
                && role.get(3).map(Reply::text) == Some("connected");
            in_sync
                && self.sentinels.iter().all(|s| {
                    let replicas = s.query(&["SENTINEL", "REPLICAS", SENTINEL_SERVICE]);
                    let known = replicas.items().iter().any(|r| {
                        let fields = r.items();
                        let field = |name: &str| {
                            fields.chunks(2).find(|kv| kv[0].text() == name).map(|kv| kv[1].text().to_owned())
                        };
                        field("port").as_deref() == Some(replica_port.as_str())
                            && field("flags").as_deref() == Some("slave")
                            && field("master-link-status").as_deref() == Some("ok")
                    });
                    let others = s.query(&["SENTINEL", "SENTINELS", SENTINEL_SERVICE]).items().len();
                    known && others == self.sentinels.len() - 1
                })
        });
    }
}

/// The files of a throwaway CA and a server certificate it signed, made by `openssl`.
#[derive(Debug)]
struct TlsFiles {
    _dir: TempDir,
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

impl TlsFiles {
    fn make() -> TlsFiles {
        let dir = TempDir::new("tls");
        let at = |name: &str| dir.path().join(name);
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        openssl(
            dir.path(),
            &[
                &["req", "-x509"][..],
                &ec,
                &["-keyout", "ca.key", "-out", "ca.pem", "-days", "2"],
                &[
                    "-subj",
                    "/CN=mcp test CA",
                    "-addext",
                    "basicConstraints=critical,CA:TRUE",
                    "-addext",
                    "keyUsage=critical,keyCertSign,cRLSign",
                ],
            ]
            .concat(),
        );
        openssl(
            dir.path(),
            &[&["req"][..], &ec, &["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"]].concat(),
        );
        std::fs::write(
            at("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
             keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
        )
        .expect("write the certificate's extensions");
        openssl(
            dir.path(),
            &[
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
            ],
        );
        TlsFiles { ca: at("ca.pem"), cert: at("server.pem"), key: at("server.key"), _dir: dir }
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl").args(args).current_dir(dir).stdin(Stdio::null()).output();
    let output = output.unwrap_or_else(|e| panic!("cannot run `openssl` ({e}): install it for the TLS tests"));
    assert!(output.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// A directory of this test, removed when dropped.
#[derive(Debug)]
struct TempDir(PathBuf);

impl TempDir {
    fn new(what: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("mcp-redis-{what}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a temporary directory");
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A loopback port free now (the OS's choice).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("bind a free port").port()
}

/// A free port whose cluster bus port (+10000) is free too.
fn free_port_with_bus() -> u16 {
    loop {
        let port = free_port();
        if let Some(bus) = port.checked_add(10000)
            && TcpListener::bind(("127.0.0.1", bus)).is_ok()
        {
            return port;
        }
    }
}
