//! `mcp` on a real terminal, as a person sees it: the binary runs in `tmux` (from the system's
//! packages), the screen is captured while a long call runs (the progress bar, in Unicode),
//! then Ctrl-C is typed: the terminal's SIGINT reaches `mcp` (and its child server, in the same
//! process group), which prints `cancelled` and exits 130.

mod common;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::example;

/// A tmux server of this test's own (its own socket), killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> Output {
        let output = Command::new("tmux").arg("-L").arg(&self.socket).args(args).output();
        output.expect("tmux is needed (apt-get install tmux)")
    }

    /// The screen's text.
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "mcp"]).stdout).into_owned()
    }

    /// Polls the screen (at most 30 s) until `done` says it shows what is awaited.
    fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(Instant::now() < deadline, "the screen never showed {what}:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

#[test]
fn a_progress_bar_on_a_terminal_and_ctrl_c() {
    let tmux = Tmux { socket: format!("mcp-cli-test-{}", std::process::id()) };
    let mcp = env!("CARGO_BIN_EXE_mcp");
    let everything = example("everything").display().to_string();
    // bash goes on after a command that handled SIGINT itself, and shows its exit code.
    let script =
        format!("'{mcp}' call count_down from=600 interval_ms=50 -- '{everything}' --stdio; echo EXIT=$?; sleep 60");
    let started = tmux.run(&["new-session", "-d", "-x", "100", "-y", "20", "-s", "mcp", "bash", "-c", &script]);
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));

    let screen = tmux.wait_for("the progress bar", |s| s.contains("/600 ") && s.contains('█'));
    let bar = screen.lines().find(|l| l.contains("/600 ")).unwrap();
    assert!(bar.contains(" [") && bar.contains("] ") && bar.contains("left (on everything)"), "{bar}");
    assert!(!screen.contains("progress "), "no plain progress lines on a terminal:\n{screen}");

    tmux.run(&["send-keys", "-t", "mcp", "C-c"]);
    let typed = Instant::now();
    let screen = tmux.wait_for("the exit code", |s| s.contains("EXIT="));
    assert!(typed.elapsed() < Duration::from_secs(5), "mcp ended {:?} after Ctrl-C", typed.elapsed());
    assert!(screen.lines().any(|l| l == "cancelled"), "{screen}");
    assert!(screen.contains("EXIT=130"), "{screen}");
}
