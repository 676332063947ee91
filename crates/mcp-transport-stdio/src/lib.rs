//! The stdio transport of MCP: newline-delimited JSON over stdin and stdout.
//!
//! - Server side: [`StdioTransport`] reads our stdin and writes our stdout (non-blocking when
//!   they are pipes). Only protocol messages go to stdout; log to stderr.
//! - Client side: [`ChildProcess::spawn`] runs a server as a child process and returns the
//!   transport to it, with a shutdown sequence that never leaves a zombie.
//! - [`StreamTransport`] frames any reader and writer the same way.
//!
//! Lines longer than the limit (default [`DEFAULT_MAX_LINE`], 4 MiB, for a server;
//! [`DEFAULT_CHILD_MAX_LINE`], 32 MiB, for a client reading its child) and lines that are not
//! UTF-8 are skipped and reported; the stream goes on.
//!
//! ```no_run
//! use std::sync::Arc;
//! use mcp_jsonrpc::{Peer, PeerConfig, Router};
//! use mcp_transport_stdio::{ChildCommand, ChildProcess, StdioTransport};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // A server: serve a router on our stdin/stdout until stdin closes.
//! let peer = Peer::spawn(StdioTransport::new(), Arc::new(Router::new()), PeerConfig::default());
//! peer.closed().await;
//!
//! // A client: run a server as a child process.
//! let (transport, child) = ChildProcess::spawn(ChildCommand::new("my-server").arg("--stdio"))?;
//! let peer = Peer::spawn(transport, Arc::new(Router::new()), PeerConfig::default());
//! // ... calls ...
//! peer.close();
//! let ended = child.shutdown().await?;
//! println!("server exited: {:?}", ended.status);
//! # Ok(()) }
//! ```

mod child;
mod lines;
mod server;

pub use child::{
    ChildCommand, ChildError, ChildProcess, ChildStdinWrite, ChildTransport, Shutdown, ShutdownStep, StderrMode,
};
pub use lines::{DEFAULT_CHILD_MAX_LINE, DEFAULT_MAX_LINE, LineRead, LineWrite};
pub use server::{Stdin, StdioTransport, Stdout, StreamTransport};
