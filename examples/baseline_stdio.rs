//! `baseline_stdio`: the no-library baseline of the stdio benchmarks. A plain loop reads a
//! line, parses it with serde_json, and writes an echo reply; it flushes only when no more
//! input is buffered, so pipelined requests share writes. No MCP, no engine, no async.
//!
//! `cargo run --release --example baseline_stdio`

use std::io::{BufRead as _, BufReader, BufWriter, Write as _};

fn main() -> anyhow::Result<()> {
    let mut input = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut out = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        if let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line)
            && let Some(id) = msg.get("id")
        {
            let result = match msg["method"].as_str() {
                Some("tools/call") => {
                    let text = msg["params"]["arguments"]["text"].as_str().unwrap_or_default();
                    serde_json::json!({"content": [{"type": "text", "text": text}]})
                }
                _ => {
                    serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "baseline", "version": "1"}})
                }
            };
            serde_json::to_writer(&mut out, &serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}))?;
            out.write_all(b"\n")?;
        }
        if input.buffer().is_empty() {
            out.flush()?;
        }
    }
    out.flush()?;
    Ok(())
}
