//! The client side: a server run as a child process, spoken to over its stdin and stdout.
//!
//! [`ChildProcess::spawn`] starts the program and returns the transport and a handle on the
//! process. The handle shuts the child down the way the specification asks: close its stdin,
//! wait; send SIGTERM after a grace period, wait; send SIGKILL after another; and always reap
//! it, so no zombie is left. The child's stderr is forwarded to ours (or to `tracing`, or
//! dropped) and its last lines are kept, so that a child that dies early can be reported with
//! its exit status and what it said.

use mcp_jsonrpc::sync::MutexExt as _;
use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::io;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_jsonrpc::Transport;
use mcp_jsonrpc::transport::{Outbound, TransportWrite};
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::lines::{DEFAULT_CHILD_MAX_LINE, LineRead, LineWrite};

/// Where the child's stderr goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StderrMode {
    /// Copied to our stderr, line by line (and its tail kept).
    #[default]
    Forward,
    /// Logged with `tracing` at `info`, target `mcp_transport_stdio::child` (and its tail kept).
    Trace,
    /// Only its tail is kept.
    Capture,
    /// Inherited: the child writes to our stderr directly; nothing is kept.
    Inherit,
}

/// How to run a server as a child process.
#[derive(Debug, Clone)]
pub struct ChildCommand {
    program: OsString,
    args: Vec<OsString>,
    env: BTreeMap<OsString, OsString>,
    env_clear: bool,
    cwd: Option<PathBuf>,
    stderr: StderrMode,
    max_line: usize,
    grace: Duration,
    stderr_tail_lines: usize,
    process_group: bool,
}

impl ChildCommand {
    /// Runs `program` (looked up in `PATH`).
    pub fn new(program: impl Into<OsString>) -> Self {
        ChildCommand {
            program: program.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            env_clear: false,
            cwd: None,
            stderr: StderrMode::default(),
            max_line: DEFAULT_CHILD_MAX_LINE,
            grace: Duration::from_secs(2),
            stderr_tail_lines: 50,
            process_group: false,
        }
    }
    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }
    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }
    /// Sets an environment variable.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }
    /// Starts from an empty environment instead of ours.
    pub fn env_clear(mut self) -> Self {
        self.env_clear = true;
        self
    }
    /// Sets the working directory.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }
    /// Sets where stderr goes.
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }
    /// Sets the maximum length of a message line from the child (default
    /// [`DEFAULT_CHILD_MAX_LINE`], 32 MiB).
    pub fn max_line(mut self, bytes: usize) -> Self {
        self.max_line = bytes;
        self
    }
    /// Sets the grace period of each shutdown step (default 2 s).
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }
    /// Whether the child runs in a process group of its own (default: no, it shares ours).
    ///
    /// On a terminal, Ctrl-C sends SIGINT to the whole foreground process group: a child in
    /// ours dies at once, before the client can cancel its request
    /// (`notifications/cancelled`) and shut it down as the specification asks. A child in its
    /// own group gets no signal from the terminal, only what the client sends it. Unix only;
    /// elsewhere it does nothing.
    pub fn process_group(mut self, own: bool) -> Self {
        self.process_group = own;
        self
    }
}

/// Why the child could not be started or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChildError {
    /// The program could not be started.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// Waiting for or signalling the child failed.
    #[error("child process: {0}")]
    Io(#[from] io::Error),
}

/// The child's stdin as the writing half of the transport; closing it is the first step of the
/// shutdown sequence.
#[derive(Debug)]
pub struct ChildStdinWrite {
    stdin: Arc<tokio::sync::Mutex<Option<LineWrite<ChildStdin>>>>,
}

impl TransportWrite for ChildStdinWrite {
    async fn write(&mut self, frames: &[Outbound]) -> io::Result<()> {
        match self.stdin.lock().await.as_mut() {
            Some(w) => w.write(frames).await,
            None => Err(io::Error::from(io::ErrorKind::BrokenPipe)),
        }
    }
    async fn close(&mut self) -> io::Result<()> {
        if let Some(mut w) = self.stdin.lock().await.take() {
            w.close().await?;
        }
        Ok(())
    }
}

/// The transport to a child process.
#[derive(Debug)]
pub struct ChildTransport {
    read: LineRead<ChildStdout>,
    write: ChildStdinWrite,
}

impl Transport for ChildTransport {
    type Read = LineRead<ChildStdout>;
    type Write = ChildStdinWrite;
    fn split(self) -> (Self::Read, Self::Write) {
        (self.read, self.write)
    }
}

/// A running child process.
#[derive(Debug)]
pub struct ChildProcess {
    child: Child,
    pid: Option<u32>,
    program: String,
    stdin: Arc<tokio::sync::Mutex<Option<LineWrite<ChildStdin>>>>,
    tail: Arc<Mutex<VecDeque<String>>>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    grace: Duration,
}

impl ChildProcess {
    /// Starts the child; returns the transport to it and the handle on it.
    pub fn spawn(command: ChildCommand) -> Result<(ChildTransport, ChildProcess), ChildError> {
        let program = command.program.to_string_lossy().into_owned();
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args).stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
        if command.env_clear {
            cmd.env_clear();
        }
        cmd.envs(&command.env);
        if let Some(dir) = &command.cwd {
            cmd.current_dir(dir);
        }
        cmd.stderr(if command.stderr == StderrMode::Inherit { Stdio::inherit() } else { Stdio::piped() });
        #[cfg(unix)]
        if command.process_group {
            cmd.process_group(0);
        }
        let mut child = cmd.spawn().map_err(|source| ChildError::Spawn { program: program.clone(), source })?;
        let pid = child.id();
        let missing = || ChildError::Io(io::Error::other("child stdio was not piped"));
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let mut stderr_task = None;
        if let Some(stderr) = child.stderr.take() {
            let tail = tail.clone();
            let mode = command.stderr;
            let keep = command.stderr_tail_lines;
            let name = program.clone();
            stderr_task = Some(tokio::spawn(async move {
                let mut reader = BufReader::new(stderr);
                let mut bytes = Vec::new();
                // Read to the end whatever it holds (not UTF-8, endless lines): a reader that
                // stopped would close the pipe, and the child's next write to stderr would
                // kill it (SIGPIPE).
                while let Ok(true) = read_capped_line(&mut reader, &mut bytes, MAX_STDERR_LINE).await {
                    let line = String::from_utf8_lossy(bytes.strip_suffix(b"\r").unwrap_or(&bytes)).into_owned();
                    match mode {
                        StderrMode::Forward => eprintln!("[{name}] {line}"),
                        StderrMode::Trace => {
                            tracing::info!(target: "mcp_transport_stdio::child", program = %name, "{line}")
                        }
                        StderrMode::Capture | StderrMode::Inherit => {}
                    }
                    let mut tail = tail.lock_unpoisoned();
                    if tail.len() == keep {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            }));
        }
        let stdin = Arc::new(tokio::sync::Mutex::new(Some(LineWrite::new(stdin))));
        let transport = ChildTransport {
            read: LineRead::new(stdout, command.max_line),
            write: ChildStdinWrite { stdin: stdin.clone() },
        };
        Ok((transport, ChildProcess { child, pid, program, stdin, tail, stderr_task, grace: command.grace }))
    }

    /// The child's process id (`None` once it was reaped).
    pub fn id(&self) -> Option<u32> {
        self.pid
    }

    /// How long each step of [`shutdown`](Self::shutdown) waits ([`ChildCommand::grace`]).
    pub fn grace(&self) -> Duration {
        self.grace
    }

    /// The program's name.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The last lines the child wrote to stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.tail.lock_unpoisoned().iter().cloned().collect()
    }

    /// The exit status, if the child has exited (it is reaped then).
    pub fn try_exit_status(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Waits for the child to exit by itself.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// Waits for the child to exit by itself and for its stderr to end (at most one grace
    /// period after the exit), then reports its status and the tail of its stderr.
    pub async fn wait_with_report(&mut self) -> io::Result<(ExitStatus, String)> {
        let status = self.child.wait().await?;
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(self.grace, task).await;
        }
        Ok((status, self.exit_report(status)))
    }

    /// A report of an exited child: its status and the tail of its stderr.
    pub fn exit_report(&self, status: ExitStatus) -> String {
        let tail = self.stderr_tail();
        if tail.is_empty() {
            format!("`{}` exited ({status})", self.program)
        } else {
            format!("`{}` exited ({status}); its stderr ended with:\n{}", self.program, tail.join("\n"))
        }
    }

    /// Stops the child: closes its stdin and waits; then SIGTERM and waits; then SIGKILL. The
    /// child is always reaped. Returns how it ended.
    pub async fn shutdown(mut self) -> Result<Shutdown, ChildError> {
        // A write the child does not read holds stdin (a full pipe): then the grace is spent
        // waiting for it, and the child gets SIGTERM with its stdin still open.
        let closed = tokio::time::timeout(self.grace, async {
            if let Some(mut w) = self.stdin.lock().await.take() {
                let _ = w.close().await;
            }
        })
        .await
        .is_ok();
        if closed && let Ok(status) = tokio::time::timeout(self.grace, self.child.wait()).await {
            return Ok(Shutdown { status: status?, step: ShutdownStep::StdinClosed });
        }
        self.terminate().await
    }

    /// Stops a child that does not read its stdin (its pipe full) without waiting for it to:
    /// SIGTERM and waits; then SIGKILL. The second half of [`shutdown`](Self::shutdown). The
    /// child is always reaped.
    pub async fn terminate(mut self) -> Result<Shutdown, ChildError> {
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()).and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        if let Ok(status) = tokio::time::timeout(self.grace, self.child.wait()).await {
            return Ok(Shutdown { status: status?, step: ShutdownStep::Terminated });
        }
        self.child.start_kill()?;
        let status = self.child.wait().await?;
        Ok(Shutdown { status, step: ShutdownStep::Killed })
    }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shutdown {
    /// Its exit status.
    pub status: ExitStatus,
    /// The step that ended it.
    pub step: ShutdownStep,
}

/// The step of the shutdown sequence that ended a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownStep {
    /// It exited after its stdin was closed.
    StdinClosed,
    /// It exited after SIGTERM.
    Terminated,
    /// It was killed with SIGKILL.
    Killed,
}

/// The longest stderr line kept; the rest of a longer line is read and dropped.
const MAX_STDERR_LINE: usize = 16 * 1024;

/// Reads the next line of `reader` into `line`, without its newline, keeping at most `max`
/// bytes of it (the rest of a longer line is read and dropped): `false` at the end of the
/// stream.
async fn read_capped_line<R: AsyncBufRead + Unpin>(reader: &mut R, line: &mut Vec<u8>, max: usize) -> io::Result<bool> {
    line.clear();
    let mut any = false;
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(any);
        }
        any = true;
        let newline = memchr::memchr(b'\n', chunk);
        let end = newline.unwrap_or(chunk.len());
        let room = max.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..end.min(room)]);
        reader.consume(newline.map_or(end, |i| i + 1));
        if newline.is_some() {
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set in the helper process of [`a_child_in_its_own_group_survives_sigint_to_ours`].
    const HELPER: &str = "MCP_STDIO_PROCESS_GROUP_HELPER";

    /// Whether process `pid` runs (exists and is not a zombie).
    fn running(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // `pid (comm) S ...`: the state follows the last `)`.
            Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
            Err(_) => false,
        }
    }

    /// The helper: starts `sleep` twice, once in our group and once in its own, prints both
    /// ids, and waits for the SIGINT the test sends our group (then exits 130, as a shell
    /// reports death by SIGINT).
    ///
    /// It catches SIGINT before it starts the children: a process started in the background
    /// by a shell without job control inherits SIGINT ignored, and so would its children,
    /// which would then survive the test's Ctrl-C; a caught signal is reset to its default
    /// action in a child at `exec`, as a terminal's foreground job has it.
    fn helper() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).unwrap();
            let sleep = || ChildCommand::new("sleep").arg("60").stderr(StderrMode::Capture);
            let (_t1, shared) = ChildProcess::spawn(sleep()).unwrap();
            let (_t2, own) = ChildProcess::spawn(sleep().process_group(true)).unwrap();
            println!("shared {} own {}", shared.id().unwrap(), own.id().unwrap());
            tokio::select! {
                _ = interrupt.recv() => std::process::exit(130),
                () = tokio::time::sleep(Duration::from_secs(60)) => {}
            }
        });
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_child_in_its_own_group_survives_sigint_to_ours() {
        use std::io::BufRead as _;
        use std::os::unix::process::CommandExt as _;
        if std::env::var_os(HELPER).is_some() {
            return helper();
        }
        // The helper runs in a group of its own (as a shell's foreground job does), so that
        // the SIGINT sent to it reaches neither this test nor cargo.
        let mut parent = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child::tests::a_child_in_its_own_group_survives_sigint_to_ours", "--nocapture"])
            .env(HELPER, "1")
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(parent.stdout.take().unwrap()).lines();
        let ids = lines.find_map(|l| l.ok().filter(|l| l.starts_with("shared "))).expect("the helper's child ids");
        let ids: Vec<u32> = ids.split(' ').filter_map(|w| w.parse().ok()).collect();
        let (shared, own) = (ids[0], ids[1]);
        let group = rustix::process::Pid::from_raw(parent.id() as i32).unwrap();
        let own_pid = rustix::process::Pid::from_raw(own as i32).unwrap();
        assert_eq!(rustix::process::getpgid(Some(own_pid)).unwrap(), own_pid, "the child leads its own group");
        // Ctrl-C on a terminal: SIGINT to the foreground group.
        rustix::process::kill_process_group(group, rustix::process::Signal::INT).unwrap();
        let status = parent.wait().unwrap();
        assert!(!status.success(), "the helper died of SIGINT: {status:?}");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while running(shared) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!running(shared), "the child in the parent's group got SIGINT too");
        assert!(running(own), "the child in its own group got no SIGINT");
        rustix::process::kill_process(own_pid, rustix::process::Signal::KILL).unwrap();
    }

    #[tokio::test]
    async fn stderr_lines_are_capped_and_any_bytes_are_read() {
        let mut input: &[u8] = b"a\r\n\xff\xfe\nxxxxxxxxxx\nlast";
        let mut line = Vec::new();
        let mut lines = Vec::new();
        while read_capped_line(&mut input, &mut line, 4).await.unwrap() {
            lines.push(line.clone());
        }
        assert_eq!(lines, [b"a\r".to_vec(), b"\xff\xfe".to_vec(), b"xxxx".to_vec(), b"last".to_vec()]);
    }
}
