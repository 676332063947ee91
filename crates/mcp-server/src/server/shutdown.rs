//! The ready-made shutdown signal for [`Server::serve_http_until`](crate::Server::serve_http_until)
//! and [`Server::serve_until`](crate::Server::serve_until): Ctrl-C, or SIGTERM on Unix.

/// Completes when the process is asked to stop: Ctrl-C (SIGINT), or SIGTERM on Unix (what
/// `docker stop`, Kubernetes and systemd send). A signal whose handler cannot be installed is
/// never awaited (the other still is).
///
/// ```no_run
/// # async fn run(server: mcp_server::Server, transport: impl mcp_jsonrpc::Transport) {
/// // Serves until the connection ends or the process is asked to stop.
/// server.serve_until(transport, mcp_server::shutdown_signal()).await;
/// # }
/// ```
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("Ctrl-C received"),
        () = terminate => tracing::info!("SIGTERM received"),
    }
}
