//! Our client against the `everything` example (the server of the conformance suite's server
//! scenarios) over a real pipe: every tool, resource, prompt and completion, with the contents
//! the conformance checks look for, sampling and elicitation answered by client handlers (the
//! checks are in `everything_checks`).

mod everything_checks;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use everything_checks::{Seen, builder, completions, custom_methods, prompts, resources, tools};
use mcp_sdk::transport::stdio::ChildCommand;

/// The `everything` example, which `cargo test` builds next to this test.
fn server_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(|d| d.parent()).unwrap().join("examples").join("everything");
    assert!(bin.exists(), "{} is missing: build the examples (cargo test builds them)", bin.display());
    bin
}

#[tokio::test]
async fn every_item_of_everything_over_a_pipe() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = builder(&seen).spawn(ChildCommand::new(server_bin()).args(["--stdio"])).await.unwrap();
    assert_eq!(client.server_info().name, "mcp-rust-everything");
    assert!(client.protocol_version().is_stateless());
    let caps = client.server_capabilities();
    assert!(caps.tools.is_some() && caps.prompts.is_some() && caps.logging.is_some() && caps.completions.is_some());
    assert_eq!(caps.resources.as_ref().unwrap().subscribe, Some(true));
    client.ping().await.unwrap();

    tools(&client, &seen).await;
    resources(&client).await;
    prompts(&client).await;
    completions(&client).await;
    custom_methods(&client, &seen).await;
    client.close().await.unwrap();
}

/// The custom method of `everything` over a pipe in a session revision (the test above speaks
/// 2026-07-28, which a client negotiates by default).
#[tokio::test]
async fn custom_methods_of_everything_over_a_pipe_in_a_session() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = builder(&seen)
        .protocol_version(mcp_sdk::types::ProtocolVersion::V2025_11_25)
        .spawn(ChildCommand::new(server_bin()).args(["--stdio"]))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), mcp_sdk::types::ProtocolVersion::V2025_11_25);
    custom_methods(&client, &seen).await;
    client.close().await.unwrap();
}
