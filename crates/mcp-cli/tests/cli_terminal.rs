//! `mcp` on a real terminal, as a person sees it: the binary runs in `tmux` (from the system's
//! packages), the screen is captured while a long call runs (the progress bar, in Unicode),
//! then Ctrl-C is typed: the terminal's SIGINT reaches `mcp` only (its child server runs in a
//! process group of its own), which cancels the call (the server logs the
//! `notifications/cancelled` it got), prints `cancelled` and exits 130.

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
    // The server, its debug log (where it says which requests were cancelled) kept in a file.
    let dir = std::env::temp_dir().join(format!("mcp-cli-terminal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (server, log) = (dir.join("server.sh"), dir.join("server.log"));
    let wrapper = format!("#!/bin/sh\nRUST_LOG=debug exec '{everything}' --stdio 2>'{}'\n", log.display());
    std::fs::write(&server, wrapper).unwrap();
    std::fs::set_permissions(&server, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // bash goes on after a command that handled SIGINT itself, and shows its exit code.
    let script =
        format!("'{mcp}' call count_down from=600 interval_ms=50 -- '{}'; echo EXIT=$?; sleep 60", server.display());
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
    // The server got no SIGINT: it read the cancellation, and then its stdin ended.
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        logged.lines().any(|l| l.contains("request cancelled; no response") && l.contains("method=tools/call")),
        "the server did not get notifications/cancelled:\n{logged}"
    );
    assert!(!logged.contains("Ctrl-C received"), "the terminal's SIGINT reached the server:\n{logged}");
}
