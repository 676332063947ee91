//! `stdio_server`: a server with tools (plain, structured output, progress and logging,
//! sampling, elicitation, roots), a prompt with completions, a resource and a template, served
//! on stdin/stdout. Logs go to stderr.
//!
//! `cargo run --example stdio_server`

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    mcp_examples::showcase::server()?.serve_stdio().await;
    Ok(())
}
