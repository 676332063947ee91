//! `mcp` against our stdio servers (the `stdio_server` example, and `everything --stdio`),
//! each run as a child of `mcp` after `--`: the lists, calls with typed arguments, `--args`,
//! the refusals before sending (exit 2), progress and log notifications, a tool error (exit
//! 1), Ctrl-C (exit 130, the server told), `--json` parsed back, and the config-file form.
//! `complete --context` against the official server-everything, whose completion of one
//! argument depends on another.

mod common;

use std::time::{Duration, Instant};

use common::{Live, example, mcp, server_everything};
use serde_json::json;

fn showcase() -> String {
    example("stdio_server").display().to_string()
}

#[test]
fn lists_print_as_tables_and_as_json() {
    let server = showcase();
    let tools = mcp(&["tools", "--", &server]).expect(0);
    let header = tools.stdout.lines().next().unwrap();
    assert!(header.starts_with("NAME") && header.contains("ARGUMENTS") && header.contains("DESCRIPTION"));
    let add = tools.stdout.lines().find(|l| l.starts_with("add ")).expect("a row for `add`");
    assert!(add.contains("a: number, b: number") && add.contains("Adds two numbers."), "{add}");
    assert!(!tools.stdout.contains('\u{1b}'), "no colour when piped");

    let json = mcp(&["tools", "--json", "--", &server]).expect(0).json();
    let names: Vec<&str> = json["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names[..4], ["add", "weather", "count_down", "build"]);
    assert_eq!(json["tools"][0]["inputSchema"]["required"], json!(["a", "b"]));

    let prompts = mcp(&["--json", "prompts", "--", &server]).expect(0).json();
    assert_eq!(prompts["prompts"][0]["name"], "review");
    let resources = mcp(&["resources", "--", &server]).expect(0);
    assert!(resources.stdout.lines().nth(1).unwrap().starts_with("showcase://readme  readme  text/markdown"));
    let templates = mcp(&["--json", "templates", "--", &server]).expect(0).json();
    assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], "notes://{id}");
}

#[test]
fn info_names_the_server_its_revision_and_capabilities() {
    let server = showcase();
    let info = mcp(&["info", "--", &server]).expect(0);
    assert!(info.stdout.contains("name          showcase"), "{}", info.stdout);
    assert!(info.stdout.contains("title         Showcase"));
    assert!(info.stdout.contains("revision      2026-07-28"));
    assert!(info.stdout.contains("tools (listChanged)"));
    assert!(info.stdout.contains("instructions  Tools: add"));
    let json = mcp(&["info", "--json", "--protocol", "2025-06-18", "--", &server]).expect(0).json();
    assert_eq!(json["serverInfo"]["name"], "showcase");
    assert_eq!(json["protocolVersion"], "2025-06-18");
    assert!(json["capabilities"]["prompts"].is_object());
}

#[test]
fn call_types_its_arguments_by_the_tools_schema() {
    let server = showcase();
    let sum = mcp(&["call", "add", "a=1", "b=2.5", "--", &server]).expect(0);
    assert_eq!(sum.stdout, "{\n  \"result\": 3.5\n}\n", "structured content as pretty JSON, its text copy left out");
    let json = mcp(&["--json", "call", "add", "a=40", "b=2", "--", &server]).expect(0).json();
    assert_eq!(json["structuredContent"]["result"], 42.0);
    // A string argument stays a string, even when it reads as a number.
    let weather = mcp(&["--json", "call", "weather", "city=1234", "--", &server]).expect(0).json();
    assert_eq!(weather["structuredContent"]["city"], "1234");
    // `--args` JSON and `@FILE`, and `key:=JSON`.
    let inline = mcp(&["call", "add", "--args", r#"{"a": 2, "b": 3}"#, "--", &server]).expect(0);
    assert!(inline.stdout.contains("\"result\": 5.0"), "{}", inline.stdout);
    let file = std::env::temp_dir().join(format!("mcp-cli-args-{}.json", std::process::id()));
    std::fs::write(&file, r#"{"a": 10, "b": 0.5}"#).unwrap();
    let at = format!("@{}", file.display());
    let from_file = mcp(&["call", "add", "--args", &at, "--", &server]).expect(0);
    assert!(from_file.stdout.contains("\"result\": 10.5"), "{}", from_file.stdout);
    let raw = mcp(&["call", "add", "a:=1e1", "b=1", "--", &server]).expect(0);
    assert!(raw.stdout.contains("\"result\": 11.0"), "{}", raw.stdout);
}

#[test]
fn arguments_that_do_not_fit_the_schema_are_refused_before_sending() {
    let server = showcase();
    let cases: [(&[&str], &str); 6] = [
        (&["a=1"], "missing required argument(s): b"),
        (&["a=1", "b=2", "c=3"], "unknown argument `c` (expected: a, b)"),
        (&["a=one", "b=2"], "a=one: not number"),
        (&["--args", "[1, 2]"], "a JSON object is needed"),
        (&["--args", "@/nonexistent/mcp-args.json"], "--args @/nonexistent/mcp-args.json"),
        (&["./not-an-argument"], "is not key=value"),
    ];
    for (args, message) in cases {
        let mut line = vec!["call", "add"];
        line.extend_from_slice(args);
        line.extend_from_slice(&["--", &server]);
        let run = mcp(&line).expect(2);
        assert!(run.stderr.contains(message), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    // Beyond the keys and types: the whole schema (here `minimum: 0`).
    let below = mcp(&["call", "count_down", "from=-1", "--", &server]).expect(2);
    assert!(below.stderr.contains("less than the minimum of 0"), "{}", below.stderr);
    let unknown = mcp(&["call", "nope", "--", &server]).expect(2);
    assert!(unknown.stderr.contains("no tool named `nope` (the server has: add, weather"), "{}", unknown.stderr);
    let prompt = mcp(&["prompt", "review", "language=rust", "--", &server]).expect(2);
    assert!(prompt.stderr.contains("missing required argument(s): code"), "{}", prompt.stderr);
}

#[test]
fn progress_and_log_messages_come_on_stderr() {
    let run = mcp(&["call", "count_down", "from=3", "--", &showcase()]).expect(0);
    assert_eq!(run.stdout, "counted down from 3\n");
    let progress: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("progress")).collect();
    assert_eq!(progress, ["progress 1/3 2", "progress 2/3 1", "progress 3/3 0"]);
    assert!(run.stderr.contains("[info] count_down: {\"remaining\":0}"), "{}", run.stderr);
    // Asked for none: none shown.
    let quiet = mcp(&["--log-level", "off", "call", "count_down", "from=2", "--", &showcase()]).expect(0);
    assert!(!quiet.stderr.contains("[info]"), "{}", quiet.stderr);
    let bad = mcp(&["--log-level", "loud", "ping", "--", &showcase()]).expect(2);
    assert!(bad.stderr.contains("--log-level loud"), "{}", bad.stderr);
}

#[test]
fn completion_with_context_arguments() {
    // server-everything's `completable-prompt` completes `name` from the `department` in the
    // request's `context.arguments` (none without it).
    let everything = server_everything();
    let complete = |extra: &[&str], code: i32| {
        let mut args = extra.to_vec();
        args.extend(["--", everything[0].as_str(), everything[1].as_str(), everything[2].as_str()]);
        mcp(&args).expect(code)
    };
    let none = complete(&["complete", "prompt:completable-prompt", "name="], 0);
    assert_eq!(none.stdout, "");
    let sales = complete(&["complete", "prompt:completable-prompt", "name=", "--context", "department=Sales"], 0);
    assert_eq!(sales.stdout, "David\nEve\nFrank\n");
    let json = complete(
        &["--json", "complete", "prompt:completable-prompt", "name=A", "--context", "department=Engineering"],
        0,
    )
    .json();
    assert_eq!(json["completion"]["values"], json!(["Alice"]));
    // Repeatable; other names are passed on as well.
    let two = ["--context", "department=Support", "--context", "team=core"];
    let support = complete(&[&["complete", "prompt:completable-prompt", "name=K"][..], &two[..]].concat(), 0);
    assert_eq!(support.stdout, "Kim\n");
    // Before 2025-06-18 there is no `context`: refused, not left out.
    let old =
        ["--protocol", "2025-03-26", "complete", "prompt:completable-prompt", "name=", "--context", "department=Sales"];
    let old = complete(&old, 2);
    assert!(
        old.stderr.contains("--context needs protocol revision 2025-06-18 or later (the server speaks 2025-03-26)"),
        "{}",
        old.stderr
    );
    for bad in ["department", "=Sales"] {
        let run = complete(&["complete", "prompt:completable-prompt", "name=", "--context", bad], 2);
        assert!(run.stderr.contains("not name=value"), "{}", run.stderr);
    }
    let twice = ["--context", "department=Sales", "--context", "department=Support"];
    let run = complete(&[&["complete", "prompt:completable-prompt", "name="][..], &twice[..]].concat(), 2);
    assert!(run.stderr.contains("--context department: given twice"), "{}", run.stderr);
}

#[test]
fn prompt_read_complete_and_ping() {
    let server = showcase();
    let prompt = mcp(&["prompt", "review", "code=fn main() {}", "language=rust", "--", &server]).expect(0);
    assert_eq!(prompt.stdout, "user:\nPlease review this rust code:\n\nfn main() {}\n");
    let json = mcp(&["--json", "prompt", "review", "--args", r#"{"code": "x"}"#, "--", &server]).expect(0).json();
    assert_eq!(json["messages"][0]["role"], "user");
    let read = mcp(&["read", "showcase://readme", "--", &server]).expect(0);
    assert_eq!(read.stdout, "# Showcase\n\nAn MCP server written with the Rust SDK's macros.\n");
    let missing = mcp(&["read", "notes://nothing", "--", &server]).expect(1);
    assert!(missing.stderr.contains("resource not found"), "{}", missing.stderr);
    let languages = mcp(&["complete", "prompt:review", "language=py", "--", &server]).expect(0);
    assert_eq!(languages.stdout, "python\n");
    let notes = mcp(&["--json", "complete", "resource:notes://{id}", "id=", "--", &server]).expect(0).json();
    assert_eq!(notes["completion"]["values"], json!(["groceries", "ideas", "todo"]));
    let bad = mcp(&["complete", "tool:x", "a=b", "--", &server]).expect(2);
    assert!(bad.stderr.contains("not prompt:NAME or resource:TEMPLATE"));
    let ping = mcp(&["ping", "--", &server]).expect(0);
    assert!(ping.stdout.starts_with("ok ("), "{}", ping.stdout);
}

#[test]
fn a_tool_error_exits_1_with_its_content_printed() {
    let everything = example("everything").display().to_string();
    let run = mcp(&["call", "test_error_handling", "--", &everything, "--stdio"]).expect(1);
    assert_eq!(run.stdout, "This tool intentionally returns an error for testing\n");
    assert!(run.stderr.contains("the tool `test_error_handling` reported an error"));
    let mixed = mcp(&["call", "test_multiple_content_types", "--", &everything, "--stdio"]).expect(0);
    assert!(mixed.stdout.contains("[image image/png, 70 bytes]"), "{}", mixed.stdout);
    assert!(mixed.stdout.contains("[resource test://mixed-content-resource, application/json,"), "{}", mixed.stdout);
    let audio = mcp(&["call", "test_audio_content", "--", &everything, "--stdio"]).expect(0);
    assert_eq!(audio.stdout, "[audio audio/wav, 46 bytes]\n");
}

#[test]
fn ctrl_c_cancels_the_call_and_tells_the_server() {
    let everything = example("everything").display().to_string();
    // `-v` forwards the server's stderr, where it logs (at debug) the cancellation it got.
    let args = ["-v", "call", "count_down", "from=600", "interval_ms=50", "--", &everything, "--stdio"];
    let mut command = common::command(&args);
    command.env("RUST_LOG", "debug");
    let mut live = Live::spawn(command);
    live.wait_for("progress 1/600");
    let sent = Instant::now();
    live.interrupt();
    let run = live.finish_within(Duration::from_secs(10)).expect(130);
    assert!(sent.elapsed() < Duration::from_secs(5), "ended {:?} after Ctrl-C", sent.elapsed());
    assert!(run.stderr.lines().any(|l| l == "cancelled"), "{}", run.stderr);
    assert!(
        run.stderr.lines().any(|l| l.contains("request cancelled; no response") && l.contains("method=tools/call")),
        "the server got notifications/cancelled:\n{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
}

#[test]
fn a_server_named_in_a_config_file() {
    let dir = std::env::temp_dir().join(format!("mcp-cli-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("claude_desktop_config.json");
    let config = json!({"mcpServers": {
        "showcase": {"command": showcase(), "args": [], "env": {"RUST_LOG": "warn"}},
        "other": {"url": "http://127.0.0.1:9/mcp"}
    }});
    std::fs::write(&file, config.to_string()).unwrap();
    let file = file.display().to_string();
    let run = mcp(&["--config", &file, "--server", "showcase", "call", "add", "a=1", "b=2"]).expect(0);
    assert!(run.stdout.contains("\"result\": 3.0"), "{}", run.stdout);
    let several = mcp(&["--config", &file, "tools"]).expect(2);
    assert!(several.stderr.contains("several servers"), "{}", several.stderr);
    let unreachable = mcp(&["--config", &file, "--server", "other", "--timeout", "5", "ping"]).expect(3);
    assert!(unreachable.stderr.contains("cannot connect"), "{}", unreachable.stderr);
}

#[test]
fn naming_no_server_or_a_missing_one_is_told_apart() {
    let none = mcp(&["tools"]).expect(2);
    assert!(none.stderr.contains("no server"), "{}", none.stderr);
    let missing = mcp(&["tools", "--", "/nonexistent/mcp-server"]).expect(3);
    assert!(missing.stderr.contains("cannot connect"), "{}", missing.stderr);
    let revision = mcp(&["--protocol", "1999-01-01", "tools", "--", "/nonexistent/mcp-server"]).expect(2);
    assert!(revision.stderr.contains("--protocol 1999-01-01"), "{}", revision.stderr);
}

#[test]
fn tasks_are_polled_to_their_end_and_cancelled_by_ctrl_c() {
    let everything = example("everything").display().to_string();
    for revision in ["2025-11-25", "2026-07-28"] {
        // `failing_job` must run as a task (said by its listing in 2025-11-25, by the server's
        // -32021 in 2026-07-28): its result is an error.
        let failed = mcp(&["--protocol", revision, "call", "failing_job", "--", &everything, "--stdio"]).expect(1);
        assert_eq!(failed.stdout, "the job failed\n", "{revision}: {}", failed.stderr);
        let args = ["--protocol", revision, "call", "--task", "slow_compute", "seconds=0.05", "label=x"];
        let done = mcp(&[&args[..], &["--", &everything, "--stdio"]].concat()).expect(0);
        assert_eq!(done.stdout, "computed `x` in 0.05 s\n");
    }
    // Ctrl-C while the task runs: `tasks/cancel`, then exit 130 at once.
    let args = ["--protocol", "2025-11-25", "call", "--task", "slow_compute", "seconds=60", "label=y"];
    let mut live = Live::start(&[&args[..], &["--", &everything, "--stdio"]].concat());
    live.wait_for("task ");
    let sent = Instant::now();
    live.interrupt();
    let run = live.finish_within(Duration::from_secs(10)).expect(130);
    assert!(sent.elapsed() < Duration::from_secs(5), "ended {:?} after Ctrl-C", sent.elapsed());
    assert!(run.stderr.lines().any(|l| l == "cancelled"), "{}", run.stderr);
}

#[test]
fn shell_completions_name_the_commands() {
    for shell in ["bash", "zsh", "fish"] {
        let script = mcp(&["completions", shell]).expect(0);
        for command in ["tools", "call", "proxy", "check"] {
            assert!(script.stdout.contains(command), "{shell} completions lack `{command}`");
        }
    }
    assert_eq!(mcp(&["completions", "no-such-shell"]).code(), 2, "clap's usage error");
}
