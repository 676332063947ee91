//! What the tests of `mcp` share: the binary run with a deadline, the example servers (built
//! once, by the first test that needs them), the `everything` example served over HTTP on a
//! free port, and the official `server-everything` under `target/interop`.

#![allow(dead_code)] // each test file uses its part

use std::io::{BufRead as _, BufReader, Read as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long one run of `mcp` may take.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// The workspace's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// An example server of `mcp-examples`, built (with its siblings) the first time one is asked
/// for: `cargo test -p mcp-cli` does not build another package's examples.
pub fn example(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = Command::new(cargo)
            .current_dir(root())
            .args(["build", "-p", "mcp-examples", "--example", "everything", "--example", "stdio_server"])
            .status()
            .expect("running cargo build for the example servers");
        assert!(status.success(), "cargo build -p mcp-examples --example everything --example stdio_server failed");
        // target/debug/deps/<this test> -> target/debug/examples
        let exe = std::env::current_exe().unwrap();
        exe.parent().and_then(Path::parent).unwrap().join("examples")
    });
    let bin = dir.join(name);
    assert!(bin.exists(), "{} is missing", bin.display());
    bin
}

/// What a run of `mcp` printed, and how it ended.
#[derive(Debug)]
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The exit code.
    pub fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }

    /// Asserts the exit code, showing both outputs if it is another.
    #[track_caller]
    pub fn expect(self, code: i32) -> Run {
        assert_eq!(self.code(), code, "stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }

    /// stdout as JSON.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}

/// `mcp` with `args`, its stdout and stderr piped (so: plain output, no progress bar).
pub fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp"));
    command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).env_remove("MCP_CONFIG");
    command
}

/// Runs `mcp args...` to its end (at most [`DEADLINE`]).
pub fn mcp(args: &[&str]) -> Run {
    Live::start(args).finish()
}

/// A run of `mcp` in progress: its stderr read line by line as it comes.
pub struct Live {
    pub child: Child,
    stdout: std::thread::JoinHandle<String>,
    lines: mpsc::Receiver<String>,
    /// The stderr read so far.
    pub stderr: String,
}

impl Live {
    /// Starts `mcp args...`.
    pub fn start(args: &[&str]) -> Live {
        Live::spawn(command(args))
    }

    /// Starts `command` (made by [`command`]).
    pub fn spawn(mut command: Command) -> Live {
        let mut child = command.spawn().expect("starting mcp");
        let mut out = child.stdout.take().unwrap();
        let stdout = std::thread::spawn(move || {
            let mut text = String::new();
            out.read_to_string(&mut text).ok();
            text
        });
        let (tx, lines) = mpsc::channel();
        let err = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Live { child, stdout, lines, stderr: String::new() }
    }

    /// Reads stderr up to the first line starting with `prefix` (at most [`DEADLINE`]).
    pub fn wait_for(&mut self, prefix: &str) {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.stderr.push_str(&line);
                    self.stderr.push('\n');
                    if line.starts_with(prefix) {
                        return;
                    }
                }
                Err(e) => panic!("no line starting with {prefix:?} ({e}); stderr so far:\n{}", self.stderr),
            }
        }
    }

    /// Sends SIGINT (what Ctrl-C sends).
    pub fn interrupt(&self) {
        let status = Command::new("kill").args(["-INT", &self.child.id().to_string()]).status().unwrap();
        assert!(status.success());
    }

    /// Waits for the end (at most `limit`, else it is killed and the test fails).
    pub fn finish_within(mut self, limit: Duration) -> Run {
        let status = wait(&mut self.child, limit);
        let mut stderr = self.stderr;
        for line in self.lines.iter() {
            stderr.push_str(&line);
            stderr.push('\n');
        }
        Run { status, stdout: self.stdout.join().unwrap(), stderr }
    }

    /// Waits for the end (at most [`DEADLINE`]).
    pub fn finish(self) -> Run {
        self.finish_within(DEADLINE)
    }
}

/// Waits for `child` at most `limit` (polling its status), else kills it and fails.
pub fn wait(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            panic!("mcp did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The `everything` example serving Streamable HTTP on a free local port; killed when dropped.
pub struct Everything {
    child: Child,
    pub url: String,
    /// Its stderr (logs at debug level).
    log: PathBuf,
}

impl Everything {
    /// Starts it and waits (at most 30 s) until it accepts connections.
    pub fn start() -> Everything {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let addr = format!("127.0.0.1:{port}");
        let log = std::env::temp_dir().join(format!("mcp-cli-everything-{port}.log"));
        let child = Command::new(example("everything"))
            .args(["--http", &addr])
            .env("RUST_LOG", "debug")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let server = Everything { child, url: format!("http://{addr}/mcp"), log };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(&addr).is_err() {
            assert!(Instant::now() < deadline, "everything did not listen on {addr}");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }
}

impl Everything {
    /// Waits (at most 10 s, polling its log) until `times` lines of the server's log hold
    /// each of `fragments`.
    pub fn wait_for_log(&self, fragments: &[&str], times: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            if log.lines().filter(|l| fragments.iter().all(|f| l.contains(f))).count() >= times {
                return;
            }
            assert!(Instant::now() < deadline, "the server did not log {fragments:?} {times} times:\n{log}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
        std::fs::remove_file(&self.log).ok();
    }
}

/// The official `server-everything` run by Node, both installed by `cargo xtask interop`
/// under `target/interop`: its command line (`node index.js stdio`).
pub fn server_everything() -> Vec<String> {
    let interop = root().join("target/interop");
    let node = ["node/node_modules/node/bin/node", "node/node_modules/.bin/node"]
        .iter()
        .map(|p| interop.join(p))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no Node under {}: run `cargo xtask interop` once", interop.display()));
    let script = interop.join("ts/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(script.is_file(), "{} is missing: run `cargo xtask interop` once", script.display());
    vec![node.display().to_string(), script.display().to_string(), "stdio".to_owned()]
}
