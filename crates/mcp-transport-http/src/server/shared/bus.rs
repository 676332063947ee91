//! The messages between the instances of a fleet: what one says to the others ([`Kind`]), in
//! one line of header and the frame it carries ([`BusMessage`]).

use std::sync::Arc;

use bytes::{BufMut as _, Bytes, BytesMut};

/// What one instance says to the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A message POSTed by the client, for the copy that awaits or runs what it names.
    Incoming,
    /// A message for the standalone stream, for the copy that holds it.
    Standalone,
    /// An event of a stream (`stream`, `seq`, `last`) whose connection went away.
    Event,
    /// Does the owner of `stream` still run it?
    Probe,
    /// It does.
    Alive,
    /// The session's record changed: reload it.
    Changed,
    /// The session ended.
    Ended,
}

impl Kind {
    fn letter(self) -> u8 {
        match self {
            Kind::Incoming => b'i',
            Kind::Standalone => b'g',
            Kind::Event => b'e',
            Kind::Probe => b'p',
            Kind::Alive => b'a',
            Kind::Changed => b'c',
            Kind::Ended => b'x',
        }
    }
    /// Its name, for metrics and logs.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Incoming => "incoming",
            Kind::Standalone => "standalone",
            Kind::Event => "event",
            Kind::Probe => "probe",
            Kind::Alive => "alive",
            Kind::Changed => "changed",
            Kind::Ended => "ended",
        }
    }
    fn of(letter: &str) -> Option<Kind> {
        Some(match letter {
            "i" => Kind::Incoming,
            "g" => Kind::Standalone,
            "e" => Kind::Event,
            "p" => Kind::Probe,
            "a" => Kind::Alive,
            "c" => Kind::Changed,
            "x" => Kind::Ended,
            _ => return None,
        })
    }
}

/// One message between instances: a header line (`origin kind session stream seq last to`),
/// then the frame it carries.
#[derive(Debug, Clone)]
pub(crate) struct BusMessage {
    pub(crate) origin: u32,
    pub(crate) kind: Kind,
    pub(crate) session: Arc<str>,
    pub(crate) stream: u64,
    pub(crate) seq: u64,
    pub(crate) last: bool,
    /// The instance it is for (its tag), or 0: every instance.
    pub(crate) to: u32,
    pub(crate) frame: Bytes,
}

impl BusMessage {
    pub(crate) fn encode(&self) -> Bytes {
        let mut out = BytesMut::with_capacity(self.frame.len() + self.session.len() + 48);
        let header = format!(
            "{} {} {} {} {} {} {}\n",
            self.origin,
            self.kind.letter() as char,
            self.session,
            self.stream,
            self.seq,
            u8::from(self.last),
            self.to,
        );
        out.put_slice(header.as_bytes());
        out.put_slice(&self.frame);
        out.freeze()
    }

    pub(crate) fn decode(bytes: &Bytes) -> Option<BusMessage> {
        let newline = bytes.iter().position(|&b| b == b'\n')?;
        let header = std::str::from_utf8(&bytes[..newline]).ok()?;
        let mut fields = header.split(' ');
        let message = BusMessage {
            origin: fields.next()?.parse().ok()?,
            kind: Kind::of(fields.next()?)?,
            session: fields.next()?.into(),
            stream: fields.next()?.parse().ok()?,
            seq: fields.next()?.parse().ok()?,
            last: fields.next()? == "1",
            to: fields.next()?.parse().ok()?,
            frame: bytes.slice(newline + 1..),
        };
        fields.next().is_none().then_some(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bus_message_reads_back() {
        let message = BusMessage {
            origin: 7,
            kind: Kind::Event,
            session: "abc".into(),
            stream: (7 << 32) | 3,
            seq: 12,
            last: true,
            to: 9,
            frame: Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"),
        };
        let back = BusMessage::decode(&message.encode()).expect("decodes");
        assert_eq!((back.origin, back.kind, &*back.session), (7, Kind::Event, "abc"));
        assert_eq!((back.stream, back.seq, back.last, back.to), (message.stream, 12, true, 9));
        assert_eq!(back.frame, message.frame);
        assert!(BusMessage::decode(&Bytes::from_static(b"7 q abc 1 2 0 0\n{}")).is_none(), "unknown kind");
        assert!(BusMessage::decode(&Bytes::from_static(b"7 e abc 1 2 0\n{}")).is_none(), "a field missing");
        assert!(BusMessage::decode(&Bytes::from_static(b"no newline")).is_none());
    }
}
