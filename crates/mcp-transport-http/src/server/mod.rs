//! The Streamable HTTP server.
