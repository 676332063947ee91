//! A [`Client`] connected to a [`Server`] in memory, in one line, for unit tests of a server:
//! no sockets, no processes, every feature of the protocol as a real client sees it.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! /// Adds two numbers.
//! #[mcp_sdk::tool]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! let server = mcp_sdk::server::Server::builder("calc", "1.0").tool(add::tool()).build()?;
//! let client = mcp_sdk::testing::connect(&server).await?;
//! let result = client.call_tool("add", serde_json::json!({"a": 2, "b": 3})).await?;
//! assert_eq!(result.structured_content.unwrap()["result"], 5);
//! # Ok(()) }
//! ```
//!
//! [`client()`] chooses the revision and answers the server's requests to the client
//! (sampling, elicitation, roots) with closures:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_sdk::types::{CreateMessageResult, ProtocolVersion, Role, Root, SamplingContent, TextContent};
//!
//! # let server = mcp_sdk::server::Server::builder("s", "1").build()?;
//! let client = mcp_sdk::testing::client()
//!     .revision(ProtocolVersion::V2025_06_18)
//!     .on_sampling(|_request| {
//!         Ok(CreateMessageResult::new(Role::Assistant, SamplingContent::Text(TextContent::new("4")), "test-model"))
//!     })
//!     .roots(|| vec![Root::new("file:///project")])
//!     .connect(&server)
//!     .await?;
//! assert_eq!(client.protocol_version(), ProtocolVersion::V2025_06_18);
//! # Ok(()) }
//! ```
//!
//! The connection is the in-memory transport ([`mcp_jsonrpc::transport::memory`]), served by
//! [`Server::connect`] as stdio would be: one connection, the server's requests to the
//! client on it, cancellation by `notifications/cancelled`. Without a revision chosen the
//! client negotiates as [`ClientBuilder::new`] does, so a server that speaks 2026-07-28 is
//! spoken to in 2026-07-28. The client is an ordinary [`Client`]: dropping it (or
//! [`Client::close`]) ends the server's side of the connection too.

use std::future::ready;

use mcp_client::{Client, ClientBuilder, ClientError};
use mcp_jsonrpc::transport::memory;
use mcp_server::Server;
use mcp_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ErrorObject, ProtocolVersion,
    Root,
};

/// Frames each direction of the in-memory connection queues (the engine's writer drains them).
const CAPACITY: usize = 256;

/// Connects a client to `server` in memory: the revision negotiated as [`ClientBuilder::new`]
/// does (2026-07-28 with our server), no sampling, elicitation or roots declared; the same as
/// `client().connect(server)`.
pub async fn connect(server: &Server) -> Result<Client, ClientError> {
    client().connect(server).await
}

/// A test client to configure before [`TestClient::connect`].
///
/// Its [`Client::events`] hears the server's list changes in every revision: in 2026-07-28,
/// where they come only on a subscription, the client opens one at connection (as
/// [`ClientBuilder::on_event`] makes it do).
pub fn client() -> TestClient {
    let builder = ClientBuilder::new("mcp-sdk-test-client", env!("CARGO_PKG_VERSION")).on_event(|_| {});
    TestClient { builder }
}

/// A client being configured for a test (see the [module](self) documentation).
#[derive(Debug, Clone)]
#[must_use = "a test client connects with `.connect(&server)`"]
pub struct TestClient {
    builder: ClientBuilder,
}

impl TestClient {
    /// Speaks only `revision`: one of the four session revisions (with `initialize`), or
    /// 2026-07-28 (with `server/discover`), as [`ClientBuilder::protocol_version`] says.
    pub fn revision(mut self, revision: ProtocolVersion) -> Self {
        self.builder = self.builder.protocol_version(revision);
        self
    }

    /// Answers `sampling/createMessage` with `answer` (declares the `sampling` capability).
    pub fn on_sampling(
        mut self,
        answer: impl Fn(CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        self.builder = self.builder.on_sampling(move |params| ready(answer(params)));
        self
    }

    /// Answers `elicitation/create` with `answer` (declares the `elicitation` capability, form
    /// and URL modes).
    pub fn on_elicitation(
        mut self,
        answer: impl Fn(ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        self.builder = self.builder.on_elicitation(move |params| ready(answer(params))).elicitation_url_mode();
        self
    }

    /// Answers `roots/list` with what `roots` returns (declares the `roots` capability).
    pub fn roots(mut self, roots: impl Fn() -> Vec<Root> + Send + Sync + 'static) -> Self {
        self.builder = self.builder.on_roots(move || ready(Ok(roots())));
        self
    }

    /// Anything else the [`ClientBuilder`] offers (asynchronous handlers, `on_event`, input
    /// tasks, custom methods): `f` gets the builder and returns it.
    pub fn configure(mut self, f: impl FnOnce(ClientBuilder) -> ClientBuilder) -> Self {
        self.builder = f(self.builder);
        self
    }

    /// Connects to `server` in memory; the server serves the connection in a task of its own.
    pub async fn connect(self, server: &Server) -> Result<Client, ClientError> {
        let (ours, theirs) = memory(CAPACITY);
        server.connect(theirs);
        self.builder.connect(ours).await
    }
}
