//! The attacks of `cargo xtask hostile`, each asserting the answers docs/http.md names.

use std::io::Write;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

use super::wire::{self, Conn, post, request, session_headers};
use super::{Attack, Target};

pub const ALL: &[Attack] = &[
    Attack {
        name: "slowloris",
        sends: "200 heads and 50 bodies (Content-Length 100000) trickled a byte a second, 100 silent connections, 100 idle after an answer, fresh clients meanwhile",
        run: slowloris,
    },
    Attack {
        name: "heads past the bound",
        sends: "a head of exactly 64 KiB, one of 64 KiB + 1, one of 101 header lines",
        run: big_heads,
    },
    Attack {
        name: "bodies past the bound",
        sends: "Content-Length 4 MiB + 1, a chunked body of 5 MiB, 8 bodies of 4 MiB at once",
        run: big_bodies,
    },
    Attack {
        name: "session flood",
        sends: "20,000 initializes pipelined on 4 connections from one address, then DELETE of each session",
        run: session_flood,
    },
    Attack {
        name: "unread GET streams",
        sends: "200 sessions each opening the GET stream and never reading it, a second GET on one",
        run: unread_streams,
    },
    Attack {
        name: "forged and foreign session ids",
        sends: "unknown ids, an HTTP+SSE id at /mcp, a Streamable id at /messages, none at all",
        run: forged_sessions,
    },
    Attack {
        name: "wrong headers",
        sends: "Accept text/plain, Content-Type text/plain, a foreign Origin or Host (also as a second line or in the target), no Host (at /mcp and /sse)",
        run: wrong_headers,
    },
    Attack {
        name: "hostile bodies",
        sends: "100,000 open brackets, 100,000 nested arrays, invalid UTF-8, batches in 2025-11-25 and 2026-07-28",
        run: hostile_bodies,
    },
    Attack {
        name: "2026-07-28 headers and requestState",
        sends: "Mcp-Method, Mcp-Name, Mcp-Param-Region, MCP-Protocol-Version disagreeing with the body, an unknown revision, a tampered requestState",
        run: revision_2026,
    },
    Attack {
        name: "pipelining",
        sends: "3,000 pings written at once on one connection, in one session",
        run: pipelined,
    },
    Attack {
        name: "HTTP+SSE session flood",
        sends: "GET /sse from one address until refused, the streams never read, then all closed",
        run: sse_flood,
    },
    Attack {
        name: "HTTP+SSE",
        sends: "300 unread /sse streams; at /messages: 1,000 pipelined pings, a body over 4 MiB, bad JSON",
        run: http_sse,
    },
];

/// A header's name and value.
type Header<'a> = (&'a str, &'a str);
type Headers<'a> = [Header<'a>];

const PING: &str = r#"{"jsonrpc":"2.0","id":ID,"method":"ping"}"#;

fn ping(id: usize) -> String {
    PING.replace("ID", &id.to_string())
}

/// Trickles `bytes[sent..]` to each connection, a byte per round, for `rounds` rounds of a
/// second, checking a fresh client every 5 rounds.
fn slowloris(target: &Target) -> Result<String> {
    let head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    let mut heads = (0..200).map(|_| Conn::open(target.addr)).collect::<Result<Vec<_>>>()?;
    let mut bodies = (0..50).map(|_| Conn::open(target.addr)).collect::<Result<Vec<_>>>()?;
    for conn in &mut heads {
        conn.send(head)?;
    }
    for conn in &mut bodies {
        conn.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{")?;
    }
    // Connections that send nothing, and keep-alive ones left idle after an answer.
    let mut silent = (0..100).map(|_| Conn::open(target.addr)).collect::<Result<Vec<_>>>()?;
    for _ in 0..100 {
        let mut conn = Conn::open(target.addr)?;
        conn.ask(&request("GET", "/healthz", &[], b""))?.expect(200, None)?;
        silent.push(conn);
    }
    let start = Instant::now();
    let mut slowest = Duration::ZERO;
    let mut round = 0;
    // The server's header_timeout and body_timeout are 30 s: trickle past them.
    while start.elapsed() < Duration::from_secs(33) {
        for conn in heads.iter_mut().chain(bodies.iter_mut()) {
            // A connection the server closed fails here: that is what is checked below.
            let _ = conn.reader.get_mut().write_all(b"a");
        }
        if round % 5 == 0 {
            slowest = slowest.max(target.fresh().context("a fresh client during the attack")?);
        }
        round += 1;
        thread::sleep(Duration::from_secs(1));
    }
    let mut closed = 0;
    for conn in &mut heads {
        match conn.closed_within(Duration::from_secs(3))? {
            None => closed += 1,
            Some(status) => bail!("a slow head got {status} instead of a closed connection"),
        }
    }
    for conn in &mut silent {
        ensure!(conn.closed_within(Duration::from_secs(3))?.is_none(), "a silent connection got an answer");
    }
    for conn in &mut bodies {
        conn.stream().set_read_timeout(Some(Duration::from_secs(3)))?;
        conn.read()?.expect(408, Some(-32600))?;
    }
    Ok(format!(
        "{closed} slow heads and 200 silent or idle connections closed, 50 slow bodies 408 -32600 after 30 s; fresh clients served in at most {} ms meanwhile",
        slowest.as_millis()
    ))
}

/// A GET of /healthz whose head is `size` bytes.
fn padded_head(size: usize) -> Vec<u8> {
    let bare = request("GET", "/healthz", &[("X-Pad", "")], b"");
    let pad = "a".repeat(size - bare.len());
    let out = request("GET", "/healthz", &[("X-Pad", &pad)], b"");
    assert_eq!(out.len(), size);
    out
}

fn big_heads(target: &Target) -> Result<String> {
    let mut conn = Conn::open(target.addr)?;
    conn.ask(&padded_head(64 << 10))?.expect(200, None).context("a head of 64 KiB")?;
    let mut conn = Conn::open(target.addr)?;
    conn.ask(&padded_head((64 << 10) + 1))?.expect(431, None).context("a head of 64 KiB + 1")?;
    ensure!(conn.closed_within(Duration::from_secs(2))?.is_none(), "the connection stayed open after 431");
    let lines: Vec<(String, String)> = (0..101).map(|i| (format!("X-Line-{i}"), "a".to_owned())).collect();
    let lines: Vec<(&str, &str)> = lines.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    let mut conn = Conn::open(target.addr)?;
    conn.ask(&request("GET", "/healthz", &lines, b""))?.expect(431, None).context("101 header lines")?;
    Ok("64 KiB: 200; 64 KiB + 1: 431 and closed; 101 lines: 431".to_owned())
}

fn big_bodies(target: &Target) -> Result<String> {
    let mut conn = Conn::open(target.addr)?;
    let id = wire::open_session(&mut conn)?;
    let limit = 4 << 20;
    let mut headers = wire::JSON_POST.to_vec();
    headers.extend(session_headers(&id));
    declared_over(target, "/mcp", &session_headers(&id))?
        .expect(413, Some(-32600))
        .context("Content-Length 4 MiB + 1")?;
    // Chunked, no length: counted as it comes.
    let mut chunked = headers.clone();
    chunked.push(("Transfer-Encoding", "chunked"));
    let mut bytes = request("GET", "/mcp", &chunked, b"");
    bytes.splice(0..3, b"POST".iter().copied());
    let mut other = Conn::open(target.addr)?;
    other.send(&bytes)?;
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..5 {
        let mut out = format!("{:x}\r\n", chunk.len()).into_bytes();
        out.extend_from_slice(&chunk);
        out.extend_from_slice(b"\r\n");
        if other.send(&out).is_err() {
            break;
        }
    }
    let _ = other.send(b"0\r\n\r\n");
    other.read()?.expect(413, Some(-32600)).context("a chunked body of 5 MiB")?;
    // Eight bodies of exactly 4 MiB at once, not JSON: each read whole, then refused.
    let body = vec![b'x'; limit];
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let addr = target.addr;
            let id = id.clone();
            let body = body.clone();
            thread::spawn(move || -> Result<wire::Reply> {
                let mut conn = Conn::open(addr)?;
                let mut headers = wire::JSON_POST.to_vec();
                headers.extend(session_headers(&id));
                conn.ask(&request("POST", "/mcp", &headers, &body))
            })
        })
        .collect();
    for handle in handles {
        handle.join().expect("a sender panicked")?.expect(400, Some(-32700)).context("a body of 4 MiB")?;
    }
    wire::delete_session(&mut conn, &id)?;
    Ok("Content-Length over: 413 -32600; chunked over: 413 -32600; 8 × 4 MiB of junk: 400 -32700".to_owned())
}

/// A POST's head declaring a body of 4 MiB + 1 (the bound's next byte), sent without the body:
/// the answer.
fn declared_over(target: &Target, path: &str, more: &[(&str, &str)]) -> Result<wire::Reply> {
    let mut head = post(path, more, "");
    head.truncate(head.len() - "Content-Length: 0\r\n\r\n".len());
    head.extend_from_slice(format!("Content-Length: {}\r\n\r\n", (4 << 20) + 1).as_bytes());
    Conn::open(target.addr)?.ask(&head)
}

/// Writes `requests` on a connection from one thread while reading the answers on another.
fn pipeline(conn: Conn, requests: Vec<Vec<u8>>) -> Result<Vec<wire::Reply>> {
    let mut writer = conn.stream().try_clone()?;
    let count = requests.len();
    let sender = thread::spawn(move || -> Result<()> {
        let mut batch = Vec::new();
        for request in requests {
            batch.extend_from_slice(&request);
            if batch.len() > 1 << 16 {
                writer.write_all(&batch)?;
                batch.clear();
            }
        }
        writer.write_all(&batch)?;
        Ok(())
    });
    let mut conn = conn;
    let replies = (0..count).map(|_| conn.read()).collect::<Result<Vec<_>>>();
    sender.join().expect("the sender panicked")?;
    replies
}

fn session_flood(target: &Target) -> Result<String> {
    let (per_conn, conns) = (5_000, 4);
    let handles: Vec<_> = (0..conns)
        .map(|c| {
            let addr = target.addr;
            thread::spawn(move || -> Result<Vec<wire::Reply>> {
                let requests = (0..per_conn)
                    .map(|i| {
                        post("/mcp", &[], &wire::INIT.replacen("\"id\":1", &format!("\"id\":{}", c * per_conn + i), 1))
                    })
                    .collect();
                pipeline(Conn::open(addr)?, requests)
            })
        })
        .collect();
    let mut sessions = Vec::new();
    let mut wrong = Vec::new();
    for (c, handle) in handles.into_iter().enumerate() {
        for (i, reply) in handle.join().expect("a flooder panicked")?.into_iter().enumerate() {
            match reply.header("mcp-session-id") {
                Some(id) if reply.status == 200 => sessions.push(id.to_owned()),
                _ => wrong.extend(refused(&reply, c * per_conn + i).err()),
            }
        }
    }
    // The sessions end before anything is judged, so that the next attacks start clean.
    let deletes = sessions.iter().map(|id| request("DELETE", "/mcp", &[("Mcp-Session-Id", id)], b"")).collect();
    for reply in pipeline(Conn::open(target.addr)?, deletes)? {
        reply.expect(200, None).context("DELETE of a flooded session")?;
    }
    if let Some(first) = wrong.first() {
        bail!("{} refusals not as documented, the first: {first:#}", wrong.len());
    }
    ensure!(
        sessions.len() == 1_000,
        "{} sessions accepted from one address, not max_sessions_per_client (1,000)",
        sessions.len()
    );
    let refused = per_conn * conns - sessions.len();
    Ok(format!(
        "1,000 sessions (200), {refused} × 503 Retry-After: 5 -32603 \"too many sessions from this client address\"; 1,000 DELETE: 200"
    ))
}

/// A refused initialize (`id`): 503, `Retry-After: 5`, -32603 naming the client address's bound.
fn refused(reply: &wire::Reply, id: usize) -> Result<()> {
    reply.expect(503, Some(-32603))?;
    let json = reply.json();
    ensure!(json["id"] == id, "a 503 answered id {} for {id}", json["id"]);
    ensure!(reply.header("retry-after") == Some("5"), "a 503 with Retry-After {:?}", reply.header("retry-after"));
    let message = json["error"]["message"].as_str().unwrap_or("");
    ensure!(message.contains("too many sessions from this client address"), "a 503 said {message:?}");
    Ok(())
}

fn unread_streams(target: &Target) -> Result<String> {
    let mut control = Conn::open(target.addr)?;
    let mut streams = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..200 {
        let id = wire::open_session(&mut control)?;
        let mut conn = Conn::open(target.addr)?;
        let headers =
            [("Accept", "text/event-stream"), ("Mcp-Session-Id", &id), ("MCP-Protocol-Version", "2025-11-25")];
        conn.send(&request("GET", "/mcp", &headers, b""))?;
        streams.push(conn);
        ids.push(id);
    }
    // The first stream's head, read: it is open.
    streams[0].read_head()?.expect(200, None)?;
    let headers =
        [("Accept", "text/event-stream"), ("Mcp-Session-Id", ids[0].as_str()), ("MCP-Protocol-Version", "2025-11-25")];
    control.ask(&request("GET", "/mcp", &headers, b""))?.expect(409, None).context("a second GET stream")?;
    target.fresh().context("a fresh client while 200 streams are unread")?;
    drop(streams);
    for id in &ids {
        wire::delete_session(&mut control, id)?;
    }
    Ok("200 GET streams held unread; a second GET: 409; 200 DELETE: 200".to_owned())
}

fn forged_sessions(target: &Target) -> Result<String> {
    let mut conn = Conn::open(target.addr)?;
    let forged = "0123456789abcdef0123456789abcdef";
    conn.ask(&post("/mcp", &session_headers(forged), &ping(1)))?.expect(404, Some(-32001)).context("an unknown id")?;
    conn.ask(&post("/mcp", &session_headers("../../etc/passwd"), &ping(1)))?
        .expect(404, Some(-32001))
        .context("a garbage id")?;
    conn.ask(&post("/mcp", &[], &ping(1)))?.expect(400, Some(-32600)).context("no session id")?;
    let (_stream, messages) = wire::open_sse(target.addr)?;
    let sse_id = messages.rsplit('=').next().unwrap_or_default().to_owned();
    conn.ask(&post("/mcp", &session_headers(&sse_id), &ping(1)))?
        .expect(404, Some(-32001))
        .context("an HTTP+SSE id at /mcp")?;
    let id = wire::open_session(&mut conn)?;
    conn.ask(&post(&format!("/messages?sessionId={id}"), &[], &ping(1)))?
        .expect(404, Some(-32001))
        .context("a Streamable HTTP id at /messages")?;
    conn.ask(&post(&format!("/messages?sessionId={forged}"), &[], &ping(1)))?
        .expect(404, Some(-32001))
        .context("an unknown id at /messages")?;
    conn.ask(&post("/messages", &[], &ping(1)))?.expect(400, Some(-32600)).context("no sessionId at /messages")?;
    let twice = [("Mcp-Session-Id", id.as_str()), ("Mcp-Session-Id", forged), ("MCP-Protocol-Version", "2025-11-25")];
    conn.ask(&post("/mcp", &twice, &ping(1)))?.expect(400, Some(-32600)).context("two session ids")?;
    wire::delete_session(&mut conn, &id)?;
    conn.ask(&post("/mcp", &session_headers(&id), &ping(1)))?.expect(404, Some(-32001)).context("a deleted id")?;
    Ok("unknown, garbage, deleted, foreign ids: 404 -32001 at /mcp and /messages; none, or two: 400 -32600".to_owned())
}

fn wrong_headers(target: &Target) -> Result<String> {
    let mut conn = Conn::open(target.addr)?;
    let cases: [(&str, &Headers<'_>, u16); 5] = [
        ("Accept: text/plain", &[("Content-Type", "application/json"), ("Accept", "text/plain")], 406),
        ("Accept: application/json only", &[("Content-Type", "application/json"), ("Accept", "application/json")], 406),
        (
            "Content-Type: text/plain",
            &[("Content-Type", "text/plain"), ("Accept", "application/json, text/event-stream")],
            415,
        ),
        ("Origin: http://evil.example.com", &[("Origin", "http://evil.example.com")], 403),
        ("Origin: null", &[("Origin", "null")], 403),
    ];
    for (what, headers, status) in cases {
        let mut all: Vec<(&str, &str)> = headers.to_vec();
        if !all.iter().any(|(n, _)| *n == "Accept") {
            all.extend(wire::JSON_POST);
        }
        conn.ask(&request("POST", "/mcp", &all, wire::INIT.as_bytes()))?.expect(status, Some(-32600)).context(what)?;
    }
    let evil_host = b"POST /mcp HTTP/1.1\r\nHost: evil.example.com\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 2\r\n\r\n{}";
    conn.ask(evil_host)?.expect(403, Some(-32600)).context("Host: evil.example.com")?;
    let init = wire::INIT;
    let len = init.len();
    let accept = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
    let raw = [
        (
            "two Host lines",
            format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example.com\r\n{accept}Content-Length: {len}\r\n\r\n{init}"
            ),
            400,
        ),
        ("no Host", format!("POST /mcp HTTP/1.1\r\n{accept}Content-Length: {len}\r\n\r\n{init}"), 400),
        (
            "an absolute-form target naming another host",
            format!(
                "POST http://evil.example.com/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{accept}Content-Length: {len}\r\n\r\n{init}"
            ),
            403,
        ),
        (
            "two Origin lines",
            format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://localhost\r\nOrigin: http://evil.example.com\r\n{accept}Content-Length: {len}\r\n\r\n{init}"
            ),
            403,
        ),
    ];
    for (what, bytes, status) in raw {
        Conn::open(target.addr)?.ask(bytes.as_bytes())?.expect(status, Some(-32600)).context(what)?;
    }
    let sse = request("GET", "/sse", &[("Accept", "text/event-stream"), ("Origin", "http://evil.example.com")], b"");
    Conn::open(target.addr)?.ask(&sse)?.expect(403, Some(-32600)).context("a foreign Origin at /sse")?;
    let sse = b"GET /sse HTTP/1.1\r\nHost: evil.example.com\r\nAccept: text/event-stream\r\n\r\n";
    Conn::open(target.addr)?.ask(sse)?.expect(403, Some(-32600)).context("a foreign Host at /sse")?;
    Ok("Accept without SSE or JSON: 406 -32600; text/plain body: 415 -32600; a foreign Origin or Host (also as a \
        second line or in the target): 403 -32600; two Host lines, none: 400 -32600"
        .to_owned())
}

fn hostile_bodies(target: &Target) -> Result<String> {
    let mut conn = Conn::open(target.addr)?;
    let open = "[".repeat(100_000);
    conn.ask(&post("/mcp", &[], &open))?.expect(400, Some(-32700)).context("100,000 open brackets")?;
    let nested = format!("{open}{}", "]".repeat(100_000));
    conn.ask(&post("/mcp", &[], &nested))?.expect(400, Some(-32600)).context("100,000 nested arrays")?;
    let deep_params = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{nested}}}}}"#);
    let id = wire::open_session(&mut conn)?;
    // A ping is valid JSON-RPC whatever its params carry (the schema's `PingRequest` params take
    // any member), and the frame parser keeps params raw without recursing: an empty result.
    let reply = conn.ask(&post("/mcp", &session_headers(&id), &deep_params))?;
    ensure!(
        reply.status == 200 && reply.json() == serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        "deep params: expected 200 with an empty result, got {} {}",
        reply.status,
        reply.body
    );
    // Deep arguments reach the schema checker and the tool's argument decoding: decoding them
    // stops at serde_json's depth limit (128), a JSON-RPC -32602 (invalid params) naming it.
    let mut deep_calls = Vec::new();
    for (i, tool) in ["json_schema_2020_12_tool", "test_simple_text", "test_elicitation"].iter().enumerate() {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"name":{nested},"message":{nested}}}}}}}"#,
            i + 10
        );
        let reply = conn
            .ask(&post("/mcp", &session_headers(&id), &call))
            .with_context(|| format!("deep arguments to {tool}"))?;
        let (json, error) = (reply.json(), &reply.json()["error"]);
        let message = error["message"].as_str().unwrap_or_default();
        ensure!(
            reply.status == 200
                && json["id"] == i + 10
                && json.get("result").is_none()
                && error["code"] == -32602
                && message.starts_with("invalid params: ")
                && message.contains("recursion limit exceeded"),
            "deep arguments to {tool}: expected 200 with error -32602 \"invalid params: ... recursion limit exceeded ...\", \
             got {} {json}",
            reply.status
        );
        deep_calls.push(format!("{} {} \"{message}\"", reply.status, error["code"]));
    }
    let mut bad_utf8 = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":""#.to_vec();
    bad_utf8.extend_from_slice(b"\xff\xfe\"}}");
    let mut headers = wire::JSON_POST.to_vec();
    headers.extend(session_headers(&id));
    conn.ask(&request("POST", "/mcp", &headers, &bad_utf8))?.expect(400, Some(-32700)).context("invalid UTF-8")?;
    let batch = format!("[{},{}]", ping(2), ping(3));
    conn.ask(&post("/mcp", &session_headers(&id), &batch))?
        .expect(400, Some(-32600))
        .context("a batch in a 2025-11-25 session")?;
    let batch_init = format!("[{}]", wire::INIT);
    conn.ask(&post("/mcp", &[], &batch_init))?.expect(400, Some(-32600)).context("initialize in a batch")?;
    let modern = format!("[{}]", request_2026("tools/list", 4, ""));
    conn.ask(&post("/mcp", &headers_2026("tools/list", None), &modern))?
        .expect(400, Some(-32600))
        .context("a 2026-07-28 batch")?;
    conn.ask(&post("/mcp", &session_headers(&id), "{\"jsonrpc\":\"2.0\"}"))?
        .expect(400, Some(-32600))
        .context("not JSON-RPC")?;
    wire::delete_session(&mut conn, &id)?;
    Ok(format!(
        "open brackets: 400 -32700; nested arrays: 400 -32600; deep params: {}; deep tool arguments: {}; invalid UTF-8: 400 -32700; batches: 400 -32600",
        reply.short(),
        deep_calls.join(", ")
    ))
}

/// A 2026-07-28 request of `method` with `params` (a JSON object's members, or empty).
fn request_2026(method: &str, id: usize, params: &str) -> String {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"hostile","version":"1"}}"#;
    let sep = if params.is_empty() { "" } else { "," };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}{sep}{meta}}}}}"#)
}

fn headers_2026<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", method)];
    headers.extend(name.map(|n| ("Mcp-Name", n)));
    headers
}

fn revision_2026(target: &Target) -> Result<String> {
    let mut conn = Conn::open(target.addr)?;
    let call = request_2026("tools/call", 1, r#""name":"test_elicitation","arguments":{"message":"hi"}"#);
    let first = conn.ask(&post("/mcp", &headers_2026("tools/call", Some("test_elicitation")), &call))?;
    first.expect(200, None)?;
    let state = first.json()["result"]["requestState"].as_str().context("no requestState")?.to_owned();
    let cases: [(&str, Vec<Header<'_>>, i64); 5] = [
        ("Mcp-Method tools/list", headers_2026("tools/list", Some("test_elicitation")), -32020),
        ("Mcp-Method TOOLS/CALL", headers_2026("TOOLS/CALL", Some("test_elicitation")), -32020),
        ("Mcp-Name other", headers_2026("tools/call", Some("other")), -32020),
        ("no Mcp-Method", vec![("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Name", "test_elicitation")], -32020),
        (
            "MCP-Protocol-Version 2026-07-29",
            vec![
                ("MCP-Protocol-Version", "2026-07-29"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "test_elicitation"),
            ],
            -32022,
        ),
    ];
    for (what, headers, code) in cases {
        conn.ask(&post("/mcp", &headers, &call))?.expect(400, Some(code)).context(what)?;
    }
    let region = request_2026("tools/call", 4, r#""name":"test_region_header","arguments":{"region":"us"}"#);
    let param_cases: [(&str, Vec<Header<'_>>, u16, Option<i64>); 5] = [
        ("Mcp-Param-Region us", vec![("Mcp-Param-Region", "us")], 200, None),
        ("Mcp-Param-Region eu", vec![("Mcp-Param-Region", "eu")], 400, Some(-32020)),
        ("no Mcp-Param-Region", vec![], 400, Some(-32020)),
        ("two Mcp-Param-Region", vec![("Mcp-Param-Region", "us"), ("Mcp-Param-Region", "eu")], 400, Some(-32020)),
        ("MCP-Protocol-Version 2025-11-25 on a 2026-07-28 body", vec![("Mcp-Param-Region", "us")], 400, Some(-32020)),
    ];
    for (i, (what, more, status, code)) in param_cases.into_iter().enumerate() {
        let mut headers = headers_2026("tools/call", Some("test_region_header"));
        if i == 4 {
            headers[0].1 = "2025-11-25";
        }
        headers.extend(more);
        conn.ask(&post("/mcp", &headers, &region))?.expect(status, code).context(what)?;
    }
    let answers = r#""inputResponses":{"elicitation-1":{"action":"accept","content":{"username":"a","email":"b"}}}"#;
    let mut tampered = state.clone().into_bytes();
    let last = tampered.len() - 1;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered)?;
    let forged_payload = {
        let mut parts: Vec<&str> = state.split('.').collect();
        parts[2] = "eyJhbnN3ZXJzIjp7fX0";
        parts.join(".")
    };
    for (what, state) in
        [("a flipped MAC byte", tampered.as_str()), ("a forged payload", &forged_payload), ("junk", "x")]
    {
        let params =
            format!(r#""name":"test_elicitation","arguments":{{"message":"hi"}},{answers},"requestState":"{state}""#);
        let retry = request_2026("tools/call", 2, &params);
        conn.ask(&post("/mcp", &headers_2026("tools/call", Some("test_elicitation")), &retry))?
            .expect(200, Some(-32602))
            .context(what)?;
    }
    let params =
        format!(r#""name":"test_elicitation","arguments":{{"message":"other"}},{answers},"requestState":"{state}""#);
    conn.ask(&post(
        "/mcp",
        &headers_2026("tools/call", Some("test_elicitation")),
        &request_2026("tools/call", 3, &params),
    ))?
    .expect(200, Some(-32602))
    .context("a requestState replayed with other arguments")?;
    Ok("mismatched or missing Mcp-Method, Mcp-Name, Mcp-Param-*, MCP-Protocol-Version: 400 -32020; unknown revision: 400 -32022; tampered, forged, junk, misapplied requestState: 200 -32602".to_owned())
}

fn pipelined(target: &Target) -> Result<String> {
    let mut conn = Conn::open(target.addr)?;
    let id = wire::open_session(&mut conn)?;
    let count = 3_000;
    let requests = (0..count).map(|i| post("/mcp", &session_headers(&id), &ping(i))).collect();
    let replies = pipeline(conn, requests)?;
    for (i, reply) in replies.iter().enumerate() {
        reply.expect(200, None)?;
        ensure!(reply.json()["id"] == i && reply.json()["result"].is_object(), "ping {i} got {}", reply.short());
    }
    wire::delete_session(&mut Conn::open(target.addr)?, &id)?;
    Ok(format!("{count} answers, in order"))
}

fn http_sse(target: &Target) -> Result<String> {
    let streams = (0..300).map(|_| wire::open_sse(target.addr)).collect::<Result<Vec<_>>>()?;
    target.fresh().context("a fresh client while 300 /sse streams are unread")?;
    let (mut stream, messages) = wire::open_sse(target.addr)?;
    let mut conn = Conn::open(target.addr)?;
    conn.ask(&post(&messages, &[], wire::INIT))?.expect(202, None).context("initialize at /messages")?;
    let requests = (0..1_000).map(|i| post(&messages, &[], &ping(i + 10))).collect();
    for reply in pipeline(Conn::open(target.addr)?, requests).context("pipelined pings at /messages")? {
        reply.expect(202, None)?;
    }
    let mut answered = 0;
    let data = stream.read_chunks(|body| {
        let text = String::from_utf8_lossy(body);
        wire::sse_data(&text).iter().filter(|d| d.contains("\"result\"")).count() > 1_000
    })?;
    answered += wire::sse_data(&String::from_utf8_lossy(&data)).iter().filter(|d| d.contains("\"result\"")).count();
    ensure!(answered == 1_001, "{answered} answers on the stream, not 1,001");
    declared_over(target, &messages, &[])?.expect(413, Some(-32600)).context("a body over 4 MiB at /messages")?;
    conn.ask(&post(&messages, &[], "{"))?.expect(400, Some(-32700)).context("bad JSON at /messages")?;
    conn.ask(&post(&messages, &[], r#"{"jsonrpc":"2.0"}"#))?
        .expect(400, Some(-32600))
        .context("not JSON-RPC at /messages")?;
    conn.ask(&post(&messages, &[], &ping(5_000)))?.expect(202, None).context("a ping after bad bodies")?;
    drop(streams);
    Ok("300 unread streams held; 1,001 POSTs: 202 and 1,001 answers on the stream; over 4 MiB: 413 -32600; bad JSON: 400 -32700; not JSON-RPC: 400 -32600; the session still served".to_owned())
}

fn sse_flood(target: &Target) -> Result<String> {
    let get = request("GET", "/sse", &[("Accept", "text/event-stream")], b"");
    let mut streams = Vec::new();
    let mut refusal = loop {
        ensure!(streams.len() <= 1_000, "more than 1,000 /sse sessions from one address");
        let mut conn = Conn::open(target.addr)?;
        let head = conn.ask_head(&get)?;
        if head.status != 200 {
            break (conn, head);
        }
        streams.push(conn);
    };
    let held = streams.len();
    refusal.0.read_body(&mut refusal.1)?;
    let reply = refusal.1;
    reply.expect(503, Some(-32603))?;
    ensure!(reply.header("retry-after") == Some("5"), "a 503 with Retry-After {:?}", reply.header("retry-after"));
    let message = reply.json()["error"]["message"].as_str().unwrap_or("").to_owned();
    ensure!(message.contains("too many sessions from this client address"), "the 503 said {message:?}");
    ensure!(held == 1_000, "{held} /sse sessions held from one address, not max_sessions_per_client (1,000)");
    drop(streams);
    // The end of a stream ends its session: room again, soon.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut conn = Conn::open(target.addr)?;
        let head = conn.ask_head(&get)?;
        if head.status == 200 {
            break;
        }
        ensure!(Instant::now() < deadline, "/sse still refused 5 s after the streams closed: {}", head.status);
        thread::sleep(Duration::from_millis(100));
    }
    Ok(format!("{held} streams (200), then 503 Retry-After: 5 -32603 \"{message}\"; admitted again once they closed"))
}
