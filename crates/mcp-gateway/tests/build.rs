//! What `GatewayBuilder::build` refuses: a bad or repeated prefix, a source it cannot reach.

use mcp_gateway::{Gateway, GatewayError, Source};
use mcp_server::Server;
use mcp_transport_stdio::ChildCommand;

fn empty() -> Server {
    Server::builder("s", "1").build().unwrap()
}

#[tokio::test]
async fn prefixes_are_checked() {
    let bad = Gateway::builder("g", "1").mount("a_b", empty()).build().await;
    assert!(matches!(bad, Err(GatewayError::InvalidPrefix(p)) if p == "a_b"));
    let twice = Gateway::builder("g", "1").mount("a", empty()).mount("a", empty()).build().await;
    assert!(matches!(twice, Err(GatewayError::DuplicatePrefix(p)) if p == "a"));
}

#[tokio::test]
async fn a_source_that_cannot_be_reached_fails_the_build() {
    let missing = Source::stdio(ChildCommand::new("/nonexistent/mcp-server"));
    let built = Gateway::builder("g", "1").mount("ok", empty()).mount("gone", missing).build().await;
    assert!(matches!(built, Err(GatewayError::Mount { prefix, .. }) if prefix == "gone"));
    let closed = Source::http("http://127.0.0.1:1/mcp").unwrap();
    let built = Gateway::builder("g", "1").mount("closed", closed).build().await;
    assert!(matches!(built, Err(GatewayError::Mount { prefix, .. }) if prefix == "closed"));
}
