//! The stdio line framer (`mcp_transport_stdio::LineRead`).

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

use mcp_jsonrpc::TransportRead;
use mcp_jsonrpc::transport::ReadError;
use mcp_transport_stdio::LineRead;
use tokio::io::{AsyncRead, ReadBuf};

/// The first byte picks the maximum line length (1 to 64 bytes, or 64 KiB), the second how the
/// rest is cut into reads; the rest is the stream. The frames are those of a reference split
/// of the whole stream at its newlines, whatever the reads: each line without its `\n` (and a
/// `\r` before it), blank lines skipped, a line over the limit reported as oversized, one
/// that is not UTF-8 as such, and a last line without its newline as a frame; no frame is over
/// the limit.
pub fn lines(data: &[u8]) {
    let [max, seed, stream @ ..] = data else { return };
    let max = if *max >= 64 { 64 * 1024 } else { usize::from(*max) + 1 };
    let chunks = cut(stream, *seed);
    let got = read_all(&chunks, max);
    for frame in got.iter().flatten() {
        assert!(frame.len() <= max, "a frame of {} bytes over the limit {max}", frame.len());
    }
    assert_eq!(got, reference(stream, max), "reads of {:?}", chunks.iter().map(|c| c.len()).collect::<Vec<_>>());
}

/// What one read of the framer gave: a frame, or the kind of error.
type Outcome = Result<Vec<u8>, &'static str>;

/// Cuts `stream` into chunks whose lengths (1 to 16 bytes, or the whole rest) follow from
/// `seed`: the same seed always cuts the same way.
pub(crate) fn cut(stream: &[u8], seed: u8) -> Vec<&[u8]> {
    let mut state = u32::from(seed).wrapping_mul(2_654_435_761).wrapping_add(1);
    let mut chunks = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let len = match (state >> 16) % 18 {
            17 => rest.len(),
            n => (n as usize + 1).min(rest.len()),
        };
        let (chunk, tail) = rest.split_at(len);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// A reader that hands out one chunk per read, always ready.
struct Chunks(VecDeque<Vec<u8>>);

impl AsyncRead for Chunks {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if let Some(mut chunk) = self.0.pop_front() {
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            if n < chunk.len() {
                self.0.push_front(chunk.split_off(n));
            }
        }
        Poll::Ready(Ok(()))
    }
}

fn read_all(chunks: &[&[u8]], max: usize) -> Vec<Outcome> {
    let mut reader = LineRead::new(Chunks(chunks.iter().map(|c| c.to_vec()).collect()), max);
    let mut cx = Context::from_waker(Waker::noop());
    let mut out = Vec::new();
    loop {
        let next = match pin!(reader.read()).poll(&mut cx) {
            Poll::Ready(next) => next,
            Poll::Pending => panic!("the framer waits on a reader that is always ready"),
        };
        match next {
            None => return out,
            Some(Ok(inbound)) => out.push(Ok(inbound.frame.to_vec())),
            Some(Err(ReadError::Oversized { limit })) => {
                assert_eq!(limit, max);
                out.push(Err("oversized"));
            }
            Some(Err(ReadError::InvalidUtf8)) => out.push(Err("invalid UTF-8")),
            Some(Err(e)) => panic!("unexpected error {e}"),
        }
        assert!(out.len() <= chunks.iter().map(|c| c.len()).sum::<usize>() + 1, "more outcomes than bytes");
    }
}

fn reference(stream: &[u8], max: usize) -> Vec<Outcome> {
    let mut out = Vec::new();
    let mut lines: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    let last = lines.pop().unwrap_or_default();
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        out.extend(outcome(line, max));
    }
    out.extend(outcome(last, max));
    out
}

fn outcome(line: &[u8], max: usize) -> Option<Outcome> {
    if line.len() > max {
        Some(Err("oversized"))
    } else if line.iter().all(u8::is_ascii_whitespace) {
        None
    } else if std::str::from_utf8(line).is_err() {
        Some(Err("invalid UTF-8"))
    } else {
        Some(Ok(line.to_vec()))
    }
}
