//! The server's questions answered as a person answers them: `mcp call order item=book` against
//! our `stdio_server` example (its `order` tool asks for a quantity and a gift wrap by
//! elicitation) runs inside `tmux`, a real pseudo-terminal; keys are sent, and the captured
//! screen shows the form, a wrong answer asked again, and the tool's final result; `ask_model`
//! (sampling) shows the question and sends the reply typed. Without a terminal (or with
//! `--no-input`) the form is declined and sampling refused, with a note on stderr. A form's
//! fields are asked in the order the server lists them (ours and the official
//! server-everything), not alphabetically.

#[path = "check_common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{example, mcp, server_everything};

/// A tmux server of our own (a socket for each test), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn new() -> Tmux {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Tmux { socket: format!("mcp-cli-test-{}-{n}", std::process::id()) }
    }

    fn run(&self, args: &[&str]) -> Output {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux is not installed: `cargo xtask packages` (or apt-get install tmux)");
        assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    /// What the pane shows now (no colours).
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "s", "-S", "-200"]).stdout).into_owned()
    }

    /// Waits until the pane shows `text`; the screen then.
    fn wait_for(&self, text: &str) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(!screen.contains("mcp-exit="), "mcp ended before {text:?} showed; the screen:\n{screen}");
            assert!(started.elapsed() < Duration::from_secs(60), "{text:?} never showed; the screen:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `keys` and Enter.
    fn answer(&self, keys: &str) {
        if !keys.is_empty() {
            self.run(&["send-keys", "-t", "s", "-l", keys]);
        }
        self.run(&["send-keys", "-t", "s", "Enter"]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).output();
    }
}

fn stdio_server() -> PathBuf {
    example("stdio_server")
}

#[test]
fn an_elicitation_form_is_filled_in_at_a_terminal() {
    let tmux = Tmux::new();
    let command = format!(
        "{} call order item=book -- {}; echo mcp-exit=$?; sleep 600",
        env!("CARGO_BIN_EXE_mcp"),
        stdio_server().display()
    );
    tmux.run(&["new-session", "-d", "-s", "s", "-x", "200", "-y", "60", &command]);
    let screen = tmux.wait_for("Answer? [a]ccept (fill in the form) / [d]ecline / [c]ancel:");
    assert!(screen.contains("The server asks: Order book?"), "{screen}");
    tmux.answer("");
    let screen = tmux.wait_for("[1/2] gift");
    assert!(
        screen.contains("yes or no (y/n)") && screen.contains("default: false (press Enter to keep it)"),
        "{screen}"
    );
    tmux.answer("y");
    let screen = tmux.wait_for("[2/2] quantity (required)");
    assert!(screen.contains("integer at least 1") && screen.contains("default: 1"), "{screen}");
    tmux.answer("many");
    tmux.wait_for("\"many\" is not an integer");
    tmux.answer("3");
    tmux.wait_for("Send this answer? [a]ccept / [d]ecline / [c]ancel:");
    tmux.answer("a");
    let screen = tmux.wait_for("mcp-exit=");
    assert!(screen.contains("ordered book: {\"gift\":true,\"quantity\":3}"), "{screen}");
    assert!(screen.contains("mcp-exit=0"), "{screen}");
}

/// The positions of `texts` on `screen`, each of which must be there.
fn positions(screen: &str, texts: &[&str]) -> Vec<usize> {
    texts.iter().map(|t| screen.find(t).unwrap_or_else(|| panic!("{t:?} not on the screen:\n{screen}"))).collect()
}

#[test]
fn a_form_is_asked_in_the_order_our_server_lists_it() {
    // `everything`'s SEP-1034 form lists name, age, score, status, verified (alphabetically:
    // age first); every field has a default, kept with Enter. At 2025-11-25 the form is an
    // `elicitation/create` request; at 2026-07-28 it travels in an input-required result.
    for protocol in ["2025-11-25", "2026-07-28"] {
        let tmux = Tmux::new();
        let command = format!(
            "{} --protocol {protocol} call test_elicitation_sep1034_defaults -- {} --stdio; echo mcp-exit=$?; sleep 600",
            env!("CARGO_BIN_EXE_mcp"),
            example("everything").display()
        );
        tmux.run(&["new-session", "-d", "-s", "s", "-x", "200", "-y", "80", &command]);
        tmux.wait_for("Answer? [a]ccept (fill in the form) / [d]ecline / [c]ancel:");
        tmux.answer("a");
        for (n, field) in ["name", "age", "score", "status", "verified"].iter().enumerate() {
            tmux.wait_for(&format!("[{}/5] {field}", n + 1));
            tmux.answer(if *field == "age" { "41" } else { "" });
        }
        tmux.wait_for("Send this answer? [a]ccept / [d]ecline / [c]ancel:");
        tmux.answer("a");
        let screen = tmux.wait_for("mcp-exit=");
        let at = positions(&screen, &["[1/5] name", "[2/5] age", "[3/5] score", "[4/5] status", "[5/5] verified"]);
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{protocol}: {screen}");
        assert!(screen.contains("\"age\":41") && screen.contains("\"name\":\"John Doe\""), "{protocol}: {screen}");
        assert!(screen.contains("mcp-exit=0"), "{protocol}: {screen}");
    }
}

#[test]
fn a_form_is_asked_in_the_order_the_official_server_lists_it() {
    // server-everything's `trigger-elicitation-request` lists name, check, firstLine, email,
    // ... (alphabetically: birthdate first).
    let tmux = Tmux::new();
    let (node, entry) = server_everything();
    let command = format!(
        "{} call trigger-elicitation-request -- {} {} stdio; echo mcp-exit=$?; sleep 600",
        env!("CARGO_BIN_EXE_mcp"),
        node.display(),
        entry.display()
    );
    tmux.run(&["new-session", "-d", "-s", "s", "-x", "200", "-y", "80", &command]);
    tmux.wait_for("Answer? [a]ccept (fill in the form) / [d]ecline / [c]ancel:");
    tmux.answer("a");
    tmux.wait_for("] name: String (required)");
    tmux.answer("Ann");
    tmux.wait_for("] check: Boolean");
    tmux.answer("y");
    let screen = tmux.wait_for("] firstLine: String with default");
    let at = positions(&screen, &["[1/", "] name:", "[2/", "] check:", "[3/", "] firstLine:"]);
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{screen}");
    assert!(screen.contains("[1/13] name") || screen.contains("[1/1"), "{screen}");
}

#[test]
fn a_sampling_request_is_answered_by_the_user_at_a_terminal() {
    let tmux = Tmux::new();
    let command = format!(
        "{} call ask_model 'question=What is 2+2?' -- {}; echo mcp-exit=$?; sleep 600",
        env!("CARGO_BIN_EXE_mcp"),
        stdio_server().display()
    );
    tmux.run(&["new-session", "-d", "-s", "s", "-x", "200", "-y", "60", &command]);
    let screen = tmux.wait_for("Your reply (one line; empty to decline):");
    assert!(screen.contains("The server asks for a completion (sampling): at most 200 tokens"), "{screen}");
    assert!(screen.contains("  user: What is 2+2?"), "{screen}");
    tmux.answer("4");
    let screen = tmux.wait_for("mcp-exit=");
    assert!(screen.contains("human (mcp) says: 4") && screen.contains("mcp-exit=0"), "{screen}");
}

#[test]
fn without_a_terminal_sampling_is_refused() {
    let server = stdio_server();
    let run = mcp(&["--no-input", "call", "ask_model", "question=hi", "--", server.to_str().unwrap()]);
    // The tool fails with the refusal (a tool error: exit 1).
    assert_eq!(run.code, 1, "{run:?}");
    assert!(format!("{}{}", run.stdout, run.stderr).contains("refused: no input"), "{run:?}");
    assert!(run.stderr.contains("the server asked for a completion (sampling): refused (no input)"), "{run:?}");
}

#[test]
fn without_a_terminal_the_form_is_declined_with_a_note() {
    let server = stdio_server();
    for extra in [&[][..], &["--no-input"][..]] {
        let mut args = extra.to_vec();
        args.extend(["call", "order", "item=book", "--", server.to_str().unwrap()]);
        let run = mcp(&args);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.stdout.contains("order of book: decline"), "{run:?}");
        assert!(run.stderr.contains("the server asked for input (\"Order book?\"): declined (no input)"), "{run:?}");
    }
}
