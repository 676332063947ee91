//! A real `redis-server` for a test: started on a free loopback port, without persistence,
//! killed when dropped. It must be installed (`cargo xtask ci` installs it from the system's
//! packages; by hand: `apt-get install redis-server`): a test that needs Redis fails when it is
//! missing rather than passing without it.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` process of this test.
#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts `redis-server` (from `PATH`, or `$REDIS_SERVER`) on a free port and waits until
    /// it answers `PING`.
    pub fn start() -> RedisServer {
        let mut server = RedisServer { port: free_port(), child: None };
        server.spawn();
        server
    }

    /// The URL to connect to it (`redis://127.0.0.1:PORT/`).
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
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

    /// Starts it again on the same port (empty: nothing is persisted), after [`kill`](Self::kill).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Sends one command (inline form) and returns the raw reply's first line: for tests
    /// that look at Redis directly (`DBSIZE`, `TTL key`, ...).
    pub fn command(&self, command: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect to redis-server");
        stream.set_read_timeout(Some(Duration::from_secs(5))).expect("set a read timeout");
        stream.write_all(format!("{command}\r\n").as_bytes()).expect("write to redis-server");
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).expect("read from redis-server");
        line.trim_end().to_owned()
    }

    fn spawn(&mut self) {
        let program = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let port = self.port.to_string();
        let child = Command::new(&program)
            .args(["--port", &port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--protected-mode", "no", "--loglevel", "warning"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start `{program}` ({e}): install Redis (`apt-get install redis-server`)")
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if self.ping() {
                return;
            }
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                let mut err = String::new();
                if let Some(mut stderr) = self.child.as_mut().and_then(|c| c.stderr.take()) {
                    let _ = stderr.read_to_string(&mut err);
                }
                panic!("redis-server exited ({status}): {err}");
            }
            assert!(Instant::now() < deadline, "redis-server did not answer PING within 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn ping(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else { return false };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        if stream.write_all(b"PING\r\n").is_err() {
            return false;
        }
        let mut reply = [0u8; 7];
        stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A loopback port free now (the OS's choice).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("bind a free port").port()
}
