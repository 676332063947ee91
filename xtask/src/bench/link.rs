//! `xtask link-relay LISTEN UPSTREAM ONE_WAY_US`: a TCP relay that delays every byte by a fixed
//! time each way, so a benchmark sees a call's round trip over a network rather than over
//! loopback (where a few microseconds of any extra hop look like a large share).
//!
//! Each direction of each connection has a reader thread, which stamps what it reads with the
//! time it is due, and a writer thread, which sends it then; the order of bytes is kept, and a
//! chunk is never sent early. Threads (not tokio timers, whose granularity is a millisecond)
//! keep the delay within tens of microseconds of what was asked.

use std::io::{Read as _, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

/// Chunks in flight per direction, at most (a reader waits beyond).
const QUEUE: usize = 1024;

/// Runs the relay until it is killed.
pub fn relay(args: &[String]) -> Result<()> {
    let [listen, upstream, one_way_us] = args else {
        bail!("usage: xtask link-relay LISTEN UPSTREAM ONE_WAY_US");
    };
    let delay = Duration::from_micros(one_way_us.parse().context("ONE_WAY_US")?);
    let listener = TcpListener::bind(listen).with_context(|| format!("listening on {listen}"))?;
    for client in listener.incoming() {
        let client = client?;
        let server = match TcpStream::connect(upstream) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("link-relay: cannot reach {upstream}: {e}");
                continue;
            }
        };
        for stream in [&client, &server] {
            stream.set_nodelay(true)?;
        }
        pipe(client.try_clone()?, server.try_clone()?, delay);
        pipe(server, client, delay);
    }
    Ok(())
}

/// Copies `from` to `to`, each chunk `delay` after it was read.
fn pipe(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (tx, rx) = mpsc::sync_channel::<(Instant, Vec<u8>)>(QUEUE);
    thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send((Instant::now() + delay, buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = from.shutdown(Shutdown::Read);
    });
    thread::spawn(move || {
        for (due, chunk) in rx {
            let now = Instant::now();
            if due > now {
                thread::sleep(due - now);
            }
            if to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}
