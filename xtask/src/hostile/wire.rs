//! HTTP/1.1 by hand, over a plain `TcpStream`: the hostile suite must send exactly the bytes it
//! means (no library to repair a head, add a header or refuse a body), and read the answers as
//! they come.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// What `initialize` sends: the 2025-11-25 revision, no capabilities.
pub const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}"#;
/// The headers every well-formed POST to the MCP endpoint carries.
pub const JSON_POST: &[(&str, &str)] =
    &[("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];

/// A request's bytes: the request line, `Host: 127.0.0.1`, `headers`, `Content-Length` when
/// there is a body (or the method is POST), the empty line, the body.
pub fn request(method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    if method == "POST" || !body.is_empty() {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

/// A POST of `body` to `target` with the usual headers, and `more`.
pub fn post(target: &str, more: &[(&str, &str)], body: &str) -> Vec<u8> {
    let headers: Vec<(&str, &str)> = JSON_POST.iter().chain(more).copied().collect();
    request("POST", target, &headers, body.as_bytes())
}

/// One answer: its status, headers (names in lower case) and body. For an SSE answer the body
/// is the `data` of the event that carries a JSON-RPC response (or all the data read).
#[derive(Debug, Default)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC error code of the body, if it has one.
    pub fn code(&self) -> Option<i64> {
        self.json()["error"]["code"].as_i64()
    }

    /// `status` and, when given, the JSON-RPC error `code`, or an error naming what came.
    pub fn expect(&self, status: u16, code: Option<i64>) -> Result<()> {
        if self.status != status || (code.is_some() && self.code() != code) {
            bail!("expected {status}{}, got {}", code.map(|c| format!(" with {c}")).unwrap_or_default(), self.short());
        }
        Ok(())
    }

    /// `status` and the body's error code, shortly.
    pub fn short(&self) -> String {
        match self.code() {
            Some(code) => format!("{} {code}", self.status),
            None if self.body.len() > 80 => format!("{} ({} bytes)", self.status, self.body.len()),
            None => format!("{} {:?}", self.status, self.body),
        }
    }
}

/// One client connection.
pub struct Conn {
    pub reader: BufReader<TcpStream>,
}

impl Conn {
    pub fn open(addr: SocketAddr) -> Result<Self> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).context("connecting")?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        Ok(Conn { reader: BufReader::new(stream) })
    }

    pub fn stream(&self) -> &TcpStream {
        self.reader.get_ref()
    }

    pub fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.reader.get_mut().write_all(bytes).context("writing")
    }

    /// Sends `bytes` and reads one answer. A server may answer before it has read everything
    /// (a body past the bound) and close: the answer is read even when the write broke.
    pub fn ask(&mut self, bytes: &[u8]) -> Result<Reply> {
        if let Err(e) = self.reader.get_mut().write_all(bytes) {
            use std::io::ErrorKind::{BrokenPipe, ConnectionReset};
            if !matches!(e.kind(), BrokenPipe | ConnectionReset) {
                return Err(e).context("writing");
            }
        }
        self.read()
    }

    /// Reads one answer (to the end of its body, or of its stream).
    pub fn read(&mut self) -> Result<Reply> {
        let mut reply = self.read_head()?;
        self.read_body(&mut reply)?;
        Ok(reply)
    }

    /// Reads the body of the answer whose head is `reply` (to its end, or its stream's).
    pub fn read_body(&mut self, reply: &mut Reply) -> Result<()> {
        let chunked = reply.header("transfer-encoding").is_some_and(|v| v.contains("chunked"));
        let raw = if chunked {
            self.read_chunks(|_| false)?
        } else if let Some(len) = reply.header("content-length") {
            let mut body = vec![0; len.trim().parse().context("Content-Length")?];
            self.reader.read_exact(&mut body).context("reading the body")?;
            body
        } else {
            Vec::new()
        };
        reply.body = String::from_utf8_lossy(&raw).into_owned();
        if reply.header("content-type").is_some_and(|v| v.starts_with("text/event-stream")) {
            reply.body = sse_response(&reply.body).unwrap_or(std::mem::take(&mut reply.body));
        }
        Ok(())
    }

    /// Reads an answer's head.
    pub fn read_head(&mut self) -> Result<Reply> {
        let mut head = Vec::new();
        loop {
            let mut line = Vec::new();
            if self.reader.read_until(b'\n', &mut line).context("reading the head")? == 0 {
                bail!("the connection closed with no answer");
            }
            head.extend_from_slice(&line);
            if line == b"\r\n" {
                break;
            }
        }
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut headers);
        response.parse(&head).context("parsing the answer's head")?;
        let headers = response
            .headers
            .iter()
            .map(|h| (h.name.to_ascii_lowercase(), String::from_utf8_lossy(h.value).into_owned()))
            .collect();
        Ok(Reply { status: response.code.unwrap_or(0), headers, body: String::new() })
    }

    /// Reads chunks until the last one, or until `enough` says the data so far suffices.
    pub fn read_chunks(&mut self, enough: impl Fn(&[u8]) -> bool) -> Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let mut size = String::new();
            if self.reader.read_line(&mut size).context("reading a chunk")? == 0 {
                bail!("the connection closed inside a chunked body");
            }
            let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                .with_context(|| format!("chunk size {size:?}"))?;
            let mut chunk = vec![0; size + 2];
            self.reader.read_exact(&mut chunk).context("reading a chunk")?;
            if size == 0 {
                return Ok(body);
            }
            body.extend_from_slice(&chunk[..size]);
            if enough(&body) {
                return Ok(body);
            }
        }
    }

    /// Whether the server closed this connection (within `wait`), having sent nothing else
    /// than possibly an answer whose status is returned.
    pub fn closed_within(&mut self, wait: Duration) -> Result<Option<u16>> {
        self.stream().set_read_timeout(Some(wait))?;
        let mut seen = Vec::new();
        let mut buf = [0; 4096];
        loop {
            match self.reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                Err(e) => bail!("still open after {wait:?} ({e})"),
            }
        }
        let status = std::str::from_utf8(&seen).ok().and_then(|s| s.get(9..12)).and_then(|s| s.parse().ok());
        Ok(status)
    }
}

/// The `data` of the first SSE event of `stream` that is a JSON-RPC response.
pub fn sse_response(stream: &str) -> Option<String> {
    sse_data(stream).into_iter().find(|data| {
        let value: Value = serde_json::from_str(data).unwrap_or(Value::Null);
        value.get("id").is_some() && (value.get("result").is_some() || value.get("error").is_some())
    })
}

/// The `data` of each event of `stream`.
pub fn sse_data(stream: &str) -> Vec<String> {
    stream
        .split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .collect()
}

/// Opens a Streamable HTTP session (initialize, then `notifications/initialized`) on `conn`:
/// its id.
pub fn open_session(conn: &mut Conn) -> Result<String> {
    let reply = conn.ask(&post("/mcp", &[], INIT))?;
    reply.expect(200, None)?;
    let id = reply.header("mcp-session-id").context("no Mcp-Session-Id")?.to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    conn.ask(&post("/mcp", &session_headers(&id), initialized))?.expect(202, None)?;
    Ok(id)
}

/// The headers of a request in session `id`.
pub fn session_headers(id: &str) -> [(&str, &str); 2] {
    [("Mcp-Session-Id", id), ("MCP-Protocol-Version", "2025-11-25")]
}

/// Ends session `id` (DELETE): 200.
pub fn delete_session(conn: &mut Conn, id: &str) -> Result<()> {
    conn.ask(&request("DELETE", "/mcp", &[("Mcp-Session-Id", id)], b""))?.expect(200, None)
}

/// Opens an HTTP+SSE session: the connection holding its stream, and the `/messages` target.
pub fn open_sse(addr: SocketAddr) -> Result<(Conn, String)> {
    let mut conn = Conn::open(addr)?;
    let head = conn.ask_head(&request("GET", "/sse", &[("Accept", "text/event-stream")], b""))?;
    head.expect(200, None)?;
    let data = conn.read_chunks(|body| String::from_utf8_lossy(body).contains("/messages?sessionId="))?;
    let text = String::from_utf8_lossy(&data);
    let target = text
        .lines()
        .find_map(|l| l.strip_prefix("data:").map(str::trim).filter(|d| d.contains("sessionId=")))
        .context("no endpoint event")?
        .to_owned();
    Ok((conn, target))
}

impl Conn {
    /// Sends `bytes` and reads the head of the answer only (a stream follows).
    pub fn ask_head(&mut self, bytes: &[u8]) -> Result<Reply> {
        self.send(bytes)?;
        self.read_head()
    }
}
