//! The SSE wire format of the endpoint's streams: a JSON-RPC message as a `message` event (with
//! its `STREAM-SEQ` id when the stream is resumable), and the `retry` hint. It uses nothing
//! else of the server: the streams, the fleet's relays and the stateless revision's answers
//! all write their events with it.

use std::time::Duration;

use bytes::{BufMut as _, Bytes, BytesMut};

/// One SSE `message` event carrying a JSON-RPC message, in one buffer (one write).
pub(crate) fn sse_event(id: Option<(u64, u64)>, message: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(message.len() + 64);
    if let Some((stream, seq)) = id {
        out.put_slice(b"id: ");
        put_decimal(&mut out, stream);
        out.put_u8(b'-');
        put_decimal(&mut out, seq);
        out.put_u8(b'\n');
    }
    out.put_slice(b"event: message\ndata: ");
    // Our encoder writes compact JSON: no raw line breaks inside a message.
    out.put_slice(message);
    out.put_slice(b"\n\n");
    out.freeze()
}

/// An SSE event with only a `retry` field: the client waits this long before it reconnects.
pub(crate) fn retry_event(retry: Duration) -> Bytes {
    Bytes::from(format!("retry: {}\n\n", retry.as_millis()))
}

/// Writes `n` in decimal (without going through `format!`).
fn put_decimal(out: &mut BytesMut, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.put_slice(&digits[at..]);
}
