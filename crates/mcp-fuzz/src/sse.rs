//! The SSE parser of the HTTP client (`mcp_transport_http::client`, `sse.rs`).

use mcp_transport_http::client::fuzzing::{SseEvent, SseParser};

/// The first byte picks the parser's limit (1 to 64 bytes, or 64 KiB), the second how the rest
/// is cut into chunks; the rest is the stream. Fed in chunks, the parser gives the same events
/// as fed at once; no event's data is over the limit (an oversized one has none); when nothing
/// reaches the limit the events are those of a reference parser written from the WHATWG text.
pub fn sse(data: &[u8]) {
    let [limit, seed, stream @ ..] = data else { return };
    let limit = if *limit >= 64 { 64 * 1024 } else { usize::from(*limit) + 1 };
    let whole = parse(&[stream], limit);
    let chunks = crate::lines::cut(stream, *seed);
    assert_eq!(parse(&chunks, limit), whole, "chunked as {:?}", chunks.iter().map(|c| c.len()).collect::<Vec<_>>());
    for event in &whole {
        assert!(event.data.as_ref().is_none_or(|d| d.len() <= limit), "data over the limit {limit}");
        assert!(!event.oversized || event.data.is_none());
    }
    if stream.len() < limit {
        assert_eq!(whole, reference(stream), "the reference parser disagrees");
    }
}

fn parse(chunks: &[&[u8]], limit: usize) -> Vec<SseEvent> {
    let mut parser = SseParser::new(limit);
    let mut out = Vec::new();
    for chunk in chunks {
        parser.feed(chunk, &mut out);
    }
    out
}

/// The event stream interpretation of the WHATWG HTML standard (9.2.6), reporting also blocks
/// with only an `id` or a valid `retry`, as the client's parser does. A last line without its
/// end, and a last block without its blank line, are not dispatched.
fn reference(stream: &[u8]) -> Vec<SseEvent> {
    let stream = stream.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(stream);
    let mut events = Vec::new();
    let (mut event, mut data, mut touched) = (SseEvent::default(), None::<Vec<u8>>, false);
    let mut rest = stream;
    while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
        let line = &rest[..end];
        let skip = if rest[end] == b'\r' && rest.get(end + 1) == Some(&b'\n') { 2 } else { 1 };
        rest = &rest[end + skip..];
        if line.is_empty() {
            if std::mem::take(&mut touched) {
                let mut e = std::mem::take(&mut event);
                e.data = data.take().map(bytes::Bytes::from);
                events.push(e);
            }
            data = None;
            continue;
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => continue,
            Some(i) => (&line[..i], line[i + 1..].strip_prefix(b" ").unwrap_or(&line[i + 1..])),
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                touched = true;
                match &mut data {
                    Some(d) => {
                        d.push(b'\n');
                        d.extend_from_slice(value);
                    }
                    None => data = Some(value.to_vec()),
                }
            }
            b"event" => {
                touched = true;
                event.event = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"id" if !value.contains(&0) => {
                touched = true;
                event.id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(ms) = std::str::from_utf8(value).unwrap_or_default().parse::<u64>() {
                    touched = true;
                    event.retry = Some(std::time::Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }
    events
}
