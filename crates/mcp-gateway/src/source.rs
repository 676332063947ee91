//! Where a mounted server is: a [`Server`] of this process (reached over the in-memory
//! transport), a child process (stdio), or a Streamable HTTP endpoint (with its own
//! authorization, from its [`HttpClientConfig`](mcp_client::http::HttpClientConfig)).

use std::sync::Arc;

use mcp_client::{Client, ClientBuilder, ClientError};
use mcp_server::Server;
use mcp_transport_stdio::ChildCommand;

/// The capacity of the in-memory connection to a local mount, in frames each way.
const MEMORY_CAPACITY: usize = 256;

/// Changes the upstream connection's client before it connects.
type Configure = Arc<dyn Fn(ClientBuilder) -> ClientBuilder + Send + Sync>;

/// A server to mount: where it is and how the gateway connects to it.
///
/// ```
/// use mcp_gateway::Source;
/// use mcp_transport_stdio::ChildCommand;
///
/// let local = Source::local(mcp_server::Server::builder("notes", "1.0").build().unwrap());
/// let child = Source::stdio(ChildCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]));
/// let remote = Source::http("http://127.0.0.1:8080/mcp").unwrap();
/// # let _ = (local, child, remote);
/// ```
#[derive(Clone)]
pub struct Source {
    kind: Kind,
    configure: Option<Configure>,
}

#[derive(Clone)]
enum Kind {
    Local(Server),
    Stdio(ChildCommand),
    #[cfg(feature = "http")]
    Http(mcp_client::http::HttpClientConfig),
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &self.kind {
            Kind::Local(_) => "local",
            Kind::Stdio(_) => "stdio",
            #[cfg(feature = "http")]
            Kind::Http(_) => "http",
        };
        f.debug_struct("Source").field("kind", &kind).finish_non_exhaustive()
    }
}

impl Source {
    /// A server of this process, connected to over the in-memory transport (as a client in
    /// another process would be: every feature passes).
    pub fn local(server: Server) -> Self {
        Source { kind: Kind::Local(server), configure: None }
    }

    /// A server run as a child process, spoken to over its stdin and stdout.
    pub fn stdio(command: ChildCommand) -> Self {
        Source { kind: Kind::Stdio(command), configure: None }
    }

    /// A server at a Streamable HTTP endpoint (feature `http`).
    #[cfg(feature = "http")]
    pub fn http(url: &str) -> Result<Self, crate::GatewayError> {
        let config = mcp_client::http::HttpClientConfig::parse(url)
            .map_err(|e| crate::GatewayError::InvalidUrl(url.to_owned(), e.to_string()))?;
        Ok(Self::http_with(config))
    }

    /// A server at a Streamable HTTP endpoint with a full configuration: headers, its own
    /// authorization (`HttpClientConfig::auth`, `HttpClientConfig::oauth`), timeouts (feature
    /// `http`).
    #[cfg(feature = "http")]
    pub fn http_with(config: mcp_client::http::HttpClientConfig) -> Self {
        Source { kind: Kind::Http(config), configure: None }
    }

    /// Changes the client of each connection to this server before it connects (a protocol
    /// revision, a peer configuration with other timeouts). The gateway sets the client's
    /// name and its sampling, elicitation, roots and event handlers first; `configure` should
    /// leave those.
    pub fn configure(mut self, configure: impl Fn(ClientBuilder) -> ClientBuilder + Send + Sync + 'static) -> Self {
        self.configure = Some(Arc::new(configure));
        self
    }

    /// Opens a connection to the server with `builder`.
    pub(crate) async fn open(&self, builder: ClientBuilder) -> Result<Client, ClientError> {
        let builder = match &self.configure {
            Some(configure) => configure(builder),
            None => builder,
        };
        match &self.kind {
            Kind::Local(server) => {
                let (ours, theirs) = mcp_jsonrpc::transport::memory(MEMORY_CAPACITY);
                server.connect(theirs);
                builder.connect(ours).await
            }
            Kind::Stdio(command) => builder.spawn(command.clone()).await,
            #[cfg(feature = "http")]
            Kind::Http(config) => builder.connect_http_with(config.clone()).await,
        }
    }
}

impl From<Server> for Source {
    fn from(server: Server) -> Self {
        Source::local(server)
    }
}

impl From<ChildCommand> for Source {
    fn from(command: ChildCommand) -> Self {
        Source::stdio(command)
    }
}
