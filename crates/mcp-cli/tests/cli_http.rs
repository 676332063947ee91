//! `mcp` against the `everything` example served over Streamable HTTP on a free local port
//! (the server named by its URL): lists, typed calls with progress, every protocol revision
//! pinned with `--protocol`, Ctrl-C, and a config entry with a `url`.

mod common;

use std::time::{Duration, Instant};

use common::{Everything, Live, mcp};
use serde_json::json;

#[test]
fn lists_and_calls_over_http() {
    let server = Everything::start();
    let url = server.url.as_str();
    let tools = mcp(&["--json", "tools", url]).expect(0).json();
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names[0], "test_simple_text");
    assert!(names.contains(&"count_down") && names.contains(&"slow_compute"));
    let table = mcp(&["tools", url]).expect(0);
    let row = table.stdout.lines().find(|l| l.starts_with("count_down ")).unwrap();
    assert!(row.contains("from: integer, interval_ms?: integer|null"), "{row}");

    // An integer and a number, typed by the schema; progress on stderr.
    let run = mcp(&["call", "count_down", "from=3", "interval_ms=1", url]).expect(0);
    assert_eq!(run.stdout, "counted down from 3 (on everything)\n");
    let progress: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("progress")).collect();
    assert_eq!(
        progress,
        [
            "progress 1/3 2 left (on everything)",
            "progress 2/3 1 left (on everything)",
            "progress 3/3 0 left (on everything)"
        ]
    );
    let computed = mcp(&["call", "slow_compute", "seconds=0.01", "label=x", url]).expect(0);
    assert_eq!(computed.stdout, "computed `x` in 0.01 s\n");
    let wrong = mcp(&["call", "count_down", "from=three", url]).expect(2);
    assert!(wrong.stderr.contains("from=three: not integer"), "{}", wrong.stderr);

    // Log messages as they come; a tool error exits 1.
    let logged = mcp(&["call", "test_tool_with_logging", url]).expect(0);
    assert!(
        logged
            .stderr
            .contains("[info] Tool execution started\n[info] Tool processing data\n[info] Tool execution completed"),
        "{}",
        logged.stderr
    );
    mcp(&["call", "test_error_handling", url]).expect(1);
    let image = mcp(&["--json", "call", "test_image_content", url]).expect(0).json();
    assert_eq!(image["content"][0]["type"], "image");

    let resources = mcp(&["--json", "resources", url]).expect(0).json();
    assert!(resources["resources"].as_array().unwrap().iter().any(|r| r["uri"] == "test://static-text"));
    let text = mcp(&["read", "test://static-text", url]).expect(0);
    assert_eq!(text.stdout, "This is the content of the static text resource.\n");
    let prompt = mcp(&["--json", "prompt", "test_prompt_with_arguments", "arg1=a", "arg2=b", url]).expect(0).json();
    assert!(prompt["messages"][0]["content"]["text"].as_str().unwrap().contains("arg1='a'"), "{prompt}");
}

#[test]
fn every_revision_can_be_pinned() {
    let server = Everything::start();
    let url = server.url.as_str();
    for revision in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] {
        let info = mcp(&["--protocol", revision, "--json", "info", url]).expect(0).json();
        assert_eq!(info["protocolVersion"], revision);
        assert_eq!(info["serverInfo"]["name"], "mcp-rust-everything");
        let greeting = mcp(&["--protocol", revision, "--json", "call", "greet", "name=Ada", url]).expect(0).json();
        assert_eq!(greeting["content"], json!([{"type": "text", "text": "Hello, Ada!"}]), "{revision}");
        let text = mcp(&["--protocol", revision, "info", url]).expect(0);
        assert!(text.stdout.contains(&format!("revision      {revision}")), "{}", text.stdout);
    }
}

#[test]
fn ctrl_c_cancels_a_call_over_http() {
    let server = Everything::start();
    // The session revision POSTs notifications/cancelled; 2026-07-28 closes the call's response
    // stream. Either way the server's handler stops (logged at debug).
    for (n, revision) in ["2025-11-25", "2026-07-28"].into_iter().enumerate() {
        let mut live =
            Live::start(&["--protocol", revision, "call", "count_down", "from=600", "interval_ms=50", &server.url]);
        live.wait_for("progress 1/600");
        let sent = Instant::now();
        live.interrupt();
        let run = live.finish_within(Duration::from_secs(10)).expect(130);
        assert!(sent.elapsed() < Duration::from_secs(5), "ended {:?} after Ctrl-C", sent.elapsed());
        assert!(run.stderr.lines().any(|l| l == "cancelled"), "{}", run.stderr);
        server.wait_for_log(&["request cancelled; no response", "method=tools/call"], n + 1);
    }
}

#[test]
fn a_config_entry_with_a_url() {
    let server = Everything::start();
    let dir = std::env::temp_dir().join(format!("mcp-cli-http-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("config.json");
    let config = json!({"mcpServers": {"everything": {"url": server.url, "headers": {"X-Test": "1"}}}});
    std::fs::write(&file, config.to_string()).unwrap();
    let run = mcp(&["--config", &file.display().to_string(), "call", "greet", "name=config"]).expect(0);
    assert_eq!(run.stdout, "Hello, config!\n");
}

#[test]
fn skills_are_listed_loaded_and_read_over_http() {
    let server = Everything::start();
    let url = server.url.as_str();
    let listed = mcp(&["--json", "skills", url]).expect(0).json();
    let uris: Vec<&str> = listed["skills"].as_array().unwrap().iter().map(|s| s["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["skill://acme/changelog/SKILL.md", "skill://greeting/SKILL.md"]);
    let table = mcp(&["skills", url]).expect(0);
    let row = table.stdout.lines().find(|l| l.starts_with("skill://greeting/SKILL.md ")).unwrap();
    assert!(row.contains("greeting") && row.contains(" 3 ") && row.contains("Greet a person"), "{row}");

    // Loaded (checked against its entry), then one of its files.
    let skill_md = std::fs::read_to_string(common::root().join("examples/skills/greeting/SKILL.md")).unwrap();
    let loaded = mcp(&["skills", "--get", "skill://greeting/SKILL.md", url]).expect(0);
    assert_eq!(loaded.stdout, format!("{}\n", skill_md.trim_end()));
    let tone =
        mcp(&["skills", "--get", "skill://greeting/SKILL.md", "--read", "skill://greeting/references/TONE.md", url])
            .expect(0);
    assert!(tone.stdout.starts_with("# Tone\n"), "{}", tone.stdout);
    // A file of no listed entry, and a skill the server does not serve.
    let unlisted = mcp(&["skills", "--get", "skill://greeting/SKILL.md", "--read", "skill://greeting/nope.md", url]);
    assert_ne!(unlisted.code(), 0);
    assert!(unlisted.stderr.contains("is not a file of skill"), "{}", unlisted.stderr);
    let unknown = mcp(&["skills", "--get", "skill://nobody/SKILL.md", url]);
    assert_ne!(unknown.code(), 0);
    assert!(unknown.stderr.contains("no skill is served at"), "{}", unknown.stderr);
}
