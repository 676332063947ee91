//! A bounded parser of `text/event-stream` bodies (the WHATWG "event stream interpretation").
//!
//! Unlike a plain event source, it reports blocks that carry only an `id` or a `retry` (a
//! server's priming event may have no `data` line), and it never buffers more than its limit:
//! an event whose data or a line longer than the limit is reported as oversized and skipped.

use std::time::Duration;

use bytes::Bytes;

/// One dispatched block of fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event` field, if present.
    pub event: Option<String>,
    /// The data lines joined with `\n`; `None` when the block had no `data` line.
    pub data: Option<Bytes>,
    /// The `id` field, if present (an empty id resets the last event id).
    pub id: Option<String>,
    /// The `retry` field, if present and valid.
    pub retry: Option<Duration>,
    /// The block went over the limit; its data was dropped.
    pub oversized: bool,
}

impl SseEvent {
    /// Whether the block is a message event (no type, or `message`) with data.
    pub fn message(&self) -> Option<&Bytes> {
        match self.event.as_deref() {
            None | Some("message") => self.data.as_ref().filter(|d| !d.is_empty()),
            _ => None,
        }
    }
}

/// Feeds chunks of a stream, collects dispatched events.
#[derive(Debug)]
pub struct SseParser {
    limit: usize,
    line: Vec<u8>,
    line_overflow: bool,
    /// A `\r` ended the last chunk: a `\n` opening the next one belongs to it.
    skip_lf: bool,
    /// Still at the very start of the stream (a byte order mark is skipped there).
    at_start: bool,
    /// The opening bytes while they may still be a byte order mark.
    held: Vec<u8>,
    current: SseEvent,
    data: Vec<u8>,
    has_data: bool,
    touched: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseParser {
    /// A parser that keeps at most `limit` bytes of one line or one event's data.
    pub fn new(limit: usize) -> Self {
        SseParser {
            limit: limit.max(1),
            line: Vec::new(),
            line_overflow: false,
            skip_lf: false,
            at_start: true,
            held: Vec::new(),
            current: SseEvent::default(),
            data: Vec::new(),
            has_data: false,
            touched: false,
        }
    }

    /// Parses a chunk; complete events are appended to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        if !self.at_start {
            self.feed_text(chunk, out);
            return;
        }
        // A byte order mark may open the stream, possibly split across chunks.
        let take = (BOM.len() - self.held.len()).min(chunk.len());
        self.held.extend_from_slice(&chunk[..take]);
        if !BOM.starts_with(&self.held) {
            self.at_start = false;
            let held = std::mem::take(&mut self.held);
            self.feed_text(&held, out);
            self.feed_text(&chunk[take..], out);
        } else if self.held.len() == BOM.len() {
            self.at_start = false;
            self.held = Vec::new();
            self.feed_text(&chunk[take..], out);
        }
    }

    fn feed_text(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) {
        if self.skip_lf && !chunk.is_empty() {
            self.skip_lf = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while !chunk.is_empty() {
            match chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.append(&chunk[..end]);
                    let cr = chunk[end] == b'\r';
                    chunk = &chunk[end + 1..];
                    if cr {
                        match chunk.first() {
                            Some(b'\n') => chunk = &chunk[1..],
                            Some(_) => {}
                            None => self.skip_lf = true,
                        }
                    }
                    self.end_line(out);
                }
                None => {
                    self.append(chunk);
                    break;
                }
            }
        }
    }

    fn append(&mut self, part: &[u8]) {
        if self.line_overflow {
            return;
        }
        if self.line.len() + part.len() > self.limit {
            self.line_overflow = true;
            self.line.clear();
        } else {
            self.line.extend_from_slice(part);
        }
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.line_overflow) {
            self.current.oversized = true;
            self.touched = true;
            return;
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // a comment (keep-alive)
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &b""[..]),
        };
        match name {
            b"data" => {
                self.touched = true;
                if self.current.oversized {
                    return;
                }
                if self.data.len() + value.len() + 1 > self.limit {
                    self.current.oversized = true;
                    self.data = Vec::new();
                    return;
                }
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => {
                self.touched = true;
                self.current.event = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"id" if !value.contains(&0) => {
                self.touched = true;
                self.current.id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" => {
                if !value.is_empty()
                    && value.iter().all(u8::is_ascii_digit)
                    && let Ok(ms) = std::str::from_utf8(value).unwrap_or_default().parse::<u64>()
                {
                    self.touched = true;
                    self.current.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if !std::mem::take(&mut self.touched) {
            return;
        }
        let mut event = std::mem::take(&mut self.current);
        let data = std::mem::take(&mut self.data);
        if std::mem::take(&mut self.has_data) && !event.oversized {
            event.data = Some(Bytes::from(data));
        }
        out.push(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]], limit: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::new(limit);
        let mut out = Vec::new();
        for c in chunks {
            parser.feed(c, &mut out);
        }
        out
    }

    fn data(e: &SseEvent) -> Option<&str> {
        e.data.as_deref().map(|d| std::str::from_utf8(d).unwrap())
    }

    #[test]
    fn messages_ids_and_retry() {
        let events = parse_chunks(&[b"id: 1\nretry: 500\ndata: \n\nevent: message\nid: 2\ndata: {\"a\":1}\n\n"], 1024);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].id.as_deref(), Some("1"));
        assert_eq!(events[0].retry, Some(Duration::from_millis(500)));
        assert_eq!(data(&events[0]), Some(""));
        assert_eq!(events[0].message(), None);
        assert_eq!(events[1].id.as_deref(), Some("2"));
        assert_eq!(events[1].message().map(|d| &d[..]), Some(&b"{\"a\":1}"[..]));
    }

    #[test]
    fn blocks_without_data_are_reported() {
        let events = parse_chunks(&[b"id: prime\n\nretry: 20\n\n: keep-alive\n\n"], 1024);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].id.as_deref(), Some("prime"));
        assert_eq!(events[0].data, None);
        assert_eq!(events[1].retry, Some(Duration::from_millis(20)));
    }

    #[test]
    fn every_line_ending_and_any_chunking() {
        let text = b"\xEF\xBB\xBFdata: a\r\ndata:b\rdata:  c\n\r\nevent: endpoint\rdata: /messages?x=1\r\r";
        let whole = parse_chunks(&[text], 1024);
        assert_eq!(whole.len(), 2);
        assert_eq!(data(&whole[0]), Some("a\nb\n c"));
        assert_eq!(whole[1].event.as_deref(), Some("endpoint"));
        assert_eq!(whole[1].message(), None);
        for split in 0..text.len() {
            let (a, b) = text.split_at(split);
            assert_eq!(parse_chunks(&[a, b], 1024), whole, "split at {split}");
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(parse_chunks(&bytes, 1024), whole);
    }

    #[test]
    fn fields_without_colon_and_invalid_retry() {
        let events = parse_chunks(&[b"data\ndata\nretry: 1x\nretry\nunknown: 1\n\n"], 1024);
        assert_eq!(events.len(), 1);
        assert_eq!(data(&events[0]), Some("\n"));
        assert_eq!(events[0].retry, None);
    }

    #[test]
    fn oversized_events_are_skipped_and_the_stream_goes_on() {
        let long = format!("data: {}\n\nid: 7\ndata: ok\n\n", "x".repeat(100));
        let events = parse_chunks(&[long.as_bytes()], 32);
        assert_eq!(events.len(), 2);
        assert!(events[0].oversized);
        assert_eq!(events[0].data, None);
        assert_eq!(data(&events[1]), Some("ok"));
        assert_eq!(events[1].id.as_deref(), Some("7"));

        // Many short data lines that add up to more than the limit.
        let many = "data: 0123456789\n".repeat(10) + "\n";
        let events = parse_chunks(&[many.as_bytes()], 32);
        assert!(events[0].oversized);
    }

    #[test]
    fn a_partial_event_at_the_end_is_not_dispatched() {
        assert!(parse_chunks(&[b"data: never finished"], 1024).is_empty());
        assert!(parse_chunks(&[b"data: x\n"], 1024).is_empty());
    }
}
