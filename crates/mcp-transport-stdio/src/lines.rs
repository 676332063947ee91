//! Newline-delimited framing over any byte stream, with a bound on the line length.
//!
//! [`LineRead`] yields one frame per line. A line longer than the limit is never buffered
//! whole: its bytes are dropped as they arrive and the reader reports
//! [`ReadError::Oversized`] once its newline comes, then goes on with the next line. A line
//! that is not UTF-8 is reported as [`ReadError::InvalidUtf8`]. Blank lines are skipped.
//!
//! [`LineWrite`] writes every frame it is given, each followed by `\n`, with one write.

use std::io;

use bytes::BytesMut;
use mcp_jsonrpc::transport::{Inbound, Outbound, ReadError, TransportRead, TransportWrite};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};

/// The default maximum length of one message line a server reads: 4 MiB.
pub const DEFAULT_MAX_LINE: usize = 4 * 1024 * 1024;

/// The default maximum length of one message line a client reads from its child server:
/// 32 MiB. The Skills extension makes hosts accept a skill of 16 MiB, which one
/// `resources/read` may carry as a base64 blob (21.3 MiB of JSON) or as JSON text, whose
/// escapes grow it.
pub const DEFAULT_CHILD_MAX_LINE: usize = 32 * 1024 * 1024;

const CHUNK: usize = 64 * 1024;

/// Reads newline-delimited frames from a byte stream.
#[derive(Debug)]
pub struct LineRead<R> {
    inner: R,
    buf: BytesMut,
    /// Bytes of `buf` already searched for a newline.
    scanned: usize,
    max: usize,
    /// Inside an oversized line: dropping bytes up to its newline.
    discarding: bool,
    eof: bool,
}

impl<R> LineRead<R> {
    /// Reads lines of at most `max_line` bytes from `inner`.
    pub fn new(inner: R, max_line: usize) -> Self {
        LineRead {
            inner,
            buf: BytesMut::with_capacity(CHUNK),
            scanned: 0,
            max: max_line.max(1),
            discarding: false,
            eof: false,
        }
    }
}

impl<R> LineRead<R> {
    /// The underlying stream.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> TransportRead for LineRead<R> {
    async fn read(&mut self) -> Option<Result<Inbound, ReadError>> {
        loop {
            if let Some(pos) = memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                let end = self.scanned + pos;
                let mut line = self.buf.split_to(end + 1).freeze();
                self.scanned = 0;
                if std::mem::take(&mut self.discarding) {
                    return Some(Err(ReadError::Oversized { limit: self.max }));
                }
                line.truncate(end);
                if line.last() == Some(&b'\r') {
                    line.truncate(line.len() - 1);
                }
                if line.len() > self.max {
                    return Some(Err(ReadError::Oversized { limit: self.max }));
                }
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if std::str::from_utf8(&line).is_err() {
                    return Some(Err(ReadError::InvalidUtf8));
                }
                return Some(Ok(line.into()));
            }
            self.scanned = self.buf.len();
            // A `\r` at the end may be the one before the newline, which is not counted.
            let pending = self.buf.len() - usize::from(self.buf.last() == Some(&b'\r'));
            if pending > self.max {
                // Too long: drop what came so far and the rest of the line as it arrives.
                self.buf.clear();
                self.scanned = 0;
                self.discarding = true;
            }
            if self.eof {
                if self.discarding || self.buf.len() > self.max {
                    // The end of the oversized line came since the last clearing: drop it too,
                    // or the next read would give it as a line of its own.
                    self.discarding = false;
                    self.buf.clear();
                    self.scanned = 0;
                    return Some(Err(ReadError::Oversized { limit: self.max }));
                }
                if self.buf.iter().all(u8::is_ascii_whitespace) {
                    return None;
                }
                // A last line without its newline.
                let line = self.buf.split().freeze();
                self.scanned = 0;
                if std::str::from_utf8(&line).is_err() {
                    return Some(Err(ReadError::InvalidUtf8));
                }
                return Some(Ok(line.into()));
            }
            self.buf.reserve(CHUNK);
            match self.inner.read_buf(&mut self.buf).await {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Some(Err(ReadError::Io(e))),
            }
        }
    }
}

/// Writes newline-delimited frames to a byte stream.
#[derive(Debug)]
pub struct LineWrite<W> {
    inner: Option<W>,
    buf: Vec<u8>,
}

impl<W> LineWrite<W> {
    /// Writes frames to `inner`.
    pub fn new(inner: W) -> Self {
        LineWrite { inner: Some(inner), buf: Vec::with_capacity(CHUNK) }
    }
}

impl<W> LineWrite<W> {
    /// The stream, unless closed.
    pub fn into_inner(self) -> Option<W> {
        self.inner
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> TransportWrite for LineWrite<W> {
    async fn write(&mut self, frames: &[Outbound]) -> io::Result<()> {
        let inner = self.inner.as_mut().ok_or_else(|| io::Error::from(io::ErrorKind::BrokenPipe))?;
        self.buf.clear();
        for f in frames.iter().filter(|f| !f.frame.is_empty()) {
            self.buf.extend_from_slice(&f.frame);
            self.buf.push(b'\n');
        }
        inner.write_all(&self.buf).await?;
        inner.flush().await?;
        if self.buf.capacity() > 4 * CHUNK {
            self.buf = Vec::with_capacity(CHUNK);
        }
        Ok(())
    }

    async fn close(&mut self) -> io::Result<()> {
        if let Some(mut w) = self.inner.take() {
            w.shutdown().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], max: usize) -> Vec<Result<String, String>> {
        let mut r = LineRead::new(std::io::Cursor::new(input.to_vec()), max);
        let mut out = Vec::new();
        while let Some(item) = r.read().await {
            out.push(item.map(|b| String::from_utf8(b.frame.to_vec()).unwrap()).map_err(|e| e.to_string()));
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_skips_blank_ones() {
        let got = frames(b"{\"a\":1}\n\n  \r\n{\"b\":2}\r\n{\"c\":3}", 100).await;
        assert_eq!(got, vec![Ok("{\"a\":1}".into()), Ok("{\"b\":2}".into()), Ok("{\"c\":3}".into())]);
    }

    #[tokio::test]
    async fn oversized_lines_are_reported_and_skipped() {
        let long = "x".repeat(300_000);
        let input = format!("{{}}\n{long}\n{{\"after\":1}}\n{long}");
        let got = frames(input.as_bytes(), 1000).await;
        assert_eq!(got.len(), 4);
        assert_eq!(got[0], Ok("{}".into()));
        assert!(got[1].as_ref().unwrap_err().contains("1000 bytes"));
        assert_eq!(got[2], Ok("{\"after\":1}".into()));
        assert!(got[3].is_err());
    }

    /// Hands out `input` `chunk` bytes per read.
    struct Chunked {
        input: Vec<u8>,
        chunk: usize,
    }

    impl AsyncRead for Chunked {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            let n = self.chunk.min(self.input.len()).min(buf.remaining());
            buf.put_slice(&self.input[..n]);
            self.input.drain(..n);
            std::task::Poll::Ready(Ok(()))
        }
    }

    /// Found by the fuzz target `lines` (fuzz/artifacts/lines/): a last line over the limit,
    /// without its newline, was reported as oversized and then its tail, the bytes read since
    /// the framer last dropped what it had, came as a line of its own.
    #[tokio::test]
    async fn an_oversized_last_line_leaves_nothing_behind() {
        let mut r = LineRead::new(Chunked { input: [b"{}\n".as_slice(), &[b'x'; 30]].concat(), chunk: 8 }, 10);
        assert_eq!(r.read().await.unwrap().unwrap().frame, &b"{}"[..]);
        assert!(matches!(r.read().await, Some(Err(ReadError::Oversized { limit: 10 }))));
        assert!(r.read().await.is_none());
    }

    /// Found by the fuzz target `lines`: a line of the limit's length ending in CRLF was
    /// oversized when a read ended between its `\r` and its `\n`, and a line in the limit
    /// otherwise.
    #[tokio::test]
    async fn a_line_of_the_limit_is_one_whatever_the_reads() {
        for chunk in 1..14 {
            let mut r = LineRead::new(Chunked { input: b"0123456789\r\nabcdefghij\r".to_vec(), chunk }, 10);
            assert_eq!(r.read().await.unwrap().unwrap().frame, &b"0123456789"[..], "reads of {chunk}");
            // The last line, without its newline, keeps its `\r`: 11 bytes.
            assert!(matches!(r.read().await, Some(Err(ReadError::Oversized { limit: 10 }))), "reads of {chunk}");
            assert!(r.read().await.is_none());
        }
    }

    #[tokio::test]
    async fn invalid_utf8_is_reported_and_skipped() {
        let got = frames(b"\xff\xfe\n{}\n", 100).await;
        assert_eq!(got, vec![Err("message is not valid UTF-8".into()), Ok("{}".into())]);
    }

    #[tokio::test]
    async fn writes_all_frames_in_one_buffer() {
        let mut w = LineWrite::new(Vec::new());
        w.write(&[bytes::Bytes::from_static(b"{}").into(), bytes::Bytes::from_static(b"[1]").into()]).await.unwrap();
        assert_eq!(w.into_inner().unwrap(), b"{}\n[1]\n");
    }
}
