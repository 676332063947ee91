//! The connection of one command to its server: the client with its handlers (the server's
//! sampling and elicitation requests answered by [`crate::interact`], its log messages shown
//! by the [`Ui`]), Ctrl-C, and how failures become exit codes.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mcp_sdk::client::{Client, ClientBuilder, ClientError, ServerEvent};
use mcp_sdk::jsonrpc::CancellationToken;

use crate::cli::{Global, exit};
use crate::target;
use crate::ui::Ui;

/// How long closing the connection may take before the process exits anyway (a child server
/// is killed when the client is dropped).
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Why a command failed: its exit code and what to tell the user.
#[derive(Debug)]
pub struct Failure {
    /// The exit code ([`exit`]).
    pub code: u8,
    /// The message (without the `mcp:` prefix).
    pub message: String,
}

impl Failure {
    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure { code: exit::USAGE, message: message.into() }
    }

    /// The server answered with an error (exit 1).
    pub fn server(message: impl Into<String>) -> Failure {
        Failure { code: exit::SERVER_ERROR, message: message.into() }
    }

    /// Ctrl-C (exit 130).
    pub fn interrupted() -> Failure {
        Failure { code: exit::INTERRUPTED, message: "cancelled".to_owned() }
    }
}

impl From<ClientError> for Failure {
    fn from(error: ClientError) -> Failure {
        let code = match &error {
            ClientError::Cancelled => exit::INTERRUPTED,
            ClientError::InvalidArguments { .. } => exit::USAGE,
            ClientError::Timeout { .. }
            | ClientError::Closed(_)
            | ClientError::Spawn(_)
            | ClientError::Transport(_)
            | ClientError::UnsupportedVersion(_) => exit::CONNECTION,
            _ => exit::SERVER_ERROR,
        };
        if code == exit::INTERRUPTED {
            return Failure::interrupted();
        }
        Failure { code, message: chain(&error) }
    }
}

/// An error and its causes: `a: b: c`.
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message = format!("{message}: {text}");
        }
        source = cause.source();
    }
    message
}

/// Fired by Ctrl-C (SIGINT).
pub fn interrupt_on_ctrl_c() -> CancellationToken {
    let token = CancellationToken::new();
    let fire = token.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            fire.cancel();
        }
    });
    token
}

/// `work`, unless Ctrl-C comes first: then `work` is dropped (a request in flight is
/// cancelled: the server gets `notifications/cancelled`) and the failure is "cancelled".
pub async fn interruptible<T>(
    interrupt: &CancellationToken,
    work: impl Future<Output = Result<T, Failure>>,
) -> Result<T, Failure> {
    tokio::select! {
        result = work => result,
        () = interrupt.cancelled() => Err(Failure::interrupted()),
    }
}

/// Connects to the server named by `server` (the command's words) or by `--config`.
pub async fn open(global: &Global, server: &[String], ui: Arc<Ui>) -> Result<Client, Failure> {
    let target = target::resolve(global, server).map_err(|e| Failure::usage(format!("{e:#}")))?;
    target::protocol(global).map_err(|e| Failure::usage(format!("{e:#}")))?;
    target::timeout(global).map_err(|e| Failure::usage(format!("{e:#}")))?;
    // A question at the terminal hides the progress bar while it is asked.
    let shown = ui.clone();
    let around: crate::interact::Around = Arc::new(move |f: &mut dyn FnMut()| shown.suspend(f));
    let builder = ClientBuilder::new("mcp", env!("CARGO_PKG_VERSION"))
        .title("mcp (command line)")
        .validate_arguments()
        .on_event(move |event| {
            if let ServerEvent::Log(params) = event {
                ui.log(&params);
            }
        });
    let builder = crate::interact::install_with(builder, global, Some(around));
    target::connect(global, &target, builder).await.map_err(|e| {
        let message = match e.downcast_ref::<ClientError>() {
            Some(client) => chain(client),
            None => format!("{e:#}"),
        };
        Failure { code: exit::CONNECTION, message: format!("cannot connect: {message}") }
    })
}

/// Closes the connection, waiting at most [`CLOSE_GRACE`]: what is queued is written first
/// (the `notifications/cancelled` of an interrupted request), then a child server is stopped
/// (stdin closed, then signals).
pub async fn close(client: Client) {
    if let Ok(Err(e)) = tokio::time::timeout(CLOSE_GRACE, client.close()).await {
        tracing::debug!(error = %e, "closing the connection");
    }
}

/// Tells the server which log messages to send (`--log-level`), if it offers logging. A
/// server that refuses is told of on stderr; the command goes on without its logs.
pub async fn set_log_level(client: &Client, global: &Global) -> Result<(), Failure> {
    if global.log_level == "off" || client.server_capabilities().logging.is_none() {
        return Ok(());
    }
    let level = serde_json::from_value(serde_json::Value::String(global.log_level.clone()))
        .map_err(|e| Failure::usage(format!("--log-level {}: {e}", global.log_level)))?;
    match client.set_logging_level(level).await {
        Err(ClientError::Remote(e)) => eprintln!("mcp: the server refused logging/setLevel: {e}"),
        other => other?,
    }
    Ok(())
}

/// Checks `--log-level` before anything is sent.
pub fn check_log_level(global: &Global) -> Result<(), Failure> {
    const LEVELS: [&str; 9] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", "off"];
    if LEVELS.contains(&global.log_level.as_str()) {
        Ok(())
    } else {
        Err(Failure::usage(format!("--log-level {}: one of {}", global.log_level, LEVELS.join(", "))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_errors_map_to_exit_codes() {
        assert_eq!(Failure::from(ClientError::Cancelled).code, exit::INTERRUPTED);
        assert_eq!(Failure::from(ClientError::Closed(None)).code, exit::CONNECTION);
        assert_eq!(Failure::from(ClientError::NotSupported("prompts")).code, exit::SERVER_ERROR);
        let invalid = ClientError::InvalidArguments { tool: "t".into(), detail: "d".into() };
        assert_eq!(Failure::from(invalid).code, exit::USAGE);
        let remote = ClientError::Remote(mcp_types::ErrorObject::invalid_params("bad"));
        let failure = Failure::from(remote);
        assert_eq!(failure.code, exit::SERVER_ERROR);
        assert!(failure.message.contains("bad"), "{}", failure.message);
    }
}
