//! What the user sees on stderr while a request runs: a progress bar fed by the server's
//! progress notifications (plain `progress` lines when stderr is not a terminal), and the
//! server's log messages as they come.

use std::sync::Mutex;
use std::time::Duration;

use console::Style;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_types::{LoggingLevel, LoggingMessageNotificationParams, ProgressNotificationParams};

/// Progress values are fractional; the bar counts in hundredths.
const SCALE: f64 = 100.0;

/// The terminal (or pipe) on stderr, shared by the client's callbacks.
#[derive(Debug)]
pub struct Ui {
    /// stdout is a terminal: colour and Unicode in what is printed.
    pub fancy: bool,
    /// stderr is a terminal: a live bar rather than `progress` lines.
    stderr_term: bool,
    /// Log messages are not shown (`--log-level off`).
    quiet_logs: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Ui {
    /// The UI of this process's stdout and stderr.
    pub fn new(quiet_logs: bool) -> Ui {
        Ui {
            fancy: console::Term::stdout().is_term(),
            stderr_term: console::Term::stderr().is_term(),
            quiet_logs,
            bar: Mutex::new(None),
        }
    }

    /// A style for stderr: colour only when both stdout and stderr are terminals.
    fn style(&self, style: Style) -> Style {
        style.force_styling(self.fancy && self.stderr_term)
    }

    /// Runs `f` (a question at the terminal) with the progress bar, if one is shown, hidden
    /// meanwhile: its redraws would overwrite the question.
    pub fn suspend(&self, f: &mut dyn FnMut()) {
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// Prints a line on stderr, above the progress bar if one is shown.
    pub fn eprintln(&self, line: &str) {
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        match bar.as_ref() {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    /// A log message of the server (`notifications/message`): `[level] logger: data`.
    pub fn log(&self, params: &LoggingMessageNotificationParams) {
        if self.quiet_logs {
            return;
        }
        let colour = match params.level {
            LoggingLevel::Debug => Style::new().dim(),
            LoggingLevel::Info | LoggingLevel::Notice => Style::new().cyan(),
            LoggingLevel::Warning => Style::new().yellow(),
            _ => Style::new().red().bold(),
        };
        let level = self.style(colour).apply_to(format!("[{}]", params.level.as_str()));
        let data = match &params.data {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let line = match &params.logger {
            Some(logger) => format!("{level} {logger}: {data}"),
            None => format!("{level} {data}"),
        };
        self.eprintln(&line);
    }

    /// A progress notification of the running request.
    pub fn progress(&self, params: &ProgressNotificationParams) {
        let amount = match params.total {
            Some(total) => format!("{}/{}", number(params.progress), number(total)),
            None => number(params.progress),
        };
        let text = match &params.message {
            Some(message) => format!("{amount} {message}"),
            None => amount,
        };
        if !self.stderr_term {
            eprintln!("progress {text}");
            return;
        }
        let mut bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        let new = bar.is_none();
        let bar = bar.get_or_insert_with(|| ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()));
        let chars = if self.fancy { "█▉▊▋▌▍▎▏ " } else { "#>-" };
        let ticks = if self.fancy { "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ " } else { "-\\|/ " };
        let template = if params.total.is_some() { "{spinner} [{bar:30}] {msg}" } else { "{spinner} {msg}" };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars(chars).tick_chars(ticks));
        }
        if let Some(total) = params.total {
            bar.set_length((total.max(0.0) * SCALE) as u64);
        }
        bar.set_position((params.progress.max(0.0) * SCALE) as u64);
        bar.set_message(text);
        if new {
            // The spinner turns while the server works between two notifications.
            bar.enable_steady_tick(Duration::from_millis(120));
        }
    }

    /// Removes the progress bar (the request is over).
    pub fn finish(&self) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            bar.finish_and_clear();
        }
    }

    /// `mcp: ...` on stderr, in red on a terminal.
    pub fn error(&self, message: &str) {
        self.finish();
        let prefix = self.style(Style::new().red().bold()).apply_to("mcp:");
        eprintln!("{prefix} {message}");
    }
}

/// A progress amount: `3`, `2.5`.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 { format!("{}", n as i64) } else { format!("{n}") }
}

#[cfg(test)]
mod tests {
    #[test]
    fn amounts_print_without_needless_decimals() {
        assert_eq!(super::number(3.0), "3");
        assert_eq!(super::number(2.5), "2.5");
        assert_eq!(super::number(-1.0), "-1");
    }
}
