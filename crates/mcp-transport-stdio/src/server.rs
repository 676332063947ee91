//! The server side: our own stdin and stdout.
//!
//! When stdin and stdout are pipes (as when a client spawned us), they are switched to
//! non-blocking mode and driven by tokio's reactor directly: no blocking thread pool, no extra
//! context switches per message. Otherwise (a terminal, a file) tokio's standard streams are
//! used.

use std::io;
use std::os::fd::AsFd as _;
use std::pin::Pin;
use std::task::{Context, Poll};

use mcp_jsonrpc::Transport;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::unix::pipe;

use crate::lines::{DEFAULT_MAX_LINE, LineRead, LineWrite};

/// Our stdin as a byte stream.
#[derive(Debug)]
pub enum Stdin {
    /// A pipe in non-blocking mode.
    Pipe(pipe::Receiver),
    /// Anything else, through tokio's blocking pool.
    Std(tokio::io::Stdin),
}

/// Our stdout as a byte stream.
#[derive(Debug)]
pub enum Stdout {
    /// A pipe in non-blocking mode.
    Pipe(pipe::Sender),
    /// Anything else, through tokio's blocking pool.
    Std(tokio::io::Stdout),
}

impl Stdin {
    /// Opens stdin, non-blocking when it is a pipe. Needs a tokio runtime with I/O enabled.
    pub fn open() -> Stdin {
        let pipe = io::stdin().as_fd().try_clone_to_owned().and_then(pipe::Receiver::from_owned_fd);
        match pipe {
            Ok(p) => Stdin::Pipe(p),
            Err(_) => Stdin::Std(tokio::io::stdin()),
        }
    }
}

impl Stdout {
    /// Opens stdout, non-blocking when it is a pipe. Needs a tokio runtime with I/O enabled.
    pub fn open() -> Stdout {
        let pipe = io::stdout().as_fd().try_clone_to_owned().and_then(pipe::Sender::from_owned_fd);
        match pipe {
            Ok(p) => Stdout::Pipe(p),
            Err(_) => Stdout::Std(tokio::io::stdout()),
        }
    }
}

impl AsyncRead for Stdin {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stdin::Pipe(p) => Pin::new(p).poll_read(cx, buf),
            Stdin::Std(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stdout {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stdout::Pipe(p) => Pin::new(p).poll_write(cx, buf),
            Stdout::Std(s) => Pin::new(s).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stdout::Pipe(p) => Pin::new(p).poll_flush(cx),
            Stdout::Std(s) => Pin::new(s).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stdout::Pipe(p) => Pin::new(p).poll_shutdown(cx),
            Stdout::Std(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// The server side of stdio: reads requests from stdin, writes to stdout.
#[derive(Debug)]
pub struct StdioTransport {
    read: LineRead<Stdin>,
    write: LineWrite<Stdout>,
}

impl StdioTransport {
    /// Our stdin and stdout, with the default line limit ([`DEFAULT_MAX_LINE`]).
    pub fn new() -> Self {
        Self::with_max_line(DEFAULT_MAX_LINE)
    }

    /// Our stdin and stdout, with lines of at most `max_line` bytes.
    pub fn with_max_line(max_line: usize) -> Self {
        StdioTransport { read: LineRead::new(Stdin::open(), max_line), write: LineWrite::new(Stdout::open()) }
    }

    /// Whether stdin and stdout are driven as non-blocking pipes.
    pub fn is_nonblocking(&self) -> bool {
        matches!(self.read.get_ref(), Stdin::Pipe(_))
    }
}

impl Default for StdioTransport {
    fn default() -> Self {
        Self::new()
    }
}

impl Transport for StdioTransport {
    type Read = LineRead<Stdin>;
    type Write = LineWrite<Stdout>;
    fn split(self) -> (Self::Read, Self::Write) {
        (self.read, self.write)
    }
}

/// Any reader and writer as a newline-delimited transport (a socket, a pair of pipes).
#[derive(Debug)]
pub struct StreamTransport<R, W> {
    read: LineRead<R>,
    write: LineWrite<W>,
}

impl<R, W> StreamTransport<R, W> {
    /// Frames `read` and `write` as newline-delimited JSON, with lines of at most `max_line`.
    pub fn new(read: R, write: W, max_line: usize) -> Self {
        StreamTransport { read: LineRead::new(read, max_line), write: LineWrite::new(write) }
    }
}

impl<R, W> Transport for StreamTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Read = LineRead<R>;
    type Write = LineWrite<W>;
    fn split(self) -> (Self::Read, Self::Write) {
        (self.read, self.write)
    }
}
