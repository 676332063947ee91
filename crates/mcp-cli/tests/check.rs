//! `mcp check` run as a user runs it: the binary against our `everything` example over
//! Streamable HTTP, our `stdio_server` example, the official server-everything (stdio, under
//! `target/interop`), and a deliberately broken server (`fixtures/bad_server.py`); the report's
//! lines, its JSON and the exit code.

#[path = "check_common/mod.rs"]
mod common;

use common::{Run, example, mcp, server_everything, workspace};
use serde_json::Value;

/// The checks of a `--json` report, by name: (status, detail).
fn parse_checks(run: &Run) -> Vec<(String, String, String)> {
    let report: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    let summary = &report["summary"];
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(
        summary["pass"].as_u64().unwrap() + summary["warn"].as_u64().unwrap() + summary["fail"].as_u64().unwrap(),
        checks.len() as u64
    );
    checks
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap().to_owned();
            (s("status"), s("check"), s("detail"))
        })
        .collect()
}

fn status_of<'a>(checks: &'a [(String, String, String)], check: &str) -> (&'a str, &'a str) {
    let found =
        checks.iter().find(|(_, c, _)| c == check).unwrap_or_else(|| panic!("no check {check:?} in {checks:#?}"));
    (found.0.as_str(), found.2.as_str())
}

/// What a well-behaved server's report holds: every list, every tool, the error answers, ping.
fn assert_clean(checks: &[(String, String, String)], tools: &[&str]) {
    for (status, check, detail) in checks {
        assert_ne!(status, "fail", "{check}: {detail}\n{checks:#?}");
    }
    assert_eq!(status_of(checks, "connect").0, "pass");
    for list in ["tools/list", "prompts/list", "resources/list", "resources/templates/list"] {
        assert_eq!(status_of(checks, list).0, "pass", "{list}");
    }
    for tool in tools {
        let (status, detail) = status_of(checks, &format!("tool {tool}"));
        assert!(status == "pass" && detail.starts_with("input schema"), "{tool}: {detail}");
    }
    assert_eq!(status_of(checks, "error: unknown method").0, "pass");
    assert!(status_of(checks, "error: unknown method").1.starts_with("-32601"));
    assert_eq!(status_of(checks, "ping").0, "pass");
}

#[test]
fn our_everything_over_http_passes() {
    let server = common::HttpServer::start(&example("everything"), &["--http"]);
    let run = mcp(&["check", &server.url]);
    assert_eq!(run.code, 0, "{run:?}");
    // The text report: one line per check, aligned, and the summary.
    let first = run.stdout.lines().next().unwrap();
    assert_eq!(first, format!("mcp check: {}", server.url));
    for revision in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] {
        let line = run.stdout.lines().find(|l| l.contains(&format!("handshake {revision}"))).unwrap();
        assert!(line.starts_with("PASS  handshake") && line.ends_with(&format!("speaks {revision}")), "{line}");
    }
    assert!(
        run.stdout.lines().any(|l| l.starts_with("PASS  tools/list") && l.contains(" tools in 1 page")),
        "{}",
        run.stdout
    );
    let summary = run.stdout.lines().last().unwrap();
    assert!(summary.ends_with(" 0 warnings, 0 failed"), "{summary}");

    let run = mcp(&["--json", "check", &server.url]);
    assert_eq!(run.code, 0, "{run:?}");
    let checks = parse_checks(&run);
    assert_clean(&checks, &["test_simple_text"]);
    assert_eq!(status_of(&checks, "error: unknown tool").0, "pass");
    assert_eq!(status_of(&checks, "error: bad params").0, "pass");
    assert!(status_of(&checks, "connect").1.ends_with("speaks 2026-07-28"));
}

#[test]
fn our_stdio_server_passes_and_pinning_a_revision_checks_in_it() {
    let server = example("stdio_server");
    let run = mcp(&["--json", "check", "--", server.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let checks = parse_checks(&run);
    assert_clean(&checks, &["add", "weather", "order"]);
    // `weather` has an output schema.
    assert_eq!(status_of(&checks, "tool weather").1, "input schema and output schema valid");

    let run = mcp(&["--json", "--protocol", "2025-03-26", "check", "--", server.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let checks = parse_checks(&run);
    assert!(status_of(&checks, "connect").1.ends_with("speaks 2025-03-26"), "{checks:#?}");
    assert!(status_of(&checks, "ping").1 == "answered");
}

#[test]
fn the_official_server_everything_over_stdio() {
    let (node, entry) = server_everything();
    let run = mcp(&["--json", "check", "--", node.to_str().unwrap(), entry.to_str().unwrap(), "stdio"]);
    assert_eq!(run.code, 0, "{run:?}");
    let checks = parse_checks(&run);
    assert_clean(&checks, &["echo"]);
    for revision in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        assert_eq!(status_of(&checks, &format!("handshake {revision}")).0, "pass", "{checks:#?}");
    }
    // It does not speak 2026-07-28: a warning, not a failure.
    assert_eq!(status_of(&checks, "handshake 2026-07-28").0, "warn", "{checks:#?}");
}

#[test]
fn the_official_server_everything_over_http() {
    let (node, entry) = server_everything();
    let port = common::free_port();
    let mut command = std::process::Command::new(node);
    command.arg(entry).arg("streamableHttp").env("PORT", port.to_string()).stderr(std::process::Stdio::null());
    let server = common::HttpServer::spawn(command, port);
    let run = mcp(&["--json", "check", &server.url]);
    assert_eq!(run.code, 0, "{run:?}");
    let checks = parse_checks(&run);
    assert_clean(&checks, &["echo"]);
    assert!(status_of(&checks, "connect").1.ends_with("speaks 2025-11-25"), "{checks:#?}");
    // Its error answers, as they are today: a tool error for an unknown tool, -32603 for
    // arguments that are not an object (warnings: the specification asks -32602).
    assert_eq!(status_of(&checks, "error: unknown tool").0, "warn");
    assert_eq!(status_of(&checks, "error: bad params").0, "warn");
}

#[test]
fn a_broken_server_fails_with_reasons() {
    let script = workspace().join("crates/mcp-cli/tests/fixtures/bad_server.py");
    let run = mcp(&["--json", "check", "--", "python3", script.to_str().unwrap()]);
    assert_eq!(run.code, 4, "{run:?}");
    let checks = parse_checks(&run);
    assert_eq!(status_of(&checks, "handshake 2025-06-18"), ("pass", "initialize: speaks 2025-06-18"));
    let (status, detail) = status_of(&checks, "handshake 2025-11-25");
    assert_eq!((status, detail), ("warn", "initialize: answered 2025-06-18 (does not speak 2025-11-25)"));
    assert_eq!(status_of(&checks, "handshake 2024-11-05").0, "warn");
    let (status, detail) = status_of(&checks, "handshake 2026-07-28");
    assert_eq!(
        (status, detail),
        ("warn", "server/discover: does not speak 2026-07-28 (server/discover failed: no (code -32601))")
    );
    let (status, detail) = status_of(&checks, "tools/list");
    assert_eq!(status, "fail");
    assert!(
        detail.starts_with("4 tools in 2 pages: ") && detail.contains("`echo` comes 2 times (name must be unique)"),
        "{detail}"
    );
    let (status, detail) = status_of(&checks, "prompts/list");
    assert_eq!(status, "fail");
    assert!(detail.contains("the cursor \"again\" came before: the pages loop"), "{detail}");
    let (status, detail) = status_of(&checks, "tool broken");
    assert!(status == "fail" && detail.starts_with("inputSchema is not a valid JSON Schema"), "{detail}");
    let (status, detail) = status_of(&checks, "tool stringly");
    assert!(status == "fail" && detail.contains("not of type \"object\""), "{detail}");
    assert_eq!(status_of(&checks, "error: unknown method"), ("fail", "-32600 no: JSON-RPC asks -32601"));
    assert_eq!(status_of(&checks, "error: unknown tool").0, "fail");
    assert_eq!(status_of(&checks, "error: bad params").0, "fail");
    assert_eq!(status_of(&checks, "ping").0, "pass");

    // The text report: FAIL lines with their reasons, and the summary.
    let run = mcp(&["check", "--", "python3", script.to_str().unwrap()]);
    assert_eq!(run.code, 4);
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("FAIL  tool broken") && l.contains("inputSchema is not a valid JSON Schema")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.lines().last().unwrap().ends_with(" failed") && !run.stdout.contains(" 0 failed"),
        "{}",
        run.stdout
    );
}

#[test]
fn no_server_is_a_usage_error_and_an_unreachable_one_a_connection_error() {
    let run = mcp(&["check"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("no server"), "{run:?}");
    let run = mcp(&["--timeout", "5", "check", "http://127.0.0.1:9/mcp"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stdout.lines().any(|l| l.starts_with("FAIL  connect")), "{run:?}");
}
