//! The server's questions answered as a person answers them: `mcp call order item=book` against
//! our `stdio_server` example (its `order` tool asks for a quantity and a gift wrap by
//! elicitation) runs inside `tmux`, a real pseudo-terminal; keys are sent, and the captured
//! screen shows the form, a wrong answer asked again, and the tool's final result. Without a
//! terminal (or with `--no-input`) the form is declined, with a note on stderr.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{example, mcp};

/// A tmux server of our own (its own socket), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn new() -> Tmux {
        Tmux { socket: format!("mcp-cli-test-{}", std::process::id()) }
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
