//! What the tests of the `mcp` binary share: running it with a deadline, our example servers
//! (built by cargo into this target directory), the official server-everything under
//! `target/interop`, and an HTTP server on a free port.

#![allow(dead_code)]

use std::io::Read as _;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long one run of `mcp` may take.
const DEADLINE: Duration = Duration::from_secs(180);

/// The workspace's root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// How `mcp` ended.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `mcp` with `args` (stdin empty, not a terminal), killed after [`DEADLINE`].
pub fn mcp(args: &[&str]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read both pipes on threads, so a full pipe never stalls the child.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).map(|_| s)
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).map(|_| s)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("mcp {args:?} did not end within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap().unwrap(),
        stderr: err.join().unwrap().unwrap(),
    }
}

/// The example `name` of `mcp-examples` (`stdio_server`, `everything`), built once per test
/// run by cargo into this target directory.
pub fn example(name: &str) -> PathBuf {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "mcp-examples", "--example", "stdio_server", "--example", "everything"])
            .current_dir(workspace())
            .status()
            .map_err(|e| e.to_string())?;
        if status.success() { Ok(()) } else { Err(format!("cargo build of the examples: {status}")) }
    });
    built.as_ref().unwrap();
    // target/debug/deps/<this test> -> target/debug/examples/<name>
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(|d| d.parent()).unwrap().join("examples").join(name);
    assert!(bin.exists(), "{} is missing", bin.display());
    bin
}

/// Node and the entry point of the official `@modelcontextprotocol/server-everything`,
/// installed under `target/interop` (`cargo xtask interop` installs them).
pub fn server_everything() -> (PathBuf, PathBuf) {
    let interop = workspace().join("target/interop");
    let node = interop.join("node/node_modules/node/bin/node");
    let package = interop.join("ts/node_modules/@modelcontextprotocol/server-everything");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(package.join("package.json")).unwrap_or_else(|e| {
            panic!("{}: {e}: run `cargo xtask interop` to install the official servers", package.display())
        }))
        .unwrap();
    let bin = manifest["bin"].as_object().and_then(|b| b.values().next()).and_then(|b| b.as_str()).unwrap();
    assert!(node.is_file(), "{} is missing: run `cargo xtask interop`", node.display());
    (node, package.join(bin))
}

/// A server run as a child, listening on a free local port (its command line ends with
/// `ADDR`); killed on drop.
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    /// Starts `program args.. 127.0.0.1:PORT` and waits until the port accepts connections.
    pub fn start(program: &Path, args: &[&str]) -> HttpServer {
        let port = free_port();
        let mut command = Command::new(program);
        command.args(args).arg(format!("127.0.0.1:{port}"));
        HttpServer::spawn(command, port)
    }

    /// Starts `command`, which listens on `port`, and waits until the port accepts connections.
    pub fn spawn(mut command: Command, port: u16) -> HttpServer {
        let addr = format!("127.0.0.1:{port}");
        let child = command.stdin(Stdio::null()).stdout(Stdio::null()).spawn().unwrap();
        let server = HttpServer { child, url: format!("http://{addr}/mcp") };
        let started = Instant::now();
        while TcpStream::connect(&addr).is_err() {
            assert!(started.elapsed() < Duration::from_secs(30), "{command:?} did not listen on {addr}");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }
}

/// A local port nobody listens on (now).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
