//! The argument decoding `#[tool]` generates, through a real server over the in-memory
//! transport.

use std::cell::RefCell;
use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::transport::{MemoryRead, MemoryWrite, memory};
use mcp_jsonrpc::{Transport, TransportRead, TransportWrite};
use mcp_sdk::server::Server;
use mcp_sdk::tool;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

/// A point.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Point {
    /// Across.
    x: i32,
    /// Down.
    y: Option<f32>,
}

/// A kind of thing.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Kind {
    /// Small.
    Small,
    /// Big, by how much.
    Big {
        /// How much.
        by: u16,
    },
}

/// Takes every kind of argument.
#[tool]
#[allow(clippy::too_many_arguments)]
fn mix(
    count: u8,
    ratio: f64,
    name: String,
    tags: Vec<String>,
    flag: Option<bool>,
    point: Option<Point>,
    kind: Option<Kind>,
    #[serde(default)] extra: Option<std::collections::BTreeMap<String, i64>>,
) -> String {
    let point = point.map(|p| (p.x, p.y));
    let kind = kind.map(|k| match k {
        Kind::Small => 0,
        Kind::Big { by } => by,
    });
    format!("{count} {ratio} {name} {tags:?} {flag:?} {point:?} {kind:?} {extra:?}")
}

struct Harness {
    rt: Runtime,
    read: MemoryRead,
    write: MemoryWrite,
    next: i64,
}

impl Harness {
    fn start() -> Harness {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime");
        let server = Server::builder("fuzz", "1").tool(mix::tool()).build().expect("the server builds");
        let (ours, theirs) = memory(16);
        rt.spawn(async move { server.serve(theirs).await });
        let (read, write) = ours.split();
        let mut harness = Harness { rt, read, write, next: 0 };
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}});
        let answer = harness.call("initialize", init);
        assert!(answer.get("result").is_some(), "{answer}");
        harness.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        harness
    }

    fn send(&mut self, message: Value) {
        let frame = Bytes::from(message.to_string());
        self.rt.block_on(self.write.write(&[frame.into()])).expect("the server reads");
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let frame = self
            .rt
            .block_on(async { tokio::time::timeout(Duration::from_secs(10), self.read.read()).await })
            .unwrap_or_else(|_| panic!("no answer within 10 s"))
            .expect("the server is up")
            .expect("a frame");
        let answer: Value = serde_json::from_slice(&frame.frame).expect("JSON");
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

thread_local! {
    static HARNESS: RefCell<Option<Harness>> = const { RefCell::new(None) };
}

/// The bytes, as JSON, are the `arguments` of a `tools/call` of a `#[tool]` taking integers,
/// a float, strings, a list, options, a struct, an enum and a map, served by a real server
/// (revision 2025-11-25): the answer is the tool's result, or says the arguments are invalid,
/// as a tool error (`isError`, what 2025-11-25 asks for input validation errors) or as the
/// error -32602; never a panic, nor another error.
pub fn args(data: &[u8]) {
    let Ok(arguments) = serde_json::from_slice::<Value>(data) else { return };
    HARNESS.with(|cell| {
        let mut cell = cell.borrow_mut();
        let harness = cell.get_or_insert_with(Harness::start);
        let answer = harness.call("tools/call", json!({"name": "mix", "arguments": arguments}));
        match (answer.get("result"), answer.get("error")) {
            (Some(result), None) if result["isError"] == true => {
                let text = result["content"][0]["text"].as_str().unwrap_or_default();
                assert!(text.starts_with("invalid arguments for tool `mix`"), "arguments {arguments}: {answer}");
            }
            (Some(_), None) => {}
            (None, Some(error)) => assert_eq!(error["code"], -32602, "arguments {arguments}: {answer}"),
            _ => panic!("not a response: {answer}"),
        }
    });
}
