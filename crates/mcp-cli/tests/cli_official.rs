//! `mcp` against the official `@modelcontextprotocol/server-everything` (TypeScript, run by
//! Node over stdio; both installed under `target/interop` by `cargo xtask interop`): the
//! list, a number and a boolean typed by its zod-made schemas, progress, `--json`, Ctrl-C.

mod common;

use std::time::{Duration, Instant};

use common::{Live, mcp, server_everything};

fn with_server(args: &[&str]) -> Vec<String> {
    let mut line: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    line.push("--".to_owned());
    line.extend(server_everything());
    line
}

fn run(args: &[&str]) -> common::Run {
    let line = with_server(args);
    mcp(&line.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn lists_and_typed_calls_against_server_everything() {
    let info = run(&["--json", "info"]).expect(0).json();
    assert_eq!(info["serverInfo"]["name"], "mcp-servers/everything");
    let tools = run(&["tools"]).expect(0);
    let sum = tools.stdout.lines().find(|l| l.starts_with("get-sum ")).expect("get-sum listed");
    assert!(sum.contains("a: number, b: number") && sum.contains("Returns the sum of two numbers"), "{sum}");

    let sum = run(&["call", "get-sum", "a=2", "b=3.5"]).expect(0);
    assert_eq!(sum.stdout, "The sum of 2 and 3.5 is 5.5.\n");
    // A boolean: `includeImage=true` must arrive as `true` (zod refuses the string).
    let with_image = run(&["call", "get-annotated-message", "messageType=success", "includeImage=true"]).expect(0);
    assert!(with_image.stdout.contains("[image image/png,"), "{}", with_image.stdout);
    let without =
        run(&["--json", "call", "get-annotated-message", "messageType=success", "includeImage=false"]).expect(0);
    assert_eq!(without.json()["content"].as_array().unwrap().len(), 1);
    let refused = run(&["call", "get-annotated-message", "includeImage=maybe", "messageType=error"]).expect(2);
    assert!(refused.stderr.contains("includeImage=maybe: not boolean"), "{}", refused.stderr);

    let structured = run(&["--json", "call", "get-structured-content", "location=New York"]).expect(0).json();
    assert!(structured["structuredContent"]["temperature"].is_number(), "{structured}");
    let prompts = run(&["--json", "prompts"]).expect(0).json();
    assert!(!prompts["prompts"].as_array().unwrap().is_empty());
}

#[test]
fn progress_and_ctrl_c_against_server_everything() {
    let done = run(&["call", "trigger-long-running-operation", "duration=0.2", "steps=2"]).expect(0);
    let progress: Vec<&str> = done.stderr.lines().filter(|l| l.starts_with("progress")).collect();
    assert_eq!(progress, ["progress 1/2", "progress 2/2"], "{}", done.stderr);
    assert!(done.stdout.starts_with("Long running operation completed."), "{}", done.stdout);

    let line = with_server(&["call", "trigger-long-running-operation", "duration=60", "steps=60"]);
    let mut live = Live::start(&line.iter().map(String::as_str).collect::<Vec<_>>());
    live.wait_for("progress 1/60");
    let sent = Instant::now();
    live.interrupt();
    let run = live.finish_within(Duration::from_secs(10)).expect(130);
    assert!(sent.elapsed() < Duration::from_secs(5), "ended {:?} after Ctrl-C", sent.elapsed());
    assert!(run.stderr.lines().any(|l| l == "cancelled"), "{}", run.stderr);
}
